package planner

import (
	"fmt"
	"strings"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// windowProps are the window columns of a node's output, as Flink's
// FlinkRelMdWindowProperties tracks them: the columns holding window_start,
// window_end and window_time of a window function, of a window aggregate
// (its GROUP BY window_start, window_end) or of a window Top-N over them,
// through filters and projections that pass them on unchanged.
type windowProps struct {
	start, end, time map[int]bool
	window           jobgraph.WindowSpec
	proctime         bool
}

// windowPropsOf returns the window columns of n's output, or nil when it
// has none.
func windowPropsOf(n node) *windowProps {
	switch n := n.(type) {
	case *windowNode:
		nIn := len(n.input.schema())
		return &windowProps{start: map[int]bool{nIn: true}, end: map[int]bool{nIn + 1: true},
			time: map[int]bool{nIn + 2: true}, window: n.window, proctime: n.proctime}
	case *filterNode:
		return windowPropsOf(n.input)
	case *projectNode:
		in := windowPropsOf(n.input)
		if in == nil {
			return nil
		}
		p := &windowProps{start: map[int]bool{}, end: map[int]bool{}, time: map[int]bool{}, window: in.window, proctime: in.proctime}
		for i, e := range n.exprs {
			if e.Op != expr.OpColumn {
				continue
			}
			p.start[i], p.end[i], p.time[i] = in.start[e.Col], in.end[e.Col], in.time[e.Col]
		}
		return p.orNil()
	case *aggNode:
		a, w, ok, err := windowAggBelow(n)
		if err != nil || !ok {
			return nil
		}
		nIn := len(w.input.schema())
		p := &windowProps{start: map[int]bool{}, end: map[int]bool{}, time: map[int]bool{}, window: w.window, proctime: w.proctime}
		for i, k := range a.keys {
			if k.Op == expr.OpColumn {
				p.start[i], p.end[i], p.time[i] = k.Col == nIn, k.Col == nIn+1, k.Col == nIn+2
			}
		}
		return p.orNil()
	case *rankNode:
		// A window Top-N's output keeps its input's window columns (its
		// first keep columns are the input's).
		in := windowRankInput(n)
		if in == nil || n.rankType != "ROW_NUMBER" {
			return nil
		}
		p := &windowProps{start: map[int]bool{}, end: map[int]bool{}, time: map[int]bool{}, window: in.window, proctime: in.proctime}
		for c := 0; c < n.keep; c++ {
			p.start[c], p.end[c], p.time[c] = in.start[c], in.end[c], in.time[c]
		}
		return p.orNil()
	}
	return nil
}

// orNil is p, or nil when it has no window_start or no window_end column.
func (p *windowProps) orNil() *windowProps {
	hasStart, hasEnd := false, false
	for _, v := range p.start {
		hasStart = hasStart || v
	}
	for _, v := range p.end {
		hasEnd = hasEnd || v
	}
	if !hasStart || !hasEnd {
		return nil
	}
	return p
}

// windowPartition splits a rank's partition columns as Flink's
// WindowUtil.groupingExcludeWindowStartEndTimeColumns does: the first
// window_start and window_end columns among them (-1 when there is none)
// and the other columns, window_time ones left out.
func (p *windowProps) windowPartition(partition []int) (start, end int, rest []int) {
	start, end = -1, -1
	for _, c := range partition {
		switch {
		case p.start[c]:
			if start < 0 {
				start = c
			}
		case p.end[c]:
			if end < 0 {
				end = c
			}
		case p.time[c]:
		default:
			rest = append(rest, c)
		}
	}
	return start, end, rest
}

// windowRankInput returns the window columns of the rank's input when its
// PARTITION BY holds window_start and window_end of a window function or
// window aggregate (Flink's WindowUtil.groupingContainsWindowStartEnd):
// the rank is then a window Top-N or window deduplication.
func windowRankInput(n *rankNode) *windowProps {
	p := windowPropsOf(n.input)
	if p == nil {
		return nil
	}
	if start, end, _ := p.windowPartition(n.partition); start < 0 || end < 0 {
		return nil
	}
	return p
}

// buildWindowRank plans a ROW_NUMBER partitioned by window_start and
// window_end as Flink's WindowDeduplicate (rn = 1 ordered by one time
// attribute, as StreamPhysicalWindowDeduplicateRule has it) or WindowRank:
// a HASH edge on the other partition keys (SINGLE, to one subtask, without
// them), the operator, then a calc that drops the hidden key columns.
// Both emit each window's rows as +I when it fires.
func (ph *physical) buildWindowRank(n *rankNode, p *windowProps) (*stream, error) {
	switch n.rankType {
	case "RANK", "DENSE_RANK":
		return nil, errorf(n.pos, "%s() function is not supported on Window TopN currently, only ROW_NUMBER() is supported.", n.rankType)
	}
	if n.limit == 0 {
		return nil, unsupported(n.pos, n.rankType+" without a filter rn <= n on it in the enclosing query (only Top-N is)")
	}
	orderTime := n.orderTime
	if len(n.order) == 1 && p.time[n.order[0].Col] {
		orderTime = "ROWTIME"
		if p.proctime {
			orderTime = "PROCTIME"
		}
	}
	dedup := n.constantRowNumber() && orderTime != ""
	switch {
	case dedup && p.proctime:
		return nil, errorf(n.pos, "Processing time Window Deduplication is not supported yet.")
	case p.proctime:
		return nil, errorf(n.pos, "Processing time Window TopN is not supported yet.")
	case dedup && orderTime == "PROCTIME":
		return nil, unsupported(n.pos, "window deduplication ordered by a processing-time attribute")
	}
	in, err := ph.build(n.input)
	if err != nil {
		return nil, err
	}
	what := "StreamPhysicalWindowRank"
	if dedup {
		what = "StreamPhysicalWindowDeduplicate"
	}
	if in.changes != "" {
		return nil, errorf(n.pos, "%s doesn't support consuming update and delete changes which is produced by node %s", what, in.changes)
	}
	start, end, rest := p.windowPartition(n.partition)
	visible := func(c int) int { return selectedCopy(in, n.keep, c) }
	start, end = visible(start), visible(end)
	for i, c := range rest {
		rest[i] = visible(c)
	}
	order := append([]jobgraph.SortKey{}, n.order...)
	for i := range order {
		order[i].Col = visible(order[i].Col)
	}
	// When every key is a selected column the hidden copies are dropped
	// before the shuffle (the calc merges into the one that made them).
	needHidden := start >= n.keep || end >= n.keep
	for _, c := range rest {
		needHidden = needHidden || c >= n.keep
	}
	for _, k := range order {
		needHidden = needHidden || k.Col >= n.keep
	}
	if !needHidden && n.keep < len(in.schema) {
		vis := append(types.Schema{}, in.schema[:n.keep]...)
		in = ph.calc(in, nil, identity(vis), vis)
	}
	var spec jobgraph.Spec
	name := "WindowRank"
	if dedup {
		name = "WindowDeduplicate"
		spec = &jobgraph.WindowDeduplicateSpec{InputSchema: in.schema, Keys: rest, KeepLastRow: order[0].Desc,
			RowtimeCol: order[0].Col, WindowStart: start, WindowEnd: end, Window: p.window}
	} else {
		spec = &jobgraph.WindowRankSpec{InputSchema: in.schema, Partition: rest, OrderBy: order, Limit: n.limit,
			OutputRankNumber: n.emitsRowNumber(), WindowStart: start, WindowEnd: end, Window: p.window}
	}
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("planner: %s: %w", name, err)
	}
	par, part := ph.parallelism, types.PartitionHash
	if len(rest) == 0 {
		par, part = 1, types.PartitionSingle
	}
	v := ph.b.vertex(name, par, 1, op(name, spec))
	ph.b.edge(in.vertex, v, 0, part, rest)
	out := in.schema
	if rs, ok := spec.(*jobgraph.WindowRankSpec); ok {
		out = rs.OutputSchema()
	}
	s := &stream{vertex: v, schema: out, bounded: in.bounded}
	return ph.afterRank(n, s, len(in.schema)), nil
}

