package operators

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

func tvfSpec(w jobgraph.WindowSpec) jobgraph.WindowTVFSpec {
	ts := types.Timestamp(3).WithNullable(false)
	return jobgraph.WindowTVFSpec{InputSchema: winInput, Rowtime: 2, Window: w,
		OutputSchema: append(append(types.Schema{}, winInput...),
			types.Field{Name: "window_start", Type: ts}, types.Field{Name: "window_end", Type: ts}, types.Field{Name: "window_time", Type: ts})}
}

func runTVF(t *testing.T, w jobgraph.WindowSpec, b types.Batch) string {
	t.Helper()
	op, err := NewWindowTVF(tvfSpec(w))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	out := &winCollector{}
	if err := op.Process(0, b, out); err != nil {
		t.Fatal(err)
	}
	return out.take()
}

func TestWindowTVF(t *testing.T) {
	rows := []winRow{{1, 10, 12}, {2, 20, 5}, {1, 30, -1}}
	for _, c := range []struct {
		w    jobgraph.WindowSpec
		want string
	}{
		{jobgraph.WindowSpec{Kind: jobgraph.WindowTumble, SizeMs: 10},
			"+I[1 10 12 10 20 19] +I[2 20 5 0 10 9] +I[1 30 -1 -10 0 -1]"},
		{jobgraph.WindowSpec{Kind: jobgraph.WindowHop, SizeMs: 10, StepMs: 5},
			"+I[1 10 12 10 20 19] +I[1 10 12 5 15 14] +I[2 20 5 5 15 14] +I[2 20 5 0 10 9] " +
				"+I[1 30 -1 -5 5 4] +I[1 30 -1 -10 0 -1]"},
		{jobgraph.WindowSpec{Kind: jobgraph.WindowCumulate, SizeMs: 10, StepMs: 5},
			"+I[1 10 12 10 15 14] +I[1 10 12 10 20 19] +I[2 20 5 0 10 9] +I[1 30 -1 -10 0 -1]"},
	} {
		if got := runTVF(t, c.w, winBatch(rows...)); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.w, got, c.want)
		}
	}
}

// TestWindowTVFLateAndNull checks that late rows pass (the window function
// has no watermark of its own) and NULL rowtimes are dropped.
func TestWindowTVFLateAndNull(t *testing.T) {
	mem := memory.DefaultAllocator
	kb, xb := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
	tb := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Nanosecond})
	kb.AppendValues([]int64{1, 2, 3}, nil)
	xb.AppendValues([]int64{1, 2, 3}, nil)
	tb.Append(3e6)
	tb.AppendNull()
	tb.Append(7e6)
	cols := []arrow.Array{kb.NewArray(), xb.NewArray(), tb.NewArray()}
	b := types.NewBatch(winInput.ArrowSchema(), cols, []int8{int8(types.Insert), int8(types.Insert), int8(types.Insert)})
	for _, c := range cols {
		c.Release()
	}
	kb.Release()
	xb.Release()
	tb.Release()
	op, err := NewWindowTVF(tvfSpec(jobgraph.WindowSpec{Kind: jobgraph.WindowTumble, SizeMs: 10}))
	if err != nil {
		t.Fatal(err)
	}
	out := &winCollector{}
	if err := op.Process(0, b, out); err != nil {
		t.Fatal(err)
	}
	b.Release()
	if got, want := out.take(), "+I[1 1 3 0 10 9] +I[3 3 7 0 10 9]"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestWindowTVFLargeBatch(t *testing.T) {
	var rows []winRow
	for i := int64(0); i < 3000; i++ {
		rows = append(rows, winRow{i, i, i})
	}
	op, err := NewWindowTVF(tvfSpec(jobgraph.WindowSpec{Kind: jobgraph.WindowHop, SizeMs: 10, StepMs: 5}))
	if err != nil {
		t.Fatal(err)
	}
	b := winBatch(rows...)
	defer b.Release()
	out := &tvfCounter{}
	if err := op.Process(0, b, out); err != nil {
		t.Fatal(err)
	}
	if out.rows != 6000 || out.batches != 2 {
		t.Errorf("%d rows in %d batches, want 6000 in 2", out.rows, out.batches)
	}
}

type tvfCounter struct{ rows, batches int }

func (c *tvfCounter) Emit(b types.Batch) error {
	c.rows += b.NumRows()
	c.batches++
	return nil
}
