package planner

import (
	"fmt"
	"strings"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// windowCols are the columns of a window function relation's output that
// are its window_start and window_end (a projection may repeat them), as
// Flink's window properties (RelWindowProperties) track them.
type windowCols struct {
	w            *windowNode
	starts, ends []bool
}

// windowColsOf traces n's window_start and window_end columns down to the
// window function it reads through filters, projections and a window
// aggregate (grouped by both window columns); nil when n is neither a
// window function relation nor a window aggregate.
func windowColsOf(n node) *windowCols {
	switch x := n.(type) {
	case *aggNode:
		a, w, ok, err := windowAggBelow(x)
		if !ok || err != nil {
			return nil // building the aggregate reports err
		}
		c := &windowCols{w: w, starts: make([]bool, len(a.out)), ends: make([]bool, len(a.out))}
		nIn := len(w.input.schema())
		for i, k := range a.keys {
			if k.Op == expr.OpColumn {
				c.starts[i], c.ends[i] = k.Col == nIn, k.Col == nIn+1
			}
		}
		return c
	case *windowNode:
		c := &windowCols{w: x, starts: make([]bool, len(x.out)), ends: make([]bool, len(x.out))}
		nIn := len(x.input.schema())
		c.starts[nIn], c.ends[nIn+1] = true, true
		return c
	case *filterNode:
		return windowColsOf(x.input)
	case *projectNode:
		in := windowColsOf(x.input)
		if in == nil {
			return nil
		}
		c := &windowCols{w: in.w, starts: make([]bool, len(x.exprs)), ends: make([]bool, len(x.exprs))}
		for i, e := range x.exprs {
			if e.Op == expr.OpColumn {
				c.starts[i], c.ends[i] = in.starts[e.Col], in.ends[e.Col]
			}
		}
		return c
	}
	return nil
}

// windowJoinCond is a join condition split as Flink's WindowJoinUtil
// splits it: the window_start and window_end equalities (one of each is
// kept, over the left and the right input's columns) and the rest.
type windowJoinCond struct {
	left, right                     *windowCols
	lStart, lEnd, rStart, rEnd      int
	rest                            []*expr.Expr
	hasStart, hasEnd, bothWindowing bool
}

// splitWindowJoin splits cond, over left's columns then right's, when
// both inputs are window function relations (bothWindowing false
// otherwise).
func splitWindowJoin(left, right node, cond *expr.Expr) windowJoinCond {
	wc := windowJoinCond{left: windowColsOf(left), right: windowColsOf(right)}
	if wc.left == nil || wc.right == nil {
		return wc
	}
	wc.bothWindowing = true
	lw := len(left.schema())
	for _, c := range conjuncts(cond) {
		if c.Op == expr.OpCall && c.Func == "=" && len(c.Args) == 2 && c.Args[0].Op == expr.OpColumn && c.Args[1].Op == expr.OpColumn {
			a, b := c.Args[0].Col, c.Args[1].Col
			if a >= lw && b < lw {
				a, b = b, a
			}
			if a < lw && b >= lw {
				switch rb := b - lw; {
				case wc.left.starts[a] && wc.right.starts[rb]:
					wc.lStart, wc.rStart, wc.hasStart = a, rb, true
					continue
				case wc.left.ends[a] && wc.right.ends[rb]:
					wc.lEnd, wc.rEnd, wc.hasEnd = a, rb, true
					continue
				}
			}
		}
		wc.rest = append(wc.rest, c)
	}
	return wc
}

// check refuses what Flink refuses of a window join: a condition with
// only one of the window equalities, different windows on the two sides,
// different time attribute types, processing-time windows. ok is false
// when the join is no window join (no window equality at all).
func (wc *windowJoinCond) check(pos ast.Pos, left, right node, cond *expr.Expr) (ok bool, err error) {
	if !wc.bothWindowing || (!wc.hasStart && !wc.hasEnd) {
		return false, nil
	}
	if !wc.hasStart || !wc.hasEnd {
		var names []string
		for _, f := range append(append(types.Schema{}, left.schema()...), right.schema()...) {
			names = append(names, f.Name)
		}
		return false, errorf(pos, "Currently, window join requires JOIN ON condition must contain both window starts equality of input tables and window ends equality of input tables.\nBut the current JOIN ON condition is %s.", explainExpr(cond, names))
	}
	lw, rw := wc.left.w, wc.right.w
	lt, rt := lw.input.schema()[lw.timeCol].Type, rw.input.schema()[rw.timeCol].Type
	if lt.Kind != rt.Kind || lw.proctime != rw.proctime {
		return false, errorf(pos, "Currently, window join doesn't support different time attribute type of left and right inputs.\nThe left time attribute type is %s.\nThe right time attribute type is %s.", timeAttrText(lt, lw.proctime), timeAttrText(rt, rw.proctime))
	}
	if lw.window != rw.window {
		return false, errorf(pos, "Currently, window join doesn't support different window table function of left and right inputs.\nThe left window table function is %s.\nThe right window table function is %s.", windowSpecText(lw.window), windowSpecText(rw.window))
	}
	if lw.proctime {
		return false, errorf(pos, "Processing time Window Join is not supported yet.")
	}
	if lw.window.Kind == jobgraph.WindowSession {
		return false, unsupported(pos, "a window join of SESSION windows")
	}
	return true, nil
}

// timeAttrText writes a time attribute's type as Flink's logical types
// print: TIMESTAMP(3) *ROWTIME*, TIMESTAMP_LTZ(3) *PROCTIME*.
func timeAttrText(t types.DataType, proctime bool) string {
	mark := " *ROWTIME*"
	if proctime {
		mark = " *PROCTIME*"
	}
	return t.WithNullable(true).String() + mark
}

// windowSpecText writes a window as Flink's WindowSpec prints it:
// TUMBLE(size=[15 min]), HOP(size=[10 min], slide=[5 min]),
// CUMULATE(max_size=[1 h], step=[10 min]), with an offset=[...] last.
func windowSpecText(w jobgraph.WindowSpec) string {
	var d string
	switch w.Kind {
	case jobgraph.WindowHop:
		d = fmt.Sprintf("HOP(size=[%s], slide=[%s]", durationText(w.SizeMs), durationText(w.StepMs))
	case jobgraph.WindowCumulate:
		d = fmt.Sprintf("CUMULATE(max_size=[%s], step=[%s]", durationText(w.SizeMs), durationText(w.StepMs))
	case jobgraph.WindowSession:
		d = fmt.Sprintf("SESSION(gap=[%s]", durationText(w.GapMs))
	default:
		d = fmt.Sprintf("TUMBLE(size=[%s]", durationText(w.SizeMs))
	}
	if w.OffsetMs != 0 {
		d += fmt.Sprintf(", offset=[%s]", durationText(w.OffsetMs))
	}
	return d + ")"
}

// windowJoinType is the spec's join type of a join or semi join.
func windowJoinType(outerLeft, outerRight, semi, anti bool) string {
	switch {
	case anti:
		return jobgraph.WindowJoinAnti
	case semi:
		return jobgraph.WindowJoinSemi
	case outerLeft && outerRight:
		return jobgraph.WindowJoinFull
	case outerLeft:
		return jobgraph.WindowJoinLeft
	case outerRight:
		return jobgraph.WindowJoinRight
	}
	return jobgraph.WindowJoinInner
}

// windowJoinKind names a join type as Flink's plans do.
func windowJoinKind(t string) string {
	return map[string]string{
		jobgraph.WindowJoinInner: "InnerJoin", jobgraph.WindowJoinLeft: "LeftOuterJoin",
		jobgraph.WindowJoinRight: "RightOuterJoin", jobgraph.WindowJoinFull: "FullOuterJoin",
		jobgraph.WindowJoinSemi: "LeftSemiJoin", jobgraph.WindowJoinAnti: "LeftAntiJoin",
	}[t]
}

// buildWindowJoin plans a join of two window function relations whose
// condition holds both window equalities as Flink's WindowJoin: the
// window equalities go, the other equalities between the sides become the
// hash keys (none: one subtask), conditions on one side filter it unless
// the side is preserved, and the rest is the residual checked on each
// pair. It returns ok false when n is no window join.
func (ph *physical) buildWindowJoin(n *joinNode, need []bool) (*stream, func(int) int, bool, error) {
	wc := splitWindowJoin(n.left, n.right, n.cond)
	if ok, err := wc.check(n.pos, n.left, n.right, n.cond); !ok || err != nil {
		return nil, nil, false, err
	}
	lw := len(n.left.schema())
	used := append([]bool(nil), need...)
	used[wc.lStart], used[wc.lEnd], used[lw+wc.rStart], used[lw+wc.rEnd] = true, true, true, true
	s, where, err := ph.windowJoinStream(n.pos, n.left, n.right, wc, used,
		windowJoinType(n.outerLeft, n.outerRight, false, false))
	return s, where, err == nil, err
}

// buildWindowSemi plans [NOT] EXISTS and [NOT] IN between two window
// function relations correlated on both window columns as Flink's
// WindowJoin of type SEMI or ANTI; ok is false for any other semi join.
func (ph *physical) buildWindowSemi(n *semiJoinNode) (*stream, bool, error) {
	wc := splitWindowJoin(n.left, n.right, n.cond)
	if ok, err := wc.check(n.pos, n.left, n.right, n.cond); !ok || err != nil {
		return nil, false, err
	}
	lw := len(n.left.schema())
	used := make([]bool, lw+len(n.right.schema()))
	for i := 0; i < lw; i++ {
		used[i] = true
	}
	used[lw+wc.rStart], used[lw+wc.rEnd] = true, true
	s, _, err := ph.windowJoinStream(n.pos, n.left, n.right, wc, used, windowJoinType(false, false, true, n.anti))
	if err != nil {
		return nil, false, err
	}
	if len(s.schema) != lw {
		// Computed keys were appended to the left input.
		s = ph.calc(s, nil, identity(n.left.schema()), n.left.schema())
	}
	return s, true, nil
}

// windowJoinStream builds the window join of left and right (condition
// split in wc) as joinType; used marks the columns of left then right
// that must cross it. It returns the join's stream and where each column
// of left then right landed in its output.
func (ph *physical) windowJoinStream(pos ast.Pos, left, right node, wc windowJoinCond, used []bool, joinType string) (*stream, func(int) int, error) {
	lw := len(left.schema())
	outerLeft := joinType == jobgraph.WindowJoinLeft || joinType == jobgraph.WindowJoinFull
	outerRight := joinType == jobgraph.WindowJoinRight || joinType == jobgraph.WindowJoinFull
	anti := joinType == jobgraph.WindowJoinAnti
	toRight := func(i int) int { return i - lw }
	var leftFilters, rightFilters, residual, leftKeys, rightKeys []*expr.Expr
	for _, c := range wc.rest {
		side := sideOf(c, lw)
		switch {
		// NB: a condition on a preserved side (and, in an anti join, on
		// the left) decides matches only: its rows failing it are still
		// emitted.
		case side == sideLeft && !outerLeft && !anti:
			leftFilters = append(leftFilters, c)
			continue
		case side == sideRight && !outerRight:
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
	for _, e := range append(append([]*expr.Expr{}, residual...), leftKeys...) {
		for _, c := range columnsOf(e) {
			used[c] = true
		}
	}
	for _, e := range rightKeys {
		for _, c := range columnsOf(e) {
			used[lw+c] = true
		}
	}
	lnode, lmap := pruneSide(left, leftFilters, used[:lw])
	rnode, rmap := pruneSide(right, rightFilters, used[lw:])
	for i := range leftKeys {
		leftKeys[i] = remap(leftKeys[i], lmap)
		rightKeys[i] = remap(rightKeys[i], rmap)
	}
	ls, err := ph.build(lnode)
	if err != nil {
		return nil, nil, err
	}
	rs, err := ph.build(rnode)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range []*stream{ls, rs} {
		if s.changes != "" {
			return nil, nil, errorf(pos, "StreamPhysicalWindowJoin doesn't support consuming update and delete changes which is produced by node %s", s.changes)
		}
	}
	lk, rk, lextra, rextra, err := joinKeys(pos, "join keys", leftKeys, rightKeys, len(ls.schema), len(rs.schema))
	if err != nil {
		return nil, nil, err
	}
	ls = ph.extend(ls, lextra)
	rs = ph.extend(rs, rextra)
	nlw := len(ls.schema)
	where := func(i int) int {
		if i < lw {
			return lmap(i)
		}
		return nlw + rmap(i-lw)
	}
	out := append(types.Schema{}, ls.schema...)
	if joinType != jobgraph.WindowJoinSemi && !anti {
		out = append(out, rs.schema...)
		for i := range out {
			if (i < nlw && outerRight) || (i >= nlw && outerLeft) {
				out[i].Type = out[i].Type.WithNullable(true)
			}
		}
	}
	spec := jobgraph.WindowJoinSpec{
		LeftSchema:       ls.schema,
		RightSchema:      rs.schema,
		LeftKeys:         lk,
		RightKeys:        rk,
		LeftWindowStart:  lmap(wc.lStart),
		LeftWindowEnd:    lmap(wc.lEnd),
		RightWindowStart: rmap(wc.rStart),
		RightWindowEnd:   rmap(wc.rEnd),
		Window:           wc.left.w.window,
		JoinType:         joinType,
		Residual:         remap(and(residual), where),
		OutputSchema:     out,
	}
	name := fmt.Sprintf("WindowJoin(joinType=[%s], window=[%s])", windowJoinKind(joinType), describeWindow(spec.Window))
	par := ph.parallelism
	if len(lk) == 0 {
		// NB: without keys every row of a window meets every other: one
		// subtask holds both sides (Flink's singleton distribution).
		par = 1
	}
	js := ph.b.join(name, par, op(name, &spec), ls, rs, lk, rk, out)
	// The output is insert-only: rows are emitted once, when their window
	// fires.
	js.changes, js.updatesOnly = "", false
	return js, where, nil
}

// describeWindowJoin writes the join as Flink's plans write
// StreamPhysicalWindowJoin.
func describeWindowJoin(s *jobgraph.WindowJoinSpec, left, right []string) string {
	both := uniqueNames(append(append(types.Schema{}, s.LeftSchema...), s.RightSchema...))
	var conds []string
	for i := range s.LeftKeys {
		conds = append(conds, fmt.Sprintf("(%s = %s)", nameAt(both, s.LeftKeys[i]), nameAt(both, len(s.LeftSchema)+s.RightKeys[i])))
	}
	if s.Residual != nil {
		for _, c := range conjuncts(s.Residual) {
			conds = append(conds, explainExpr(c, both))
		}
	}
	where := "true"
	switch len(conds) {
	case 0:
	case 1:
		where = conds[0]
	default:
		where = "(" + strings.Join(conds, " AND ") + ")"
	}
	sel := both
	if s.SemiOrAnti() {
		sel = both[:len(s.LeftSchema)]
	}
	return fmt.Sprintf("WindowJoin(leftWindow=[%s], rightWindow=[%s], joinType=[%s], where=[%s], select=[%s])",
		windowingText(s.Window, nameAt(left, s.LeftWindowStart), nameAt(left, s.LeftWindowEnd)),
		windowingText(s.Window, nameAt(right, s.RightWindowStart), nameAt(right, s.RightWindowEnd)),
		windowJoinKind(s.JoinType), where, strings.Join(sel, ", "))
}

// windowingText writes a window join input's windowing as Flink's
// WindowAttachedWindowingStrategy summary:
// TUMBLE(win_start=[window_start], win_end=[window_end], size=[5 s]).
func windowingText(w jobgraph.WindowSpec, start, end string) string {
	spec := windowSpecText(w)
	i := strings.IndexByte(spec, '(')
	return fmt.Sprintf("%s(win_start=[%s], win_end=[%s], %s", spec[:i], start, end, spec[i+1:])
}
