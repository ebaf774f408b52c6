package operators

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/zap"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// The aggregate tests' input: a BIGINT key, an INT, a DOUBLE, a
// DECIMAL(10, 2) and a STRING, every column nullable.
var aggInput = types.Schema{
	{Name: "k", Type: types.BigInt}, {Name: "x", Type: types.Int}, {Name: "d", Type: types.Double},
	{Name: "m", Type: types.Decimal(10, 2)}, {Name: "s", Type: types.String},
}

// arow is one input row; nil is NULL. m is the DECIMAL's unscaled value.
type arow struct {
	k *int64
	x *int32
	d *float64
	m *int64
	s *string
}

type aggEvent struct {
	kind types.RowKind
	row  arow
}

func ptr[T any](v T) *T { return &v }

func buildAggBatch(evs []aggEvent) types.Batch {
	mem := memory.DefaultAllocator
	kb, xb, db := array.NewInt64Builder(mem), array.NewInt32Builder(mem), array.NewFloat64Builder(mem)
	mb := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 10, Scale: 2})
	sb := array.NewStringBuilder(mem)
	kinds := make([]int8, len(evs))
	for i, e := range evs {
		appendOpt(kb, e.row.k, kb.Append)
		appendOpt(xb, e.row.x, xb.Append)
		appendOpt(db, e.row.d, db.Append)
		appendOpt(mb, e.row.m, func(v int64) { mb.Append(decimal128.FromI64(v)) })
		appendOpt(sb, e.row.s, sb.Append)
		kinds[i] = int8(e.kind)
	}
	cols := []arrow.Array{kb.NewArray(), xb.NewArray(), db.NewArray(), mb.NewArray(), sb.NewArray()}
	b := types.NewBatch(aggInput.ArrowSchema(), cols, kinds)
	for _, c := range cols {
		c.Release()
	}
	return b
}

func appendOpt[T any](b array.Builder, v *T, app func(T)) {
	if v == nil {
		b.AppendNull()
	} else {
		app(*v)
	}
}

// fullAggSpec aggregates every column, grouped by k.
func fullAggSpec() jobgraph.GroupAggSpec {
	calls := []struct {
		f   string
		arg int
		t   types.DataType
	}{
		{"COUNT", -1, types.BigInt.WithNullable(false)}, {"COUNT", 1, types.BigInt.WithNullable(false)},
		{"SUM", 1, types.Int}, {"MIN", 1, types.Int}, {"MAX", 1, types.Int}, {"AVG", 1, types.Int},
		{"SUM", 2, types.Double}, {"AVG", 2, types.Double},
		{"SUM", 3, types.Decimal(38, 2)}, {"AVG", 3, types.Decimal(38, 6)},
		{"MIN", 4, types.String}, {"MAX", 4, types.String},
	}
	spec := jobgraph.GroupAggSpec{InputSchema: aggInput, Keys: []int{0}, InputRetracts: true,
		OutputSchema: types.Schema{aggInput[0]}}
	for i, c := range calls {
		spec.Aggs = append(spec.Aggs, jobgraph.AggCall{Func: c.f, Arg: c.arg})
		spec.OutputSchema = append(spec.OutputSchema, types.Field{Name: fmt.Sprintf("a%d", i), Type: c.t})
	}
	return spec
}

// aggCollector keeps emitted rows as "+I[k, v, ...]", formatted as Flink
// prints values, and per group key.
type aggCollector struct {
	schema  types.Schema
	rows    []string
	byKey   map[string][]string
	maxRows int
}

func (c *aggCollector) Emit(b types.Batch) error {
	c.maxRows = max(c.maxRows, b.NumRows())
	for i := 0; i < b.NumRows(); i++ {
		vals := make([]string, b.NumCols())
		for j := range vals {
			s, null := types.FormatValue(b.Column(j), i, c.schema[j].Type, time.UTC)
			if null {
				s = "NULL"
			}
			vals[j] = s
		}
		r := b.Kind(i).String() + "[" + strings.Join(vals, ", ") + "]"
		c.rows = append(c.rows, r)
		if c.byKey == nil {
			c.byKey = map[string][]string{}
		}
		c.byKey[vals[0]] = append(c.byKey[vals[0]], r)
	}
	return nil
}

