package planner

import (
	"fmt"
	"strings"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// rankNode is a streaming Top-N, Flink's Rank with rankType=[ROW_NUMBER]:
// per partition (partition columns of the input; none for ORDER BY ...
// LIMIT) the first limit rows in order. Its output is the first keep input
// columns (the input's later columns are the sort and partition keys the
// query does not select), then, for the ROW_NUMBER form, the row number
// column, which the operator computes only when the query reads it
// (outputRankNumber).
type rankNode struct {
	pos       ast.Pos
	input     node
	partition []int
	order     []jobgraph.SortKey
	// limit is n; 0 for a ROW_NUMBER whose enclosing filter has not been
	// bound yet.
	limit     int64
	keep      int
	rowNumber bool
	// orderTime is "ROWTIME" or "PROCTIME" when the rank has one sort key
	// and it is that time attribute of the input (see dedup), else "".
	orderTime string
	// rankType is the ranking function of the ROW_NUMBER form: ROW_NUMBER,
	// RANK or DENSE_RANK (the last two are refused when planned).
	rankType string
	// outputRankNumber is set when the SELECT over the rank reads the row
	// number column, as Flink's outputRankNumber.
	outputRankNumber bool
	out              types.Schema
	// names are the SQL text of the partition keys, then the sort keys,
	// for plans and errors.
	names []string
}

func (n *rankNode) schema() types.Schema { return n.out }

// rnCol is the index of the row number column of a ROW_NUMBER rank.
func (n *rankNode) rnCol() int { return n.keep }

// bindTopN binds query ORDER BY ... LIMIT n into a global Top-N.
func (b *binder) bindTopN(q *ast.Query) (node, error) {
	if q.Offset != nil {
		return nil, unsupported(q.Offset.Position(), "OFFSET")
	}
	if q.Limit == nil {
		// NB: Braid has no temporal sort (ORDER BY a rowtime ascending);
		// Flink's message is the right one for every other first key.
		return nil, errorf(q.OrderBy[0].Pos, "Sort on a non-time-attribute field is not supported.")
	}
	if len(q.OrderBy) == 0 {
		return nil, unsupported(q.Limit.Position(), "LIMIT without ORDER BY")
	}
	limit, err := bindLimit(q.Limit)
	if err != nil {
		return nil, err
	}
	in, order, keep, names, err := b.bindOrderBy(q)
	if err != nil {
		return nil, err
	}
	return &rankNode{pos: q.OrderBy[0].Pos, input: in, order: order, limit: limit, keep: keep,
		out: append(types.Schema{}, in.schema()[:keep]...), names: names}, nil
}

// bindOrderBy binds q's body for its ORDER BY: the input node, whose first
// keep columns are the query's output and whose later ones are the ORDER BY
// items that are not output columns (a plain SELECT computes them as
// hidden columns), the sort keys over it, and the SQL text of each key.
// With no ORDER BY it binds the body alone.
func (b *binder) bindOrderBy(q *ast.Query) (in node, order []jobgraph.SortKey, keep int, names []string, err error) {
	if len(q.OrderBy) == 0 {
		in, err = b.bindQueryExpr(q.Body)
		if err != nil {
			return nil, nil, 0, nil, err
		}
		return in, nil, len(in.schema()), nil, nil
	}
	// Each ORDER BY item names an output column, or, in a plain SELECT, is
	// computed as a hidden column after the selected ones.
	var outNames []string
	sel, _ := q.Body.(*ast.Select)
	if sel != nil && sel.Distinct {
		sel = nil
	}
	var body ast.QueryExpr = q.Body
	cols := make([]int, len(q.OrderBy))
	var hidden []*ast.SelectItem
	if sel != nil {
		visible, err := b.bindQueryExpr(q.Body)
		if err != nil {
			return nil, nil, 0, nil, err
		}
		outNames = visible.schema().Names()
		for i, item := range q.OrderBy {
			if c := outputColumn(item.Expr, outNames); c >= 0 {
				cols[i] = c
				continue
			}
			cols[i] = len(outNames) + len(hidden)
			hidden = append(hidden, &ast.SelectItem{Pos: item.Pos, Expr: item.Expr,
				Alias: &ast.Ident{Pos: item.Pos, Name: fmt.Sprintf("$order%d", len(hidden))}})
		}
		if len(hidden) > 0 {
			c := *sel
			c.Items = append(append([]*ast.SelectItem{}, sel.Items...), hidden...)
			body = &c
		}
	}
	in, err = b.bindQueryExpr(body)
	if err != nil {
		return nil, nil, 0, nil, err
	}
	keep = len(in.schema()) - len(hidden)
	if sel == nil {
		outNames = in.schema().Names()
		for i, item := range q.OrderBy {
			if cols[i] = outputColumn(item.Expr, outNames); cols[i] < 0 {
				return nil, nil, 0, nil, errorf(item.Pos, "ORDER BY %s must name an output column of this query", item.Expr)
			}
		}
	}
	order, err = sortKeys(q.OrderBy, cols, in.schema())
	if err != nil {
		return nil, nil, 0, nil, err
	}
	for _, o := range q.OrderBy {
		names = append(names, o.Expr.String())
	}
	return in, order, keep, names, nil
}

// outputColumn is the output column an ORDER BY item names by its name, or -1.
func outputColumn(e ast.Expr, names []string) int {
	ref, ok := e.(*ast.ColumnRef)
	if !ok || len(ref.Parts) != 1 {
		return -1
	}
	found := -1
	for i, n := range names {
		if n == ref.Parts[0].Name {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

func sortKeys(items []*ast.OrderItem, cols []int, in types.Schema) ([]jobgraph.SortKey, error) {
	keys := make([]jobgraph.SortKey, len(items))
	for i, item := range items {
		keys[i] = jobgraph.SortKey{Col: cols[i], Desc: item.Desc,
			NullsFirst: item.Nulls == "FIRST", NullsLast: item.Nulls == "LAST"}
	}
	return keys, nil
}

// bindLimit reads LIMIT n: a positive integer literal.
func bindLimit(e ast.Expr) (int64, error) {
	v, err := bindExpr(&scope{}, e)
	if err == nil {
		if n, ok := intLiteral(v); ok && n > 0 {
			return n, nil
		}
	}
	return 0, errorf(e.Position(), "LIMIT must be a positive integer literal, got %s", e)
}

// intLiteral is the value of an integer literal, under any casts.
func intLiteral(e *expr.Expr) (int64, bool) {
	for e.Op == expr.OpCall && e.Func == "CAST" && len(e.Args) == 1 {
		e = e.Args[0]
	}
	if e.Op != expr.OpLiteral {
		return 0, false
	}
	v, ok := e.Value.(int64)
	return v, ok
}

// rowNumberItem returns the index of the ROW_NUMBER() (or RANK(),
// DENSE_RANK()) OVER (...) item of a SELECT list, or -1.
func rowNumberItem(s *ast.Select) int {
	for i, item := range s.Items {
		if f, ok := item.Expr.(*ast.FuncCall); ok && rankFunction(f.FuncName()) != "" &&
			(f.Over != nil || f.OverName != nil) {
			return i
		}
	}
	return -1
}

// rankFunction is the upper-case name of a ranking function, or "".
func rankFunction(name string) string {
	switch n := strings.ToUpper(name); n {
	case "ROW_NUMBER", "RANK", "DENSE_RANK":
		return n
	}
	return ""
}

// bindRowNumber binds SELECT ..., ROW_NUMBER() OVER (PARTITION BY k ORDER
// BY x) AS rn FROM ...: the other items, then the partition and sort keys as
// hidden columns, into a rank whose limit the enclosing query's filter on
// rn sets (see takeRowNumberLimit).
func (b *binder) bindRowNumber(s *ast.Select, at int) (node, error) {
	item := s.Items[at]
	f := item.Expr.(*ast.FuncCall)
	fn := rankFunction(f.FuncName())
	switch {
	case f.OverName != nil:
		return nil, unsupported(f.Pos, fn+" over a named window")
	case len(f.Args) > 0 || f.Star:
		return nil, errorf(f.Pos, "%s takes no arguments", fn)
	case f.Over.Frame != nil || f.Over.Ref != nil:
		return nil, unsupported(f.Pos, fn+" with a window frame")
	case len(f.Over.OrderBy) == 0:
		return nil, errorf(f.Pos, "%s needs ORDER BY in its OVER clause", fn)
	case len(s.GroupBy) > 0 || s.Having != nil || s.Distinct:
		return nil, unsupported(f.Pos, fn+" in an aggregating SELECT (aggregate in a subquery, rank above it)")
	}
	if other := rowNumberItem(&ast.Select{Items: s.Items[at+1:]}); other >= 0 {
		return nil, unsupported(s.Items[at+1+other].Pos, "a second ranking function in one SELECT")
	}
	c := *s
	c.Items = nil
	for i, it := range s.Items {
		if i != at {
			c.Items = append(c.Items, it)
		}
	}
	hidden := func(prefix string, i int, e ast.Expr) *ast.SelectItem {
		return &ast.SelectItem{Pos: e.Position(), Expr: e, Alias: &ast.Ident{Pos: e.Position(), Name: fmt.Sprintf("$%s%d", prefix, i)}}
	}
	for i, e := range f.Over.PartitionBy {
		c.Items = append(c.Items, hidden("partition", i, e))
	}
	for i, o := range f.Over.OrderBy {
		c.Items = append(c.Items, hidden("order", i, o.Expr))
	}
	in, err := b.bindSelect(&c)
	if err != nil {
		return nil, err
	}
	ins := in.schema()
	np, no := len(f.Over.PartitionBy), len(f.Over.OrderBy)
	keep := len(ins) - np - no
	partition := make([]int, np)
	for i := range partition {
		partition[i] = keep + i
	}
	cols := make([]int, no)
	for i := range cols {
		cols[i] = keep + np + i
	}
	order, err := sortKeys(f.Over.OrderBy, cols, ins)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("EXPR$%d", at)
	if item.Alias != nil {
		name = item.Alias.Name
	}
	out := append(types.Schema{}, ins[:keep]...)
	out = append(out, types.Field{Name: name, Type: types.BigInt.WithNullable(false)})
	var names []string
	for _, e := range f.Over.PartitionBy {
		names = append(names, e.String())
	}
	for _, o := range f.Over.OrderBy {
		names = append(names, o.Expr.String())
	}
	rk := &rankNode{pos: f.Pos, input: in, partition: partition, order: order, keep: keep, rowNumber: true,
		rankType: fn, out: out, names: names}
	if len(order) == 1 {
		rk.orderTime = timeAttribute(in, order[0].Col)
	}
	return rk, nil
}

// constantRowNumber reports whether the row number can only be 1 (rn = 1):
// Flink's RankNumberColumnRemoveRule then makes it a literal after the
// rank, which does not output it.
func (n *rankNode) constantRowNumber() bool {
	return n.rankType == "ROW_NUMBER" && n.limit == 1
}

// emitsRowNumber reports whether the operator outputs the row number.
func (n *rankNode) emitsRowNumber() bool {
	return n.outputRankNumber && !n.constantRowNumber()
}

// dedup reports whether the rank is Flink's Deduplicate instead
// (StreamPhysicalDeduplicateRule.canConvertToDeduplicate): ROW_NUMBER, rank
// range 1 to 1, the row number not output (a constant 1 when read, see
// constantRowNumber), and one sort key that is a time attribute.
func (n *rankNode) dedup() bool {
	return n.constantRowNumber() && n.orderTime != ""
}

// takeRowNumberLimit reads the filter on the row number of rank n from the
// conjuncts of cond (rn <= k, rn < k, rn = 1, k >= rn, k > rn), sets n's
// limit, and returns the other conjuncts (nil when none are left).
func takeRowNumberLimit(n *rankNode, cond *expr.Expr, pos ast.Pos) (*expr.Expr, error) {
	rn := n.rnCol()
	var rest []*expr.Expr
	for _, c := range conjuncts(cond) {
		if n.limit == 0 {
			if k, ok := rowNumberBound(c, rn); ok {
				if k < 1 {
					return nil, errorf(pos, "the filter on the row number keeps no rows")
				}
				n.limit = k
				continue
			}
		}
		if readsColumn(c, rn) {
			return nil, unsupported(pos, "this filter on the ROW_NUMBER column (Braid's Top-N takes rn <= n, rn < n or rn = 1)")
		}
		rest = append(rest, c)
	}
	return and(rest), nil
}

// rowNumberBound is k for rn <= k, rn < k (k-1), rn = 1, or the same flipped.
func rowNumberBound(c *expr.Expr, rn int) (int64, bool) {
	if c.Op != expr.OpCall || len(c.Args) != 2 {
		return 0, false
	}
	op, l, r := c.Func, c.Args[0], c.Args[1]
	if !isColumn(l, rn) {
		flip := map[string]string{"<=": ">=", "<": ">", ">=": "<=", ">": "<", "=": "="}
		op, l, r = flip[op], r, l
	}
	if !isColumn(l, rn) {
		return 0, false
	}
	k, ok := intLiteral(r)
	if !ok {
		return 0, false
	}
	switch op {
	case "<=":
		return k, true
	case "<":
		return k - 1, true
	case "=":
		if k == 1 {
			return 1, true
		}
	}
	return 0, false
}

func isColumn(e *expr.Expr, col int) bool {
	for e.Op == expr.OpCall && e.Func == "CAST" && len(e.Args) == 1 {
		e = e.Args[0]
	}
	return e.Op == expr.OpColumn && e.Col == col
}

func readsColumn(e *expr.Expr, col int) bool {
	for _, c := range columnsOf(e) {
		if c == col {
			return true
		}
	}
	return false
}

// rowNumberBelow returns the ROW_NUMBER rank a SELECT reads from, if any.
func rowNumberBelow(n node) *rankNode {
	if f, ok := n.(*filterNode); ok {
		n = f.input
	}
	if rk, ok := n.(*rankNode); ok && rk.rowNumber {
		return rk
	}
	return nil
}

// markRowNumberRead sets outputRankNumber on a ROW_NUMBER rank when the
// SELECT over it reads the row number column in its list, its aggregates
// or HAVING.
func markRowNumberRead(rk *rankNode, exprs []*expr.Expr, agg *aggBinder, having *expr.Expr) {
	rn := rk.rnCol()
	for _, e := range exprs {
		if readsColumn(e, rn) {
			rk.outputRankNumber = true
		}
	}
	for _, c := range agg.calls {
		if c.arg != nil && readsColumn(c.arg, rn) {
			rk.outputRankNumber = true
		}
	}
	if having != nil && readsColumn(having, rn) {
		rk.outputRankNumber = true
	}
}

// buildRank plans a Top-N: a HASH edge on the partition keys feeds the Rank
// at the default parallelism, or a SINGLE edge a global Top-N (ORDER BY ...
// LIMIT) on one subtask; a calc drops the hidden key columns after it.
func (ph *physical) buildRank(n *rankNode) (*stream, error) {
	batchRank := ph.batch && (n.rankType == "RANK" || n.rankType == "DENSE_RANK")
	if p := windowRankInput(n); p != nil && !batchRank {
		return ph.buildWindowRank(n, p)
	}
	if windowRelationBelow(n.input) != nil {
		what := n.rankType
		if what == "" {
			what = "ORDER BY ... LIMIT"
		}
		return nil, unsupported(n.pos, what+" over a window function (window Top-N and window deduplication)")
	}
	if n.limit == 0 {
		return nil, unsupported(n.pos, n.rankType+" without a filter rn <= n on it in the enclosing query (only Top-N is)")
	}
	atEnd := false
	if n.rankType == "RANK" || n.rankType == "DENSE_RANK" {
		if !ph.batch {
			// NB: Flink's streaming planner supports ROW_NUMBER only
			// (StreamExecRank).
			return nil, errorf(n.pos, "%s() on streaming table is not supported currently", n.rankType)
		}
		// Flink's batch planner runs them (RANK as a BatchExecRank, DENSE_RANK
		// as an OVER aggregate); Braid's Rank ranks once the input has ended.
		atEnd = true
	}
	if n.dedup() {
		return ph.buildDeduplicate(n)
	}
	in, err := ph.build(n.input)
	if err != nil {
		return nil, err
	}
	spec := jobgraph.RankSpec{InputSchema: in.schema, Partition: n.partition, OrderBy: n.order,
		Limit: n.limit, InputRetracts: in.changes != "", OutputRankNumber: n.emitsRowNumber(), EmitAtEnd: atEnd}
	rankType := "ROW_NUMBER"
	if atEnd {
		spec.RankType, rankType = n.rankType, n.rankType
	} else if spec.TTLMs, err = ph.stateTTL(nil); err != nil {
		return nil, err
	}
	strategy := "AppendFastStrategy"
	if spec.InputRetracts {
		strategy = "RetractStrategy"
	}
	var part, order []string
	part = append(part, n.names[:len(n.partition)]...)
	for i, k := range n.order {
		o := n.names[len(n.partition)+i]
		if k.Desc {
			o += " DESC"
		} else {
			o += " ASC"
		}
		switch {
		case k.NullsFirst:
			o += " NULLS FIRST"
		case k.NullsLast:
			o += " NULLS LAST"
		}
		order = append(order, o)
	}
	desc := fmt.Sprintf("Rank(strategy=[%s], rankType=[%s], rankRange=[rankStart=1, rankEnd=%d], partitionBy=[%s], orderBy=[%s], select=[%s])",
		strategy, rankType, n.limit, strings.Join(part, ", "), strings.Join(order, ", "), strings.Join(n.selectNames(in.schema), ", "))
	par, p := ph.parallelism, types.PartitionHash
	if len(n.partition) == 0 {
		par, p = 1, types.PartitionSingle
	}
	name := "Rank"
	if len(n.partition) == 0 {
		name = "Rank (global)"
	}
	v := ph.b.vertex(name, par, 1, op(name, &spec))
	ph.b.edge(in.vertex, v, 0, p, n.partition)
	// NB: a Top-N deletes rows that leave the top, whatever its input; one
	// that emits at the end (batch mode) inserts only.
	s := &stream{vertex: v, schema: spec.OutputSchema(), bounded: in.bounded, changes: desc}
	if atEnd {
		s.changes = ""
	}
	return ph.afterRank(n, s, len(in.schema)), nil
}

// afterRank chains the calc after a rank or deduplicate whose output s has
// the input's width columns (then the row number when the operator outputs
// it): the columns the query keeps, then the row number when it reads it
// (a literal 1 when it is constant); hidden key columns are dropped.
func (ph *physical) afterRank(n *rankNode, s *stream, width int) *stream {
	rn := types.BigInt.WithNullable(false)
	switch {
	case n.outputRankNumber:
		exprs := identity(s.schema[:n.keep])
		if n.emitsRowNumber() {
			exprs = append(exprs, expr.Column(width, rn))
		} else {
			exprs = append(exprs, expr.Literal(int64(1), rn))
		}
		return ph.calc(s, nil, exprs, n.out)
	case n.keep < width:
		out := append(types.Schema{}, s.schema[:n.keep]...)
		return ph.calc(s, nil, identity(out), out)
	}
	return s
}

// selectNames are the rank's columns as Flink's plan lists them in
// select=[...]: the input columns the query keeps, then the partition and
// sort keys it does not (by their SQL text), then the row number when it
// is output.
func (n *rankNode) selectNames(in types.Schema) []string {
	var names []string
	seen := map[string]bool{}
	for _, f := range in[:n.keep] {
		names = append(names, f.Name)
		seen[f.Name] = true
	}
	for _, k := range n.names {
		if !seen[k] && n.keep < len(in) {
			names = append(names, k)
			seen[k] = true
		}
	}
	if n.emitsRowNumber() {
		names = append(names, jobgraph.RankNumberColumn)
	}
	return names
}

// buildDeduplicate plans Flink's Deduplicate: keep the first row per
// partition for ORDER BY time ASC, the last for DESC, behind a HASH edge on
// the partition keys (a SINGLE edge to one subtask without PARTITION BY);
// a calc drops the hidden key columns after it. Its input must be
// insert-only, as Flink's.
func (ph *physical) buildDeduplicate(n *rankNode) (*stream, error) {
	in, err := ph.build(n.input)
	if err != nil {
		return nil, err
	}
	if in.changes != "" {
		kinds := "update and delete"
		if in.updatesOnly {
			kinds = "update"
		}
		return nil, errorf(n.pos, "StreamPhysicalDeduplicate doesn't support consuming %s changes which is produced by node %s", kinds, in.changes)
	}
	keepLast := n.order[0].Desc
	spec := jobgraph.DeduplicateSpec{InputSchema: in.schema, Keys: n.partition, KeepLastRow: keepLast, RowtimeCol: -1}
	if n.orderTime == "ROWTIME" {
		spec.RowtimeCol = n.order[0].Col
	}
	if spec.TTLMs, err = ph.stateTTL(nil); err != nil {
		return nil, err
	}
	keep := "FirstRow"
	if keepLast {
		keep = "LastRow"
	}
	desc := fmt.Sprintf("Deduplicate(keep=[%s], key=[%s], order=[%s])", keep, strings.Join(n.names[:len(n.partition)], ", "), n.orderTime)
	par, p := ph.parallelism, types.PartitionHash
	if len(n.partition) == 0 {
		par, p = 1, types.PartitionSingle
	}
	v := ph.b.vertex("Deduplicate", par, 1, op("Deduplicate", &spec))
	ph.b.edge(in.vertex, v, 0, p, n.partition)
	s := &stream{vertex: v, schema: in.schema, bounded: in.bounded}
	if keepLast || n.orderTime == "ROWTIME" {
		// NB: Flink declares every deduplicate but the processing-time
		// keep-first one to produce all changes (deletes included), so an
		// append-only sink refuses "update and delete" changes.
		s.changes = desc
	}
	return ph.afterRank(n, s, len(in.schema)), nil
}
