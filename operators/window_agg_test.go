package operators

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// winRow is an input row (k, x, ts in ms).
type winRow struct{ k, x, ts int64 }

var winInput = types.Schema{{Name: "k", Type: types.BigInt}, {Name: "x", Type: types.BigInt}, {Name: "ts", Type: types.Timestamp(3)}}

func winBatch(rows ...winRow) types.Batch {
	mem := memory.DefaultAllocator
	kb, xb := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
	tb := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Nanosecond})
	defer kb.Release()
	defer xb.Release()
	defer tb.Release()
	for _, r := range rows {
		kb.Append(r.k)
		xb.Append(r.x)
		tb.Append(arrow.Timestamp(r.ts * 1e6))
	}
	cols := []arrow.Array{kb.NewArray(), xb.NewArray(), tb.NewArray()}
	for _, c := range cols {
		defer c.Release()
	}
	return types.NewInsertBatch(winInput.ArrowSchema(), cols, len(rows))
}

// winCollector formats output rows as "k ws-we wt count sum" with times
// in ms, and watermarks as "wm N".
type winCollector struct{ events []string }

func (c *winCollector) Emit(b types.Batch) error {
	kinds := b.Kinds()
	for i := 0; i < b.NumRows(); i++ {
		var parts []string
		for j := 0; j < b.NumCols(); j++ {
			col := b.Column(j)
			if ts, ok := col.(*array.Timestamp); ok {
				parts = append(parts, fmt.Sprint(int64(ts.Value(i))/1e6))
				continue
			}
			s, _ := types.FormatValue(col, i, types.BigInt, time.UTC)
			parts = append(parts, s)
		}
		c.events = append(c.events, fmt.Sprintf("%s[%s]", types.RowKind(kinds[i]), strings.Join(parts, " ")))
	}
	return nil
}

func (c *winCollector) EmitWatermark(wm int64) error {
	if wm == MaxWatermark {
		c.events = append(c.events, "wm max")
	} else {
		c.events = append(c.events, fmt.Sprintf("wm %d", wm))
	}
	return nil
}

func (c *winCollector) take() string {
	s := strings.Join(c.events, " ")
	c.events = nil
	return s
}

// windowSpec keys by k and computes COUNT(*), SUM(x).
func windowSpec(w jobgraph.WindowSpec) jobgraph.WindowAggSpec {
	ts := types.Timestamp(3).WithNullable(false)
	return jobgraph.WindowAggSpec{
		InputSchema: winInput, Keys: []int{0}, Rowtime: 2, Window: w,
		Aggs: []jobgraph.AggCall{{Func: jobgraph.AggCount, Arg: -1}, {Func: jobgraph.AggSum, Arg: 1}},
		OutputSchema: types.Schema{{Name: "k", Type: types.BigInt},
			{Name: "window_start", Type: ts}, {Name: "window_end", Type: ts}, {Name: "window_time", Type: ts},
			{Name: "c", Type: types.BigInt.WithNullable(false)}, {Name: "s", Type: types.BigInt}},
	}
}

