package operators

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

// Collector receives the batches an operator emits. Emit borrows the batch:
// a collector that keeps it calls Retain; the emitter releases its own
// reference after Emit returns. Emit blocks while downstream is full
// (backpressure) and returns an error once the subtask is cancelled.
type Collector interface {
	Emit(b types.Batch) error
}

// Watermarks are event-time positions in milliseconds: of the rowtime's
// wall clock for a TIMESTAMP rowtime, since the epoch for TIMESTAMP_LTZ. A
// watermark wm promises that no later row has a rowtime <= wm.
const (
	// MinWatermark is every stream's watermark before its first one.
	MinWatermark int64 = math.MinInt64
	// MaxWatermark ends event time: the runtime emits it at the end of
	// every input, so bounded jobs fire every window.
	MaxWatermark int64 = math.MaxInt64
)

// WatermarkCollector is a Collector that also carries watermarks. The
// runtime's collectors implement it; use EmitWatermark to emit through any
// Collector.
type WatermarkCollector interface {
	Collector
	// EmitWatermark sends wm downstream after every batch emitted before it.
	// A wm not above the last one emitted through this collector is dropped.
	EmitWatermark(wm int64) error
}

// EmitWatermark emits wm through out when out carries watermarks, and
// drops it otherwise (test collectors, say).
func EmitWatermark(out Collector, wm int64) error {
	if wc, ok := out.(WatermarkCollector); ok {
		return wc.EmitWatermark(wm)
	}
	return nil
}

// WatermarkHandler is implemented by an operator that acts on event time.
//
// The runtime tracks each operator's input watermark: the minimum over its
// input channels (each channel's watermark only rises; an ended input
// counts as MaxWatermark), and calls ProcessWatermark each time that
// minimum rises, from the same goroutine as Process. An operator that
// implements WatermarkHandler owns its output watermark: the runtime does
// not forward wm, the operator emits whatever rows wm completes and then
// forwards a watermark itself with EmitWatermark(out, ...) (usually wm, or
// nothing, as the watermark assigner does with upstream watermarks). An
// operator that does not implement it passes watermarks through unchanged.
//
// Before the EndInput of its last input an operator sees MaxWatermark, and the runtime also emits MaxWatermark downstream of it before
// ending its output, whatever the operator forwarded.
type WatermarkHandler interface {
	ProcessWatermark(wm int64, out Collector) error
}

// ProcessingTimeHandler is implemented by an operator that acts on the
// processing-time clock. The runtime calls OnProcessingTime from the
// subtask's goroutine, between batches, about every
// ProcessingTimeInterval once the operator is open (including while no
// input arrives); an interval of 0 asks for no calls. now is the
// context's clock.
type ProcessingTimeHandler interface {
	ProcessingTimeInterval() time.Duration
	OnProcessingTime(now time.Time, out Collector) error
}

// ResultWriter takes the rows of a collect sink to the client. The task
// manager provides it; it is nil for subtasks that have no collect sink.
type ResultWriter interface {
	// Write sends one batch. It borrows the batch.
	Write(b types.Batch) error
	// Checkpoint marks checkpoint id's barrier in the stream: the rows
	// written before it are covered by checkpoint id, and the client sees
	// them once it completes (a job that restarts from it replays only the
	// rows after the mark).
	Checkpoint(id int64) error
	// Close marks the end of this subtask's results.
	Close() error
}

// Context is what an operator is given when it opens. It is valid until Close.
type Context struct {
	JobID          string
	VertexID       int
	Subtask        int
	Parallelism    int
	MaxParallelism int
	// KeyGroups is the key-group range this subtask owns.
	KeyGroups types.KeyGroupRange
	// State is the subtask's keyed state, opened by the runtime when an
	// operator of the chain keeps keyed state (see StatefulOperator), and
	// nil otherwise. Operators reach it through Keyed.
	State *state.Backend
	// OperatorUID is the stable id of the operator this context was given
	// to (each operator of a chain gets its own copy of the context).
	OperatorUID string
	// Restore says which checkpoint the operator resumes from, with what
	// its SnapshotState returned then; the zero value is a fresh start.
	Restore Restore
	// TimeZone is the session's time zone (table.local-time-zone), which
	// the runtime loads once per subtask; nil is UTC.
	TimeZone *time.Location
	// MaxStringBytes limits the string and binary values functions build
	// (braid.exec.max-string-bytes); 0 is expr.DefaultMaxStringBytes.
	MaxStringBytes int
	// AutoWatermarkInterval is pipeline.auto-watermark-interval (see
	// WatermarkAssigner); 0 emits every watermark rise at once.
	AutoWatermarkInterval time.Duration
	// SourceBatchRows is the most rows a source should put in one batch
	// (braid.exec.source.batch-size); 0 leaves the source its own size.
	SourceBatchRows int
	// Bounded is true when every source should read what exists now and stop.
	Bounded bool
	// Checkpointing is true when the job takes periodic checkpoints, so a
	// transactional sink writes in transactions from its first row.
	Checkpointing bool
	// SavepointsOnly is true when the job takes no periodic checkpoints:
	// its barriers are savepoints, after which a transactional sink keeps
	// writing outside transactions (at least once).
	SavepointsOnly bool
	// Results is where a collect sink writes; nil elsewhere.
	Results ResultWriter
	// Brokers are the bootstrap servers of the cluster's default log, where
	// managed tables live.
	Brokers []string
	Logger  *zap.Logger
	// Done is closed when the subtask is cancelled; nil when it cannot be.
	// An operator that blocks on the outside world (a sink waiting for a
	// broker) gives up then, so a cancelled attempt stops promptly.
	Done <-chan struct{}
	// Now is the processing-time clock (state TTL); nil means time.Now.
	// Tests set it to move time by hand.
	Now func() time.Time
}

