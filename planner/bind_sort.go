package planner

import (
	"fmt"
	"strings"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// Batch mode (execution.runtime-mode = batch). A query is planned as in
// streaming mode, over bounded tables only, and then ends in a BatchSort:
// an ORDER BY, LIMIT or OFFSET becomes a sortNode, which sorts and cuts the
// whole result on one subtask once its input ends; any other query whose
// result updates ends in a parallel BatchSort that applies the changelog
// and emits the final rows. Either way the result is insert-only, as
// Flink's batch mode returns it.

// sortNode is a batch-mode ORDER BY / LIMIT / OFFSET over a whole result,
// as Flink's batch Sort, SortLimit and Limit. Its output is the first keep
// input columns (the later ones are ORDER BY keys the query does not
// select).
type sortNode struct {
	pos   ast.Pos
	input node
	order []jobgraph.SortKey
	// limit is the LIMIT or FETCH count, 0 for none; offset the OFFSET.
	limit, offset int64
	keep          int
	out           types.Schema
	// names are the SQL text of the sort keys, for plans.
	names []string
}

func (n *sortNode) schema() types.Schema { return n.out }

// bindSort binds a batch-mode query with ORDER BY, LIMIT or OFFSET.
func (b *binder) bindSort(q *ast.Query) (node, error) {
	n := &sortNode{}
	switch {
	case len(q.OrderBy) > 0:
		n.pos = q.OrderBy[0].Pos
	case q.Limit != nil:
		n.pos = q.Limit.Position()
	default:
		n.pos = q.Offset.Position()
	}
	var err error
	if q.Limit != nil {
		if n.limit, err = bindLimit(q.Limit); err != nil {
			return nil, err
		}
	}
	if q.Offset != nil {
		if n.offset, err = bindOffset(q.Offset); err != nil {
			return nil, err
		}
	}
	if n.input, n.order, n.keep, n.names, err = b.bindOrderBy(q); err != nil {
		return nil, err
	}
	n.out = append(types.Schema{}, n.input.schema()[:n.keep]...)
	return n, nil
}

// bindOffset reads OFFSET n: a non-negative integer literal.
func bindOffset(e ast.Expr) (int64, error) {
	v, err := bindExpr(&scope{}, e)
	if err == nil {
		if n, ok := intLiteral(v); ok && n >= 0 {
			return n, nil
		}
	}
	return 0, errorf(e.Position(), "OFFSET must be a non-negative integer literal, got %s", e)
}

// buildSort plans a sortNode: a SINGLE edge into a BatchSort on one
// subtask, then a calc that drops the hidden sort keys.
func (ph *physical) buildSort(n *sortNode) (*stream, error) {
	in, err := ph.build(n.input)
	if err != nil {
		return nil, err
	}
	spec := &jobgraph.BatchSortSpec{InputSchema: in.schema, OrderBy: n.order, Limit: n.limit, Offset: n.offset}
	name := sortName(n)
	v := ph.b.vertex(name, 1, 1, op(name, spec))
	ph.b.edge(in.vertex, v, 0, types.PartitionSingle, nil)
	s := &stream{vertex: v, schema: in.schema, bounded: in.bounded}
	if n.keep < len(in.schema) {
		s = ph.calc(s, nil, identity(n.out), n.out)
	}
	return s, nil
}

// sortName names a sort as Flink's batch plan does: Sort(orderBy=[...]),
// SortLimit(orderBy=[...], offset=[o], fetch=[n]) or Limit(offset=[o],
// fetch=[n]) (fetch=[unlimited] for an OFFSET alone).
func sortName(n *sortNode) string {
	var order []string
	for i, k := range n.order {
		o := n.names[i]
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
	fetch := "unlimited"
	if n.limit > 0 {
		fetch = fmt.Sprint(n.limit)
	}
	cut := fmt.Sprintf("offset=[%d], fetch=[%s]", n.offset, fetch)
	switch {
	case len(order) > 0 && n.limit == 0 && n.offset == 0:
		return "Sort(orderBy=[" + strings.Join(order, ", ") + "])"
	case len(order) > 0:
		return "SortLimit(orderBy=[" + strings.Join(order, ", ") + "], " + cut + ")"
	}
	return "Limit(" + cut + ")"
}

// finalResult ends a batch-mode pipeline whose result updates in a
// BatchSort that applies the changelog and emits the final rows, at the
// pipeline's parallelism behind a HASH edge on every column (equal rows
// meet on one subtask). Streaming pipelines and insert-only ones are
// returned as they are.
func (ph *physical) finalResult(s *stream) *stream {
	if !ph.batch || s.changes == "" {
		return s
	}
	keys := make([]int, len(s.schema))
	for i := range keys {
		keys[i] = i
	}
	spec := &jobgraph.BatchSortSpec{InputSchema: s.schema}
	v := ph.b.vertex("Materialize", ph.parallelism, 1, op("Materialize", spec))
	ph.b.edge(s.vertex, v, 0, types.PartitionHash, keys)
	return &stream{vertex: v, schema: s.schema, bounded: s.bounded}
}

// checkBatchSource refuses a scan of an unbounded table in batch mode, with
// Flink's message.
func (ph *physical) checkBatchSource(n *scanNode) error {
	if ph.batch && !sourceBounded(n, true) {
		return errorf(n.pos, "Querying an unbounded table '%s' in batch mode is not allowed. The table source is unbounded.", qualified(n.table))
	}
	return nil
}
