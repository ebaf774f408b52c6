package planner

import (
	"fmt"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
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
	switch {
	case n.window.Kind == jobgraph.WindowSession:
		return nil, unsupported(n.pos, "a SESSION window function other than under a window aggregate")
	case n.proctime:
		return nil, unsupported(n.pos, "a processing-time window function other than under a window aggregate")
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
			nIn := len(x.input.schema())
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

// windowRelationBelow returns the window function n reads as a relation,
// seen through filters and projections, or nil.
func windowRelationBelow(n node) *windowNode {
	for {
		switch x := n.(type) {
		case *windowNode:
			return x
		case *filterNode:
			n = x.input
		case *projectNode:
			n = x.input
		default:
			return nil
		}
	}
}
