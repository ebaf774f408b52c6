package operators

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// wrRow is a row of a window function's output: key k, sort value x, a
// unique id, rowtime ts, and its window [ws, we), times in ms.
type wrRow struct{ k, x, id, ts, ws, we int64 }

var wrInput = types.Schema{{Name: "k", Type: types.BigInt}, {Name: "x", Type: types.BigInt}, {Name: "id", Type: types.BigInt},
	{Name: "ts", Type: types.Timestamp(3)}, {Name: "window_start", Type: types.Timestamp(3).WithNullable(false)},
	{Name: "window_end", Type: types.Timestamp(3).WithNullable(false)}}

func wrBatch(rows ...wrRow) types.Batch {
	mem := memory.DefaultAllocator
	var ints [3]*array.Int64Builder
	var times [3]*array.TimestampBuilder
	for i := range ints {
		ints[i] = array.NewInt64Builder(mem)
		times[i] = array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Nanosecond})
		defer ints[i].Release()
		defer times[i].Release()
	}
	for _, r := range rows {
		ints[0].Append(r.k)
		ints[1].Append(r.x)
		ints[2].Append(r.id)
		times[0].Append(arrow.Timestamp(r.ts * 1e6))
		times[1].Append(arrow.Timestamp(r.ws * 1e6))
		times[2].Append(arrow.Timestamp(r.we * 1e6))
	}
	var cols []arrow.Array
	for _, b := range ints {
		cols = append(cols, b.NewArray())
	}
	for _, b := range times {
		cols = append(cols, b.NewArray())
	}
	for _, c := range cols {
		defer c.Release()
	}
	return types.NewInsertBatch(wrInput.ArrowSchema(), cols, len(rows))
}

// wrRankSpec: the top limit rows by x DESC per (k, window).
func wrRankSpec(limit int64, rankNum bool, partition []int) jobgraph.WindowRankSpec {
	return jobgraph.WindowRankSpec{InputSchema: wrInput, Partition: partition,
		OrderBy: []jobgraph.SortKey{{Col: 1, Desc: true}}, Limit: limit, OutputRankNumber: rankNum,
		WindowStart: 4, WindowEnd: 5, Window: jobgraph.WindowSpec{Kind: jobgraph.WindowTumble, SizeMs: 10}}
}

func wrDedupSpec(keepLast bool) jobgraph.WindowDeduplicateSpec {
	return jobgraph.WindowDeduplicateSpec{InputSchema: wrInput, Keys: []int{0}, KeepLastRow: keepLast, RowtimeCol: 3,
		WindowStart: 4, WindowEnd: 5, Window: jobgraph.WindowSpec{Kind: jobgraph.WindowTumble, SizeMs: 10}}
}

func openOp(t testing.TB, op Operator, cacheBytes int64) {
	t.Helper()
	if err := op.Open(withKeyedState(t, &Context{}, cacheBytes, "")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { op.Close() })
}

// wrOracle is a window rank held in Go maps: per (key, window end) every
// row in arrival order; at a watermark each fired window's rows are
// sorted (stably) and cut to the limit.
type wrOracle struct {
	limit    int64
	rankNum  bool
	keyed    bool
	dedup    bool // keep-first or keep-last deduplicate on ts
	keepLast bool
	wm       int64
	wins     map[int64]*wrOracleWindow
}

type wrOracleWindow struct {
	order []int64 // keys in order of first row
	rows  map[int64][]wrRow
}

func (o *wrOracle) add(r wrRow) {
	if r.we-1 <= o.wm {
		return
	}
	w := o.wins[r.we]
	if w == nil {
		w = &wrOracleWindow{rows: map[int64][]wrRow{}}
		o.wins[r.we] = w
	}
	k := r.k
	if !o.keyed {
		k = 0
	}
	if _, ok := w.rows[k]; !ok {
		w.order = append(w.order, k)
	}
	w.rows[k] = append(w.rows[k], r)
}

