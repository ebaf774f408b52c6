package planner

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// physical turns a logical plan into vertices and edges.
type physical struct {
	// ctx bounds planning: build stops when it ends (see stopped).
	ctx         context.Context
	p           *Planner
	b           *graphBuilder
	parallelism int
	// reuse shares the sources of a statement set's INSERTs; nil for one
	// statement.
	reuse *sourceReuse
	// batch is execution.runtime-mode = batch: every table is read to its
	// current end, an unbounded one is refused, and results end in a
	// BatchSort (finalResult).
	batch bool
}

func op(name string, spec jobgraph.Spec) *jobgraph.Operator {
	return &jobgraph.Operator{Name: name, Spec: spec}
}

func (ph *physical) build(n node) (*stream, error) {
	if err := stopped(ph.ctx); err != nil {
		return nil, err
	}
	switch n := n.(type) {
	case *scanNode:
		return ph.buildScan(n)
	case *valuesNode:
		s := ph.b.source("Values", 1, op("Values", &jobgraph.ValuesSpec{Schema: n.out, Rows: n.rows}), n.out, true)
		return s, nil
	case *filterNode:
		if j := joinBelow(n); j != nil {
			return ph.build(j)
		}
		in, err := ph.build(n.input)
		if err != nil {
			return nil, err
		}
		return ph.calc(in, n.cond, identity(in.schema), in.schema), nil
	case *projectNode:
		if j := joinBelow(n.input); j != nil {
			// Only the columns the projection reads cross the join.
			need := make([]bool, len(j.out))
			for _, e := range n.exprs {
				for _, c := range columnsOf(e) {
					need[c] = true
				}
			}
			js, m, err := ph.buildJoin(j, need)
			if err != nil {
				return nil, err
			}
			exprs := make([]*expr.Expr, len(n.exprs))
			for i, e := range n.exprs {
				exprs[i] = remap(e, m)
			}
			return ph.calc(js, nil, exprs, n.out), nil
		}
		if f, ok := n.input.(*filterNode); ok {
			in, err := ph.build(f.input)
			if err != nil {
				return nil, err
			}
			return ph.calc(in, f.cond, n.exprs, n.out), nil
		}
		in, err := ph.build(n.input)
		if err != nil {
			return nil, err
		}
		if isIdentity(n.exprs, in.schema) && sameNames(in.schema, n.out) {
			return in, nil
		}
		return ph.calc(in, nil, n.exprs, n.out), nil
	case *joinNode:
		all := make([]bool, len(n.out))
		for i := range all {
			all[i] = true
		}
		js, m, err := ph.buildJoin(n, all)
		if err != nil {
			return nil, err
		}
		exprs := make([]*expr.Expr, len(n.out))
		for i, f := range n.out {
			exprs[i] = expr.Column(m(i), f.Type)
		}
		if isIdentity(exprs, js.schema) {
			return js, nil
		}
		return ph.calc(js, nil, exprs, n.out), nil
	case *unionNode:
		return ph.buildUnion(n)
	case *semiJoinNode:
		if s, ok, err := ph.buildWindowSemi(n); ok || err != nil {
			return s, err
		}
		return ph.buildSemi(n)
	case *expandNode:
		return ph.buildExpand(n)
	case *replicateNode:
		return ph.buildReplicate(n)
	case *unnestNode:
		return ph.buildUnnest(n)
	case *aggNode:
		if a, w, ok, err := windowAggBelow(n); err != nil {
			return nil, err
		} else if ok {
			return ph.buildWindowAgg(a, w)
		}
		if n.window != nil {
			return ph.buildGroupWindowAgg(n)
		}
		return ph.buildAgg(n)
	case *rankNode:
		return ph.buildRank(n)
	case *overNode:
		return ph.buildOver(n)
	case *sortNode:
		return ph.buildSort(n)
	case *windowNode:
		return ph.buildWindowTVF(n)
	}
	return nil, fmt.Errorf("planner: no physical plan for %T", n)
}

// maxMergeBloat is how many expression nodes merging two calcs may add, as
// in Calcite's ProjectMergeRule (its default bloat is 100).
//
// NB: merging copies an earlier calc's expression into every reference to
// its column, so SELECT x + x AS x FROM (SELECT x + x AS x FROM ...) nested
// n deep would merge into 2^n nodes: 1 KB of SQL that no job manager can
// encode.
const maxMergeBloat = 100

