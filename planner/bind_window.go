package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// windowNode is a windowing table-valued function (TUMBLE, HOP, CUMULATE,
// SESSION) over a relation (a table, a view, a common table expression or
// a subquery) whose time attribute it windows: its columns, then window_start,
// window_end and window_time. Under an aggregate grouped by window_start
// and window_end it is a window aggregate; anywhere else a relation
// (buildWindowTVF).
type windowNode struct {
	pos   ast.Pos
	input node
	// where filters the table's rows: the conditions between the function
	// and a window aggregate over it (windowAggBelow); nil for none.
	where *expr.Expr
	// timeCol is the input's time attribute column (see timeAttrs).
	timeCol int
	window  jobgraph.WindowSpec
	// partition are SESSION's PARTITION BY columns in input.
	partition []int
	// proctime is set when timeCol is a PROCTIME() attribute.
	proctime bool
	out      types.Schema
}

func (n *windowNode) schema() types.Schema { return n.out }

// windowParams are each function's parameters, in positional order.
var windowParams = map[string][]string{
	jobgraph.WindowTumble:   {"DATA", "TIMECOL", "SIZE", "OFFSET"},
	jobgraph.WindowHop:      {"DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"},
	jobgraph.WindowCumulate: {"DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"},
	jobgraph.WindowSession:  {"DATA", "TIMECOL", "GAP"},
}

// windowRequired are the parameters of params a call must give: all but
// OFFSET.
func windowRequired(params []string) []string {
	if params[len(params)-1] == "OFFSET" {
		return params[:len(params)-1]
	}
	return params
}

