package planner

import (
	"strings"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/types"
)

// timeAttrs are the time attributes of a relation: the columns of its
// output that are its rowtime (event-time) and its processing-time
// attribute, -1 for none.
//
// As in Flink (RelTimeIndicatorConverter), a time attribute stays one while
// it is only forwarded: through filters, projections that pass the column
// on unchanged (renamed or not), views, common table expressions and
// subqueries in FROM, OVER aggregates, and UNION ALL when every input has
// it in that column. An expression over it (CAST,
// arithmetic, a CASE) is a plain timestamp, and so is every column of a
// regular join's or a group aggregate's output. A window function's
// window_time is a time attribute of its output, and its input's columns
// keep theirs; a window aggregate's window_time and a group
// window's *_ROWTIME are rowtime attributes of theirs. PROCTIME() in a
// SELECT list makes a processing-time attribute.
type timeAttrs struct {
	rowtime, proctime int
}

var noTimeAttrs = timeAttrs{rowtime: -1, proctime: -1}

// timeKind says whether a column is a time attribute, and which.
type timeKind int

const (
	notTime timeKind = iota
	rowtimeAttr
	proctimeAttr
)

// timeAttrsOf returns n's time attributes: the first column of each kind.
func timeAttrsOf(n node) timeAttrs {
	if a, ok := n.(*aggNode); ok {
		return aggTimeAttrs(a)
	}
	t := noTimeAttrs
	for c := range n.schema() {
		switch timeKindOf(n, c) {
		case rowtimeAttr:
			if t.rowtime < 0 {
				t.rowtime = c
			}
		case proctimeAttr:
			if t.proctime < 0 {
				t.proctime = c
			}
		}
	}
	return t
}

// timeKindOf says whether column col of n's output is a time attribute.
func timeKindOf(n node, col int) timeKind {
	if col < 0 || col >= len(n.schema()) {
		return notTime
	}
	switch n := n.(type) {
	case *scanNode:
		switch {
		case col == n.rowtime:
			return rowtimeAttr
		case col < len(n.table.Columns) && n.table.Columns[col].Proctime():
			return proctimeAttr
		}
	case *filterNode:
		return timeKindOf(n.input, col)
	case *overNode:
		// The input's columns come first, unchanged; the aggregates are
		// values.
		return timeKindOf(n.input, col)
	case *projectNode:
		switch e := n.exprs[col]; {
		case e.Op == expr.OpColumn:
			return timeKindOf(n.input, e.Col)
		case isProctimeCall(e):
			return proctimeAttr
		}
	case *unionNode:
		// A column of UNION ALL is a time attribute when it is one of the
		// same kind in every input.
		k := timeKindOf(n.inputs[0], col)
		for _, in := range n.inputs[1:] {
			if timeKindOf(in, col) != k {
				return notTime
			}
		}
		return k
	case *windowNode:
		// NB: the input's columns keep their kinds, as in Flink, whose
		// window deduplication orders by the table's time column over the
		// function; window_time is the window's time attribute.
		if nIn := len(n.input.schema()); col < nIn {
			return timeKindOf(n.input, col)
		}
		if col != len(n.out)-1 {
			return notTime
		}
		if n.proctime {
			return proctimeAttr
		}
		return rowtimeAttr
	case *aggNode:
		if aggTimeAttrs(n).rowtime == col {
			return rowtimeAttr
		}
	}
	return notTime
}

// aggTimeAttrs returns the rowtime attribute of an aggregate's output: a
// legacy group window's *_ROWTIME, or window_time as a key of a window
// aggregate over an event-time window function.
func aggTimeAttrs(n *aggNode) timeAttrs {
	t := noTimeAttrs
	if n.window != nil {
		for i, c := range n.calls {
			if c.aux != nil && c.aux.prop == auxRowtime {
				t.rowtime = len(n.keys) + i
				return t
			}
		}
		return t
	}
	a, w, ok, err := windowAggBelow(n)
	if !ok || err != nil || w.proctime {
		return t
	}
	wt := len(w.input.schema()) + 2
	for i, k := range a.keys {
		if k.Op == expr.OpColumn && k.Col == wt {
			t.rowtime = i
			return t
		}
	}
	return t
}

// isProctimeCall reports whether e is a call of PROCTIME().
func isProctimeCall(e *expr.Expr) bool {
	return e.Op == expr.OpCall && strings.EqualFold(e.Func, "PROCTIME") && len(e.Args) == 0
}

// rowtimeOf returns the column of n's output that is its rowtime
// attribute, or -1 (see timeAttrs).
func rowtimeOf(n node) int { return timeAttrsOf(n).rowtime }

// timeAttribute is "ROWTIME" when column col of n is a rowtime
// attribute, "PROCTIME" when it is a processing-time attribute, else "".
func timeAttribute(n node, col int) string {
	switch timeKindOf(n, col) {
	case rowtimeAttr:
		return "ROWTIME"
	case proctimeAttr:
		return "PROCTIME"
	}
	return ""
}

// timeTypeString is t as Flink prints a type in plans: without its
// nullability, and with *ROWTIME* or *PROCTIME* for a time attribute.
func timeTypeString(t types.DataType, k timeKind) string {
	s := t.WithNullable(true).String()
	switch k {
	case rowtimeAttr:
		s += " *ROWTIME*"
	case proctimeAttr:
		s += " *PROCTIME*"
	}
	return s
}