// calc chains a filter-and-project operator onto s. When s ends in a calc
// already, the two merge into one, the new expressions rewritten over the
// earlier calc's input, unless that grows the expressions by more than
// maxMergeBloat nodes.
func (ph *physical) calc(s *stream, filter *expr.Expr, exprs []*expr.Expr, out types.Schema) *stream {
	if prev := s.calc; prev != nil {
		merged := &jobgraph.CalcSpec{InputSchema: prev.InputSchema, OutputSchema: out}
		merged.Filter = and(append(conjuncts(prev.Filter), conjuncts(substitute(filter, prev.Projections))...))
		for _, e := range exprs {
			merged.Projections = append(merged.Projections, substitute(e, prev.Projections))
		}
		unmerged := addSat(treeSize(append([]*expr.Expr{prev.Filter, filter}, prev.Projections...)...), treeSize(exprs...))
		if treeSize(append([]*expr.Expr{merged.Filter}, merged.Projections...)...) <= addSat(unmerged, maxMergeBloat) {
			ns := ph.mergeCalc(s, merged)
			ns.upsertKey, ns.keyed = mapUpsertKey(s, exprs)
			return ns
		}
	}
	name := "Calc"
	if filter != nil {
		name = "Calc(filter)"
	}
	spec := &jobgraph.CalcSpec{InputSchema: s.schema, Filter: filter, Projections: exprs, OutputSchema: out}
	ns := ph.b.chain(s, s.vertex.Parallelism, op(name, spec), out)
	ns.calc = spec
	ns.upsertKey, ns.keyed = mapUpsertKey(s, exprs)
	return ns
}

// mergeCalc replaces the calc s ends in with merged.
func (ph *physical) mergeCalc(s *stream, merged *jobgraph.CalcSpec) *stream {
	last := s.vertex.Chain[len(s.vertex.Chain)-1]
	last.Spec = merged
	if merged.Filter != nil {
		last.Name = "Calc(filter)"
	}
	return &stream{vertex: s.vertex, schema: merged.OutputSchema, bounded: s.bounded, calc: merged, changes: s.changes, updatesOnly: s.updatesOnly}
}

func (ph *physical) buildScan(n *scanNode) (*stream, error) {
	if err := ph.checkBatchSource(n); err != nil {
		return nil, err
	}
	boundedScan := ph.batch || !ph.p.Options.Follow
	src, maxPar, err := ph.p.Connectors.SourceSpec(n.table, boundedScan)
	if err != nil {
		return nil, &Error{Pos: n.pos, Msg: fmt.Sprintf("table %s.%s cannot be read: %v", n.table.Database, n.table.Name, err)}
	}
	par := ph.parallelism
	if maxPar > 0 && par > maxPar {
		par = maxPar
	}
	name := "Source: " + n.table.Name
	s := ph.reuse.source(ph.b, n.table, src, par, n.phys, sourceBounded(n, boundedScan))
	if s == nil {
		s = ph.b.source(name, par, op(name, src), n.phys, sourceBounded(n, boundedScan))
		ph.reuse.add(n.table, src, par, s.vertex)
		ph.b.noteTable(s.vertex.Chain[0], n.table, n.phys)
	}
	if ks, ok := src.(*jobgraph.KafkaSourceSpec); ok {
		if f := ks.ValueFormat(); f.Changelog() {
			// A changelog format (debezium-json) makes the source emit
			// inserts, updates and deletes.
			s = &stream{vertex: s.vertex, schema: s.schema, bounded: s.bounded,
				changes: fmt.Sprintf("TableSourceScan(table=[[default_catalog, %s, %s]], fields=[%s])",
					n.table.Database, n.table.Name, strings.Join(n.phys.Names(), ", "))}
		}
	}
	if keys := upsertKeys(n.table, n.phys); keys != nil {
		// A managed table with a primary key holds upserts: the latest row
		// of each key wins. Normalizing them by key yields the changelog
		// with retractions the rest of the plan expects.
		spec := jobgraph.NormalizeSpec{Schema: n.phys, Keys: keys}
		if spec.TTLMs, err = ph.stateTTL(nil); err != nil {
			return nil, err
		}
		v := ph.b.vertex("ChangelogNormalize", ph.parallelism, 1, op("ChangelogNormalize", &spec))
		ph.b.edge(s.vertex, v, 0, types.PartitionHash, keys)
		keyNames := make([]string, len(keys))
		for i, k := range keys {
			keyNames[i] = n.phys[k].Name
		}
		s = (&stream{vertex: v, schema: n.phys, bounded: s.bounded,
			changes: "ChangelogNormalize(key=[" + strings.Join(keyNames, ", ") + "])"}).withUpsertKey(keys)
	}
	if n.exprs != nil {
		s = ph.calc(s, nil, n.exprs, n.out)
	}
	if n.rowtime >= 0 {
		// The watermark is generated where the table's rows enter the
		// job, after its computed columns, as Flink's WatermarkAssigner.
		text := n.table.Watermark.Expr
		spec := jobgraph.WatermarkAssignerSpec{InputSchema: n.out, Rowtime: n.rowtime, Watermark: n.watermark, Text: text}
		name := fmt.Sprintf("WatermarkAssigner(rowtime=[%s], watermark=[%s])", n.out[n.rowtime].Name, text)
		keyed, key := s.keyed, s.upsertKey
		s = ph.b.chain(s, s.vertex.Parallelism, op(name, &spec), n.out)
		s.keyed, s.upsertKey = keyed, key
	}
	return s, nil
}

