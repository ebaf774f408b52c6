package planner

import (
	"fmt"
	"strings"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// overWindow is the window of a SELECT's OVER aggregates: partition
// columns and the rowtime column of the input, and the frame.
type overWindow struct {
	partition []int
	rowtime   int
	// rows is a ROWS frame, else RANGE; unbounded is UNBOUNDED PRECEDING,
	// else the frame starts preceding rows (ROWS) or ms (RANGE) before the
	// current row. Every frame ends at the current row.
	rows, unbounded bool
	preceding       int64
	// text is the window as plans show it.
	partNames []string
	orderName string
}

func (w *overWindow) frameText() string {
	kind := "RANGE"
	if w.rows {
		kind = "ROWS"
	}
	if w.unbounded {
		return kind + " BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
	}
	if w.preceding == 0 {
		return kind + " BETWEEN CURRENT ROW AND CURRENT ROW"
	}
	return fmt.Sprintf("%s BETWEEN %d PRECEDING AND CURRENT ROW", kind, w.preceding)
}

// key is equal for windows that are the same.
func (w *overWindow) key() string {
	return fmt.Sprintf("%v %d %v %v %d", w.partition, w.rowtime, w.rows, w.unbounded, w.preceding)
}

// overBinder collects the OVER aggregates of a SELECT list. Like
// aggBinder, a bound call stands in its expression as a placeholder column
// width+i, which is the column of the OverAggregate's output that holds
// it: the OverAggregate emits its input's columns, then the aggregates.
type overBinder struct {
	aggs    aggBinder
	windows []*ast.NamedWindow
	sc      *scope // the FROM clause's columns
	in      node   // the FROM clause's relation, whose time attributes order windows
	win     *overWindow
	pos     ast.Pos // the first OVER aggregate
}

// overFuncs are the aggregate functions an OVER window computes.
var overFuncs = map[string]bool{"COUNT": true, "SUM": true, "AVG": true, "MIN": true, "MAX": true}

// bind binds one OVER aggregate. Every OVER aggregate of a SELECT must
// use the same window, as Flink's streaming OverAggregate requires.
func (o *overBinder) bind(sc *scope, f *ast.FuncCall, name string) (*expr.Expr, error) {
	switch {
	case !aggregates[name] && name != "ROW_NUMBER":
		return nil, errorf(f.Pos, "%s is not an aggregate or window function and takes no OVER", name)
	case !overFuncs[name]:
		return nil, unsupported(f.Pos, name+" over an OVER window (COUNT, SUM, AVG, MIN and MAX are)")
	case f.Distinct:
		return nil, unsupported(f.Pos, "DISTINCT in an OVER aggregate")
	case f.Filter != nil:
		return nil, unsupported(f.Pos, "FILTER in an OVER aggregate")
	}
	w, err := o.window(f)
	if err != nil {
		return nil, err
	}
	if o.win == nil {
		o.win, o.pos = w, f.Pos
	} else if o.win.key() != w.key() {
		return nil, errorf(f.Pos, "Over Agg: Unsupported use of OVER windows. All aggregates must be computed on the same window. please re-check the over window statement.")
	}
	plain := *f
	plain.Over, plain.OverName = nil, nil
	return o.aggs.bind(sc.withoutAggs("Aggregate expressions cannot be nested"), &plain, name)
}

// window resolves and binds the window of f: OVER (spec), OVER w, or OVER
// (w ...) refining a named window.
func (o *overBinder) window(f *ast.FuncCall) (*overWindow, error) {
	if f.OverName != nil {
		spec, err := o.named(f.OverName)
		if err != nil {
			return nil, err
		}
		return o.bindWindow(f.Pos, spec)
	}
	spec := f.Over
	if spec.Ref != nil {
		base, err := o.named(spec.Ref)
		if err != nil {
			return nil, err
		}
		merged := *base
		merged.Ref = nil
		switch {
		case len(spec.PartitionBy) > 0:
			return nil, errorf(spec.PartitionBy[0].Position(), "PARTITION BY not allowed with existing window reference")
		case len(spec.OrderBy) > 0 && len(base.OrderBy) > 0:
			return nil, errorf(spec.OrderBy[0].Pos, "ORDER BY not allowed in both base and referenced windows")
		case base.Frame != nil:
			return nil, errorf(spec.Ref.Pos, "Referenced window cannot have framing declarations")
		}
		if len(spec.OrderBy) > 0 {
			merged.OrderBy = spec.OrderBy
		}
		merged.Frame = spec.Frame
		spec = &merged
	}
	return o.bindWindow(f.Pos, spec)
}

// named finds a window of the WINDOW clause.
func (o *overBinder) named(id *ast.Ident) (*ast.WindowSpec, error) {
	for _, w := range o.windows {
		if w.Name.Name == id.Name {
			if w.Spec.Ref != nil {
				return nil, unsupported(w.Spec.Ref.Pos, "a named window defined over another one")
			}
			return w.Spec, nil
		}
	}
	return nil, errorf(id.Pos, "Window '%s' not found", id.Name)
}

func (o *overBinder) bindWindow(pos ast.Pos, spec *ast.WindowSpec) (*overWindow, error) {
	w := &overWindow{unbounded: true}
	plain := o.sc.withoutAggs("Aggregate expressions are not allowed in an OVER window's PARTITION BY or ORDER BY")
	for _, p := range spec.PartitionBy {
		e, err := bindExpr(plain, p)
		if err != nil {
			return nil, err
		}
		if e.Op != expr.OpColumn {
			return nil, unsupported(p.Position(), "PARTITION BY an expression in an OVER window (compute it in a subquery)")
		}
		w.partition = append(w.partition, e.Col)
		w.partNames = append(w.partNames, p.String())
	}
	if len(spec.OrderBy) != 1 {
		return nil, errorf(pos, "The window can only be ordered by a single time column.")
	}
	ord := spec.OrderBy[0]
	if ord.Desc {
		return nil, errorf(ord.Pos, "The window can only be ordered in ASCENDING mode.")
	}
	e, err := bindExpr(plain, ord.Expr)
	if err != nil {
		return nil, err
	}
	kind := notTime
	if e.Op == expr.OpColumn {
		kind = timeKindOf(o.in, e.Col)
	}
	switch kind {
	case proctimeAttr:
		return nil, unsupported(ord.Pos, "an OVER window ordered by a processing-time attribute")
	case notTime:
		return nil, errorf(ord.Pos, "OVER windows' ordering in stream mode must be defined on a time attribute.")
	}
	w.rowtime, w.orderName = e.Col, ord.Expr.String()
	fr := spec.Frame
	if fr == nil {
		return w, nil // RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
	}
	w.rows = fr.Rows
	if fr.End != nil && fr.End.Kind != "CURRENT ROW" {
		return nil, unsupported(fr.End.Pos, "an OVER window frame that ends after the current row ("+fr.End.Kind+")")
	}
	switch b := fr.Start; b.Kind {
	case "UNBOUNDED PRECEDING":
	case "CURRENT ROW":
		w.unbounded = false
	case "PRECEDING":
		w.unbounded = false
		if w.preceding, err = o.offset(w.rows, b.Offset); err != nil {
			return nil, err
		}
	default:
		return nil, unsupported(b.Pos, "an OVER window frame that starts after the current row ("+b.Kind+")")
	}
	return w, nil
}

// offset binds the n of n PRECEDING: a non-negative integer literal for
// ROWS, a constant INTERVAL DAY TO SECOND (in ms) for RANGE.
func (o *overBinder) offset(rows bool, a ast.Expr) (int64, error) {
	e, err := bindExpr(&scope{}, a)
	if err != nil {
		return 0, err
	}
	if rows {
		if n, ok := intLiteral(e); ok && n >= 0 && e.Type.IsInteger() {
			return n, nil
		}
		return 0, errorf(a.Position(), "the offset of a ROWS frame must be a non-negative integer literal, got %s", a)
	}
	ms, ok := e.Value.(int64)
	if e.Op != expr.OpLiteral || e.Type.Kind != types.KindIntervalDayTime || !ok || ms < 0 {
		return 0, errorf(a.Position(), "the offset of a RANGE frame ordered by a time attribute must be a constant INTERVAL DAY TO SECOND such as INTERVAL '1' HOUR, got %s", a)
	}
	return ms, nil
}

// overNode is a rowtime OVER aggregation: its input's columns, then one
// column per aggregate over the window.
type overNode struct {
	pos   ast.Pos
	input node
	win   *overWindow
	calls []aggCall
	out   types.Schema
}

func (n *overNode) schema() types.Schema { return n.out }

// node returns the overNode of the bound calls over in.
func (o *overBinder) node(in node) *overNode {
	out := append(types.Schema{}, in.schema()...)
	for i, c := range o.aggs.calls {
		out = append(out, types.Field{Name: fmt.Sprintf("w0$o%d", i), Type: c.typ})
	}
	return &overNode{pos: o.pos, input: in, win: o.win, calls: o.aggs.calls, out: out}
}

// buildOver plans an OVER aggregation: a calc computes the aggregates'
// arguments that are not input columns, a HASH edge on the partition
// columns (SINGLE without) feeds the OverAggregate, and a calc drops the
// computed arguments after it. The input must be insert-only.
func (ph *physical) buildOver(n *overNode) (*stream, error) {
	in, err := ph.build(n.input)
	if err != nil {
		return nil, err
	}
	if in.changes != "" {
		return nil, errorf(n.pos, "StreamPhysicalOverAggregate doesn't support consuming update and delete changes which is produced by node %s", in.changes)
	}
	nIn := len(in.schema)
	pre := append(types.Schema{}, in.schema...)
	exprs := identity(in.schema)
	column := func(e *expr.Expr) int {
		if e.Op == expr.OpColumn {
			return e.Col
		}
		exprs = append(exprs, e)
		pre = append(pre, types.Field{Name: fmt.Sprintf("$f%d", len(pre)), Type: e.Type})
		return len(exprs) - 1
	}
	calls := make([]jobgraph.AggCall, len(n.calls))
	var sel []string
	for _, f := range in.schema {
		sel = append(sel, f.Name)
	}
	for i, c := range n.calls {
		calls[i] = c.spec(column)
		arg := "*"
		if c.arg != nil {
			arg = pre[calls[i].Arg].Name
		}
		sel = append(sel, fmt.Sprintf("%s(%s) AS w0$o%d", c.fn, arg, i))
	}
	s := in
	if len(exprs) > nIn {
		s = ph.calc(in, nil, exprs, pre)
	}
	out := append(append(types.Schema{}, pre...), n.out[nIn:]...)
	w := n.win
	spec := jobgraph.OverAggSpec{InputSchema: pre, Partition: w.partition, Rowtime: w.rowtime, Rows: w.rows,
		Unbounded: w.unbounded, Preceding: w.preceding, Aggs: calls, OutputSchema: out}
	name := fmt.Sprintf("OverAggregate(partitionBy=[%s], orderBy=[%s ASC], window=[%s], select=[%s])",
		strings.Join(w.partNames, ", "), w.orderName, w.frameText(), strings.Join(sel, ", "))
	par, part := ph.parallelism, types.PartitionHash
	if len(w.partition) == 0 {
		par, part = 1, types.PartitionSingle
	}
	v := ph.b.vertex(name, par, 1, op(name, &spec))
	ph.b.edge(s.vertex, v, 0, part, w.partition)
	res := &stream{vertex: v, schema: out, bounded: s.bounded}
	if len(pre) > nIn {
		keep := identity(in.schema)
		for i := range n.calls {
			keep = append(keep, expr.Column(len(pre)+i, out[len(pre)+i].Type))
		}
		res = ph.calc(res, nil, keep, n.out)
	}
	return res, nil
}
