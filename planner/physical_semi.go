package planner

import (
	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
)

// buildSemi plans a semi or anti join: equalities between the two sides
// become hash keys (none: one subtask holds both sides), conditions on the
// right alone filter it, and so do conditions on the left alone in a semi
// join (in an anti join a left row failing them has no match, so it is
// emitted: they stay in the residual). The right input sends only the
// columns the keys and the residual read; the output is the left columns.
func (ph *physical) buildSemi(n *semiJoinNode) (*stream, error) {
	lw := len(n.left.schema())
	rw := len(n.right.schema())
	var leftFilters, rightFilters, residual, leftKeys, rightKeys []*expr.Expr
	toRight := func(i int) int { return i - lw }
	for _, c := range conjuncts(n.cond) {
		switch side := sideOf(c, lw); {
		case side == sideLeft && !n.anti:
			leftFilters = append(leftFilters, c)
			continue
		case side == sideRight:
			rightFilters = append(rightFilters, remap(c, toRight))
			continue
		}
		if c.Op == expr.OpCall && c.Func == "=" && len(c.Args) == 2 {
			a, b := c.Args[0], c.Args[1]
			sa, sb := sideOf(a, lw), sideOf(b, lw)
			if sa == sideRight && sb == sideLeft {
				a, b, sa, sb = b, a, sb, sa
			}
			if sa == sideLeft && sb == sideRight {
				leftKeys = append(leftKeys, a)
				rightKeys = append(rightKeys, remap(b, toRight))
				continue
			}
		}
		residual = append(residual, c)
	}
	used := make([]bool, rw)
	for _, e := range residual {
		for _, c := range columnsOf(e) {
			if c >= lw {
				used[c-lw] = true
			}
		}
	}
	for _, e := range rightKeys {
		for _, c := range columnsOf(e) {
			used[c] = true
		}
	}
	left := n.left
	if len(leftFilters) > 0 {
		left = &filterNode{input: left, cond: and(leftFilters)}
	}
	right, rmap := pruneSide(n.right, rightFilters, used)
	for i := range rightKeys {
		rightKeys[i] = remap(rightKeys[i], rmap)
	}
	ls, err := ph.build(left)
	if err != nil {
		return nil, err
	}
	rs, err := ph.build(right)
	if err != nil {
		return nil, err
	}
	lk, rk, lextra, rextra, err := joinKeys(n.pos, "subquery join keys", leftKeys, rightKeys, lw, len(rs.schema))
	if err != nil {
		return nil, err
	}
	ls = ph.extend(ls, lextra)
	rs = ph.extend(rs, rextra)
	nlw := len(ls.schema)
	spec := jobgraph.SemiJoinSpec{
		LeftSchema:  ls.schema,
		RightSchema: rs.schema,
		LeftKeys:    lk,
		RightKeys:   rk,
		Residual: remap(and(residual), func(i int) int {
			if i < lw {
				return i
			}
			return nlw + rmap(i-lw)
		}),
		Anti: n.anti,
	}
	if spec.LeftTTLMs, err = ph.stateTTL(nil); err != nil {
		return nil, err
	}
	spec.RightTTLMs = spec.LeftTTLMs
	kind := "LeftSemiJoin"
	if n.anti {
		kind = "LeftAntiJoin"
	}
	name := "Join(" + kind + ")"
	par := ph.parallelism
	if len(lk) == 0 {
		// NB: without keys every left row is compared with every right
		// row: one subtask holds both sides.
		par, name = 1, "Join("+kind+", no keys)"
	}
	js := ph.b.join(name, par, op(name, &spec), ls, rs, lk, rk, ls.schema)
	// A right row retracts or restores left rows: an anti join deletes
	// rows whatever its inputs, a semi join when its right input retracts.
	switch {
	case n.anti || rs.changes != "":
		js.changes, js.updatesOnly = "Join(joinType=["+kind+"])", false
	default:
		js.changes, js.updatesOnly = ls.changes, ls.updatesOnly
	}
	if len(lextra) > 0 {
		return ph.calc(js, nil, identity(n.left.schema()), n.left.schema()), nil
	}
	return js, nil
}
