package runtime

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

const kindTicker = "runtime_test.ticker" // emits watermark n on its n-th processing-time call

func init() {
	operators.RegisterOperator(kindTicker, func(spec jobgraph.Spec) (operators.Operator, error) {
		cfg, err := operators.SpecAs[*tickerConfig](spec)
		if err != nil {
			return nil, err
		}
		return &tickerOp{every: time.Duration(cfg.EveryMs) * time.Millisecond}, nil
	})
}

type tickerConfig struct {
	EveryMs int `json:"every_ms"`
}

var _ jobgraph.Spec = (*tickerConfig)(nil)

func (*tickerConfig) Kind() string    { return kindTicker }
func (*tickerConfig) Inputs() int     { return 1 }
func (*tickerConfig) Validate() error { return nil }

type tickerOp struct {
	every time.Duration
	n     int64
	last  time.Time
}

var (
	_ operators.ProcessingTimeHandler = (*tickerOp)(nil)
	_ operators.WatermarkHandler      = (*tickerOp)(nil)
)

func (op *tickerOp) Open(*operators.Context) error { return nil }
func (op *tickerOp) Process(_ int, b types.Batch, out operators.Collector) error {
	return out.Emit(b)
}
func (op *tickerOp) ProcessWatermark(wm int64, out operators.Collector) error {
	if wm == operators.MaxWatermark {
		return operators.EmitWatermark(out, wm)
	}
	return nil
}
func (op *tickerOp) EndInput(int, operators.Collector) error { return nil }
func (op *tickerOp) Close() error                            { return nil }
func (op *tickerOp) ProcessingTimeInterval() time.Duration   { return op.every }

// OnProcessingTime fails when called sooner than its interval.
func (op *tickerOp) OnProcessingTime(now time.Time, out operators.Collector) error {
	if !op.last.IsZero() && now.Sub(op.last) < op.every {
		return errTooSoon
	}
	op.last = now
	op.n++
	return operators.EmitWatermark(out, op.n)
}

var errTooSoon = errors.New("processing-time call sooner than the interval")

// TestProcessingTimeCalls: an operator acting on processing time is
// called about every interval while no input arrives, both chained after
// a source that waits between batches (Idle) and in a vertex whose input
// is quiet (the inbox's wakeups); never sooner than its interval.
func TestProcessingTimeCalls(t *testing.T) {
	for _, c := range []struct {
		test string
		g    func(test string) *jobgraph.Graph
	}{
		{"tick-source", func(test string) *jobgraph.Graph {
			return &jobgraph.Graph{JobID: "job-" + test, MaxParallelism: 128, Bounded: true,
				Vertices: []*jobgraph.Vertex{{ID: 0, Name: "source", Parallelism: 1, Chain: []*jobgraph.Operator{
					script(test, "idle:seen3"),
					{Name: "ticker", Spec: &tickerConfig{EveryMs: 20}},
					recorderSpec(test)}}}}
		}},
		{"tick-inbox", func(test string) *jobgraph.Graph {
			return &jobgraph.Graph{JobID: "job-" + test, MaxParallelism: 128, Bounded: true,
				Vertices: []*jobgraph.Vertex{
					{ID: 0, Name: "source", Parallelism: 1, Chain: []*jobgraph.Operator{script(test, "wait:seen3")}},
					{ID: 1, Name: "consumer", Parallelism: 1, NumInputs: 1, Chain: []*jobgraph.Operator{
						{Name: "ticker", Spec: &tickerConfig{EveryMs: 20}},
						recorderSpec(test)}}},
				Edges: []*jobgraph.Edge{{Source: 0, Target: 1, Partitioning: types.PartitionForward}}}
		}},
	} {
		reset(c.test)
		runOK(t, c.g(c.test), startTaskManagers(t, 1, false))
		got := recorded(c.test)
		if !strings.HasPrefix(got, "[wm:1 wm:2 wm:3 ") || !strings.HasSuffix(got, " wm:max end(rows 0)]") {
			t.Errorf("%s: recorded %s, want wm:1 wm:2 wm:3 ... wm:max end(rows 0)", c.test, got)
		}
	}
}