// bindWindowTVF binds TABLE(TUMBLE|HOP|CUMULATE|SESSION(...)), with
// positional or named (DATA =>, TIMECOL =>, SIZE =>, SLIDE =>, STEP =>,
// GAP =>) arguments; SESSION's table may have a PARTITION BY.
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
				return nil, nil, errorf(na.Pos, "%s has no parameter %s (it takes %s)", fn, na.Name.Name, strings.Join(params, ", "))
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
	for _, p := range windowRequired(params) {
		if args[p] == nil {
			return nil, nil, errorf(t.Call.Pos, "%s needs its %s argument", fn, p)
		}
	}
	in, inScope, ta, err := b.bindWindowData(fn, args["DATA"])
	if err != nil {
		return nil, nil, err
	}
	d, ok := args["TIMECOL"].(*ast.Descriptor)
	if !ok || len(d.Columns) != 1 {
		return nil, nil, errorf(args["TIMECOL"].Position(), "the TIMECOL argument of %s must be DESCRIPTOR(column)", fn)
	}
	col, err := inScope.resolve(&ast.ColumnRef{Pos: d.Columns[0].Pos, Parts: []*ast.Ident{d.Columns[0]}})
	if err != nil {
		return nil, nil, err
	}
	kind := timeKindOf(in, col)
	proctime := kind == proctimeAttr
	if kind == notTime {
		return nil, nil, errorf(d.Columns[0].Pos, "The window function requires the timecol is a time attribute type, but is %s.", in.schema()[col].Type)
	}
	w := jobgraph.WindowSpec{Kind: fn}
	var partition []int
	if fn == jobgraph.WindowSession {
		if w.GapMs, err = b.windowInterval(fn, "GAP", args["GAP"]); err != nil {
			return nil, nil, err
		}
		if partition, err = sessionPartition(ta, inScope); err != nil {
			return nil, nil, err
		}
	} else if w.SizeMs, err = b.windowInterval(fn, "SIZE", args["SIZE"]); err != nil {
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
	if off, ok := args["OFFSET"]; ok {
		if w.OffsetMs, err = windowOffset(fn, off, w); err != nil {
			return nil, nil, err
		}
	}
	n := &windowNode{pos: t.Pos, input: in, timeCol: col, window: w, partition: partition, proctime: proctime}
	n.out = append(append(types.Schema{}, in.schema()...), windowColumns(in.schema()[col].Type)...)
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

// bindWindowData binds the DATA argument of the window function fn: TABLE
// name, where name is a table, a view or a common table expression, or a
// subquery in parentheses, either with a PARTITION BY for SESSION, as
// Flink (Calcite's grammar) accepts. It returns the relation, its scope,
// and the table argument (nil for a subquery without PARTITION BY).
func (b *binder) bindWindowData(fn string, a ast.Expr) (node, *scope, *ast.TableArg, error) {
	switch a := a.(type) {
	case *ast.TableArg:
		if len(a.PartitionBy) > 0 && fn != jobgraph.WindowSession {
			return nil, nil, nil, unsupported(a.Pos, "PARTITION BY in "+fn)
		}
		if a.Query != nil {
			in, sc, err := b.bindWindowQuery(a.Query)
			return in, sc, a, err
		}
		in, sc, err := b.bindTableName(&ast.TableName{Pos: a.Pos, Name: a.Name})
		return in, sc, a, err
	case *ast.Subquery:
		in, sc, err := b.bindWindowQuery(a.Query)
		return in, sc, nil, err
	}
	return nil, nil, nil, errorf(a.Position(), "the DATA argument of %s must be TABLE name or a subquery in parentheses", fn)
}

// bindWindowQuery binds a subquery given as a window function's data.
func (b *binder) bindWindowQuery(q *ast.Query) (node, *scope, error) {
	in, err := b.bindQuery(q)
	if err != nil {
		return nil, nil, err
	}
	sc, err := relationScope(in, nil, "", nil)
	return in, sc, err
}

// sessionPartition resolves SESSION's PARTITION BY: columns of the table,
// each once; none without a TABLE argument.
func sessionPartition(ta *ast.TableArg, sc *scope) ([]int, error) {
	var cols []int
	if ta == nil {
		return nil, nil
	}
	for _, e := range ta.PartitionBy {
		ref, ok := e.(*ast.ColumnRef)
		if !ok {
			return nil, unsupported(e.Position(), "a PARTITION BY expression other than a column")
		}
		c, err := sc.resolve(ref)
		if err != nil {
			return nil, err
		}
		if slices.Contains(cols, c) {
			return nil, errorf(e.Position(), "column %s is given twice in PARTITION BY", ref.String())
		}
		cols = append(cols, c)
	}
	return cols, nil
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
// window_start and window_end (and possibly window_time and other keys).
func (ph *physical) buildWindowAgg(n *aggNode, w *windowNode) (*stream, error) {
	return ph.windowAggregate(n, windowedInput{pos: w.pos, input: w.rows(), timeCol: w.timeCol,
		window: w.window, partition: w.partition, proctime: w.proctime, tvf: true})
}

// buildGroupWindowAgg plans an aggregate grouped by a legacy group window
// (GROUP BY TUMBLE(ts, ...), k) on the same window aggregate.
func (ph *physical) buildGroupWindowAgg(n *aggNode) (*stream, error) {
	gw := n.window
	return ph.windowAggregate(n, windowedInput{pos: gw.pos, input: n.input, timeCol: gw.timeCol, window: gw.window, proctime: gw.proctime})
}

// windowedInput is what a window aggregate reads: input's rows, assigned
// to windows by timeCol. For a window function (tvf) the aggregate's
// input is input's columns then window_start, window_end and window_time,
// which its keys name; for a group window the auxiliary calls name them.
type windowedInput struct {
	pos       ast.Pos
	input     node
	timeCol   int
	window    jobgraph.WindowSpec
	partition []int // SESSION's PARTITION BY columns (window functions only)
	proctime  bool  // timeCol is a PROCTIME() attribute
	tvf       bool
}

// windowAggregate plans a window aggregate: a calc over the input's rows
// computes the keys (other than the window columns), the aggregates'
// arguments and the time column; a HASH edge on the keys (SINGLE without)
// feeds the WindowAggregate, whose output a calc lays out as the
// aggregate's columns. The result is insert-only.
func (ph *physical) windowAggregate(n *aggNode, w windowedInput) (*stream, error) {
	inSchema := w.input.schema()
	nIn := len(inSchema)
	windowCol := func(e *expr.Expr) int {
		if w.tvf && e.Op == expr.OpColumn && e.Col >= nIn {
			return e.Col - nIn
		}
		return -1
	}
	readsWindow := func(e *expr.Expr) bool {
		for _, c := range columnsOf(e) {
			if w.tvf && c >= nIn {
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
	if w.tvf && (!hasStart || !hasEnd) {
		return nil, unsupported(w.pos, "a window function whose rows are not grouped by window_start and window_end")
	}
	if w.tvf && w.window.Kind == jobgraph.WindowSession && !sessionKeysMatch(exprs, w.partition) {
		// NB: Flink then runs SESSION as a relation of its own under a
		// group aggregate (WindowUtil.validGroupKeyPartitionKey).
		return nil, unsupported(w.pos, "a SESSION window aggregate whose GROUP BY keys, besides window_start, window_end and window_time, are not the PARTITION BY columns")
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
	var calls []jobgraph.AggCall
	// callCol[j] is call j's column in the operator's output.
	callCol := make([]int, len(n.calls))
	for i, c := range n.calls {
		if c.aux != nil {
			callCol[i] = nk + c.aux.windowColumn()
			continue
		}
		reads := (c.arg != nil && readsWindow(c.arg)) || (c.filter != nil && readsWindow(c.filter))
		for _, m := range c.more {
			reads = reads || readsWindow(m)
		}
		if reads {
			return nil, unsupported(w.pos, "an aggregate of window columns")
		}
		if w.window.Kind == jobgraph.WindowSession && !mergeable(c.fn) {
			// Their results depend on the rows' arrival order, which
			// merged sessions interleave.
			return nil, unsupported(w.pos, c.fn+" in a SESSION window aggregate")
		}
		callCol[i] = nk + 3 + len(calls)
		calls = append(calls, c.spec(column))
	}
	rowtime := len(exprs)
	exprs = append(exprs, expr.Column(w.timeCol, inSchema[w.timeCol].Type))
	pre = append(pre, inSchema[w.timeCol])
	in, err := ph.build(&projectNode{input: w.input, exprs: exprs, out: pre})
	if err != nil {
		return nil, err
	}
	if in.changes != "" {
		return nil, errorf(w.pos, "StreamPhysicalWindowAggregate doesn't support consuming update and delete changes which is produced by node %s", in.changes)
	}
	aggOut := append(append(types.Schema{}, pre[:nk]...), windowColumns(inSchema[w.timeCol].Type)...)
	for i, c := range n.calls {
		if c.aux == nil {
			aggOut = append(aggOut, n.out[len(n.keys)+i])
		}
	}
	spec := jobgraph.WindowAggSpec{InputSchema: in.schema, Keys: keys, Rowtime: rowtime, Window: w.window, Proctime: w.proctime, Aggs: calls, OutputSchema: aggOut}
	par, part := ph.parallelism, types.PartitionHash
	if nk == 0 {
		par, part = 1, types.PartitionSingle
	}
	name := fmt.Sprintf("WindowAggregate(window=[%s])", describeWindow(w.window))
	if w.proctime {
		name = fmt.Sprintf("WindowAggregate(window=[%s], time=[proctime])", describeWindow(w.window))
	}
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
		c := callCol[j]
		out[len(n.keys)+j] = expr.Column(c, aggOut[c].Type)
	}
	return ph.calc(s, nil, out, n.out), nil
}

// describeWindow names a window as Flink's plans do, roughly:
// TUMBLE(size=[10 min]).
func describeWindow(w jobgraph.WindowSpec) string {
	var d string
	switch w.Kind {
	case jobgraph.WindowSession:
		d = fmt.Sprintf("SESSION(gap=[%d ms])", w.GapMs)
	case jobgraph.WindowHop:
		d = fmt.Sprintf("HOP(slide=[%d ms], size=[%d ms])", w.StepMs, w.SizeMs)
	case jobgraph.WindowCumulate:
		d = fmt.Sprintf("CUMULATE(step=[%d ms], max_size=[%d ms])", w.StepMs, w.SizeMs)
	default:
		d = fmt.Sprintf("TUMBLE(size=[%d ms])", w.SizeMs)
	}
	if w.OffsetMs != 0 {
		d = d[:len(d)-1] + fmt.Sprintf(", offset=[%d ms])", w.OffsetMs)
	}
	return d
}

// sessionKeysMatch reports whether keys, the GROUP BY keys other than the
// window columns, are the PARTITION BY columns, as a set.
func sessionKeysMatch(keys []*expr.Expr, partition []int) bool {
	if len(keys) != len(partition) {
		return false
	}
	for _, k := range keys {
		if k.Op != expr.OpColumn || !slices.Contains(partition, k.Col) {
			return false
		}
	}
	return true
}

// mergeable reports whether the aggregate function's accumulators merge,
// as SESSION windows need.
func mergeable(fn string) bool {
	switch fn {
	case jobgraph.AggListAgg, jobgraph.AggFirstValue, jobgraph.AggLastValue:
		return false
	}
	return true
}

// windowOffset binds the OFFSET of TUMBLE, HOP or CUMULATE: a constant
// INTERVAL DAY TO SECOND, possibly negative; a TUMBLE's must be smaller
// than its size (Flink's WindowUtil check).
func windowOffset(fn string, a ast.Expr, w jobgraph.WindowSpec) (int64, error) {
	e, err := bindExpr(&scope{}, a)
	if err != nil {
		return 0, err
	}
	ms, ok := e.Value.(int64)
	if e.Op != expr.OpLiteral || e.Type.Kind != types.KindIntervalDayTime || !ok {
		return 0, errorf(a.Position(), "the OFFSET of %s must be a constant INTERVAL DAY TO SECOND such as INTERVAL '1' MINUTE, got %s", fn, a.String())
	}
	if fn == jobgraph.WindowTumble && (ms >= w.SizeMs || -ms >= w.SizeMs) {
		return 0, errorf(a.Position(), "TUMBLE table function parameters must satisfy abs(offset) < size, but got size %d ms and offset %d ms.", w.SizeMs, ms)
	}
	return ms, nil
}