func openWindowAgg(t *testing.T, w jobgraph.WindowSpec) *WindowAgg {
	t.Helper()
	a, err := NewWindowAgg(windowSpec(w))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Open(withKeyedState(t, &Context{}, 0, "")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func process(t *testing.T, a *WindowAgg, out *winCollector, rows ...winRow) {
	t.Helper()
	b := winBatch(rows...)
	defer b.Release()
	if err := a.Process(0, b, out); err != nil {
		t.Fatal(err)
	}
}

func watermark(t *testing.T, a *WindowAgg, out *winCollector, wm int64) string {
	t.Helper()
	if err := a.ProcessWatermark(wm, out); err != nil {
		t.Fatal(err)
	}
	return out.take()
}

func TestAssignWindows(t *testing.T) {
	for _, c := range []struct {
		w    jobgraph.WindowSpec
		ts   int64
		want string
	}{
		{jobgraph.WindowSpec{Kind: jobgraph.WindowTumble, SizeMs: 10}, 0, "[{0 10}]"},
		{jobgraph.WindowSpec{Kind: jobgraph.WindowTumble, SizeMs: 10}, 19, "[{10 20}]"},
		{jobgraph.WindowSpec{Kind: jobgraph.WindowTumble, SizeMs: 10}, -1, "[{-10 0}]"},
		{jobgraph.WindowSpec{Kind: jobgraph.WindowHop, SizeMs: 10, StepMs: 5}, 12, "[{10 20} {5 15}]"},
		{jobgraph.WindowSpec{Kind: jobgraph.WindowHop, SizeMs: 10, StepMs: 5}, 15, "[{15 25} {10 20}]"},
		// A legacy HOP group window's size need not be a multiple of its slide.
		{jobgraph.WindowSpec{Kind: jobgraph.WindowHop, SizeMs: 7, StepMs: 5}, 11, "[{10 17} {5 12}]"},
		{jobgraph.WindowSpec{Kind: jobgraph.WindowHop, SizeMs: 7, StepMs: 5}, 13, "[{10 17}]"},
		// OFFSET shifts the alignment.
		{jobgraph.WindowSpec{Kind: jobgraph.WindowTumble, SizeMs: 10, OffsetMs: 3}, 2, "[{-7 3}]"},
		{jobgraph.WindowSpec{Kind: jobgraph.WindowTumble, SizeMs: 10, OffsetMs: -3}, 7, "[{7 17}]"},
		{jobgraph.WindowSpec{Kind: jobgraph.WindowHop, SizeMs: 10, StepMs: 5, OffsetMs: 1}, 12, "[{11 21} {6 16}]"},
		{jobgraph.WindowSpec{Kind: jobgraph.WindowCumulate, SizeMs: 10, StepMs: 5, OffsetMs: 2}, 3, "[{2 7} {2 12}]"},
		{jobgraph.WindowSpec{Kind: jobgraph.WindowCumulate, SizeMs: 10, StepMs: 2}, 13, "[{10 14} {10 16} {10 18} {10 20}]"},
		{jobgraph.WindowSpec{Kind: jobgraph.WindowCumulate, SizeMs: 10, StepMs: 2}, 19, "[{10 20}]"},
	} {
		if got := fmt.Sprint(assignWindows(nil, c.w, c.ts)); got != c.want {
			t.Errorf("%+v at %d: %s, want %s", c.w, c.ts, got, c.want)
		}
	}
}

// TestWindowAggTumble: windows fire when the watermark reaches end - 1, one
// +I per key, in window order; late rows are dropped.
func TestWindowStartOffset(t *testing.T) {
	w := jobgraph.WindowSpec{Kind: jobgraph.WindowCumulate, SizeMs: 10, StepMs: 5, OffsetMs: 2}
	if got := windowStart(w, 7); got != 2 {
		t.Fatalf("start of the CUMULATE window ending at 7: %d, want 2", got)
	}
	if got := windowStart(w, 12); got != 2 {
		t.Fatalf("start of the CUMULATE window ending at 12: %d, want 2", got)
	}
}

func TestWindowAggTumble(t *testing.T) {
	a := openWindowAgg(t, jobgraph.WindowSpec{Kind: jobgraph.WindowTumble, SizeMs: 10})
	out := &winCollector{}
	process(t, a, out, winRow{1, 5, 1}, winRow{2, 7, 3}, winRow{1, 1, 9}, winRow{1, 100, 12})
	if got := out.take(); got != "" {
		t.Fatalf("emitted before any watermark: %s", got)
	}
	if got := watermark(t, a, out, 8); got != "wm 8" {
		t.Fatalf("wm 8: %s", got)
	}
	if got, want := watermark(t, a, out, 9), "+I[1 0 10 9 2 6] +I[2 0 10 9 1 7] wm 9"; got != want {
		t.Fatalf("wm 9: %s, want %s", got, want)
	}
	// Late for [0, 10), which fired: dropped. [10, 20) is still open.
	process(t, a, out, winRow{1, 1000, 4}, winRow{2, 3, 19})
	if got, want := watermark(t, a, out, MaxWatermark), "+I[1 10 20 19 1 100] +I[2 10 20 19 1 3] wm max"; got != want {
		t.Fatalf("end: %s, want %s", got, want)
	}
}

// TestWindowAggHop: a late row still feeds the windows that have not fired.
func TestWindowAggHop(t *testing.T) {
	a := openWindowAgg(t, jobgraph.WindowSpec{Kind: jobgraph.WindowHop, SizeMs: 10, StepMs: 5})
	out := &winCollector{}
	process(t, a, out, winRow{1, 1, 2}, winRow{1, 2, 7})
	if got, want := watermark(t, a, out, 9), "+I[1 -5 5 4 1 1] +I[1 0 10 9 2 3] wm 9"; got != want {
		t.Fatalf("wm 9: %s, want %s", got, want)
	}
	// 8 is in [0, 10) (fired) and [5, 15) (open).
	process(t, a, out, winRow{1, 10, 8})
	if got, want := watermark(t, a, out, MaxWatermark), "+I[1 5 15 14 2 12] wm max"; got != want {
		t.Fatalf("end: %s, want %s", got, want)
	}
}

func TestWindowAggCumulate(t *testing.T) {
	a := openWindowAgg(t, jobgraph.WindowSpec{Kind: jobgraph.WindowCumulate, SizeMs: 10, StepMs: 5})
	out := &winCollector{}
	process(t, a, out, winRow{1, 1, 1}, winRow{2, 2, 6}, winRow{1, 4, 7})
	if got, want := watermark(t, a, out, 4), "+I[1 0 5 4 1 1] wm 4"; got != want {
		t.Fatalf("wm 4: %s, want %s", got, want)
	}
	if got, want := watermark(t, a, out, 20), "+I[1 0 10 9 2 5] +I[2 0 10 9 1 2] wm 20"; got != want {
		t.Fatalf("wm 20: %s, want %s", got, want)
	}
}

func TestWindowAggNullRowtime(t *testing.T) {
	a := openWindowAgg(t, jobgraph.WindowSpec{Kind: jobgraph.WindowTumble, SizeMs: 10})
	mem := memory.DefaultAllocator
	kb, xb := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
	tb := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Nanosecond})
	kb.Append(1)
	xb.Append(1)
	tb.AppendNull()
	cols := []arrow.Array{kb.NewArray(), xb.NewArray(), tb.NewArray()}
	b := types.NewInsertBatch(winInput.ArrowSchema(), cols, 1)
	for _, c := range cols {
		c.Release()
	}
	defer b.Release()
	if err := a.Process(0, b, &winCollector{}); err != ErrNullRowtime {
		t.Fatalf("got %v", err)
	}
}