// upsertKeys returns the primary key columns of a managed or upsert-kafka
// table in its physical schema, or nil when the table is not an upsert
// table.
func upsertKeys(t *catalog.Table, phys types.Schema) []int {
	if !isUpsertTable(t) {
		return nil
	}
	var keys []int
	for _, k := range t.PrimaryKey {
		for i, f := range phys {
			if f.Name == k {
				keys = append(keys, i)
			}
		}
	}
	return keys
}

// isUpsertTable reports whether reading t yields upserts by its primary key
// (a ChangelogNormalize follows its source): a managed or upsert-kafka
// table with a primary key.
func isUpsertTable(t *catalog.Table) bool {
	return (t.Managed() || t.Connector() == "upsert-kafka") && len(t.PrimaryKey) > 0
}

// sourceBounded reports whether a table's source ends by itself.
func sourceBounded(n *scanNode, boundedScan bool) bool {
	switch n.table.Connector() {
	case "":
		return boundedScan
	case "datagen":
		return n.table.Options["number-of-rows"] != ""
	case "nexmark":
		// 'events.num' = '0' (the default) is unbounded.
		num, err := strconv.ParseInt(strings.TrimSpace(n.table.Options["events.num"]), 10, 64)
		return err == nil && num > 0
	case "faker":
		n := strings.TrimSpace(n.table.Options["number-of-rows"])
		return n != "" && n != "-1"
	case "kafka", "upsert-kafka":
		return strings.TrimSpace(n.table.Options["scan.bounded.mode"]) == "latest-offset"
	case "mysql", "jdbc":
		return true
	}
	return false
}

func (ph *physical) buildUnion(n *unionNode) (*stream, error) {
	var ins []*stream
	for _, in := range n.inputs {
		s, err := ph.build(in)
		if err != nil {
			return nil, err
		}
		ins = append(ins, s)
	}
	// A union is a vertex whose single input is fed by every branch.
	spec := jobgraph.CalcSpec{InputSchema: n.out, Projections: identity(n.out), OutputSchema: n.out}
	v := ph.b.vertex("Union", ph.parallelism, 1, op("Union", &spec))
	bounded, changes, updatesOnly := true, "", true
	for _, s := range ins {
		if s.changes != "" {
			changes = s.changes
			updatesOnly = updatesOnly && s.updatesOnly
		}
		p, keys := types.PartitionForward, []int(nil)
		if s.vertex.Parallelism != v.Parallelism {
			p, keys = redistribute(s, v.Parallelism)
		}
		ph.b.edge(s.vertex, v, 0, p, keys)
		bounded = bounded && s.bounded
	}
	return &stream{vertex: v, schema: n.out, bounded: bounded, changes: changes, updatesOnly: updatesOnly && changes != ""}, nil
}