// Env returns the environment expressions evaluate in: the session's time
// zone and string limit.
func (c *Context) Env() *expr.Env {
	return &expr.Env{Location: c.TimeZone, MaxStringBytes: c.MaxStringBytes}
}

// Keyed returns the operator's namespace in the subtask's keyed state and
// the job's max parallelism (its number of key groups). It fails when the
// runtime opened no backend: the operator does not implement
// StatefulOperator.
func (c *Context) Keyed() (state.Namespace, int, error) {
	if c.State == nil {
		return state.Namespace{}, 0, errors.New("operators: keyed state requested but the runtime opened none (the operator must implement StatefulOperator)")
	}
	maxPar := c.MaxParallelism
	if maxPar <= 0 {
		maxPar = types.DefaultMaxParallelism
	}
	return c.State.Namespace(c.OperatorUID), maxPar, nil
}

// Operator transforms its input batches into output batches. The runtime
// calls it from one goroutine: Open, then Process and EndInput in any
// interleaving, then Close (always, even after an error).
type Operator interface {
	Open(ctx *Context) error
	// Process handles one batch from input `input` (0 for single-input
	// operators; 0 = left, 1 = right for joins). It borrows the batch.
	Process(input int, b types.Batch, out Collector) error
	// EndInput is called once when input `input` has no more data. After
	// the last input ends, the operator flushes what it still holds.
	EndInput(input int, out Collector) error
	Close() error
}

// Source produces batches without inputs. Run returns nil at the end of a
// bounded input, and ctx.Err() (or nil) once ctx is cancelled.
type Source interface {
	Open(ctx *Context) error
	Run(ctx context.Context, out Collector) error
	Close() error
}

// OperatorFactory builds an operator of one kind from its spec, which
// NewOperator passes as the plan holds it (jobgraph.Graph validated it).
// A factory takes its spec type with SpecAs and refuses any other.
type OperatorFactory func(spec jobgraph.Spec) (Operator, error)

// SourceFactory builds a source of one kind from its spec, as
// OperatorFactory does an operator.
type SourceFactory func(spec jobgraph.Spec) (Source, error)

// SpecAs returns spec as the spec type P of a factory's kind, or an error
// naming the type it got: "operators: a calc operator needs a
// *jobgraph.CalcSpec, not a *jobgraph.JoinSpec".
func SpecAs[P jobgraph.Spec](spec jobgraph.Spec) (P, error) {
	p, ok := spec.(P)
	if !ok {
		kind := "(no spec)"
		if spec != nil {
			kind = spec.Kind()
		}
		return p, fmt.Errorf("operators: a %s operator needs a %T, not a %T", kind, p, spec)
	}
	return p, nil
}

var registry struct {
	sync.Mutex
	operators map[string]OperatorFactory
	sources   map[string]SourceFactory
}

// RegisterOperator makes an operator kind available to the runtime. It is
// called from init functions; registering a kind twice panics.
func RegisterOperator(kind string, f OperatorFactory) {
	registry.Lock()
	defer registry.Unlock()
	if registry.operators == nil {
		registry.operators = map[string]OperatorFactory{}
	}
	if _, dup := registry.operators[kind]; dup {
		panic("operators: duplicate operator kind " + kind)
	}
	registry.operators[kind] = f
}

// RegisterSource makes a source kind available to the runtime.
func RegisterSource(kind string, f SourceFactory) {
	registry.Lock()
	defer registry.Unlock()
	if registry.sources == nil {
		registry.sources = map[string]SourceFactory{}
	}
	if _, dup := registry.sources[kind]; dup {
		panic("operators: duplicate source kind " + kind)
	}
	registry.sources[kind] = f
}

// NewOperator builds the registered operator of spec's kind. A kind no
// package registered (a task manager built without it) is refused,
// naming the kinds it knows.
func NewOperator(spec jobgraph.Spec) (Operator, error) {
	if spec == nil {
		return nil, errors.New("operators: an operator without a spec")
	}
	kind := spec.Kind()
	registry.Lock()
	f, ok := registry.operators[kind]
	registry.Unlock()
	if !ok {
		return nil, fmt.Errorf("operators: unknown operator kind %q (known: %v)", kind, Kinds())
	}
	return f(spec)
}

// NewSource builds the registered source of spec's kind, as NewOperator
// does an operator.
func NewSource(spec jobgraph.Spec) (Source, error) {
	if spec == nil {
		return nil, errors.New("operators: a source without a spec")
	}
	kind := spec.Kind()
	registry.Lock()
	f, ok := registry.sources[kind]
	registry.Unlock()
	if !ok {
		return nil, fmt.Errorf("operators: unknown source kind %q (known: %v)", kind, Kinds())
	}
	return f(spec)
}

// IsSource reports whether kind names a registered source.
func IsSource(kind string) bool {
	registry.Lock()
	defer registry.Unlock()
	_, ok := registry.sources[kind]
	return ok
}

// Kinds lists every registered operator and source kind, sorted.
func Kinds() []string {
	registry.Lock()
	defer registry.Unlock()
	var out []string
	for k := range registry.operators {
		out = append(out, k)
	}
	for k := range registry.sources {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
