package expr

import "github.com/braidflow/braid/types"

// resolveGreatest types GREATEST/LEAST(v1, v2, ...): the arguments' common
// type, NULL if any argument is (Flink's docs).
func resolveGreatest(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 1, -1); err != nil {
		return nil, err
	}
	t, ok := CommonType(typesOf(args)...)
	if ok && t.Kind != types.KindNull {
		_, ok = comparable2(t, t)
	}
	if !ok || t.Kind == types.KindNull {
		return nil, cannotApply(name, args)
	}
	out := make([]*Expr, len(args))
	for i, a := range args {
		out[i] = implicit(a, t)
	}
	return call(name, t, out...), nil
}

func greatestKernel(e *Expr, _ []types.DataType) (kernel, error) {
	op := cmpGt
	if e.Func == "LEAST" {
		op = cmpLt
	}
	cls := classOf(e.Type)
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		out := newVec(cls, ec.n)
		out.valid = make([]bool, ec.n)
		mask := fill(make([]bool, ec.n), true)
		copyRows(out, args[0], mask)
		for _, x := range args[1:] {
			c := compareVecs(op, ec.n, x, out)
			for i := range mask {
				mask[i] = c.b[i] && !c.isNull(i)
			}
			copyRows(out, x, mask)
		}
		out.valid = andValid(ec.n, args...)
		return out, nil
	}, nil
}

// resolveIfNull types IFNULL(x, r): the common type, nullable only if r
// is (Flink's docs), evaluated as COALESCE.
func resolveIfNull(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 2, 2); err != nil {
		return nil, err
	}
	t, ok := CommonType(args[0].Type, args[1].Type)
	if !ok || t.Kind == types.KindNull {
		return nil, cannotApply(name, args)
	}
	t = t.WithNullable(args[1].Type.Nullable())
	return call(name, t, implicit(args[0], t), implicit(args[1], t)), nil
}

// resolveDistinct types a IS [NOT] DISTINCT FROM b: a comparison that
// treats NULL as a value, so never NULL itself.
func resolveDistinct(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 2, 2); err != nil {
		return nil, err
	}
	a, b := args[0], args[1]
	if a.Type.Kind == types.KindNull && b.Type.Kind == types.KindNull {
		return call(name, types.Boolean.WithNullable(false), a, b), nil
	}
	a, b = fillNull(a, b.Type), fillNull(b, a.Type)
	t, ok := comparable2(a.Type, b.Type)
	if !ok {
		return nil, cannotApply(name, args)
	}
	return call(name, types.Boolean.WithNullable(false), castOperand(a, t), castOperand(b, t)), nil
}

func distinctKernel(e *Expr, at []types.DataType) (kernel, error) {
	not := e.Func == "IS NOT DISTINCT FROM"
	if _, err := compareKernel("=", at[0], at[1]); err != nil {
		return nil, err
	}
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a, b := args[0], args[1]
		var eq *vec
		if classOfVec(a) == classOfVec(b) {
			eq = compareVecs(cmpEq, ec.n, a, b)
		}
		out := &vec{n: ec.n, b: make([]bool, ec.n)}
		for i := range out.b {
			an, bn := a.isNull(i), b.isNull(i)
			d := an != bn
			if !an && !bn {
				d = eq == nil || eq.isNull(i) || !eq.b[i]
			}
			out.b[i] = d != not
		}
		return out, nil
	}, nil
}
