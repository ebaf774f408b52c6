package planner

import (
	"fmt"
	"strings"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// windowNode is a windowing table-valued function (TUMBLE, HOP, CUMULATE)
// over a table: the table's columns, then window_start, window_end and
// window_time. Under an aggregate grouped by window_start and window_end it
// is a window aggregate; anywhere else a relation (buildWindowTVF).
type windowNode struct {
	pos   ast.Pos
	input *scanNode
	// where filters the table's rows: the conditions between the function
	// and a window aggregate over it (windowAggBelow); nil for none.
	where *expr.Expr
	// timeCol is the table's rowtime column in input.
	timeCol int
	window  jobgraph.WindowSpec
	out     types.Schema
}

func (n *windowNode) schema() types.Schema { return n.out }

// windowParams are each function's parameters, in positional order.
var windowParams = map[string][]string{
	jobgraph.WindowTumble:   {"DATA", "TIMECOL", "SIZE", "OFFSET"},
	jobgraph.WindowHop:      {"DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"},
	jobgraph.WindowCumulate: {"DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"},
}

// bindWindowTVF binds TABLE(TUMBLE|HOP|CUMULATE(...)), with positional or
// named (DATA =>, TIMECOL =>, SIZE =>, SLIDE =>, STEP =>) arguments.
func (b *binder) bindWindowTVF(t *ast.TableFunc) (node, *scope, error) {
	fn := strings.ToUpper(t.Call.FuncName())
	params, ok := windowParams[fn]
	if !ok {
		return nil, nil, unsupported(t.Pos, "the table function "+t.Call.FuncName())
	}
	if t.Lateral {
		return nil, nil, unsupported(t.Pos, "LATERAL window functions")
	}
	args := map[string]ast.Expr{}
	named := false
	for i, a := range t.Call.Args {
		name := ""
		if na, ok := a.(*ast.NamedArg); ok {
			name, a, named = strings.ToUpper(na.Name.Name), na.Value, true
			if !containsStr(params, name) {
				return nil, nil, errorf(na.Pos, "%s has no parameter %s (it takes %s)", fn, na.Name.Name, strings.Join(params[:len(params)-1], ", "))
			}
		} else {
			if named {
				return nil, nil, errorf(a.Position(), "a positional argument of %s cannot follow a named one", fn)
			}
			if i >= len(params) {
				return nil, nil, errorf(a.Position(), "%s takes at most %d arguments", fn, len(params))
			}
			name = params[i]
		}
		if _, dup := args[name]; dup {
			return nil, nil, errorf(a.Position(), "%s is given twice", name)
		}
		args[name] = a
	}
	if off, ok := args["OFFSET"]; ok {
		return nil, nil, unsupported(off.Position(), "the OFFSET of a window function")
	}
	for _, p := range params[:len(params)-1] {
		if args[p] == nil {
			return nil, nil, errorf(t.Call.Pos, "%s needs its %s argument", fn, p)
		}
	}
	ta, ok := args["DATA"].(*ast.TableArg)
	if !ok {
		return nil, nil, errorf(args["DATA"].Position(), "the DATA argument of %s must be TABLE name", fn)
	}
	if len(ta.PartitionBy) > 0 {
		return nil, nil, unsupported(ta.Pos, "PARTITION BY in "+fn)
	}
	in, inScope, err := b.bindTableName(&ast.TableName{Pos: ta.Pos, Name: ta.Name})
	if err != nil {
		return nil, nil, err
	}
	scan, ok := in.(*scanNode)
	if !ok {
		return nil, nil, unsupported(ta.Pos, "a window function over "+ta.Name.String())
	}
	d, ok := args["TIMECOL"].(*ast.Descriptor)
	if !ok || len(d.Columns) != 1 {
		return nil, nil, errorf(args["TIMECOL"].Position(), "the TIMECOL argument of %s must be DESCRIPTOR(column)", fn)
	}
	col, err := inScope.resolve(&ast.ColumnRef{Pos: d.Columns[0].Pos, Parts: []*ast.Ident{d.Columns[0]}})
	if err != nil {
		return nil, nil, err
	}
	if col != scan.rowtime {
		return nil, nil, errorf(d.Columns[0].Pos, "The window function requires the timecol is a time attribute type, but is %s.", scan.out[col].Type)
	}
	w := jobgraph.WindowSpec{Kind: fn}
	if w.SizeMs, err = b.windowInterval(fn, "SIZE", args["SIZE"]); err != nil {
		return nil, nil, err
	}
	switch fn {
	case jobgraph.WindowHop:
		if w.StepMs, err = b.windowInterval(fn, "SLIDE", args["SLIDE"]); err != nil {
			return nil, nil, err
		}
		if w.SizeMs%w.StepMs != 0 {
			return nil, nil, errorf(args["SIZE"].Position(), "HOP table function based aggregate requires size must be an integral multiple of slide, but got size %d ms and slide %d ms", w.SizeMs, w.StepMs)
		}
	case jobgraph.WindowCumulate:
		if w.StepMs, err = b.windowInterval(fn, "STEP", args["STEP"]); err != nil {
			return nil, nil, err
		}
		if w.SizeMs%w.StepMs != 0 {
			return nil, nil, errorf(args["SIZE"].Position(), "CUMULATE table function based aggregate requires maxSize must be an integral multiple of step, but got maxSize %d ms and step %d ms", w.SizeMs, w.StepMs)
		}
	}
	n := &windowNode{pos: t.Pos, input: scan, timeCol: col, window: w}
	n.out = append(append(types.Schema{}, scan.out...), windowColumns(scan.out[col].Type)...)
	sc := &scope{}
	for _, f := range n.out {
		sc.cols = append(sc.cols, scopeColumn{name: f.Name, typ: f.Type})
	}
	sc.markRowtime(n)
	if t.Alias != nil {
		if sc, err = applyAlias(sc, t.Alias); err != nil {
			return nil, nil, err
		}
	}
	return n, sc, nil
}

// windowColumns are the columns a window function adds: window_start and
// window_end are TIMESTAMP(3) NOT NULL whatever the time attribute's type,
// window_time has the time attribute's type (window_end - 1 ms).
func windowColumns(rowtime types.DataType) types.Schema {
	ts := types.Timestamp(3).WithNullable(false)
	return types.Schema{
		{Name: "window_start", Type: ts},
		{Name: "window_end", Type: ts},
		{Name: "window_time", Type: rowtime.WithNullable(false)},
	}
}

// windowInterval binds a window's size, slide or step: a positive
// constant INTERVAL DAY TO SECOND, in ms.
func (b *binder) windowInterval(fn, param string, a ast.Expr) (int64, error) {
	e, err := bindExpr(&scope{}, a)
	if err != nil {
		return 0, err
	}
	ms, ok := e.Value.(int64)
	if e.Op != expr.OpLiteral || e.Type.Kind != types.KindIntervalDayTime || !ok {
		return 0, errorf(a.Position(), "the %s of %s must be a constant INTERVAL DAY TO SECOND such as INTERVAL '10' MINUTE, got %s", param, fn, a.String())
	}
	if ms <= 0 {
		return 0, errorf(a.Position(), "the %s of %s must be positive, got %s", param, fn, a.String())
	}
	return ms, nil
}

func containsStr(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// buildWindowAgg plans an aggregate over a window function, grouped by
// window_start and window_end (and possibly window_time and other keys):
// a calc over the table's rows computes the other keys, the aggregates'
// arguments and the rowtime; a HASH edge on the keys (SINGLE without)
// feeds the WindowAggregate, whose output a calc lays out as the
// aggregate's columns. The result is insert-only.
func (ph *physical) buildWindowAgg(n *aggNode, w *windowNode) (*stream, error) {
	nIn := len(w.input.out)
	windowCol := func(e *expr.Expr) int {
		if e.Op == expr.OpColumn && e.Col >= nIn {
			return e.Col - nIn
		}
		return -1
	}
	readsWindow := func(e *expr.Expr) bool {
		for _, c := range columnsOf(e) {
			if c >= nIn {
				return true
			}
		}
		return false
	}
	var exprs []*expr.Expr
	var pre types.Schema
	// where[i] is key i's column in the operator's output.
	where := make([]int, len(n.keys))
	hasStart, hasEnd := false, false
	for i, k := range n.keys {
		if wc := windowCol(k); wc >= 0 {
			where[i] = -1 - wc
			hasStart = hasStart || wc == 0
			hasEnd = hasEnd || wc == 1
			continue
		}
		if readsWindow(k) {
			return nil, unsupported(w.pos, "a GROUP BY key computed from window columns")
		}
		where[i] = len(exprs)
		exprs = append(exprs, k)
		pre = append(pre, n.out[i])
	}
	if !hasStart || !hasEnd {
		return nil, unsupported(w.pos, "a window function whose rows are not grouped by window_start and window_end")
	}
	nk := len(exprs)
	keys := make([]int, nk)
	for i := range keys {
		keys[i] = i
	}
	column := func(e *expr.Expr) int {
		exprs = append(exprs, e)
		pre = append(pre, types.Field{Name: fmt.Sprintf("$f%d", len(pre)), Type: e.Type})
		return len(exprs) - 1
	}
	calls := make([]jobgraph.AggCall, len(n.calls))
	for i, c := range n.calls {
		reads := (c.arg != nil && readsWindow(c.arg)) || (c.filter != nil && readsWindow(c.filter))
		for _, m := range c.more {
			reads = reads || readsWindow(m)
		}
		if reads {
			return nil, unsupported(w.pos, "an aggregate of window columns")
		}
		calls[i] = c.spec(column)
	}
	rowtime := len(exprs)
	exprs = append(exprs, expr.Column(w.timeCol, w.input.out[w.timeCol].Type))
	pre = append(pre, w.input.out[w.timeCol])
	in, err := ph.build(&projectNode{input: w.rows(), exprs: exprs, out: pre})
	if err != nil {
		return nil, err
	}
	if in.changes != "" {
		return nil, errorf(w.pos, "StreamPhysicalWindowAggregate doesn't support consuming update and delete changes which is produced by node %s", in.changes)
	}
	aggOut := append(append(types.Schema{}, pre[:nk]...), windowColumns(w.input.out[w.timeCol].Type)...)
	aggOut = append(aggOut, n.out[len(n.keys):]...)
	spec := jobgraph.WindowAggSpec{InputSchema: in.schema, Keys: keys, Rowtime: rowtime, Window: w.window, Aggs: calls, OutputSchema: aggOut}
	par, part := ph.parallelism, types.PartitionHash
	if nk == 0 {
		par, part = 1, types.PartitionSingle
	}
	name := fmt.Sprintf("WindowAggregate(window=[%s])", describeWindow(w.window))
	v := ph.b.vertex(name, par, 1, op(name, &spec))
	ph.b.edge(in.vertex, v, 0, part, keys)
	s := &stream{vertex: v, schema: aggOut, bounded: in.bounded}
	// Lay the output out as the aggregate's: its keys in GROUP BY order,
	// then the aggregates.
	out := make([]*expr.Expr, len(n.out))
	for i := range n.keys {
		c := where[i]
		if c < 0 {
			c = nk - 1 - c
		}
		out[i] = expr.Column(c, aggOut[c].Type)
	}
	for j := range n.calls {
		c := nk + 3 + j
		out[len(n.keys)+j] = expr.Column(c, aggOut[c].Type)
	}
	return ph.calc(s, nil, out, n.out), nil
}

// describeWindow names a window as Flink's plans do, roughly:
// TUMBLE(size=[10 min]).
func describeWindow(w jobgraph.WindowSpec) string {
	switch w.Kind {
	case jobgraph.WindowHop:
		return fmt.Sprintf("HOP(slide=[%d ms], size=[%d ms])", w.StepMs, w.SizeMs)
	case jobgraph.WindowCumulate:
		return fmt.Sprintf("CUMULATE(step=[%d ms], max_size=[%d ms])", w.StepMs, w.SizeMs)
	}
	return fmt.Sprintf("TUMBLE(size=[%d ms])", w.SizeMs)
}