// winOracle is the window aggregate held in Go maps: COUNT(*), SUM(x) per
// (k, window), groups in order of first appearance.
type winOracle struct {
	w    jobgraph.WindowSpec
	wm   int64
	wins map[window]*winOracleGroups
}

type winOracleGroups struct {
	order []int64
	cs    map[int64]*[2]int64
}

func (o *winOracle) add(r winRow) {
	for _, w := range assignWindows(nil, o.w, r.ts) {
		if w.end-1 <= o.wm {
			continue
		}
		g := o.wins[w]
		if g == nil {
			g = &winOracleGroups{cs: map[int64]*[2]int64{}}
			o.wins[w] = g
		}
		c := g.cs[r.k]
		if c == nil {
			c = &[2]int64{}
			g.cs[r.k] = c
			g.order = append(g.order, r.k)
		}
		c[0]++
		c[1] += r.x
	}
}

func (o *winOracle) watermark(wm int64) string {
	if wm <= o.wm {
		return ""
	}
	o.wm = wm
	var fired []window
	for w := range o.wins {
		if w.end-1 <= wm {
			fired = append(fired, w)
		}
	}
	sort.Slice(fired, func(i, j int) bool { return fired[i].end < fired[j].end })
	var evs []string
	for _, w := range fired {
		g := o.wins[w]
		for _, k := range g.order {
			c := g.cs[k]
			evs = append(evs, fmt.Sprintf("+I[%d %d %d %d %d %d]", k, w.start, w.end, w.end-1, c[0], c[1]))
		}
		delete(o.wins, w)
	}
	if wm == MaxWatermark {
		evs = append(evs, "wm max")
	} else {
		evs = append(evs, fmt.Sprintf("wm %d", wm))
	}
	return strings.Join(evs, " ")
}

