package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// changelogMode is the set of row kinds an operator emits, as EXPLAIN
// CHANGELOG_MODE prints it: [I], [I,UB,UA], [I,UB,UA,D], [I,D]; NONE for a
// sink.
type changelogMode uint8

const (
	modeInsert changelogMode = 1 << iota
	modeUpdateBefore
	modeUpdateAfter
	modeDelete

	modeAll = modeInsert | modeUpdateBefore | modeUpdateAfter | modeDelete
)

func (m changelogMode) String() string {
	var kinds []string
	for _, k := range []struct {
		bit  changelogMode
		name string
	}{{modeInsert, "I"}, {modeUpdateBefore, "UB"}, {modeUpdateAfter, "UA"}, {modeDelete, "D"}} {
		if m&k.bit != 0 {
			kinds = append(kinds, k.name)
		}
	}
	if len(kinds) == 0 {
		return "NONE"
	}
	return strings.Join(kinds, ",")
}

// mode is the row kinds n emits, from what its operator does with its
// inputs' kinds (see the operators' doc comments).
func (x *explainer) mode(n *explainNode) changelogMode {
	var in changelogMode
	for _, i := range n.inputs {
		in |= i.mode
	}
	if n.op == nil {
		return in
	}
	if t, ok := x.plan.tables[n.op]; ok && n.op.Spec.Inputs() == 0 {
		if t.upsert {
			return modeAll
		}
		return modeInsert
	}
	switch s := n.op.Spec.(type) {
	case *jobgraph.CollectSpec:
		return 0
	case *jobgraph.NormalizeSpec:
		return modeAll
	case *jobgraph.GroupAggSpec:
		// A group is deleted only when its input retracts its last row.
		m := modeInsert | modeUpdateBefore | modeUpdateAfter
		if in&^modeInsert != 0 {
			m |= modeDelete
		}
		return m
	case *jobgraph.JoinSpec:
		if s.OuterLeft || s.OuterRight {
			// An outer join emits +I and -D only: a padded row is deleted
			// when its first match arrives.
			return modeInsert | modeDelete
		}
		return in
	case *jobgraph.SemiJoinSpec:
		if s.Anti {
			// A right row's arrival deletes the left rows it matches; its
			// retraction inserts them again.
			return n.inputs[0].mode | modeInsert | modeDelete
		}
		return in
	case *jobgraph.RankSpec:
		switch {
		case s.EmitAtEnd:
			return modeInsert
		case s.OutputRankNumber:
			// A row whose number changes is updated; with an append-only
			// input the row pushed out of the top is the last one, updated
			// in place, so only a retracting input deletes.
			m := modeInsert | modeUpdateBefore | modeUpdateAfter
			if s.InputRetracts {
				m |= modeDelete
			}
			return m
		}
		// Rows entering the top are inserted, rows leaving it deleted.
		return modeInsert | modeDelete
	case *jobgraph.IntervalJoinSpec, *jobgraph.TemporalJoinSpec, *jobgraph.WindowAggSpec,
		*jobgraph.WindowRankSpec, *jobgraph.WindowDeduplicateSpec, *jobgraph.WindowJoinSpec,
		*jobgraph.OverAggSpec, *jobgraph.BatchSortSpec, *jobgraph.ValuesSpec, *jobgraph.WindowTVFSpec:
		return modeInsert
	case *jobgraph.SinkMaterializeSpec:
		// The latest row of a sink key as an upsert: no -U.
		return modeInsert | modeUpdateAfter | modeDelete
	case *jobgraph.DeduplicateSpec:
		if !s.KeepLastRow && s.RowtimeCol < 0 {
			return modeInsert
		}
		return modeInsert | modeUpdateBefore | modeUpdateAfter
	}
	if n.op.Spec.Inputs() == 0 {
		return modeInsert
	}
	if _, sink := x.plan.tables[n.op]; sink {
		return 0
	}
	return in
}