// joinBelow returns n as a join when it is one, or a filter over one; the
// filter's conjuncts are folded into the join's condition, where they are
// pushed below the join or kept as its residual.
func joinBelow(n node) *joinNode {
	switch n := n.(type) {
	case *joinNode:
		return n
	case *filterNode:
		// NB: a WHERE over an outer join filters its padded rows too, so it
		// stays above the join. So does a WHERE over a temporal join: a
		// condition on the versioned table filters joined rows, not
		// versions.
		if j := joinBelow(n.input); j != nil && !j.outer() && j.temporal == nil && j.lookup == nil {
			c := *j
			c.cond = and(append(conjuncts(j.cond), conjuncts(n.cond)...))
			return &c
		}
	}
	return nil
}

// buildJoin plans an inner join: equality conjuncts between the two sides
// become hash keys, conjuncts over one side are pushed below the join, and
// the rest is checked on each match. Each side sends only the columns the
// keys, the residual and need (over the join's output) read. It returns the
// join's stream and where each column of n's output landed in it.
func (ph *physical) buildJoin(n *joinNode, need []bool) (*stream, func(int) int, error) {
	if n.lookup != nil {
		return ph.buildLookupJoin(n, need)
	}
	if s, where, ok, err := ph.buildWindowJoin(n, need); ok || err != nil {
		return s, where, err
	}
	if windowRelationBelow(n.left) != nil && windowRelationBelow(n.right) != nil {
		// NB: as a regular join it would emit before the windows close and
		// keep late rows, which Flink's WindowJoin drops.
		return nil, nil, unsupported(n.pos, "a join of two window functions without window_start and window_end equalities (a window join needs both)")
	}
	lw := len(n.left.schema())
	var leftFilters, rightFilters, residual []*expr.Expr
	var leftKeys, rightKeys []*expr.Expr
	for _, c := range conjuncts(n.cond) {
		side := sideOf(c, lw)
		if n.temporal != nil && side == sideRight {
			return nil, nil, unsupported(n.pos, "a condition on the versioned table alone in a temporal join")
		}
		switch {
		// NB: a condition on one side filters that side's rows before the
		// join, unless the side is preserved by an outer join: its rows
		// that fail the condition must still appear, padded.
		case side == sideLeft && !n.outerLeft:
			leftFilters = append(leftFilters, c)
			continue
		case side == sideRight && !n.outerRight:
			rightFilters = append(rightFilters, remap(c, func(i int) int { return i - lw }))
			continue
		}
		if c.Op == expr.OpCall && c.Func == "=" && len(c.Args) == 2 {
			a, b := c.Args[0], c.Args[1]
			sa, sb := sideOf(a, lw), sideOf(b, lw)
			if sa == sideRight && sb == sideLeft {
				a, b, sa, sb = b, a, sb, sa
			}
			if sa == sideLeft && sb == sideRight {
				leftKeys = append(leftKeys, a)
				rightKeys = append(rightKeys, remap(b, func(i int) int { return i - lw }))
				continue
			}
		}
		residual = append(residual, c)
	}
	// NB: an interval join needs keys; without them the join stays a
	// regular one and its time bounds a residual.
	var iv *intervalBounds
	if len(leftKeys) > 0 && n.temporal == nil {
		iv, residual = intervalOf(n, residual, lw)
	}
	if n.temporal != nil {
		if err := checkTemporalKeys(n, rightKeys); err != nil {
			return nil, nil, err
		}
	}
	// NB: the rest of an outer join's condition (conditions on the
	// preserved side included) stays in the join: a preserved row failing
	// it is still emitted, padded.
	// The columns each side must send.
	used := append([]bool(nil), need...)
	for _, e := range append(append([]*expr.Expr{}, residual...), leftKeys...) {
		for _, c := range columnsOf(e) {
			used[c] = true
		}
	}
	for _, e := range rightKeys {
		for _, c := range columnsOf(e) {
			used[lw+c] = true
		}
	}
	if iv != nil {
		used[iv.leftTime], used[lw+iv.rightTime] = true, true
	}
	if n.temporal != nil {
		used[n.temporal.leftTime], used[lw+n.temporal.rightTime] = true, true
	}
	left, lmap := pruneSide(n.left, leftFilters, used[:lw])
	right, rmap := pruneSide(n.right, rightFilters, used[lw:])
	for i := range leftKeys {
		leftKeys[i] = remap(leftKeys[i], lmap)
		rightKeys[i] = remap(rightKeys[i], rmap)
	}
	ls, err := ph.build(left)
	if err != nil {
		return nil, nil, err
	}
	rs, err := ph.build(right)
	if err != nil {
		return nil, nil, err
	}
	if iv != nil {
		for _, s := range []*stream{ls, rs} {
			if s.changes != "" {
				return nil, nil, &Error{Pos: n.pos, Msg: fmt.Sprintf("StreamPhysicalIntervalJoin doesn't support consuming update and delete changes which is produced by node %s", s.changes)}
			}
		}
	}
	if n.temporal != nil && ls.changes != "" {
		return nil, nil, &Error{Pos: n.pos, Msg: fmt.Sprintf("an event-time temporal join needs an insert-only left input, but %s produces updates and deletes", ls.changes)}
	}
	nlw := len(ls.schema)
	// Keys are columns of one type on both sides: cast or computed keys are
	// appended as extra columns.
	lk, rk, lextra, rextra, err := joinKeys(n.pos, "join keys", leftKeys, rightKeys, nlw, len(rs.schema))
	if err != nil {
		return nil, nil, err
	}
	ls = ph.extend(ls, lextra)
	rs = ph.extend(rs, rextra)
	// where maps a column of n's output to the join's output.
	where := func(i int) int {
		if i < lw {
			return lmap(i)
		}
		return len(ls.schema) + rmap(i-lw)
	}
	out := append(append(types.Schema{}, ls.schema...), rs.schema...)
	for i := range out {
		if (i < len(ls.schema) && n.outerRight) || (i >= len(ls.schema) && n.outerLeft) {
			out[i].Type = out[i].Type.WithNullable(true)
		}
	}
	spec := jobgraph.JoinSpec{
		LeftSchema:   ls.schema,
		RightSchema:  rs.schema,
		LeftKeys:     lk,
		RightKeys:    rk,
		Residual:     remap(and(residual), where),
		OutputSchema: out,
		OuterLeft:    n.outerLeft,
		OuterRight:   n.outerRight,
	}
	if spec.LeftTTLMs, err = ph.stateTTL(n.leftTTL); err != nil {
		return nil, nil, err
	}
	if spec.RightTTLMs, err = ph.stateTTL(n.rightTTL); err != nil {
		return nil, nil, err
	}
	if iv != nil {
		// An interval join's output is insert-only: outer rows are padded
		// only when they expire.
		lt, rt := lmap(iv.leftTime), rmap(iv.rightTime)
		name := intervalJoinName(n.kindName(), iv, lt, rt)
		ispec := jobgraph.IntervalJoinSpec{JoinSpec: spec, LeftTime: lt, RightTime: rt, LowerMs: iv.lower, UpperMs: iv.upper}
		return ph.b.join(name, ph.parallelism, op(name, &ispec), ls, rs, lk, rk, out), where, nil
	}
	if n.temporal != nil {
		// A temporal join's output is insert-only: each left row is joined
		// once, with the version valid at its time.
		lt, rt := lmap(n.temporal.leftTime), rmap(n.temporal.rightTime)
		name := temporalJoinName(n.kindName(), lt, rt)
		tspec := jobgraph.TemporalJoinSpec{JoinSpec: spec, LeftTime: lt, RightTime: rt}
		js := ph.b.join(name, ph.parallelism, op(name, &tspec), ls, rs, lk, rk, out)
		js.changes, js.updatesOnly = "", false
		return js, where, nil
	}
	// NB: the spec's outer sides make it a join_outer (JoinSpec.Kind).
	name := "Join"
	if n.outer() {
		name = "Join(" + n.kindName() + ")"
	}
	par := ph.parallelism
	if len(lk) == 0 {
		// NB: a join without keys pairs every row with every row of the
		// other side: one subtask holds both sides (Flink's singleton
		// distribution).
		par, name = 1, "Join(cross)"
		if n.outer() {
			name = "Join(" + n.kindName() + ", cross)"
		}
	}
	js := ph.b.join(name, par, op(name, &spec), ls, rs, lk, rk, out)
	if n.outer() {
		// Padded rows are deleted when a match arrives, whatever the inputs.
		js.changes = "Join(joinType=[" + n.kindName() + "])"
		js.updatesOnly = false
	}
	return js, where, nil
}

