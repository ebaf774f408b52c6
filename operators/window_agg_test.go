package operators

import (
	"fmt"
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
	if err := a.Open(&Context{}); err != nil {
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