func (o *wrOracle) top(rows []wrRow) []wrRow {
	rows = slices.Clone(rows)
	switch {
	case !o.dedup:
		slices.SortStableFunc(rows, func(a, b wrRow) int { return cmp.Compare(b.x, a.x) })
	case o.keepLast:
		// The greatest ts; of equal ones the last to arrive.
		slices.Reverse(rows)
		slices.SortStableFunc(rows, func(a, b wrRow) int { return cmp.Compare(b.ts, a.ts) })
	default:
		slices.SortStableFunc(rows, func(a, b wrRow) int { return cmp.Compare(a.ts, b.ts) })
	}
	return rows[:min(int64(len(rows)), o.limit)]
}

func (o *wrOracle) watermark(wm int64) string {
	var evs []string
	if wm > o.wm {
		o.wm = wm
		var fired []int64
		for end := range o.wins {
			if end-1 <= wm {
				fired = append(fired, end)
			}
		}
		sort.Slice(fired, func(i, j int) bool { return fired[i] < fired[j] })
		for _, end := range fired {
			w := o.wins[end]
			for _, k := range w.order {
				for i, r := range o.top(w.rows[k]) {
					row := fmt.Sprintf("%d %d %d %d %d %d", r.k, r.x, r.id, r.ts, r.ws, r.we)
					if o.rankNum {
						row += fmt.Sprintf(" %d", i+1)
					}
					evs = append(evs, "+I["+row+"]")
				}
			}
			delete(o.wins, end)
		}
	}
	if wm == MaxWatermark {
		evs = append(evs, "wm max")
	} else {
		evs = append(evs, fmt.Sprintf("wm %d", wm))
	}
	return strings.Join(evs, " ")
}

// wrRandomRows makes n rows in 10 ms windows around now, some of them
// behind the watermark, with few distinct x and ts values so that ties
// are common.
func wrRandomRows(r *rand.Rand, n int, keys, now int64) []wrRow {
	rows := make([]wrRow, n)
	for i := range rows {
		ts := now - 25 + r.Int64N(50)
		ts -= ts % 3 // ties in ts
		ws := ts - floorMod(ts, 10)
		rows[i] = wrRow{k: r.Int64N(keys), x: r.Int64N(5), id: now*1000 + int64(i), ts: ts, ws: ws, we: ws + 10}
	}
	return rows
}

// TestWindowRankOracle runs window ranks and deduplicates over random
// inputs with late rows and ties against the oracle, with a 1 KiB state
// cache (so state spills to Pebble) and the default one.
func TestWindowRankOracle(t *testing.T) {
	type variant struct {
		name  string
		build func() (*WindowRank, error)
		o     wrOracle
	}
	variants := []variant{
		{"top3", func() (*WindowRank, error) { return NewWindowRank(wrRankSpec(3, false, []int{0})) }, wrOracle{limit: 3, keyed: true}},
		{"top2-rownum", func() (*WindowRank, error) { return NewWindowRank(wrRankSpec(2, true, []int{0})) }, wrOracle{limit: 2, keyed: true, rankNum: true}},
		{"top4-global", func() (*WindowRank, error) { return NewWindowRank(wrRankSpec(4, true, nil)) }, wrOracle{limit: 4, rankNum: true}},
		{"top1", func() (*WindowRank, error) { return NewWindowRank(wrRankSpec(1, false, []int{0})) }, wrOracle{limit: 1, keyed: true}},
		{"dedup-first", func() (*WindowRank, error) { return NewWindowDeduplicate(wrDedupSpec(false)) }, wrOracle{limit: 1, keyed: true, dedup: true}},
		{"dedup-last", func() (*WindowRank, error) { return NewWindowDeduplicate(wrDedupSpec(true)) }, wrOracle{limit: 1, keyed: true, dedup: true, keepLast: true}},
	}
	for _, v := range variants {
		for _, cache := range []int64{1 << 10, 0} {
			t.Run(fmt.Sprintf("%s/cache=%d", v.name, cache), func(t *testing.T) {
				op, err := v.build()
				if err != nil {
					t.Fatal(err)
				}
				openOp(t, op, cache)
				o := v.o
				o.wm, o.wins = MinWatermark, map[int64]*wrOracleWindow{}
				out := &winCollector{}
				r := rand.New(rand.NewPCG(7, uint64(cache)))
				for step := int64(0); step < 40; step++ {
					now := step * 7
					rows := wrRandomRows(r, 1+r.IntN(200), 20, now)
					for _, row := range rows {
						o.add(row)
					}
					b := wrBatch(rows...)
					if err := op.Process(0, b, out); err != nil {
						t.Fatal(err)
					}
					b.Release()
					wm := now - 5 - r.Int64N(10)
					if err := op.ProcessWatermark(wm, out); err != nil {
						t.Fatal(err)
					}
					if got, want := out.take(), o.watermark(wm); got != want {
						t.Fatalf("step %d, wm %d:\n got %s\nwant %s", step, wm, got, want)
					}
				}
				if err := op.ProcessWatermark(MaxWatermark, out); err != nil {
					t.Fatal(err)
				}
				if got, want := out.take(), o.watermark(MaxWatermark); got != want {
					t.Fatalf("end:\n got %s\nwant %s", got, want)
				}
				if cache != 0 {
					if st := op.StateStats(); st.Evictions == 0 {
						t.Fatalf("state did not spill with a 1 KiB cache: %+v", st)
					}
				}
			})
		}
	}
}