// pruneSide applies a side's pushed-down filters and keeps the columns used
// marks; it returns the new input and the map from old to new columns.
func pruneSide(n node, filters []*expr.Expr, used []bool) (node, func(int) int) {
	if len(filters) > 0 {
		n = &filterNode{input: n, cond: and(filters)}
	}
	in := n.schema()
	newIdx := make([]int, len(in))
	var exprs []*expr.Expr
	var out types.Schema
	for i, f := range in {
		newIdx[i] = -1
		if used[i] {
			newIdx[i] = len(exprs)
			exprs = append(exprs, expr.Column(i, f.Type))
			out = append(out, f)
		}
	}
	m := func(i int) int { return newIdx[i] }
	if len(exprs) == len(in) {
		return n, m
	}
	return &projectNode{input: n, exprs: exprs, out: out}, m
}

// stateTTL is a hint's TTL, or else the session's table.exec.state.ttl, in
// ms; 0 keeps state forever.
func (ph *physical) stateTTL(hint *time.Duration) (int64, error) {
	if hint != nil {
		return hint.Milliseconds(), nil
	}
	v := ph.p.Options.Config["table.exec.state.ttl"]
	if v == "" {
		return 0, nil
	}
	d, err := types.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("table.exec.state.ttl: %w", err)
	}
	return d.Milliseconds(), nil
}