func optStr[T any](v *T) string {
	if v == nil {
		return "NULL"
	}
	return fmt.Sprint(*v)
}

func fmtDouble(v float64) string {
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	b.Append(v)
	a := b.NewArray()
	defer a.Release()
	s, _ := types.FormatValue(a, 0, types.Double, time.UTC)
	return s
}

// oracleResult computes fullAggSpec's aggregates of a group's live rows
// from scratch.
func oracleResult(key string, rows []arow) string {
	var cx, sx int64
	var minX, maxX *int32
	var cd int64
	var sd float64
	var cm, sm int64
	var minS, maxS *string
	for _, r := range rows {
		if r.x != nil {
			cx++
			sx += int64(*r.x)
			if minX == nil || *r.x < *minX {
				minX = r.x
			}
			if maxX == nil || *r.x > *maxX {
				maxX = r.x
			}
		}
		if r.d != nil {
			cd++
			sd += *r.d
		}
		if r.m != nil {
			cm++
			sm += *r.m
		}
		if r.s != nil {
			if minS == nil || *r.s < *minS {
				minS = r.s
			}
			if maxS == nil || *r.s > *maxS {
				maxS = r.s
			}
		}
	}
	vals := []string{key, fmt.Sprint(len(rows)), fmt.Sprint(cx)}
	if cx == 0 {
		vals = append(vals, "NULL", "NULL", "NULL", "NULL")
	} else {
		vals = append(vals, fmt.Sprint(sx), optStr(minX), optStr(maxX), fmt.Sprint(sx/cx))
	}
	if cd == 0 {
		vals = append(vals, "NULL", "NULL")
	} else {
		vals = append(vals, fmtDouble(sd), fmtDouble(sd/float64(cd)))
	}
	if cm == 0 {
		vals = append(vals, "NULL", "NULL")
	} else {
		vals = append(vals, big.NewRat(sm, 100).FloatString(2), big.NewRat(sm, 100*cm).FloatString(6))
	}
	vals = append(vals, optStr(minS), optStr(maxS))
	return "[" + strings.Join(vals, ", ") + "]"
}

// oracleAgg replays events on lists of live rows per group and derives
// Flink's changelog from the results before and after each event.
func oracleAgg(evs []aggEvent, ttl bool) []string {
	live := map[string][]arow{}
	var out []string
	for _, e := range evs {
		key := optStr(e.row.k)
		rows, found := live[key]
		if !found && e.kind.IsRetract() {
			continue
		}
		old := ""
		if found {
			old = oracleResult(key, rows)
		}
		if e.kind.IsAccumulate() {
			rows = append(rows, e.row)
		} else {
			for i, r := range rows {
				if sameArow(r, e.row) {
					rows = append(rows[:i:i], rows[i+1:]...)
					break
				}
			}
		}
		if len(rows) == 0 {
			delete(live, key)
			out = append(out, "-D"+old)
			continue
		}
		live[key] = rows
		now := oracleResult(key, rows)
		switch {
		case !found:
			out = append(out, "+I"+now)
		case old != now || ttl:
			out = append(out, "-U"+old, "+U"+now)
		}
	}
	return out
}

func sameArow(a, b arow) bool {
	return optStr(a.k) == optStr(b.k) && optStr(a.x) == optStr(b.x) && optStr(a.d) == optStr(b.d) &&
		optStr(a.m) == optStr(b.m) && optStr(a.s) == optStr(b.s)
}

