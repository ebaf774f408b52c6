package planner

import (
	"fmt"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// buildWindowTVF plans a window function as a relation, Flink's
// WindowTableFunction: the table's rows, each once per window it belongs
// to, with window_start, window_end and window_time appended, chained
// behind the table's watermark assigner. The result is insert-only and its
// window_time is the rowtime attribute.
func (ph *physical) buildWindowTVF(n *windowNode) (*stream, error) {
	in, err := ph.build(n.rows())
	if err != nil {
		return nil, err
	}
	if in.changes != "" {
		return nil, errorf(n.pos, "StreamPhysicalWindowTableFunction doesn't support consuming update and delete changes which is produced by node %s", in.changes)
	}
	spec := jobgraph.WindowTVFSpec{InputSchema: in.schema, Rowtime: n.timeCol, Window: n.window, OutputSchema: n.out}
	name := fmt.Sprintf("WindowTableFunction(window=[%s])", describeWindow(n.window))
	return ph.b.chain(in, in.vertex.Parallelism, op(name, &spec), n.out), nil
}

// rows is the window function's input: its table, filtered by where.
func (n *windowNode) rows() node {
	if n.where == nil {
		return n.input
	}
	return &filterNode{input: n.input, cond: n.where}
}

// windowAggBelow finds a window aggregate: an aggregate grouped by
// window_start and window_end of a window function, seen through filters
// and projections. It returns the aggregate rewritten over the window
// function's columns and the window function with the filters as its
// where. ok is false for any other aggregate, which is then a group
// aggregate (over a window function as a relation, say, when it groups by
// window_start alone, as in Flink); a filter on window columns between the
// function and its window aggregate is refused.
func windowAggBelow(n *aggNode) (a *aggNode, w *windowNode, ok bool, err error) {
	var exprs []*expr.Expr // the aggregate's input columns over the window function's
	var conds []*expr.Expr // over the window function's columns
	in := n.input
	for {
		switch x := in.(type) {
		case *projectNode:
			if exprs == nil {
				exprs = x.exprs
			} else {
				exprs = composeAll(exprs, x.exprs)
			}
			conds = composeAll(conds, x.exprs)
			in = x.input
			continue
		case *filterNode:
			conds = append(conds, conjuncts(x.cond)...)
			in = x.input
			continue
		case *windowNode:
			c := *n
			c.input = x
			if exprs != nil {
				c.keys = composeAll(n.keys, exprs)
				c.calls = make([]aggCall, len(n.calls))
				for i, call := range n.calls {
					call.arg = substitute(call.arg, exprs)
					call.filter = substitute(call.filter, exprs)
					call.more = composeAll(call.more, exprs)
					c.calls[i] = call
				}
			}
			nIn := len(x.input.out)
			hasStart, hasEnd := false, false
			for _, k := range c.keys {
				if k.Op == expr.OpColumn {
					hasStart = hasStart || k.Col == nIn
					hasEnd = hasEnd || k.Col == nIn+1
				}
			}
			if !hasStart || !hasEnd {
				return nil, nil, false, nil
			}
			for _, cond := range conds {
				for _, col := range columnsOf(cond) {
					if col >= nIn {
						return nil, nil, false, unsupported(x.pos, "a condition on window columns between a window function and its window aggregate")
					}
				}
			}
			if len(conds) > 0 {
				fw := *x
				fw.where = and(append(conjuncts(x.where), conds...))
				c.input = &fw
			}
			return &c, c.input.(*windowNode), true, nil
		}
		return nil, nil, false, nil
	}
}

// composeAll substitutes exprs into each of es.
func composeAll(es, exprs []*expr.Expr) []*expr.Expr {
	if es == nil {
		return nil
	}
	out := make([]*expr.Expr, len(es))
	for i, e := range es {
		out[i] = substitute(e, exprs)
	}
	return out
}

// windowProps are the window columns of a windowed relation, as Flink's
// RelWindowProperties: the window function that made them, and where
// window_start and window_end are in the relation's columns.
type windowProps struct {
	window     jobgraph.WindowSpec
	start, end []bool
	timeType   types.DataType
}

// windowPropsOf returns the window columns of n's output: of a window
// function, of a window aggregate grouped by them, and through filters and
// projections that pass them through; nil when n is not windowed.
func windowPropsOf(n node) *windowProps {
	switch n := n.(type) {
	case *windowNode:
		w := len(n.out)
		p := &windowProps{window: n.window, start: make([]bool, w), end: make([]bool, w), timeType: n.out[w-1].Type}
		p.start[w-3], p.end[w-2] = true, true
		return p
	case *filterNode:
		return windowPropsOf(n.input)
	case *projectNode:
		in := windowPropsOf(n.input)
		if in == nil {
			return nil
		}
		return in.through(n.exprs)
	case *aggNode:
		a, w, ok, _ := windowAggBelow(n)
		if !ok {
			return nil
		}
		in := windowPropsOf(w)
		p := in.through(a.keys)
		if p == nil {
			return nil
		}
		p.start = append(p.start, make([]bool, len(a.calls))...)
		p.end = append(p.end, make([]bool, len(a.calls))...)
		return p
	}
	return nil
}

// through returns the window columns of a projection exprs over p's
// relation, or nil when the projection drops window_start or window_end.
func (p *windowProps) through(exprs []*expr.Expr) *windowProps {
	q := &windowProps{window: p.window, timeType: p.timeType, start: make([]bool, len(exprs)), end: make([]bool, len(exprs))}
	hasStart, hasEnd := false, false
	for i, e := range exprs {
		if e.Op != expr.OpColumn {
			continue
		}
		if p.start[e.Col] {
			q.start[i], hasStart = true, true
		}
		if p.end[e.Col] {
			q.end[i], hasEnd = true, true
		}
	}
	if !hasStart || !hasEnd {
		return nil
	}
	return q
}