// extend appends computed columns to s.
func (ph *physical) extend(s *stream, extra []*expr.Expr) *stream {
	if len(extra) == 0 {
		return s
	}
	exprs := identity(s.schema)
	out := append(types.Schema{}, s.schema...)
	for i, e := range extra {
		exprs = append(exprs, e)
		out = append(out, types.Field{Name: fmt.Sprintf("$key%d", i), Type: e.Type})
	}
	return ph.calc(s, nil, exprs, out)
}

func keyExpr(e *expr.Expr, t types.DataType) *expr.Expr {
	if sameType(e.Type, t) {
		return e
	}
	return expr.Cast(e, t.WithNullable(e.Type.Nullable()))
}

type side int

const (
	sideNone side = iota
	sideLeft
	sideRight
	sideBoth
)

// sideOf tells which join input the columns of e come from.
func sideOf(e *expr.Expr, leftWidth int) side {
	s := sideNone
	for _, c := range columnsOf(e) {
		cs := sideLeft
		if c >= leftWidth {
			cs = sideRight
		}
		if s == sideNone {
			s = cs
		} else if s != cs {
			return sideBoth
		}
	}
	return s
}

func identity(s types.Schema) []*expr.Expr {
	out := make([]*expr.Expr, len(s))
	for i, f := range s {
		out[i] = expr.Column(i, f.Type)
	}
	return out
}

func isIdentity(exprs []*expr.Expr, in types.Schema) bool {
	if len(exprs) != len(in) {
		return false
	}
	for i, e := range exprs {
		if e.Op != expr.OpColumn || e.Col != i {
			return false
		}
	}
	return true
}

func sameNames(a, b types.Schema) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name {
			return false
		}
	}
	return true
}