// TestWindowRankExample: a tumbling window's top 2 by x DESC per key, a
// tie kept in arrival order, a late row dropped, the row number output.
func TestWindowRankExample(t *testing.T) {
	op, err := NewWindowRank(wrRankSpec(2, true, []int{0}))
	if err != nil {
		t.Fatal(err)
	}
	openOp(t, op, 0)
	out := &winCollector{}
	b := wrBatch(
		wrRow{k: 1, x: 5, id: 1, ts: 1, ws: 0, we: 10},
		wrRow{k: 1, x: 7, id: 2, ts: 2, ws: 0, we: 10},
		wrRow{k: 2, x: 1, id: 3, ts: 3, ws: 0, we: 10},
		wrRow{k: 1, x: 7, id: 4, ts: 4, ws: 0, we: 10}, // ties with id 2, after it
		wrRow{k: 1, x: 9, id: 5, ts: 12, ws: 10, we: 20},
	)
	defer b.Release()
	if err := op.Process(0, b, out); err != nil {
		t.Fatal(err)
	}
	if err := op.ProcessWatermark(9, out); err != nil {
		t.Fatal(err)
	}
	if got, want := out.take(), "+I[1 7 2 2 0 10 1] +I[1 7 4 4 0 10 2] +I[2 1 3 3 0 10 1] wm 9"; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	late := wrBatch(wrRow{k: 1, x: 100, id: 6, ts: 5, ws: 0, we: 10})
	defer late.Release()
	if err := op.Process(0, late, out); err != nil {
		t.Fatal(err)
	}
	if err := op.ProcessWatermark(MaxWatermark, out); err != nil {
		t.Fatal(err)
	}
	if got, want := out.take(), "+I[1 9 5 12 10 20 1] wm max"; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// TestWindowRankSessions: two sessions that end together but start apart
// are two windows, ranked apart.
func TestWindowRankSessions(t *testing.T) {
	spec := wrRankSpec(1, true, nil)
	spec.Window = jobgraph.WindowSpec{Kind: jobgraph.WindowSession, GapMs: 5}
	op, err := NewWindowRank(spec)
	if err != nil {
		t.Fatal(err)
	}
	openOp(t, op, 0)
	out := &winCollector{}
	b := wrBatch(
		wrRow{k: 1, x: 5, id: 1, ts: 1, ws: 0, we: 10},
		wrRow{k: 2, x: 7, id: 2, ts: 4, ws: 4, we: 10},
		wrRow{k: 1, x: 6, id: 3, ts: 2, ws: 0, we: 10},
	)
	defer b.Release()
	if err := op.Process(0, b, out); err != nil {
		t.Fatal(err)
	}
	if err := op.ProcessWatermark(MaxWatermark, out); err != nil {
		t.Fatal(err)
	}
	if got, want := out.take(), "+I[1 6 3 2 0 10 1] +I[2 7 2 4 4 10 1] wm max"; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// TestWindowRankRefusesRetractions: the input must be insert-only, as
// Flink's TopNRecordsCombiner requires.
func TestWindowRankRefusesRetractions(t *testing.T) {
	op, err := NewWindowRank(wrRankSpec(2, false, []int{0}))
	if err != nil {
		t.Fatal(err)
	}
	openOp(t, op, 0)
	b := wrBatch(wrRow{k: 1, x: 5, id: 1, ts: 1, ws: 0, we: 10})
	defer b.Release()
	b.Kinds()[0] = int8(types.UpdateBefore)
	err = op.Process(0, b, &winCollector{})
	if err == nil || err.Error() != "Window rank does not support input RowKind: -U" {
		t.Fatalf("got %v", err)
	}
}

func wrRestoreCase(name string, spec jobgraph.Spec, keys []int, r *rand.Rand) *restoreCase {
	build := func(_ int, evs []ijEvent) types.Batch {
		rows := make([]wrRow, len(evs))
		for i, e := range evs {
			ws := e.ts - floorMod(e.ts, 1000)
			rows[i] = wrRow{k: e.k, x: e.v % 7, id: e.v, ts: e.ts - e.ts%3, ws: ws, we: ws + 1000}
		}
		return wrBatch(rows...)
	}
	return &restoreCase{name: name, newOp: registered(spec), inputs: 1, keys: [2][]int{keys},
		steps: restoreSteps(r, lateEvents(r, 500, 8), func(ijEvent) int { return 0 }, ijWatermark, build)}
}

func TestRestoreWindowRank(t *testing.T) {
	testRestore(t, func(r *rand.Rand) *restoreCase {
		spec := wrRankSpec(3, true, []int{0})
		return wrRestoreCase("window-rank", &spec, spec.Partition, r)
	})
	testRestore(t, func(r *rand.Rand) *restoreCase {
		spec := wrDedupSpec(true)
		return wrRestoreCase("window-dedup-last", &spec, spec.Keys, r)
	})
}

// BenchmarkWindowRank: the top 3 (or the last row) of 1000 keys per 10 ms
// tumbling window, 4096-row batches, a watermark after each batch. In the
// "batch" variants every batch is one window, which fires after it (about
// 4 rows per key and window); in the "wide" ones, timed as
// BenchmarkWindowAgg, a window spans 2.5 batches (about 10 rows per key
// and window). It reports the bytes of state cache per (key, window)
// after the first batch: the kept rows and the timer index row.
func BenchmarkWindowRank(b *testing.B) {
	top3 := func() (*WindowRank, error) { return NewWindowRank(wrRankSpec(3, false, []int{0})) }
	dedup := func() (*WindowRank, error) { return NewWindowDeduplicate(wrDedupSpec(true)) }
	for _, c := range []struct {
		name  string
		build func() (*WindowRank, error)
		wide  bool
	}{
		{"top3/batch", top3, false}, {"dedup/batch", dedup, false},
		{"top3/wide", top3, true}, {"dedup/wide", dedup, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			op, err := c.build()
			if err != nil {
				b.Fatal(err)
			}
			openOp(b, op, 0)
			rows := make([]wrRow, 4096)
			out := discardCollector{}
			var stateBytes int64
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				for i := range rows {
					ts := int64(n*10 + i%10)
					if c.wide {
						ts = int64(n*4 + i/1024)
					}
					ws := ts - ts%10
					rows[i] = wrRow{k: int64(i % 1000), x: int64(i * 7919 % 4096), id: int64(i), ts: ts, ws: ws, we: ws + 10}
				}
				batch := wrBatch(rows...)
				if err := op.Process(0, batch, out); err != nil {
					b.Fatal(err)
				}
				batch.Release()
				if n == 0 {
					stateBytes = op.StateStats().CacheBytes
				}
				wm := int64(n*10 + 9)
				if c.wide {
					wm = int64(n*4 + 3)
				}
				if err := op.ProcessWatermark(wm, out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(rows))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(stateBytes)/1000, "state-B/key")
		})
	}
}
