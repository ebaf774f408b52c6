package expr

// withActive returns a copy of ec whose active rows are mask.
func withActive(ec *evalCtx, mask []bool) *evalCtx {
	c := *ec
	c.active = mask
	return &c
}

func activeCopy(ec *evalCtx) []bool {
	m := make([]bool, ec.n)
	if ec.active == nil {
		return fill(m, true)
	}
	copy(m, ec.active)
	return m
}

// logicNode is AND/OR over two or more operands. Operands after the first
// see only the rows still undecided, so a guard such as
// x <> 0 AND 10 / x > 1 never divides by zero.
type logicNode struct {
	and  bool
	args []node
}

func (l *logicNode) eval(ec *evalCtx) (*vec, error) {
	acc, err := l.args[0].eval(ec)
	if err != nil {
		return nil, err
	}
	for _, a := range l.args[1:] {
		open := activeCopy(ec)
		for i := range open {
			if !acc.isNull(i) && acc.b[i] != l.and {
				open[i] = false // decided: FALSE for AND, TRUE for OR
			}
		}
		v, err := a.eval(withActive(ec, open))
		if err != nil {
			return nil, err
		}
		if l.and {
			acc = and3(ec.n, acc, v)
		} else {
			acc = or3(ec.n, acc, v)
		}
	}
	return acc, nil
}

// caseNode is the searched CASE (and IF): when1, then1, ..., [else]. Each
// branch is evaluated with only its own rows active.
type caseNode struct {
	args []node
}

func (c *caseNode) eval(ec *evalCtx) (*vec, error) {
	remaining := activeCopy(ec)
	var out *vec
	put := func(src *vec, mask []bool) {
		if out == nil {
			out = newVec(classOfVec(src), ec.n)
			out.valid = make([]bool, ec.n)
		}
		copyRows(out, src, mask)
	}
	for i := 0; i+1 < len(c.args); i += 2 {
		cond, err := c.args[i].eval(withActive(ec, remaining))
		if err != nil {
			return nil, err
		}
		matched := make([]bool, ec.n)
		hit := false
		for r := range matched {
			if remaining[r] && !cond.isNull(r) && cond.b[r] {
				matched[r], remaining[r], hit = true, false, true
			}
		}
		if !hit && out != nil {
			continue
		}
		v, err := c.args[i+1].eval(withActive(ec, matched))
		if err != nil {
			return nil, err
		}
		put(v, matched)
	}
	if len(c.args)%2 == 1 {
		v, err := c.args[len(c.args)-1].eval(withActive(ec, remaining))
		if err != nil {
			return nil, err
		}
		put(v, remaining)
	}
	return out, nil
}

// copyRows copies the rows of src selected by mask into dst (same class),
// setting dst's validity from src's.
func copyRows(dst, src *vec, mask []bool) {
	for i, m := range mask {
		if !m {
			continue
		}
		if src.isNull(i) {
			dst.valid[i] = false
			continue
		}
		dst.valid[i] = true
		switch {
		case dst.b != nil:
			dst.b[i] = src.b[i]
		case dst.i64 != nil:
			dst.i64[i] = src.i64[i]
		case dst.f64 != nil:
			dst.f64[i] = src.f64[i]
		case dst.dec != nil:
			dst.dec[i] = src.dec[i]
		case dst.str != nil:
			dst.str[i] = src.str[i]
		case dst.bin != nil:
			dst.bin[i] = src.bin[i]
		}
	}
}

// coalesceNode returns the first non-NULL argument; later arguments are
// evaluated only for the rows still NULL.
type coalesceNode struct {
	args []node
	cls  class
}

func (c *coalesceNode) eval(ec *evalCtx) (*vec, error) {
	out := newVec(c.cls, ec.n)
	out.valid = make([]bool, ec.n)
	open := activeCopy(ec)
	for _, a := range c.args {
		v, err := a.eval(withActive(ec, open))
		if err != nil {
			return nil, err
		}
		take := make([]bool, ec.n)
		left := false
		for i := range take {
			if open[i] && !v.isNull(i) {
				take[i], open[i] = true, false
			}
			left = left || open[i]
		}
		copyRows(out, v, take)
		if !left {
			break
		}
	}
	return out, nil
}

func notKernel(ec *evalCtx, args []*vec) (*vec, error) { return not3(args[0]), nil }

func isNullKernel(not bool) kernel {
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		out := &vec{n: ec.n, b: make([]bool, ec.n)}
		for i := range out.b {
			out.b[i] = args[0].isNull(i) != not
		}
		return out, nil
	}
}

func isBoolKernel(name string) kernel {
	want := name == "IS TRUE" || name == "IS NOT TRUE"
	neg := name == "IS NOT TRUE" || name == "IS NOT FALSE"
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a := args[0]
		out := &vec{n: ec.n, b: make([]bool, ec.n)}
		for i := range out.b {
			out.b[i] = (!a.isNull(i) && a.b[i] == want) != neg
		}
		return out, nil
	}
}

// nullIfKernel takes (a, a = b) and nulls the rows where the comparison is
// TRUE.
func nullIfKernel(ec *evalCtx, args []*vec) (*vec, error) {
	a, eq := args[0], args[1]
	out := *a
	out.valid = make([]bool, ec.n)
	for i := range out.valid {
		out.valid[i] = !a.isNull(i) && (eq.isNull(i) || !eq.b[i])
	}
	out.borrowed = true
	return &out, nil
}