// describe names n as Flink's execution plans name their nodes.
func (x *explainer) describe(n *explainNode) string {
	if n.op == nil {
		return "Exchange(distribution=[" + distribution(n.edge, n.in(0)) + "])"
	}
	in := n.in(0)
	if t, ok := x.plan.tables[n.op]; ok {
		if n.op.Spec.Inputs() == 0 {
			return fmt.Sprintf("TableSourceScan(table=[[%s, %s, %s]], fields=[%s])",
				catalog.DefaultCatalog, t.database, t.name, strings.Join(n.names, ", "))
		}
		return fmt.Sprintf("Sink(table=[%s.%s.%s], fields=[%s])", catalog.DefaultCatalog, t.database, t.name, strings.Join(in, ", "))
	}
	switch s := n.op.Spec.(type) {
	case *jobgraph.CalcSpec:
		if n.op.Name == "Union" {
			return fmt.Sprintf("Union(all=[true], union=[%s])", strings.Join(n.names, ", "))
		}
		return describeCalc(s, in, n.names)
	case *jobgraph.JoinSpec:
		return describeJoin(s, joinType(s.OuterLeft, s.OuterRight), n.in(0), n.in(1), "")
	case *jobgraph.SemiJoinSpec:
		kind := "LeftSemiJoin"
		if s.Anti {
			kind = "LeftAntiJoin"
		}
		js := jobgraph.JoinSpec{LeftSchema: s.LeftSchema, RightSchema: s.RightSchema, LeftKeys: s.LeftKeys,
			RightKeys: s.RightKeys, Residual: s.Residual, OutputSchema: s.LeftSchema}
		return describeJoin(&js, kind, n.in(0), n.in(1), "")
	case *jobgraph.IntervalJoinSpec:
		bounds := fmt.Sprintf("windowBounds=[isRowTime=true, leftLowerBound=%d, leftUpperBound=%d, leftTimeIndex=%d, rightTimeIndex=%d], ",
			s.LowerMs, s.UpperMs, s.LeftTime, s.RightTime)
		return "Interval" + describeJoin(&s.JoinSpec, joinType(s.OuterLeft, s.OuterRight), n.in(0), n.in(1), bounds)
	case *jobgraph.TemporalJoinSpec:
		times := fmt.Sprintf("isRowTime=true, leftTimeAttribute=[%s], rightTimeAttribute=[%s], ",
			nameAt(n.in(0), s.LeftTime), nameAt(n.in(1), s.RightTime))
		return "Temporal" + describeJoin(&s.JoinSpec, joinType(s.OuterLeft, false), n.in(0), n.in(1), times)
	case *jobgraph.LookupJoinSpec:
		return describeLookupJoin(s, in)
	case *jobgraph.NormalizeSpec:
		return "ChangelogNormalize(key=[" + strings.Join(namesAt(in, s.Keys), ", ") + "])"
	case *jobgraph.ReplicateSpec:
		return fmt.Sprintf("ReplicateRows(count=[%s], select=[%s])", nameAt(in, s.Count), strings.Join(n.names, ", "))
	case *jobgraph.GroupAggSpec:
		return describeGroupAgg(s, in, n.names)
	case *jobgraph.WindowAggSpec:
		return describeWindowAgg(s, in, n.names)
	case *jobgraph.OverAggSpec:
		return describeOverAgg(s, in, n.names)
	case *jobgraph.RankSpec:
		rankType := s.RankType
		if rankType == "" {
			rankType = "ROW_NUMBER"
		}
		rest := fmt.Sprintf("rankType=[%s], rankRange=[rankStart=1, rankEnd=%d], partitionBy=[%s], orderBy=[%s], select=[%s]",
			rankType, s.Limit, strings.Join(namesAt(in, s.Partition), ", "), sortKeysText(s.OrderBy, in), strings.Join(n.names, ", "))
		if s.EmitAtEnd {
			// Flink's batch Rank has no strategy.
			return "Rank(" + rest + ")"
		}
		strategy := "AppendFastStrategy"
		if s.InputRetracts {
			strategy = "RetractStrategy"
		}
		return fmt.Sprintf("Rank(strategy=[%s], %s)", strategy, rest)
	case *jobgraph.WindowRankSpec:
		return describeWindowRank(s, in, n.names)
	case *jobgraph.WindowDeduplicateSpec:
		return describeWindowDedup(s, in)
	case *jobgraph.BatchSortSpec:
		return fmt.Sprintf("BatchSort(orderBy=[%s], offset=[%d], fetch=[%s])", sortKeysText(s.OrderBy, in), s.Offset, fetch(s.Limit))
	case *jobgraph.WatermarkAssignerSpec:
		wm := s.Text
		if wm == "" {
			wm = explainExpr(s.Watermark, in)
		}
		return fmt.Sprintf("WatermarkAssigner(rowtime=[%s], watermark=[%s])", nameAt(in, s.Rowtime), wm)
	case *jobgraph.ValuesSpec:
		return describeValues(s, n.names)
	case *jobgraph.CollectSpec:
		return "Collect(fields=[" + strings.Join(in, ", ") + "])"
	case *jobgraph.ExpandSpec:
		return describeExpand(s, in)
	case *jobgraph.SinkMaterializeSpec:
		text := "SinkMaterializer(pk=[" + strings.Join(namesAt(in, s.Keys), ", ") + "]"
		if len(s.UpsertKey) > 0 {
			text += ", upsertKey=[" + strings.Join(namesAt(in, s.UpsertKey), ", ") + "]"
		}
		return text + ")"
	case *jobgraph.DeduplicateSpec:
		keep, order := "FirstRow", "PROCTIME"
		if s.KeepLastRow {
			keep = "LastRow"
		}
		if s.RowtimeCol >= 0 {
			order = "ROWTIME"
		}
		return fmt.Sprintf("Deduplicate(keep=[%s], key=[%s], order=[%s])", keep, strings.Join(namesAt(in, s.Keys), ", "), order)
	case *jobgraph.UnnestSpec:
		return fmt.Sprintf("Correlate(invocation=[UNNEST(%s)], joinType=[%s], select=[%s])",
			explainExpr(s.Collection, in), map[bool]string{false: "INNER", true: "LEFT"}[s.Outer], strings.Join(n.names, ", "))
	case *jobgraph.WindowJoinSpec:
		return describeWindowJoin(s, n.in(0), n.in(1))
	case *jobgraph.WindowTVFSpec:
		return fmt.Sprintf("WindowTableFunction(window=[%s], timeCol=[%s], select=[%s])", describeWindow(s.Window), nameAt(in, s.Rowtime), strings.Join(n.names, ", "))
	}
	// A connector whose table the planner did not record: its display
	// name is all there is.
	n.undescribed = true
	return n.op.Name
}

