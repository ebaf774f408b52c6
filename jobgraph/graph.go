package jobgraph

import (
	"time"

	"github.com/braidflow/braid/types"
)

// Graph is the typed plan of one job: vertices that each run a chain of
// operators, connected by partitioned edges, with the job's options
// resolved into typed fields. The planner builds it and the job manager,
// the scheduler, the task managers and the runtime read it; it crosses a
// process only in its protobuf form (Proto, FromProto).
//
// A Graph that passed Validate keeps its invariants as long as nobody
// changes it, so its readers do not check them again: vertex ids are
// their indexes, every edge and input is wired, every operator holds a
// spec of its kind. Readers share a graph's specs (all subtasks of a task
// manager build their operators from one graph) and must not change them.
type Graph struct {
	// JobID is the job's id; the job manager assigns it at submission when
	// it is empty.
	JobID string
	// Name is the job's display name ("collect", "insert-into_...").
	Name string
	// SQL is the statement the job was planned from, for display.
	SQL string
	// MaxParallelism is the number of key groups keyed streams hash into,
	// in [1, types.UpperBoundMaxParallelism].
	MaxParallelism int
	// Vertices are indexed by id: Vertices[i].ID == i.
	Vertices []*Vertex
	Edges    []*Edge
	// Bounded is true when every source of the job ends by itself.
	Bounded bool
	// Checkpoint holds the resolved checkpointing options; an Interval of
	// 0 disables periodic checkpoints (savepoints are still taken).
	Checkpoint CheckpointConfig
	// Restart holds the resolved restart strategy.
	Restart RestartStrategy
	// Session holds the session settings operators read.
	Session Session
	// Savepoint is what the job's first attempt restores from; its zero
	// value is a fresh start.
	Savepoint SavepointRestore
}

// Vertex is a chain of operators run as Parallelism subtasks.
type Vertex struct {
	ID          int
	Name        string
	Parallelism int
	// NumInputs is how many logical inputs the first operator consumes:
	// 0 for a source, 2 for a join, 1 otherwise (a union feeds several
	// edges into input 0).
	NumInputs int
	// Chain lists the operators in order; the first consumes the vertex's
	// inputs (or is a source), each later one the output of the one
	// before it.
	Chain []*Operator
}

// Operator is one operator of a vertex's chain.
type Operator struct {
	// Name is for display: plans, logs and errors.
	Name string
	// UID is the operator's stable id (AssignUIDs): a checkpoint's state is
	// matched to operators by it. Empty in a graph planned before uids
	// existed; see Vertex.OperatorUID.
	UID string
	// Spec is the operator's typed configuration; its Kind names the
	// operator.
	Spec Spec
}

// Kind returns the operator's kind: its spec's, or "" without a spec.
func (o *Operator) Kind() string {
	if o.Spec == nil {
		return ""
	}
	return o.Spec.Kind()
}

// Edge connects the output of vertex Source to input TargetInput of vertex
// Target.
type Edge struct {
	Source, Target int
	TargetInput    int
	Partitioning   types.Partitioning
	// KeyColumns are the columns of Source's output hashed into key groups
	// on a HASH edge.
	KeyColumns []int
}

// Session holds the session settings the operators of a job read,
// resolved at plan time (ResolveSession).
type Session struct {
	// TimeZone is table.local-time-zone as types.LoadZone reads it: a zone
	// id ("Asia/Tokyo") or a fixed offset ("+08:00"); "UTC" by default.
	// The runtime loads it once per subtask into operators.Context.TimeZone.
	TimeZone string
	// MaxStringBytes is braid.exec.max-string-bytes: the longest string or
	// binary value a function may build, in bytes; 0 means
	// expr.DefaultMaxStringBytes. The runtime hands it to operators.Context.
	MaxStringBytes int
	// SourceBatchRows is braid.exec.source.batch-size: the most rows a
	// VALUES, datagen or Kafka source puts in one batch; 0 leaves each
	// source its own size. The runtime hands it to operators.Context.
	SourceBatchRows int
	// SourceIdleTimeout is table.exec.source.idle-timeout: a source
	// subtask that emits no row for this long is idle, and its watermark
	// holds back no one downstream until it emits again; 0 never.
	SourceIdleTimeout time.Duration
	// AutoWatermarkInterval is pipeline.auto-watermark-interval: a
	// watermark assigner emits a watermark that rose by no more than this
	// much event time since its last one only when this much processing
	// time passed since its last periodic emission (Flink's
	// WatermarkAssignerOperator); one that rose by more goes out at once.
	// 0 emits every rise at once. ResolveSession defaults it to
	// DefaultAutoWatermarkInterval; a Session built by hand has 0.
	AutoWatermarkInterval time.Duration
	// Batch is execution.runtime-mode = batch: the planner read only
	// bounded tables and ended each query in a BatchSortSpec, so the job
	// emits its final result, insert-only, once its inputs end.
	Batch bool
}

// DefaultAutoWatermarkInterval is pipeline.auto-watermark-interval when
// the session does not set it: Flink's 200 ms.
const DefaultAutoWatermarkInterval = 200 * time.Millisecond

// SavepointRestore names the savepoint a job's first attempt restores
// from (ResolveSavepointRestore).
type SavepointRestore struct {
	// Path is execution.savepoint.path as the user wrote it; "" starts the
	// job fresh.
	Path string
	// IgnoreUnclaimedState is execution.savepoint.ignore-unclaimed-state:
	// drop the savepoint's state that no operator of the job claims instead
	// of refusing the job.
	IgnoreUnclaimedState bool
}

// ApplyDefaults fills in what g leaves zero: MaxParallelism
// (types.DefaultMaxParallelism); the checkpoint timeout, max-concurrent and
// num-retained (Flink's 10 min, 1 and 1); the restart strategy (none); the
// session time zone (UTC). FromProto applies it to what the wire leaves
// unset; a graph built by hand calls it before Validate.
func (g *Graph) ApplyDefaults() {
	if g.MaxParallelism == 0 {
		g.MaxParallelism = types.DefaultMaxParallelism
	}
	c := &g.Checkpoint
	if c.Timeout == 0 {
		c.Timeout = defaultCheckpointTimeout
	}
	if c.MaxConcurrent == 0 {
		c.MaxConcurrent = defaultMaxConcurrent
	}
	if c.NumRetained == 0 {
		c.NumRetained = defaultNumRetained
	}
	if g.Restart.Type == "" {
		g.Restart.Type = RestartNone
	}
	if g.Session.TimeZone == "" {
		g.Session.TimeZone = "UTC"
	}
}

// Vertex returns the vertex with id, or nil when g has none.
func (g *Graph) Vertex(id int) *Vertex {
	if id < 0 || id >= len(g.Vertices) {
		return nil
	}
	return g.Vertices[id]
}

// InputsOf returns the edges into vertex id, in graph order.
func (g *Graph) InputsOf(id int) []*Edge {
	var out []*Edge
	for _, e := range g.Edges {
		if e.Target == id {
			out = append(out, e)
		}
	}
	return out
}

// OutputsOf returns the edges out of vertex id, in graph order.
func (g *Graph) OutputsOf(id int) []*Edge {
	var out []*Edge
	for _, e := range g.Edges {
		if e.Source == id {
			out = append(out, e)
		}
	}
	return out
}

// HasKind reports whether an operator of v's chain is of kind.
func (v *Vertex) HasKind(kind string) bool {
	for _, op := range v.Chain {
		if op.Kind() == kind {
			return true
		}
	}
	return false
}