// selectedCopy is a column among the first keep of s that is the same
// input column as column c, when s ends in a calc and c is a hidden key
// column that copies one; else c. The operator then reads the selected
// column, and plans name it as Flink's do.
func selectedCopy(s *stream, keep, c int) int {
	if s.calc == nil || c < keep || c >= len(s.calc.Projections) {
		return c
	}
	e := s.calc.Projections[c]
	if e.Op != expr.OpColumn {
		return c
	}
	for j, v := range s.calc.Projections[:keep] {
		if v.Op == expr.OpColumn && v.Col == e.Col {
			return j
		}
	}
	return c
}

// windowRankText writes a window as Flink's WindowRank and
// WindowDeduplicate do: TUMBLE(win_start=[ws], win_end=[we], size=[10 min]).
func windowRankText(w jobgraph.WindowSpec, start, end string) string {
	cols := fmt.Sprintf("win_start=[%s], win_end=[%s]", start, end)
	switch w.Kind {
	case jobgraph.WindowHop:
		return fmt.Sprintf("HOP(%s, size=[%s], slide=[%s])", cols, durationText(w.SizeMs), durationText(w.StepMs))
	case jobgraph.WindowCumulate:
		return fmt.Sprintf("CUMULATE(%s, max_size=[%s], step=[%s])", cols, durationText(w.SizeMs), durationText(w.StepMs))
	case jobgraph.WindowSession:
		return fmt.Sprintf("SESSION(%s, gap=[%s])", cols, durationText(w.GapMs))
	}
	return fmt.Sprintf("TUMBLE(%s, size=[%s])", cols, durationText(w.SizeMs))
}

func describeWindowRank(s *jobgraph.WindowRankSpec, in, out []string) string {
	return fmt.Sprintf("WindowRank(window=[%s], rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=%d], partitionBy=[%s], orderBy=[%s], select=[%s])",
		windowRankText(s.Window, nameAt(in, s.WindowStart), nameAt(in, s.WindowEnd)), s.Limit,
		strings.Join(namesAt(in, s.Partition), ", "), sortKeysText(s.OrderBy, in), strings.Join(out, ", "))
}

func describeWindowDedup(s *jobgraph.WindowDeduplicateSpec, in []string) string {
	keep := "FirstRow"
	if s.KeepLastRow {
		keep = "LastRow"
	}
	return fmt.Sprintf("WindowDeduplicate(window=[%s], keep=[%s], partitionKeys=[%s], orderKey=[%s], order=[ROWTIME])",
		windowRankText(s.Window, nameAt(in, s.WindowStart), nameAt(in, s.WindowEnd)), keep,
		strings.Join(namesAt(in, s.Keys), ", "), nameAt(in, s.RowtimeCol))
}
