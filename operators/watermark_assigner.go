package operators

import (
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

func init() {
	RegisterOperator(jobgraph.KindWatermarkAssigner, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.WatermarkAssignerSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewWatermarkAssigner(*s)
	})
}

// ErrNullRowtime is Flink's error for a NULL in the WATERMARK FOR column,
// word for word.
//
//lint:ignore ST1005 Flink's message, verbatim
var ErrNullRowtime = errors.New("RowTime field should not be null, please convert it to a non-null long value.")

// WatermarkAssigner generates a table's watermarks from its WATERMARK FOR
// declaration, as Flink's WatermarkAssignerOperator does. Rows pass through
// unchanged. For each batch it evaluates the watermark expression on every
// row (whatever its kind), keeps the maximum, and emits that maximum as a
// watermark as Flink's WatermarkAssignerOperator does with
// pipeline.auto-watermark-interval (Context.AutoWatermarkInterval): right
// after the batch when it rose by more than the interval's milliseconds
// since the last watermark emitted, else on the next processing-time tick
// (OnProcessingTime) once the interval passed since the last periodic
// emission. An interval of 0 emits every rise after its batch. The
// watermark is the expression's value itself (ts - INTERVAL '5' SECOND
// gives max(ts) - 5000, with no -1), in milliseconds (floored), and starts
// at 0 as in Flink, so a watermark <= 0 is never emitted. A NULL
// expression value is skipped; a NULL rowtime fails the job with
// ErrNullRowtime.
//
// Watermarks from upstream are not forwarded (the assigner replaces them),
// except MaxWatermark at the end of the input.
type WatermarkAssigner struct {
	spec jobgraph.WatermarkAssignerSpec
	ev   *expr.Evaluator
	// current is the highest watermark computed; emitted the last emitted.
	current, emitted int64
	// interval is the auto-watermark interval, lastPeriodic when the last
	// periodic emission was due, and now the clock.
	interval     time.Duration
	lastPeriodic time.Time
	now          func() time.Time
}

var (
	_ Operator              = (*WatermarkAssigner)(nil)
	_ WatermarkHandler      = (*WatermarkAssigner)(nil)
	_ ProcessingTimeHandler = (*WatermarkAssigner)(nil)
)

// NewWatermarkAssigner checks spec and returns an unopened assigner.
func NewWatermarkAssigner(spec jobgraph.WatermarkAssignerSpec) (*WatermarkAssigner, error) {
	if spec.Rowtime < 0 || spec.Rowtime >= len(spec.InputSchema) || !spec.InputSchema[spec.Rowtime].Type.IsTimestamp() {
		return nil, fmt.Errorf("operators: watermark assigner: rowtime column %d is not a timestamp of %v", spec.Rowtime, spec.InputSchema)
	}
	if spec.Watermark == nil || !spec.Watermark.Type.IsTimestamp() {
		return nil, errors.New("operators: watermark assigner: the watermark expression must return a timestamp")
	}
	a := &WatermarkAssigner{spec: spec}
	return a, a.compile(nil)
}

func (a *WatermarkAssigner) compile(env *expr.Env) error {
	ev, err := expr.Compile(a.spec.Watermark, env)
	if err != nil {
		return fmt.Errorf("operators: watermark expression %s: %w", a.spec.Text, err)
	}
	a.ev = ev
	return nil
}

// Open compiles the expression in the session's time zone and starts the
// auto-watermark clock.
func (a *WatermarkAssigner) Open(ctx *Context) error {
	a.interval, a.now = ctx.AutoWatermarkInterval, ctx.Now
	if a.now == nil {
		a.now = time.Now
	}
	a.lastPeriodic = a.now()
	return a.compile(ctx.Env())
}

// ProcessingTimeInterval is the auto-watermark interval.
func (a *WatermarkAssigner) ProcessingTimeInterval() time.Duration { return a.interval }

// OnProcessingTime emits the pending watermark once the interval passed
// since the last periodic emission.
func (a *WatermarkAssigner) OnProcessingTime(now time.Time, out Collector) error {
	if a.interval <= 0 || now.Before(a.lastPeriodic.Add(a.interval)) {
		return nil
	}
	a.lastPeriodic = now
	return a.advance(out)
}

// advance emits the current watermark when it is above the last emitted.
func (a *WatermarkAssigner) advance(out Collector) error {
	if a.current <= a.emitted {
		return nil
	}
	a.emitted = a.current
	return EmitWatermark(out, a.current)
}

// Process checks the rowtimes, emits b, then the new watermark if it rose
// by more than the interval.
func (a *WatermarkAssigner) Process(_ int, b types.Batch, out Collector) error {
	if b.NumRows() == 0 {
		return nil
	}
	if b.Column(a.spec.Rowtime).NullN() > 0 {
		return ErrNullRowtime
	}
	col, err := a.ev.Eval(b)
	if err != nil {
		return err
	}
	ts := col.(*array.Timestamp)
	for i := 0; i < ts.Len(); i++ {
		if ts.IsValid(i) {
			if ms := floorMillis(int64(ts.Value(i))); ms > a.current {
				a.current = ms
			}
		}
	}
	col.Release()
	if err := out.Emit(b); err != nil {
		return err
	}
	if a.current-a.emitted > a.interval.Milliseconds() {
		return a.advance(out)
	}
	return nil
}

// floorMillis turns Arrow's nanoseconds into milliseconds, rounding down.
func floorMillis(ns int64) int64 {
	ms := ns / 1e6
	if ns%1e6 < 0 {
		ms--
	}
	return ms
}

// ProcessWatermark forwards only the end of event time.
func (a *WatermarkAssigner) ProcessWatermark(wm int64, out Collector) error {
	if wm == MaxWatermark {
		a.emitted = wm
		return EmitWatermark(out, wm)
	}
	return nil
}

// EndInput has nothing to flush.
func (a *WatermarkAssigner) EndInput(int, Collector) error { return nil }

// Close releases nothing.
func (a *WatermarkAssigner) Close() error { return nil }