// randomAggEvents makes n events over few keys (NULL among them), with NULL
// values and retractions of live rows; with retract false, inserts only.
// Some retractions name a group without rows, which must be ignored.
func randomAggEvents(r *rand.Rand, n, keys int, retract bool) []aggEvent {
	var live []arow
	var evs []aggEvent
	maybe := func(p int) bool { return r.IntN(p) > 0 }
	for len(evs) < n {
		if retract && len(live) > 0 && r.IntN(3) == 0 {
			i := r.IntN(len(live))
			row := live[i]
			live = append(live[:i], live[i+1:]...)
			evs = append(evs, aggEvent{[]types.RowKind{types.Delete, types.UpdateBefore}[r.IntN(2)], row})
			continue
		}
		var row arow
		if maybe(8) {
			row.k = ptr(int64(r.IntN(keys)))
		}
		if maybe(5) {
			row.x = ptr(int32(r.IntN(21) - 10))
		}
		if maybe(5) {
			row.d = ptr(float64(r.IntN(13)-6) / 2)
		}
		if maybe(5) {
			row.m = ptr(int64(r.IntN(2001) - 1000))
		}
		if maybe(5) {
			row.s = ptr([]string{"", "a", "ab", "b", "Zz", "é"}[r.IntN(6)])
		}
		if retract && r.IntN(25) == 0 {
			// A retraction for a key nobody has: ignored.
			row.k = ptr(int64(1000 + r.IntN(3)))
			evs = append(evs, aggEvent{types.Delete, row})
			continue
		}
		kind := types.Insert
		if retract && r.IntN(4) == 0 {
			kind = types.UpdateAfter
		}
		live = append(live, row)
		evs = append(evs, aggEvent{kind, row})
	}
	return evs
}

// runAgg feeds events to `parallelism` subtasks, routed by key group as a
// hash shuffle routes them, in batches of at most batchSize rows.
func runAgg(t *testing.T, spec jobgraph.GroupAggSpec, evs []aggEvent, batchSize, parallelism int, cacheBytes int64) *aggCollector {
	t.Helper()
	return runGroupAgg(t, spec, evs, buildAggBatch, batchSize, parallelism, cacheBytes)
}