// buildAgg plans a group aggregate: a calc computes the group keys and the
// aggregates' arguments into columns (keys first), a HASH edge on the keys
// feeds the GroupAggregate at the default parallelism, or a SINGLE edge a
// global aggregate (no keys) on one subtask.
func (ph *physical) buildAgg(n *aggNode) (*stream, error) {
	nk := len(n.keys)
	exprs := append([]*expr.Expr{}, n.keys...)
	pre := append(types.Schema{}, n.out[:nk]...)
	cols := map[string]int{}
	for i, k := range n.keys {
		cols[canonical(k)] = i
	}
	column := func(e *expr.Expr) int {
		key := canonical(e)
		col, ok := cols[key]
		if !ok {
			col = len(exprs)
			cols[key] = col
			exprs = append(exprs, e)
			pre = append(pre, types.Field{Name: fmt.Sprintf("$f%d", col), Type: e.Type})
		}
		return col
	}
	calls := make([]jobgraph.AggCall, len(n.calls))
	for i, c := range n.calls {
		calls[i] = c.spec(column)
	}
	in, err := ph.build(&projectNode{input: n.input, exprs: exprs, out: pre})
	if err != nil {
		return nil, err
	}
	keys := make([]int, nk)
	for i := range keys {
		keys[i] = i
	}
	spec := jobgraph.GroupAggSpec{
		InputSchema:   in.schema,
		Keys:          keys,
		Aggs:          calls,
		OutputSchema:  n.out,
		InputRetracts: in.changes != "",
	}
	if spec.TTLMs, err = ph.stateTTL(n.ttl); err != nil {
		return nil, err
	}
	par, part := ph.parallelism, types.PartitionHash
	if nk == 0 {
		par, part = 1, types.PartitionSingle
	}
	v := ph.b.vertex("GroupAggregate", par, 1, op("GroupAggregate", &spec))
	ph.b.edge(in.vertex, v, 0, part, keys)
	// NB: a group aggregate updates its results whatever its input; it
	// deletes them only when its input retracts.
	return (&stream{vertex: v, schema: n.out, bounded: in.bounded,
		changes: describeAgg(n, in.schema, calls), updatesOnly: in.changes == ""}).withUpsertKey(keys), nil
}

// describeAgg names a group aggregate as Flink's plans do, roughly:
// GroupAggregate(groupBy=[k], select=[k, COUNT(*) AS $agg0, SUM(x) AS $agg1]).
func describeAgg(n *aggNode, in types.Schema, calls []jobgraph.AggCall) string {
	nk := len(n.keys)
	var sel []string
	for _, f := range n.out[:nk] {
		sel = append(sel, f.Name)
	}
	for i, c := range calls {
		arg := "*"
		if c.Arg >= 0 {
			arg = in[c.Arg].Name
		}
		for _, m := range c.More {
			arg += ", " + in[m].Name
		}
		if c.Distinct {
			arg = "DISTINCT " + arg
		}
		if c.Separator != nil {
			arg += ", '" + strings.ReplaceAll(*c.Separator, "'", "''") + "'"
		}
		filter := ""
		if c.Filtered {
			filter = " FILTER " + in[c.Filter].Name
		}
		sel = append(sel, fmt.Sprintf("%s(%s)%s AS %s", c.Func, arg, filter, n.out[nk+i].Name))
	}
	d := "GroupAggregate("
	if nk > 0 {
		d += "groupBy=[" + strings.Join(sel[:nk], ", ") + "], "
	}
	return d + "select=[" + strings.Join(sel, ", ") + "])"
}

// joinKeys casts each pair of key expressions to their common type and
// returns the key columns of each side: a key that is not a plain column
// is computed as an extra column, appended after the side's lw (rw)
// columns. what names the keys in the error for a pair of types that
// cannot be compared.
func joinKeys(pos ast.Pos, what string, leftKeys, rightKeys []*expr.Expr, lw, rw int) (lk, rk []int, lextra, rextra []*expr.Expr, err error) {
	lk, rk = make([]int, len(leftKeys)), make([]int, len(rightKeys))
	for i := range leftKeys {
		a, b := leftKeys[i], rightKeys[i]
		t, ok := expr.CommonType(a.Type, b.Type)
		if !ok {
			return nil, nil, nil, nil, &Error{Pos: pos, Msg: fmt.Sprintf("%s of types %s and %s cannot be compared", what, a.Type, b.Type)}
		}
		a, b = keyExpr(a, t), keyExpr(b, t)
		if a.Op == expr.OpColumn {
			lk[i] = a.Col
		} else {
			lk[i] = lw + len(lextra)
			lextra = append(lextra, a)
		}
		if b.Op == expr.OpColumn {
			rk[i] = b.Col
		} else {
			rk[i] = rw + len(rextra)
			rextra = append(rextra, b)
		}
	}
	return lk, rk, lextra, rextra, nil
}