// TestWindowAggSpills runs many keys through HOP windows with a 1 KiB
// state cache, so accumulators and the timer index spill to Pebble and are
// read back, and checks every result against an in-memory oracle; with
// the default cache nothing is evicted.
func TestWindowAggSpills(t *testing.T) {
	spec := jobgraph.WindowSpec{Kind: jobgraph.WindowHop, SizeMs: 40, StepMs: 10}
	for _, c := range []struct {
		name       string
		cacheBytes int64
		spills     bool
	}{{"1KiB", 1 << 10, true}, {"default", 0, false}} {
		t.Run(c.name, func(t *testing.T) {
			a, err := NewWindowAgg(windowSpec(spec))
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Open(withKeyedState(t, &Context{}, c.cacheBytes, "")); err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			o := &winOracle{w: spec, wm: MinWatermark, wins: map[window]*winOracleGroups{}}
			out := &winCollector{}
			rng := rand.New(rand.NewSource(1))
			const keys = 300
			maxOpen, maxCache := 0, int64(0)
			for step := int64(0); step < 20; step++ {
				rows := make([]winRow, 400)
				for i := range rows {
					// Some rows are late: up to 30 ms behind the watermark.
					rows[i] = winRow{k: rng.Int63n(keys), x: rng.Int63n(100), ts: step*25 + rng.Int63n(40) - 30}
					o.add(rows[i])
				}
				process(t, a, out, rows...)
				open := 0
				for _, g := range o.wins {
					open += len(g.order)
				}
				maxOpen = max(maxOpen, open)
				maxCache = max(maxCache, a.StateStats().CacheBytes)
				wm := step*25 - 5
				if got, want := watermark(t, a, out, wm), o.watermark(wm); got != want {
					t.Fatalf("step %d, wm %d:\n got %s\nwant %s", step, wm, got, want)
				}
			}
			if got, want := watermark(t, a, out, MaxWatermark), o.watermark(MaxWatermark); got != want {
				t.Fatalf("end:\n got %s\nwant %s", got, want)
			}
			st := a.StateStats()
			t.Logf("%d (key, window) groups open at most; cache at most %d bytes; %+v", maxOpen, maxCache, st)
			if !c.spills {
				if st.Evictions != 0 {
					t.Fatalf("evictions with the default cache: %+v", st)
				}
				return
			}
			// NB: the budget is checked before each access, so the cache
			// may exceed it by the entry just read. Every open group costs
			// over 100 bytes of cache: holding them all would take 100 KiB.
			if st.Evictions == 0 || st.Misses == 0 || st.FlushedBytes == 0 || maxCache > 4<<10 || maxOpen < 1000 {
				t.Fatalf("state did not spill: %d groups open, cache at most %d bytes, %+v", maxOpen, maxCache, st)
			}
		})
	}
}

// BenchmarkWindowAgg: 1000 keys into 10 ms tumbling windows, 4096-row
// batches, a watermark after each batch.
func BenchmarkWindowAgg(b *testing.B) {
	a, err := NewWindowAgg(windowSpec(jobgraph.WindowSpec{Kind: jobgraph.WindowTumble, SizeMs: 10}))
	if err != nil {
		b.Fatal(err)
	}
	if err := a.Open(withKeyedState(b, &Context{}, 0, "")); err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	rows := make([]winRow, 4096)
	out := discardCollector{}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for i := range rows {
			rows[i] = winRow{k: int64(i % 1000), x: int64(i), ts: int64(n*4 + i/1024)}
		}
		batch := winBatch(rows...)
		if err := a.Process(0, batch, out); err != nil {
			b.Fatal(err)
		}
		batch.Release()
		if err := a.ProcessWatermark(int64(n*4+3), out); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(rows)))
}

type discardCollector struct{}

func (discardCollector) Emit(types.Batch) error { return nil }