// runGroupAgg is runAgg for events of any shape, which build turns into a
// batch of spec's input.
func runGroupAgg[E any](t *testing.T, spec jobgraph.GroupAggSpec, evs []E, build func([]E) types.Batch, batchSize, parallelism int, cacheBytes int64) *aggCollector {
	t.Helper()
	const maxPar = 128
	ops := make([]*GroupAgg, parallelism)
	for p := range ops {
		op, err := NewOperator(&spec)
		if err != nil {
			t.Fatal(err)
		}
		g := op.(*GroupAgg)
		if err := g.Open(withKeyedState(t, &Context{Subtask: p, Parallelism: parallelism, MaxParallelism: maxPar,
			KeyGroups: types.KeyGroupRangeFor(p, parallelism, maxPar), Logger: zap.NewNop()}, cacheBytes, "")); err != nil {
			t.Fatal(err)
		}
		ops[p] = g
	}
	out := &aggCollector{schema: spec.OutputSchema}
	for start := 0; start < len(evs); start += batchSize {
		chunk := evs[start:min(start+batchSize, len(evs))]
		b := build(chunk)
		keyCols := make([]arrow.Array, len(spec.Keys))
		for i, k := range spec.Keys {
			keyCols[i] = b.Column(k)
		}
		h := make([]uint64, b.NumRows())
		types.HashColumns(keyCols, h)
		b.Release()
		per := make([][]E, parallelism)
		for i, e := range chunk {
			p := types.SubtaskForKeyGroup(types.KeyGroupForHash(h[i], maxPar), parallelism, maxPar)
			per[p] = append(per[p], e)
		}
		for p, pe := range per {
			if len(pe) == 0 {
				continue
			}
			pb := build(pe)
			if err := ops[p].Process(0, pb, out); err != nil {
				t.Fatal(err)
			}
			pb.Release()
		}
	}
	for _, g := range ops {
		if err := g.EndInput(0, out); err != nil {
			t.Fatal(err)
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// byKey splits oracle rows by their first value.
func byKey(rows []string) map[string][]string {
	m := map[string][]string{}
	for _, r := range rows {
		k := strings.SplitN(r[3:], ",", 2)[0]
		m[k] = append(m[k], r)
	}
	return m
}

func sameChangelogs(t *testing.T, got *aggCollector, want []string, parallelism int) {
	t.Helper()
	if parallelism == 1 {
		if strings.Join(got.rows, "\n") != strings.Join(want, "\n") {
			t.Fatalf("changelog differs from the oracle:\ngot  %d rows %v\nwant %d rows %v",
				len(got.rows), firstN(got.rows), len(want), firstN(want))
		}
		return
	}
	w := byKey(want)
	if len(w) != len(got.byKey) {
		t.Fatalf("%d groups changed, want %d", len(got.byKey), len(w))
	}
	for k, rows := range w {
		if strings.Join(got.byKey[k], "\n") != strings.Join(rows, "\n") {
			t.Fatalf("group %s:\ngot  %v\nwant %v", k, firstN(got.byKey[k]), firstN(rows))
		}
	}
}

// TestGroupAggAgainstOracle runs random changelogs with retractions through
// every aggregate and compares the changelog, row for row, with the oracle.
func TestGroupAggAgainstOracle(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		evs := randomAggEvents(rand.New(rand.NewPCG(seed, 11)), 1200, 10, true)
		want := oracleAgg(evs, false)
		for _, bs := range []int{1, 7, 4096} {
			for _, par := range []int{1, 4} {
				for _, cache := range []int64{1024, 64 << 20} {
					t.Run(fmt.Sprintf("seed%d/batch%d/par%d/cache%d", seed, bs, par, cache), func(t *testing.T) {
						sameChangelogs(t, runAgg(t, fullAggSpec(), evs, bs, par, cache), want, par)
					})
				}
			}
		}
	}
}

// TestGroupAggInsertOnly: over an insert-only input MIN and MAX keep only
// the current extreme, and the results are the same.
func TestGroupAggInsertOnly(t *testing.T) {
	evs := randomAggEvents(rand.New(rand.NewPCG(5, 5)), 1000, 10, false)
	want := oracleAgg(evs, false)
	spec := fullAggSpec()
	spec.InputRetracts = false
	for _, bs := range []int{1, 4096} {
		sameChangelogs(t, runAgg(t, spec, evs, bs, 1, 1024), want, 1)
	}
	// A retraction it was not planned for fails loudly.
	op, err := NewGroupAgg(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Open(withKeyedState(t, &Context{MaxParallelism: 128}, 0, "")); err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	row := arow{k: ptr(int64(1)), x: ptr(int32(1))}
	for _, kind := range []types.RowKind{types.Insert, types.Delete} {
		b := buildAggBatch([]aggEvent{{kind, row}})
		err = op.Process(0, b, &aggCollector{schema: spec.OutputSchema})
		b.Release()
	}
	if err == nil || !strings.Contains(err.Error(), "without retraction got a retraction") {
		t.Fatalf("retraction into an insert-only MIN: %v", err)
	}
}

// smallSpec is GROUP BY k with the given aggregates of x (Arg 1) or
// COUNT(*) (Arg -1), all typed by Flink's rules for INT.
func smallSpec(calls ...jobgraph.AggCall) jobgraph.GroupAggSpec {
	spec := jobgraph.GroupAggSpec{InputSchema: aggInput, Keys: []int{0}, Aggs: calls, InputRetracts: true,
		OutputSchema: types.Schema{aggInput[0]}}
	for i, c := range calls {
		t := types.Int
		if c.Func == jobgraph.AggCount {
			t = types.BigInt.WithNullable(false)
		}
		spec.OutputSchema = append(spec.OutputSchema, types.Field{Name: fmt.Sprintf("a%d", i), Type: t})
	}
	return spec
}

// step feeds one row to op and returns what it emitted.
func step(t *testing.T, op *GroupAgg, kind types.RowKind, k int64, x *int32) string {
	t.Helper()
	out := &aggCollector{schema: op.spec.OutputSchema}
	b := buildAggBatch([]aggEvent{{kind, arow{k: &k, x: x}}})
	defer b.Release()
	if err := op.Process(0, b, out); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out.rows, " ")
}

func openAgg(t *testing.T, spec jobgraph.GroupAggSpec, now func() time.Time) *GroupAgg {
	t.Helper()
	op, err := NewGroupAgg(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Open(withKeyedState(t, &Context{MaxParallelism: 128, Now: now}, 1<<20, "")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { op.Close() })
	return op
}

// TestGroupAggChangelog pins Flink's row kinds: +I first, -U/+U on a
// change, nothing when unchanged, -D at zero rows, and retractions for
// groups without state ignored.
func TestGroupAggChangelog(t *testing.T) {
	op := openAgg(t, smallSpec(jobgraph.AggCall{Func: "COUNT", Arg: -1}, jobgraph.AggCall{Func: "SUM", Arg: 1}), nil)
	for _, c := range []struct {
		kind types.RowKind
		k    int64
		x    *int32
		want string
	}{
		{types.Insert, 1, ptr(int32(1)), "+I[1, 1, 1]"},
		{types.Insert, 1, ptr(int32(2)), "-U[1, 1, 1] +U[1, 2, 3]"},
		{types.Insert, 2, nil, "+I[2, 1, NULL]"},
		{types.Delete, 3, ptr(int32(5)), ""},
		{types.UpdateBefore, 1, ptr(int32(2)), "-U[1, 2, 3] +U[1, 1, 1]"},
		{types.UpdateAfter, 1, nil, "-U[1, 1, 1] +U[1, 2, 1]"},
		{types.Delete, 2, nil, "-D[2, 1, NULL]"},
		{types.Delete, 2, nil, ""},
		{types.Delete, 1, nil, "-U[1, 2, 1] +U[1, 1, 1]"},
		{types.Delete, 1, ptr(int32(1)), "-D[1, 1, 1]"},
		{types.Insert, 1, ptr(int32(7)), "+I[1, 1, 7]"},
	} {
		if got := step(t, op, c.kind, c.k, c.x); got != c.want {
			t.Fatalf("%v (%d, %s): got %q, want %q", c.kind, c.k, optStr(c.x), got, c.want)
		}
	}
}

// TestGroupAggUnchangedAndTTL: an unchanged result emits nothing without a
// TTL and -U/+U with one; expired state is gone (a retraction for it is
// ignored, an insertion starts the group over); MIN finds the next value
// when its minimum is retracted.
func TestGroupAggUnchangedAndTTL(t *testing.T) {
	spec := smallSpec(jobgraph.AggCall{Func: "MIN", Arg: 1})
	op := openAgg(t, spec, nil)
	for _, c := range []struct {
		kind types.RowKind
		x    int32
		want string
	}{
		{types.Insert, 5, "+I[1, 5]"},
		{types.Insert, 3, "-U[1, 5] +U[1, 3]"},
		{types.Insert, 3, ""},
		{types.Insert, 9, ""},
		{types.Delete, 3, ""}, // one 3 is left
		{types.Delete, 3, "-U[1, 3] +U[1, 5]"},
		{types.Delete, 9, ""},
		{types.Delete, 5, "-D[1, 5]"},
	} {
		if got := step(t, op, c.kind, 1, &c.x); got != c.want {
			t.Fatalf("%v %d: got %q, want %q", c.kind, c.x, got, c.want)
		}
	}

	clock := time.UnixMilli(1_000_000)
	spec.TTLMs = time.Hour.Milliseconds()
	op = openAgg(t, spec, func() time.Time { return clock })
	for _, c := range []struct {
		kind    types.RowKind
		x       int32
		advance time.Duration
		want    string
	}{
		{types.Insert, 5, 0, "+I[1, 5]"},
		{types.Insert, 7, 0, "-U[1, 5] +U[1, 5]"},                // unchanged, but a TTL is set
		{types.Insert, 6, 59 * time.Minute, "-U[1, 5] +U[1, 5]"}, // written 59 minutes ago: alive
		{types.Delete, 5, 61 * time.Minute, ""},                  // expired: ignored
		{types.Insert, 8, 0, "+I[1, 8]"},                         // starts over
		{types.Delete, 8, 0, "-D[1, 8]"},
	} {
		clock = clock.Add(c.advance)
		if got := step(t, op, c.kind, 1, &c.x); got != c.want {
			t.Fatalf("TTL: %v %d: got %q, want %q", c.kind, c.x, got, c.want)
		}
	}
}

// TestGroupAggTypes pins Flink's result semantics: AVG of INT truncates,
// AVG of DECIMAL rounds half up at scale 6, SUM of INT wraps, aggregates
// over only NULLs are NULL while COUNT is 0.
func TestGroupAggTypes(t *testing.T) {
	k := ptr(int64(1))
	evs := []aggEvent{
		{types.Insert, arow{k: k, x: ptr(int32(1)), m: ptr(int64(1))}},
		{types.Insert, arow{k: k, x: ptr(int32(2)), m: ptr(int64(1))}},
		{types.Insert, arow{k: k, m: ptr(int64(0))}},
	}
	got := runAgg(t, fullAggSpec(), evs, 10, 1, 1<<20)
	last := got.rows[len(got.rows)-1]
	// AVG(x) of 1 and 2 is 1; AVG(m) of 0.01, 0.01, 0.00 is 0.006667.
	if want := "+U[1, 3, 2, 3, 1, 2, 1, NULL, NULL, 0.02, 0.006667, NULL, NULL]"; last != want {
		t.Fatalf("got %s, want %s", last, want)
	}
	wrap := []aggEvent{
		{types.Insert, arow{k: k, x: ptr(int32(2147483647))}},
		{types.Insert, arow{k: k, x: ptr(int32(1))}},
	}
	got = runAgg(t, smallSpec(jobgraph.AggCall{Func: "SUM", Arg: 1}, jobgraph.AggCall{Func: "AVG", Arg: 1}), wrap, 10, 1, 1<<20)
	if want := "+U[1, -2147483648, 1073741824]"; got.rows[len(got.rows)-1] != want {
		t.Fatalf("got %v, want last %s", got.rows, want)
	}
}

// TestGroupAggGlobal: without keys every row is one group.
func TestGroupAggGlobal(t *testing.T) {
	spec := smallSpec(jobgraph.AggCall{Func: "COUNT", Arg: -1})
	spec.Keys = nil
	spec.OutputSchema = spec.OutputSchema[1:]
	evs := []aggEvent{{types.Insert, arow{k: ptr(int64(1))}}, {types.Insert, arow{}}, {types.Delete, arow{}}}
	got := runAgg(t, spec, evs, 1, 1, 1<<20)
	want := "+I[1] -U[1] +U[2] -U[2] +U[1]"
	if strings.Join(got.rows, " ") != want {
		t.Fatalf("got %v, want %s", got.rows, want)
	}
}

// TestGroupAggBatchesAreBounded: output batches hold at most 4096 rows.
func TestGroupAggBatchesAreBounded(t *testing.T) {
	var evs []aggEvent
	for i := 0; i < 5000; i++ {
		evs = append(evs, aggEvent{types.Insert, arow{k: ptr(int64(i % 7)), x: ptr(int32(i))}})
	}
	got := runAgg(t, smallSpec(jobgraph.AggCall{Func: "SUM", Arg: 1}), evs, 5000, 1, 1<<20)
	if got.maxRows > joinBatchRows || len(got.rows) != 7+2*(5000-7) {
		t.Fatalf("%d rows, largest batch %d", len(got.rows), got.maxRows)
	}
}

func TestGroupAggSpecErrors(t *testing.T) {
	good := smallSpec(jobgraph.AggCall{Func: "SUM", Arg: 1})
	bad := []func(s *jobgraph.GroupAggSpec){
		func(s *jobgraph.GroupAggSpec) { s.Keys = []int{9} },
		func(s *jobgraph.GroupAggSpec) { s.Aggs[0].Func = "LISTAGG" },
		func(s *jobgraph.GroupAggSpec) { s.Aggs[0].Arg = 4 },                     // SUM(STRING)
		func(s *jobgraph.GroupAggSpec) { s.OutputSchema[1].Type = types.BigInt }, // SUM(INT) is INT
		func(s *jobgraph.GroupAggSpec) { s.OutputSchema = s.OutputSchema[:1] },
		func(s *jobgraph.GroupAggSpec) { s.Aggs[0] = jobgraph.AggCall{Func: "SUM", Arg: -1} },
	}
	for i, f := range bad {
		s := good
		s.Aggs = append([]jobgraph.AggCall(nil), good.Aggs...)
		s.OutputSchema = append(types.Schema(nil), good.OutputSchema...)
		f(&s)
		if _, err := NewGroupAgg(s); err == nil {
			t.Errorf("spec %d accepted", i)
		}
	}
}
