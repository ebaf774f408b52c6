package runtime

import (
	"context"

	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

// Test-only kinds for watermark tests.
const (
	kindScript   = "runtime_test.script"   // source that follows a script of watermarks and signals
	kindRecorder = "runtime_test.recorder" // records watermarks and the end of input, forwards them
)

func init() {
	operators.RegisterSource(kindScript, func(spec jobgraph.Spec) (operators.Source, error) {
		cfg, err := operators.SpecAs[*scriptConfig](spec)
		if err != nil {
			return nil, err
		}
		return &scriptSource{cfg: *cfg}, nil
	})
	operators.RegisterOperator(kindRecorder, func(spec jobgraph.Spec) (operators.Operator, error) {
		cfg, err := operators.SpecAs[*recorderConfig](spec)
		if err != nil {
			return nil, err
		}
		return &recorder{cfg: *cfg}, nil
	})
}

// signals are named one-shot events shared by the operators of a test, so
// the order in which two sources' events reach a consumer is fixed without
// sleeping.
var signals sync.Map // "test/name" -> chan struct{}

func signal(name string) chan struct{} {
	ch, _ := signals.LoadOrStore(name, make(chan struct{}))
	return ch.(chan struct{})
}

func fire(name string) {
	ch := signal(name)
	select {
	case <-ch:
	default:
		close(ch)
	}
}

type scriptConfig struct {
	Test string `json:"test"`
	// Steps: "wm:N" emits a one-row batch then watermark N, "signal:X"
	// fires X, "wait:X" waits for X, "idle:X" waits for X calling
	// operators.Idle as a polling source does, "idlefor:N" calls it for N ms.
	Steps []string `json:"steps"`
}

var _ jobgraph.Spec = (*scriptConfig)(nil)

func (*scriptConfig) Kind() string    { return kindScript }
func (*scriptConfig) Inputs() int     { return 0 }
func (*scriptConfig) Validate() error { return nil }

type scriptSource struct{ cfg scriptConfig }

func (s *scriptSource) Open(*operators.Context) error { return nil }
func (s *scriptSource) Close() error                  { return nil }

func (s *scriptSource) Run(ctx context.Context, out operators.Collector) error {
	for _, step := range s.cfg.Steps {
		var arg string
		switch {
		case scan(step, "wm:", &arg):
			wm, _ := strconv.ParseInt(arg, 10, 64)
			if err := emitRow(out, wm); err != nil {
				return err
			}
			if err := operators.EmitWatermark(out, wm); err != nil {
				return err
			}
		case scan(step, "signal:", &arg):
			fire(s.cfg.Test + "/" + arg)
		case scan(step, "idle:", &arg):
			for done := false; !done; {
				select {
				case <-signal(s.cfg.Test + "/" + arg):
					done = true
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(5 * time.Millisecond):
					if err := operators.Idle(out); err != nil {
						return err
					}
				}
			}
		case scan(step, "idlefor:", &arg):
			ms, _ := strconv.Atoi(arg)
			for end := time.Now().Add(time.Duration(ms) * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
				if err := operators.Idle(out); err != nil {
					return err
				}
			}
		case scan(step, "wait:", &arg):
			select {
			case <-signal(s.cfg.Test + "/" + arg):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

func scan(s, prefix string, arg *string) bool {
	if len(s) < len(prefix) || s[:len(prefix)] != prefix {
		return false
	}
	*arg = s[len(prefix):]
	return true
}

// emitRow emits one (k, v) row with v = wm.
func emitRow(out operators.Collector, v int64) error {
	kb, vb := array.NewInt64Builder(memory.DefaultAllocator), array.NewInt64Builder(memory.DefaultAllocator)
	kb.Append(v)
	vb.Append(v)
	cols := []arrow.Array{kb.NewArray(), vb.NewArray()}
	kb.Release()
	vb.Release()
	b := types.NewInsertBatch(seqSchema.ArrowSchema(), cols, 1)
	cols[0].Release()
	cols[1].Release()
	defer b.Release()
	return out.Emit(b)
}

// records holds, per test, what recorders saw: "wm:N", "end" and "rows:N".
var records sync.Map // test -> *recording

type recording struct {
	mu     sync.Mutex
	events []string
}

func (r *recording) add(ev string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *recording) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Sprint(r.events)
}

type recorderConfig struct {
	Test string `json:"test"`
}

var _ jobgraph.Spec = (*recorderConfig)(nil)

func (*recorderConfig) Kind() string    { return kindRecorder }
func (*recorderConfig) Inputs() int     { return 1 }
func (*recorderConfig) Validate() error { return nil }

type recorder struct {
	cfg  recorderConfig
	rec  *recording
	rows int
}

var _ operators.WatermarkHandler = (*recorder)(nil)

func (op *recorder) Open(*operators.Context) error {
	v, _ := records.LoadOrStore(op.cfg.Test, &recording{})
	op.rec = v.(*recording)
	return nil
}

func (op *recorder) Process(_ int, b types.Batch, out operators.Collector) error {
	op.rows += b.NumRows()
	return out.Emit(b)
}

func (op *recorder) ProcessWatermark(wm int64, out operators.Collector) error {
	name := strconv.FormatInt(wm, 10)
	if wm == operators.MaxWatermark {
		name = "max"
	}
	op.rec.add("wm:" + name)
	fire(op.cfg.Test + "/seen" + name)
	return operators.EmitWatermark(out, wm)
}

func (op *recorder) EndInput(int, operators.Collector) error {
	op.rec.add(fmt.Sprintf("end(rows %d)", op.rows))
	return nil
}

func (op *recorder) Close() error { return nil }

func script(test string, steps ...string) *jobgraph.Operator {
	return &jobgraph.Operator{Name: "script", Spec: &scriptConfig{Test: test, Steps: steps}}
}

func recorderSpec(test string) *jobgraph.Operator {
	return &jobgraph.Operator{Name: "recorder", Spec: &recorderConfig{Test: test}}
}

func recorded(test string) string {
	v, ok := records.Load(test)
	if !ok {
		return "[]"
	}
	return v.(*recording).String()
}

// reset forgets what an earlier run of test recorded and signalled.
func reset(test string) {
	records.Delete(test)
	signals.Range(func(k, _ any) bool {
		if name := k.(string); len(name) > len(test) && name[:len(test)+1] == test+"/" {
			signals.Delete(k)
		}
		return true
	})
}

func runOK(t *testing.T, g *jobgraph.Graph, tms []*taskManager) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, err := range runJob(ctx, t, g, tms, nil) {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestWatermarkMinOverInputs: a vertex fed by a fast and a slow source sees
// the minimum of their watermarks, never a watermark it saw already, then
// the maximum watermark before the end of its input. The identity operator
// in front of the recorder does not handle watermarks: it passes them on.
func TestWatermarkMinOverInputs(t *testing.T) {
	const test = "min"
	reset(test)
	g := &jobgraph.Graph{JobID: "job-wm-min", MaxParallelism: 128, Bounded: true,
		Vertices: []*jobgraph.Vertex{
			// The fast source is ahead, then stays open until the consumer's
			// watermark has followed the slow one to its end.
			{ID: 0, Name: "fast", Parallelism: 1, Chain: []*jobgraph.Operator{
				script(test, "wm:10", "wm:20", "wm:30", "signal:fast", "wait:seen30")}},
			{ID: 1, Name: "slow", Parallelism: 1, Chain: []*jobgraph.Operator{
				script(test, "wait:fast", "wm:5", "wm:25", "wm:25", "wm:12")}},
			{ID: 2, Name: "consumer", Parallelism: 1, NumInputs: 1, Chain: []*jobgraph.Operator{
				{Name: "pass", Spec: &identityConfig{}},
				recorderSpec(test)}},
		},
		Edges: []*jobgraph.Edge{
			{Source: 0, Target: 2, Partitioning: types.PartitionForward},
			{Source: 1, Target: 2, Partitioning: types.PartitionForward},
		},
	}
	runOK(t, g, startTaskManagers(t, 1, false))
	// 5 and 25 are the slow source's; when it ends (its channel at max)
	// the fast one's 30 is the minimum; then the fast one ends too.
	if got, want := recorded(test), "[wm:5 wm:25 wm:30 wm:max end(rows 7)]"; got != want {
		t.Fatalf("recorded %s, want %s", got, want)
	}
}

// TestWatermarkAcrossVertices: watermarks a source emits pass a chained
// operator that does not handle them, cross a remote channel, and the end
// of input brings the maximum watermark before EndInput, also when the
// source emitted none.
func TestWatermarkAcrossVertices(t *testing.T) {
	for _, c := range []struct {
		test  string
		steps []string
		want  string
	}{
		{"across", []string{"wm:10", "wm:10", "wm:20"}, "[wm:10 wm:20 wm:max end(rows 3)]"},
		{"none", nil, "[wm:max end(rows 0)]"},
	} {
		reset(c.test)
		g := &jobgraph.Graph{JobID: "job-wm-" + c.test, MaxParallelism: 128, Bounded: true,
			Vertices: []*jobgraph.Vertex{
				{ID: 0, Name: "source", Parallelism: 1, Chain: []*jobgraph.Operator{
					script(c.test, c.steps...),
					{Name: "pass", Spec: &identityConfig{}}}},
				{ID: 1, Name: "consumer", Parallelism: 1, NumInputs: 1, Chain: []*jobgraph.Operator{recorderSpec(c.test)}},
			},
			Edges: []*jobgraph.Edge{{Source: 0, Target: 1, Partitioning: types.PartitionForward}},
		}
		// Vertex v's subtask runs on task manager v mod 2: the edge is remote.
		runOK(t, g, startTaskManagers(t, 2, true))
		if got := recorded(c.test); got != c.want {
			t.Errorf("%s: recorded %s, want %s", c.test, got, c.want)
		}
	}
}

// TestWatermarkChainedEndOfInput: in a source's own chain, a handler sees
// the maximum watermark before its EndInput.
func TestWatermarkChainedEndOfInput(t *testing.T) {
	const test = "chained"
	reset(test)
	g := &jobgraph.Graph{JobID: "job-wm-chained", MaxParallelism: 128, Bounded: true,
		Vertices: []*jobgraph.Vertex{
			{ID: 0, Name: "source", Parallelism: 1, Chain: []*jobgraph.Operator{
				script(test, "wm:7"), recorderSpec(test)}},
		},
	}
	runOK(t, g, startTaskManagers(t, 1, false))
	if got, want := recorded(test), "[wm:7 wm:max end(rows 1)]"; got != want {
		t.Fatalf("recorded %s, want %s", got, want)
	}
}

// TestWatermarkIdleSource: with table.exec.source.idle-timeout, a source
// that emits nothing goes idle and the consumer's watermark follows the
// other source alone; when it comes back with a lower watermark the
// consumer's holds (never goes back) until it catches up. Without
// idleness the quiet source would hold the watermark at its start and the
// test would time out.
func TestWatermarkIdleSource(t *testing.T) {
	const test = "idle"
	reset(test)
	g := &jobgraph.Graph{JobID: "job-wm-idle", MaxParallelism: 128, Bounded: true,
		Session: jobgraph.Session{SourceIdleTimeout: 50 * time.Millisecond},
		Vertices: []*jobgraph.Vertex{
			{ID: 0, Name: "quiet", Parallelism: 1, Chain: []*jobgraph.Operator{
				script(test, "idle:seen20", "wm:5", "wm:30", "signal:q30", "wait:seen30")}},
			{ID: 1, Name: "active", Parallelism: 1, Chain: []*jobgraph.Operator{
				script(test, "wm:20", "wait:q30", "wm:40")}},
			{ID: 2, Name: "consumer", Parallelism: 1, NumInputs: 1, Chain: []*jobgraph.Operator{recorderSpec(test)}},
		},
		Edges: []*jobgraph.Edge{
			{Source: 0, Target: 2, Partitioning: types.PartitionForward},
			{Source: 1, Target: 2, Partitioning: types.PartitionForward},
		},
	}
	// Vertex v's subtask runs on task manager v mod 2: idleness crosses a
	// remote channel from the quiet source.
	runOK(t, g, startTaskManagers(t, 2, true))
	if got, want := recorded(test), "[wm:20 wm:30 wm:40 wm:max end(rows 4)]"; got != want {
		t.Fatalf("recorded %s, want %s", got, want)
	}
}

// TestWatermarkAllInputsIdle: when the last active input goes idle, the
// consumer's watermark moves to the highest of the idle inputs', as
// Flink's does, rather than holding: here the source that emitted 20 goes
// idle first, then the one that never emitted, and 20 must still reach
// the consumer.
func TestWatermarkAllInputsIdle(t *testing.T) {
	const test = "allidle"
	reset(test)
	g := &jobgraph.Graph{JobID: "job-wm-allidle", MaxParallelism: 128, Bounded: true,
		Session: jobgraph.Session{SourceIdleTimeout: 50 * time.Millisecond},
		Vertices: []*jobgraph.Vertex{
			{ID: 0, Name: "first", Parallelism: 1, Chain: []*jobgraph.Operator{
				script(test, "wm:20", "idlefor:150", "signal:firstidle", "idle:seen20")}},
			{ID: 1, Name: "second", Parallelism: 1, Chain: []*jobgraph.Operator{
				script(test, "wait:firstidle", "idle:seen20")}},
			{ID: 2, Name: "consumer", Parallelism: 1, NumInputs: 1, Chain: []*jobgraph.Operator{recorderSpec(test)}},
		},
		Edges: []*jobgraph.Edge{
			{Source: 0, Target: 2, Partitioning: types.PartitionForward},
			{Source: 1, Target: 2, Partitioning: types.PartitionForward},
		},
	}
	runOK(t, g, startTaskManagers(t, 1, false))
	if got, want := recorded(test), "[wm:20 wm:max end(rows 1)]"; got != want {
		t.Fatalf("recorded %s, want %s", got, want)
	}
}
