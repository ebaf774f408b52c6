package operators

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

func sessionWindow(gap int64) jobgraph.WindowSpec {
	return jobgraph.WindowSpec{Kind: jobgraph.WindowSession, GapMs: gap}
}

func openSessionAgg(t testing.TB, spec jobgraph.WindowAggSpec, cache int64) *SessionWindowAgg {
	t.Helper()
	a, err := NewSessionWindowAgg(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Open(withKeyedState(t, &Context{}, cache, "")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func sessProcess(t testing.TB, a Operator, out Collector, b types.Batch) {
	t.Helper()
	defer b.Release()
	if err := a.Process(0, b, out); err != nil {
		t.Fatal(err)
	}
}

func sessWatermark(t testing.TB, a WatermarkHandler, out *winCollector, wm int64) string {
	t.Helper()
	if err := a.ProcessWatermark(wm, out); err != nil {
		t.Fatal(err)
	}
	return out.take()
}

// TestSessionWindowAgg: a session is [first ts, last ts + gap) per key and
// fires when the watermark reaches its end - 1.
func TestSessionWindowAgg(t *testing.T) {
	a := openSessionAgg(t, windowSpec(sessionWindow(10)), 0)
	out := &winCollector{}
	sessProcess(t, a, out, winBatch(winRow{1, 1, 1}, winRow{2, 2, 3}, winRow{1, 4, 5}))
	if got := sessWatermark(t, a, out, 11); got != "wm 11" {
		t.Fatalf("wm 11: %s", got)
	}
	if got, want := sessWatermark(t, a, out, 12), "+I[2 3 13 12 1 2] wm 12"; got != want {
		t.Fatalf("wm 12: %s, want %s", got, want)
	}
	// k=1's session [1, 15) is open: 14 extends it to [1, 24).
	sessProcess(t, a, out, winBatch(winRow{1, 8, 14}))
	if got, want := sessWatermark(t, a, out, 30), "+I[1 1 24 23 3 13] wm 30"; got != want {
		t.Fatalf("wm 30: %s, want %s", got, want)
	}
}

// TestSessionWindowAggMerge: windows that overlap or touch merge, also
// backwards in time and across several sessions at once.
func TestSessionWindowAggMerge(t *testing.T) {
	a := openSessionAgg(t, windowSpec(sessionWindow(10)), 0)
	out := &winCollector{}
	// [0,10), [30,40), [15,25): three sessions.
	sessProcess(t, a, out, winBatch(winRow{1, 1, 0}, winRow{1, 2, 30}, winRow{1, 4, 15}))
	// [20,30) overlaps [15,25) and touches [30,40): [15,40).
	sessProcess(t, a, out, winBatch(winRow{1, 8, 20}))
	if got, want := sessWatermark(t, a, out, 9), "+I[1 0 10 9 1 1] wm 9"; got != want {
		t.Fatalf("wm 9: %s, want %s", got, want)
	}
	// [12, 22) extends [15,40) backwards to [12,40); a second key.
	sessProcess(t, a, out, winBatch(winRow{1, 16, 12}, winRow{2, 32, 39}))
	if got, want := sessWatermark(t, a, out, MaxWatermark), "+I[1 12 40 39 4 30] +I[2 39 49 48 1 32] wm max"; got != want {
		t.Fatalf("end: %s, want %s", got, want)
	}
}

// TestSessionWindowAggLate: a row whose window, merged with the key's
// open sessions, is behind the watermark is dropped; one that reaches an
// open session joins it, and one whose own window is not behind opens a
// new session although its ts is.
func TestSessionWindowAggLate(t *testing.T) {
	a := openSessionAgg(t, windowSpec(sessionWindow(10)), 0)
	out := &winCollector{}
	sessProcess(t, a, out, winBatch(winRow{1, 1, 0}, winRow{2, 1, 20}))
	if got, want := sessWatermark(t, a, out, 20), "+I[1 0 10 9 1 1] wm 20"; got != want {
		t.Fatalf("wm 20: %s, want %s", got, want)
	}
	sessProcess(t, a, out, winBatch(
		winRow{1, 100, 5},   // [5, 15): late
		winRow{2, 10, 12},   // [12, 22) touches [20, 30): joins it
		winRow{1, 1000, 15}, // [15, 25): behind the watermark, but not late
	))
	if got, want := sessWatermark(t, a, out, MaxWatermark), "+I[1 15 25 24 1 1000] +I[2 12 30 29 2 11] wm max"; got != want {
		t.Fatalf("end: %s, want %s", got, want)
	}
}

// sessInput is (k, x, ts, f); f is x's parity.
var sessInput = types.Schema{{Name: "k", Type: types.BigInt}, {Name: "x", Type: types.BigInt},
	{Name: "ts", Type: types.Timestamp(3)}, {Name: "f", Type: types.Boolean}}

func sessBatch(rows ...winRow) types.Batch {
	mem := memory.DefaultAllocator
	kb, xb, fb := array.NewInt64Builder(mem), array.NewInt64Builder(mem), array.NewBooleanBuilder(mem)
	tb := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Nanosecond})
	for _, r := range rows {
		kb.Append(r.k)
		xb.Append(r.x)
		tb.Append(arrow.Timestamp(r.ts * 1e6))
		fb.Append(r.x%2 == 0)
	}
	cols := []arrow.Array{kb.NewArray(), xb.NewArray(), tb.NewArray(), fb.NewArray()}
	for _, b := range []array.Builder{kb, xb, tb, fb} {
		b.Release()
	}
	b := types.NewInsertBatch(sessInput.ArrowSchema(), cols, len(rows))
	releaseAll(cols)
	return b
}

// sessAggSpec: COUNT(*), SUM(x), COUNT(DISTINCT x), SUM(DISTINCT x)
// FILTER (WHERE f), MIN(x), MAX(x), AVG(x), COUNT(*) FILTER (WHERE f) per
// k.
func sessAggSpec(gap int64) jobgraph.WindowAggSpec {
	ts := types.Timestamp(3).WithNullable(false)
	cnt, big := types.BigInt.WithNullable(false), types.BigInt
	return jobgraph.WindowAggSpec{
		InputSchema: sessInput, Keys: []int{0}, Rowtime: 2, Window: sessionWindow(gap),
		Aggs: []jobgraph.AggCall{
			{Func: jobgraph.AggCount, Arg: -1}, {Func: jobgraph.AggSum, Arg: 1},
			{Func: jobgraph.AggCount, Arg: 1, Distinct: true},
			{Func: jobgraph.AggSum, Arg: 1, Distinct: true, Filtered: true, Filter: 3},
			{Func: jobgraph.AggMin, Arg: 1}, {Func: jobgraph.AggMax, Arg: 1}, {Func: jobgraph.AggAvg, Arg: 1},
			{Func: jobgraph.AggCount, Arg: -1, Filtered: true, Filter: 3},
		},
		OutputSchema: types.Schema{{Name: "k", Type: types.BigInt},
			{Name: "window_start", Type: ts}, {Name: "window_end", Type: ts}, {Name: "window_time", Type: ts},
			{Name: "c", Type: cnt}, {Name: "s", Type: big}, {Name: "cd", Type: cnt}, {Name: "sdf", Type: big},
			{Name: "mn", Type: big}, {Name: "mx", Type: big}, {Name: "av", Type: big}, {Name: "cf", Type: cnt}},
	}
}

// TestSessionWindowAggMergesAccumulators: merged sessions merge every
// aggregate; a distinct value both held counts once.
func TestSessionWindowAggMergesAccumulators(t *testing.T) {
	a := openSessionAgg(t, sessAggSpec(10), 0)
	out := &winCollector{}
	sessProcess(t, a, out, sessBatch(winRow{1, 4, 0}, winRow{1, 3, 1}, winRow{1, 4, 20}, winRow{1, 9, 22}, winRow{1, 6, 21}))
	// [0, 11) and [20, 32) merge through [10, 20).
	sessProcess(t, a, out, sessBatch(winRow{1, 3, 10}))
	// c=6 s=29 cd=4 (3 4 6 9) sdf=10 (4 6) mn=3 mx=9 av=4 cf=3
	if got, want := sessWatermark(t, a, out, MaxWatermark), "+I[1 0 32 31 6 29 4 10 3 9 4 3] wm max"; got != want {
		t.Fatalf("end: %s, want %s", got, want)
	}
}

func TestMergeWelford(t *testing.T) {
	xs := []float64{3, 1, 4, 1, 5, 9, 2, 6}
	var all, l, r aggAcc
	for i, x := range xs {
		all.n++
		welford(&all, x, false)
		p := &l
		if i >= 3 {
			p = &r
		}
		p.n++
		welford(p, x, false)
	}
	mergeWelford(&l, &r)
	if l.n != all.n || math.Abs(l.f-all.f) > 1e-12 || math.Abs(l.m2-all.m2) > 1e-9 {
		t.Fatalf("merged n=%d mean=%v m2=%v, want n=%d mean=%v m2=%v", l.n, l.f, l.m2, all.n, all.f, all.m2)
	}
	var empty aggAcc
	mergeWelford(&empty, &all)
	if empty.n != all.n || empty.f != all.f || empty.m2 != all.m2 {
		t.Fatalf("merge into empty: %+v", empty)
	}
}

// TestSessionWindowAggRefusesOrderedAggregates: LISTAGG, FIRST_VALUE and
// LAST_VALUE cannot merge.
func TestSessionWindowAggRefusesOrderedAggregates(t *testing.T) {
	spec := windowSpec(sessionWindow(10))
	spec.Aggs[1].Func = jobgraph.AggFirstValue
	if _, err := NewSessionWindowAgg(spec); err == nil || !strings.Contains(err.Error(), "cannot merge") {
		t.Fatalf("got %v", err)
	}
}

// sessOracle is the session window aggregate over plain Go values: every
// accepted row per open session, recomputed at firing.
type sessOracle struct {
	gap  int64
	wm   int64
	open map[int64][]*oSession // per key, ascending
	seq  int
	// merges counts the rows that merged two sessions or more.
	merges int
}

type oSession struct {
	start, end int64
	xs         []int64
	seq        int // registration of the current end
}

func (o *sessOracle) add(r winRow) {
	ss := o.open[r.k]
	start, end := r.ts, r.ts+o.gap
	var keep, hit []*oSession
	for _, s := range ss {
		if s.start <= end && s.end >= start {
			hit = append(hit, s)
		} else {
			keep = append(keep, s)
		}
	}
	m := &oSession{start: start, end: end, xs: []int64{r.x}}
	for _, s := range hit {
		m.start, m.end = min(m.start, s.start), max(m.end, s.end)
		m.xs = append(m.xs, s.xs...)
	}
	if m.end-1 <= o.wm {
		return
	}
	if len(hit) > 1 {
		o.merges++
	}
	m.seq = o.seq
	o.seq++
	if len(hit) > 0 && hit[0].end == m.end && len(hit) == 1 {
		m.seq = hit[0].seq // an unchanged end keeps its registration
	}
	keep = append(keep, m)
	sort.Slice(keep, func(i, j int) bool { return keep[i].start < keep[j].start })
	o.open[r.k] = keep
}

func (o *sessOracle) watermark(wm int64) string {
	if wm <= o.wm {
		return ""
	}
	o.wm = wm
	type fired struct {
		k int64
		s *oSession
	}
	var fs []fired
	for k, ss := range o.open {
		var keep []*oSession
		for _, s := range ss {
			if s.end-1 <= wm {
				fs = append(fs, fired{k, s})
			} else {
				keep = append(keep, s)
			}
		}
		o.open[k] = keep
	}
	sort.Slice(fs, func(i, j int) bool {
		return fs[i].s.end < fs[j].s.end || fs[i].s.end == fs[j].s.end && fs[i].s.seq < fs[j].s.seq
	})
	var evs []string
	for _, f := range fs {
		var sum, sdf, cf int64
		mn, mx := int64(math.MaxInt64), int64(math.MinInt64)
		seen := map[int64]bool{}
		for _, x := range f.s.xs {
			sum += x
			mn, mx = min(mn, x), max(mx, x)
			if x%2 == 0 {
				cf++
				if !seen[x] {
					sdf += x
				}
			}
			seen[x] = true
		}
		sdfs := fmt.Sprint(sdf)
		if cf == 0 {
			sdfs = "" // winCollector prints NULL as nothing
		}
		n := int64(len(f.s.xs))
		evs = append(evs, fmt.Sprintf("+I[%d %d %d %d %d %d %d %s %d %d %d %d]", f.k, f.s.start, f.s.end, f.s.end-1,
			n, sum, len(seen), sdfs, mn, mx, sum/n, cf))
	}
	if wm == MaxWatermark {
		evs = append(evs, "wm max")
	} else {
		evs = append(evs, fmt.Sprintf("wm %d", wm))
	}
	return strings.Join(evs, " ")
}

// TestSessionWindowAggOracle runs random rows, some late and out of
// order, through session windows with a tiny cache (state spills to
// Pebble) and the default one, at several batch sizes, and compares every
// firing with the oracle; at the end no state is left.
func TestSessionWindowAggOracle(t *testing.T) {
	for _, cache := range []int64{1 << 10, 0} {
		for _, batch := range []int{1, 7, 256} {
			t.Run(fmt.Sprintf("cache=%d/batch=%d", cache, batch), func(t *testing.T) {
				a := openSessionAgg(t, sessAggSpec(30), cache)
				o := &sessOracle{gap: 30, wm: MinWatermark, open: map[int64][]*oSession{}}
				out := &winCollector{}
				rng := rand.New(rand.NewSource(int64(batch)))
				for step := int64(0); step < 30; step++ {
					rows := make([]winRow, 300)
					for i := range rows {
						rows[i] = winRow{k: rng.Int63n(120), x: rng.Int63n(12), ts: step*40 + rng.Int63n(60) - 25}
						o.add(rows[i])
					}
					for len(rows) > 0 {
						n := min(batch, len(rows))
						sessProcess(t, a, out, sessBatch(rows[:n]...))
						rows = rows[n:]
					}
					wm := step*40 - 5
					if got, want := sessWatermark(t, a, out, wm), o.watermark(wm); got != want {
						t.Fatalf("step %d, wm %d:\n got %s\nwant %s", step, wm, got, want)
					}
				}
				if got, want := sessWatermark(t, a, out, MaxWatermark), o.watermark(MaxWatermark); got != want {
					t.Fatalf("end:\n got %s\nwant %s", got, want)
				}
				if o.merges < 50 {
					t.Fatalf("only %d rows merged sessions", o.merges)
				}
				t.Logf("%d rows merged sessions", o.merges)
				left := 0
				countKeys := func(kg int, key, value []byte) error { left++; return nil }
				if err := a.sess.Scan(countKeys); err != nil {
					t.Fatal(err)
				}
				for _, v := range a.views {
					if err := v.counts.Scan(countKeys); err != nil {
						t.Fatal(err)
					}
				}
				if left != 0 {
					t.Fatalf("%d state entries left after every session fired", left)
				}
			})
		}
	}
}

// benchSessionWindow runs 1000 keys into 10 ms session windows, 4096-row
// batches, each key's rows 4 ms apart (so sessions grow, and a session
// closes when its key skips a batch), a watermark after each batch. It
// reports rows/s and the bytes of state (keys and values of every state
// entry) per key with an open session at the end.
func benchSessionWindow(b *testing.B, spec jobgraph.WindowAggSpec) {
	a := openSessionAgg(b, spec, 0)
	rows := make([]winRow, 4096)
	out := discardCollector{}
	const keys = 1000
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		skip := int64(n % 7) // keys k%7 == skip sit this batch out
		for i := range rows {
			k := int64(i % keys)
			if k%7 == skip {
				k = (k + 1) % keys
			}
			rows[i] = winRow{k: k, x: int64(i % 13), ts: int64(n*4 + i/1024)}
		}
		sessProcess(b, a, out, sessBatch(rows...))
		if err := a.ProcessWatermark(int64(n*4-12), out); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*len(rows))/b.Elapsed().Seconds(), "rows/s")
	open, bytes := 0, 0
	if err := a.sess.Scan(func(_ int, key, value []byte) error {
		open++
		bytes += len(key) + len(value)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	if err := a.timers.Scan(func(_ int, key []byte, rows []state.MultisetRow) error {
		for _, r := range rows {
			bytes += len(key) + len(r.Row) + 8 // the count
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	for _, v := range a.views {
		if err := v.counts.Scan(func(_ int, key, value []byte) error {
			bytes += len(key) + len(value)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if err := v.values.Scan(func(_ int, key []byte, rows []state.MultisetRow) error {
			for _, r := range rows {
				bytes += len(key) + len(r.Row) + 8
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	if open > 0 {
		b.ReportMetric(float64(bytes)/float64(open), "state-bytes/key")
	}
}

// BenchmarkSessionWindowAgg: COUNT(*) and SUM(x) per session.
func BenchmarkSessionWindowAgg(b *testing.B) {
	spec := windowSpec(sessionWindow(10))
	spec.InputSchema = sessInput
	benchSessionWindow(b, spec)
}

// BenchmarkSessionWindowAggDistinct: sessAggSpec's eight aggregates, two
// of them DISTINCT (values in the distinct views' state).
func BenchmarkSessionWindowAggDistinct(b *testing.B) {
	benchSessionWindow(b, sessAggSpec(10))
}

// TestProcessingTimeWindows: over a PROCTIME() attribute rows go to the
// windows of the injected clock, whatever their time column holds;
// windows fire when the clock reaches end - 1; watermarks only pass
// through, but the maximum one, at the end of the input, fires the rest.
func TestProcessingTimeWindows(t *testing.T) {
	for _, c := range []struct {
		name string
		w    jobgraph.WindowSpec
		want []string
	}{
		{"tumble", jobgraph.WindowSpec{Kind: jobgraph.WindowTumble, SizeMs: 10},
			[]string{"", "+I[1 1000 1010 1009 2 3]", "wm 5", "+I[1 1020 1030 1029 1 4] wm max"}},
		{"session", sessionWindow(10),
			[]string{"", "+I[1 1001 1014 1013 2 3]", "wm 5", "+I[1 1020 1030 1029 1 4] wm max"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := windowSpec(c.w)
			spec.Proctime = true
			clock := time.UnixMilli(1001)
			ctx := withKeyedState(t, &Context{Now: func() time.Time { return clock }}, 0, "")
			op, err := NewOperator(&spec)
			if err != nil {
				t.Fatal(err)
			}
			if err := op.Open(ctx); err != nil {
				t.Fatal(err)
			}
			defer op.Close()
			h := op.(ProcessingTimeHandler)
			if h.ProcessingTimeInterval() <= 0 {
				t.Fatal("no processing-time calls asked for")
			}
			out := &winCollector{}
			sessProcess(t, op, out, winBatch(winRow{1, 1, 999999}))
			clock = time.UnixMilli(1004)
			sessProcess(t, op, out, winBatch(winRow{1, 2, -5}))
			var got []string
			if err := h.OnProcessingTime(time.UnixMilli(1008), out); err != nil {
				t.Fatal(err)
			}
			got = append(got, out.take())
			if err := h.OnProcessingTime(time.UnixMilli(1013), out); err != nil {
				t.Fatal(err)
			}
			got = append(got, out.take())
			clock = time.UnixMilli(1020)
			sessProcess(t, op, out, winBatch(winRow{1, 4, 0}))
			got = append(got, sessWatermark(t, op.(WatermarkHandler), out, 5))
			got = append(got, sessWatermark(t, op.(WatermarkHandler), out, MaxWatermark))
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}
