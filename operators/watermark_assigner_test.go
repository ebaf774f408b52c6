package operators

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// wmCollector records batches' row counts and watermarks in order.
type wmCollector struct{ events []string }

func (c *wmCollector) Emit(b types.Batch) error {
	c.events = append(c.events, fmt.Sprintf("rows:%d", b.NumRows()))
	return nil
}

func (c *wmCollector) EmitWatermark(wm int64) error {
	c.events = append(c.events, fmt.Sprintf("wm:%d", wm))
	return nil
}

// tsBatch builds (k BIGINT, ts TIMESTAMP(3)) rows from ms values; -1 is NULL.
func tsBatch(ltz bool, ms ...int64) types.Batch {
	mem := memory.DefaultAllocator
	tt := &arrow.TimestampType{Unit: arrow.Nanosecond}
	if ltz {
		tt.TimeZone = "UTC"
	}
	kb, tb := array.NewInt64Builder(mem), array.NewTimestampBuilder(mem, tt)
	defer kb.Release()
	defer tb.Release()
	for i, v := range ms {
		kb.Append(int64(i))
		if v == -1 {
			tb.AppendNull()
		} else {
			tb.Append(arrow.Timestamp(v * 1e6))
		}
	}
	cols := []arrow.Array{kb.NewArray(), tb.NewArray()}
	defer cols[0].Release()
	defer cols[1].Release()
	return types.NewInsertBatch(tsSchema(ltz).ArrowSchema(), cols, len(ms))
}

func tsSchema(ltz bool) types.Schema {
	t := types.Timestamp(3)
	if ltz {
		t = types.TimestampLTZ(3)
	}
	return types.Schema{{Name: "k", Type: types.BigInt}, {Name: "ts", Type: t}}
}

// TestWatermarkAssigner: ts - INTERVAL '5' SECOND gives max(ts) - 5000 with
// no -1, emitted after the batch that raised it and never twice; a watermark
// <= 0 is never emitted; upstream watermarks are swallowed except the
// maximum.
func TestWatermarkAssigner(t *testing.T) {
	for _, ltz := range []bool{false, true} {
		s := tsSchema(ltz)
		wm, err := expr.ResolveCall("-", []*expr.Expr{expr.Column(1, s[1].Type), expr.Literal(int64(5000), types.IntervalDayTime())})
		if err != nil {
			t.Fatal(err)
		}
		a, err := NewWatermarkAssigner(jobgraph.WatermarkAssignerSpec{InputSchema: s, Rowtime: 1, Watermark: wm})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Open(&Context{}); err != nil {
			t.Fatal(err)
		}
		out := &wmCollector{}
		for _, batch := range [][]int64{
			{1000, 4000},        // watermark -1000: not above 0
			{9000, 7000},        // 4000
			{8000},              // below the maximum: nothing
			{20_500, 10_000, 3}, // 15500
		} {
			b := tsBatch(ltz, batch...)
			if err := a.Process(0, b, out); err != nil {
				t.Fatal(err)
			}
			b.Release()
		}
		if err := a.ProcessWatermark(99_000, out); err != nil {
			t.Fatal(err)
		}
		if err := a.ProcessWatermark(MaxWatermark, out); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("rows:2 rows:2 wm:4000 rows:1 rows:3 wm:15500 wm:%d", MaxWatermark)
		if got := strings.Join(out.events, " "); got != want {
			t.Errorf("ltz=%v: got %s, want %s", ltz, got, want)
		}
	}
}

// TestWatermarkAssignerNullRowtime fails with Flink's message.
func TestWatermarkAssignerNullRowtime(t *testing.T) {
	s := tsSchema(false)
	a, err := NewWatermarkAssigner(jobgraph.WatermarkAssignerSpec{InputSchema: s, Rowtime: 1, Watermark: expr.Column(1, s[1].Type)})
	if err != nil {
		t.Fatal(err)
	}
	b := tsBatch(false, 5, -1)
	defer b.Release()
	err = a.Process(0, b, &wmCollector{})
	if err == nil || err.Error() != "RowTime field should not be null, please convert it to a non-null long value." {
		t.Fatalf("got %v", err)
	}
}

// TestWatermarkAssignerInterval: with pipeline.auto-watermark-interval, a
// watermark that rose by more than the interval's milliseconds since the
// last one goes out after its batch; a smaller rise waits for the
// processing-time call due an interval after the last periodic emission,
// as Flink's WatermarkAssignerOperator does.
func TestWatermarkAssignerInterval(t *testing.T) {
	s := tsSchema(false)
	a, err := NewWatermarkAssigner(jobgraph.WatermarkAssignerSpec{InputSchema: s, Rowtime: 1, Watermark: expr.Column(1, s[1].Type)})
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Unix(1000, 0)
	if err := a.Open(&Context{AutoWatermarkInterval: 200 * time.Millisecond, Now: func() time.Time { return clock }}); err != nil {
		t.Fatal(err)
	}
	if got := a.ProcessingTimeInterval(); got != 200*time.Millisecond {
		t.Fatalf("interval %v", got)
	}
	out := &wmCollector{}
	step := func(ms ...int64) {
		b := tsBatch(false, ms...)
		defer b.Release()
		if err := a.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
	}
	tick := func(after time.Duration) {
		clock = clock.Add(after)
		if err := a.OnProcessingTime(clock, out); err != nil {
			t.Fatal(err)
		}
	}
	step(150)                    // rose by 150 <= 200: held
	tick(100 * time.Millisecond) // not due yet
	tick(100 * time.Millisecond) // due: 150
	step(300)                    // rose by 150 again: held
	step(351)                    // rose by 201 since 150: at once
	step(400)                    // held
	tick(199 * time.Millisecond) // not due: the last periodic emission was 199 ms ago
	tick(1 * time.Millisecond)   // due: 400
	tick(500 * time.Millisecond) // nothing new
	want := "rows:1 wm:150 rows:1 rows:1 wm:351 rows:1 wm:400"
	if got := strings.Join(out.events, " "); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