func fetch(limit int64) string {
	if limit == 0 {
		return "unlimited"
	}
	return fmt.Sprint(limit)
}

func joinType(outerLeft, outerRight bool) string {
	return (&joinNode{outerLeft: outerLeft, outerRight: outerRight}).kindName()
}

func nameAt(names []string, i int) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("$%d", i)
}

func namesAt(names []string, cols []int) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = nameAt(names, c)
	}
	return out
}

// distribution is an edge's partitioning as Flink's Exchange writes it:
// hash[k], single, broadcast; rebalance for round robin.
func distribution(e *jobgraph.Edge, in []string) string {
	switch e.Partitioning {
	case types.PartitionHash:
		return "hash[" + strings.Join(namesAt(in, e.KeyColumns), ", ") + "]"
	case types.PartitionSingle:
		return "single"
	case types.PartitionBroadcast:
		return "broadcast"
	case types.PartitionRebalance:
		return "rebalance"
	}
	return strings.ToLower(e.Partitioning.String())
}

func describeCalc(s *jobgraph.CalcSpec, in, out []string) string {
	sel := make([]string, len(s.Projections))
	for i, e := range s.Projections {
		text := explainExpr(e, in)
		if text != out[i] {
			text += " AS " + out[i]
		}
		sel[i] = text
	}
	d := "Calc(select=[" + strings.Join(sel, ", ") + "]"
	if s.Filter != nil {
		d += ", where=[" + explainExpr(s.Filter, in) + "]"
	}
	return d + ")"
}

// describeLookupJoin writes a lookup join as Flink's LookupJoin: the
// lookup keys as lookupColumn=inputColumn, the residual, and every output
// column (Flink does not make the names unique here).
func describeLookupJoin(s *jobgraph.LookupJoinSpec, in []string) string {
	sel := append(append([]string{}, in...), s.LookupSchema.Names()...)
	var keys []string
	for i, k := range s.LookupKeys {
		keys = append(keys, s.LookupSchema[k].Name+"="+nameAt(in, s.InputKeys[i]))
	}
	d := fmt.Sprintf("LookupJoin(table=[%s], joinType=[%s], lookup=[%s]", s.TableName, joinType(s.OuterLeft, false), strings.Join(keys, ", "))
	if s.Residual != nil {
		d += ", where=[" + explainExpr(s.Residual, uniqueNames(append(append(types.Schema{}, s.InputSchema...), s.LookupSchema...))) + "]"
	}
	return d + ", select=[" + strings.Join(sel, ", ") + "])"
}

// describeJoin writes a join: its keys as equalities and its residual
// over the left then the right columns, between joinType and select;
// extra goes after the join type.
func describeJoin(s *jobgraph.JoinSpec, kind string, left, right []string, extra string) string {
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
	var sel []string
	if kind == "LeftSemiJoin" || kind == "LeftAntiJoin" {
		sel = both[:len(s.LeftSchema)]
	} else {
		sel = uniqueNames(s.OutputSchema)
	}
	return fmt.Sprintf("Join(joinType=[%s], %swhere=[%s], select=[%s], leftInputSpec=[NoUniqueKey], rightInputSpec=[NoUniqueKey])",
		kind, extra, where, strings.Join(sel, ", "))
}

// aggCallText writes one aggregate call over the input columns in:
// COUNT(*), SUM(DISTINCT x), LISTAGG(s, ';'), COUNT(a) FILTER $f2.
func aggCallText(c jobgraph.AggCall, in []string) string {
	arg := "*"
	if c.Arg >= 0 {
		arg = nameAt(in, c.Arg)
	}
	for _, m := range c.More {
		arg += ", " + nameAt(in, m)
	}
	if c.Distinct {
		arg = "DISTINCT " + arg
	}
	if c.Separator != nil {
		arg += ", '" + strings.ReplaceAll(*c.Separator, "'", "''") + "'"
	}
	text := c.Func + "(" + arg + ")"
	if c.Filtered {
		text += " FILTER " + nameAt(in, c.Filter)
	}
	return text
}

func describeGroupAgg(s *jobgraph.GroupAggSpec, in, out []string) string {
	sel := append([]string{}, out[:len(s.Keys)]...)
	for i, c := range s.Aggs {
		sel = append(sel, aggCallText(c, in)+" AS "+out[len(s.Keys)+i])
	}
	d := "GroupAggregate("
	if len(s.Keys) > 0 {
		d += "groupBy=[" + strings.Join(namesAt(in, s.Keys), ", ") + "], "
	}
	return d + "select=[" + strings.Join(sel, ", ") + "])"
}

// windowText writes a window as Flink's WindowAggregate does:
// TUMBLE(time_col=[ts], size=[10 s]).
func windowText(w jobgraph.WindowSpec, timeCol string) string {
	switch w.Kind {
	case jobgraph.WindowHop:
		return fmt.Sprintf("HOP(time_col=[%s], size=[%s], slide=[%s])", timeCol, durationText(w.SizeMs), durationText(w.StepMs))
	case jobgraph.WindowCumulate:
		return fmt.Sprintf("CUMULATE(time_col=[%s], max_size=[%s], step=[%s])", timeCol, durationText(w.SizeMs), durationText(w.StepMs))
	case jobgraph.WindowSession:
		return fmt.Sprintf("SESSION(time_col=[%s], gap=[%s])", timeCol, durationText(w.GapMs))
	}
	return fmt.Sprintf("TUMBLE(time_col=[%s], size=[%s])", timeCol, durationText(w.SizeMs))
}

// durationText writes ms in its largest whole unit: 10 s, 5 min, 1 h, 1 d.
func durationText(ms int64) string {
	switch {
	case ms != 0 && ms%86400000 == 0:
		return fmt.Sprintf("%d d", ms/86400000)
	case ms != 0 && ms%3600000 == 0:
		return fmt.Sprintf("%d h", ms/3600000)
	case ms != 0 && ms%60000 == 0:
		return fmt.Sprintf("%d min", ms/60000)
	case ms != 0 && ms%1000 == 0:
		return fmt.Sprintf("%d s", ms/1000)
	}
	return fmt.Sprintf("%d ms", ms)
}

func describeWindowAgg(s *jobgraph.WindowAggSpec, in, out []string) string {
	nk := len(s.Keys)
	sel := append([]string{}, out[:nk]...)
	for i, prop := range []string{"start", "end", "rowtime"} {
		sel = append(sel, fmt.Sprintf("%s('w$) AS %s", prop, nameAt(out, nk+i)))
	}
	for i, c := range s.Aggs {
		sel = append(sel, aggCallText(c, in)+" AS "+nameAt(out, nk+3+i))
	}
	d := "WindowAggregate("
	if nk > 0 {
		d += "groupBy=[" + strings.Join(namesAt(in, s.Keys), ", ") + "], "
	}
	return d + "window=[" + windowText(s.Window, nameAt(in, s.Rowtime)) + "], select=[" + strings.Join(sel, ", ") + "])"
}

func describeOverAgg(s *jobgraph.OverAggSpec, in, out []string) string {
	kind := "RANGE"
	if s.Rows {
		kind = "ROWS"
	}
	frame := kind + " BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
	switch {
	case s.Unbounded:
	case s.Preceding == 0:
		frame = kind + " BETWEEN CURRENT ROW AND CURRENT ROW"
	default:
		frame = fmt.Sprintf("%s BETWEEN %d PRECEDING AND CURRENT ROW", kind, s.Preceding)
	}
	sel := append([]string{}, in...)
	for i, c := range s.Aggs {
		sel = append(sel, aggCallText(c, in)+" AS "+nameAt(out, len(in)+i))
	}
	return fmt.Sprintf("OverAggregate(partitionBy=[%s], orderBy=[%s ASC], window=[%s], select=[%s])",
		strings.Join(namesAt(in, s.Partition), ", "), nameAt(in, s.Rowtime), frame, strings.Join(sel, ", "))
}

func sortKeysText(keys []jobgraph.SortKey, in []string) string {
	out := make([]string, len(keys))
	for i, k := range keys {
		o := nameAt(in, k.Col)
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
		out[i] = o
	}
	return strings.Join(out, ", ")
}

// maxExplainTuples caps the rows of a VALUES that EXPLAIN lists.
const maxExplainTuples = 20

func describeValues(s *jobgraph.ValuesSpec, names []string) string {
	var rows []string
	for i, r := range s.Rows {
		if i == maxExplainTuples {
			rows = append(rows, fmt.Sprintf("... %d more", len(s.Rows)-i))
			break
		}
		vals := make([]string, len(r))
		for j, e := range r {
			vals[j] = explainExpr(e, nil)
		}
		rows = append(rows, "{ "+strings.Join(vals, ", ")+" }")
	}
	return fmt.Sprintf("Values(tuples=[[%s]], values=[%s])", strings.Join(rows, ", "), strings.Join(names, ", "))
}

// describeExpand writes an Expand as Flink does: one projection per
// grouping set, its absent keys null, then the set's $e.
func describeExpand(s *jobgraph.ExpandSpec, in []string) string {
	var sets []string
	for i, set := range s.Sets {
		cols := make([]string, 0, len(in)+1)
		for c := range s.Schema {
			name := nameAt(in, c)
			if slices.Contains(set, c) {
				name = "null AS " + name
			}
			cols = append(cols, name)
		}
		cols = append(cols, fmt.Sprintf("%d AS $e", i))
		sets = append(sets, "{"+strings.Join(cols, ", ")+"}")
	}
	return "Expand(projects=[" + strings.Join(sets, ", ") + "])"
}
