package runtime

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.uber.org/zap"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/shuffle"
	"github.com/braidflow/braid/types"
)

// Task says which subtask to run and with what.
type Task struct {
	// Graph is the job's plan; it must be valid (jobgraph.Graph.Validate,
	// which FromProto applies), and the subtask does not check it again.
	// The subtasks of a job share it and its specs, read-only.
	Graph    *jobgraph.Graph
	VertexID int
	Subtask  int
	// Placements say where every subtask of the job runs.
	Placements []*braidv1.Placement
	// TaskManagerID is this task manager's id: targets placed on it are
	// local, the others are reached at their placement's address.
	TaskManagerID string
	// Exchange is this task manager's shuffle registry.
	Exchange *shuffle.Exchange
	// Context carries what the caller provides to operators: Results,
	// Brokers, Logger, Now. JobID, VertexID, Subtask, Parallelism,
	// MaxParallelism, KeyGroups, TimeZone, Bounded, Checkpointing and
	// SavepointsOnly are set from the graph; State, OperatorUID and Restore
	// by the subtask.
	Context operators.Context
	// InboxCapacity is the number of events buffered per input channel
	// (shuffle.DefaultChannelCapacity when 0).
	InboxCapacity int

	// StateDir is a directory private to the subtask. When an operator of
	// the chain keeps keyed state, the subtask opens its backend in
	// StateDir/db (which the caller has filled from the checkpoint when the
	// subtask resumes) and makes its checkpoints under StateDir/checkpoints.
	StateDir string
	// StateCacheBytes is the keyed state's write-back cache budget.
	StateCacheBytes int64
	// StateFS replaces the OS filesystem under StateDir (tests); nil is
	// the OS.
	StateFS vfs.FS
	// Restore says which checkpoint the subtask resumes from: the zero
	// value is a fresh start.
	Restore RestoreInfo
	// Checkpoints takes the subtask's snapshots. Nil means the job takes no
	// checkpoints: a barrier then fails the subtask.
	Checkpoints SnapshotHandler
	// DataEnded, when set, is called from the subtask's goroutine once the
	// data of a subtask of a checkpointing job ended and its chain flushed:
	// it then waits for a checkpoint taken after that point to complete (its
	// final checkpoint) before it finishes. The task manager tells the job
	// manager, which triggers the final checkpoint once every source's
	// data ended.
	DataEnded func()
}

// RestoreInfo is what a resuming subtask gets from its checkpoint beyond
// its keyed state (which the caller put in StateDir/db).
type RestoreInfo struct {
	// ID is the checkpoint; 0 means a fresh start.
	ID int64
	// Operators holds, by operator uid, what each operator's SnapshotState
	// returned (see operators.Restore for the rescaled case).
	Operators map[string][][]byte
	Rescaled  bool
}

// Snapshot is one subtask's part of a checkpoint, taken at its barrier.
type Snapshot struct {
	ID int64
	// Operators holds, by operator uid, what each Checkpointer's
	// SnapshotState returned.
	Operators map[string][]byte
	// BackendDir is a Pebble checkpoint of the subtask's keyed state, or
	// empty when it keeps none. The handler owns the directory and removes
	// it when done.
	BackendDir string
}

// SnapshotHandler receives a subtask's snapshots. The subtask calls it
// from its own goroutine; it must not block for long (an upload belongs in
// the background) and must eventually acknowledge or decline the
// checkpoint to the job manager.
type SnapshotHandler interface {
	Snapshot(s Snapshot)
	// Decline reports that the subtask cannot take part in checkpoint id.
	Decline(id int64, reason error)
}

// Metrics are a subtask's counters, readable while it runs.
type Metrics struct {
	// RowsIn counts rows read from the vertex's inputs, or emitted by its
	// source.
	RowsIn atomic.Int64
	// RowsOut counts rows the chain's last operator emitted.
	RowsOut atomic.Int64
	// RowsRemote counts rows sent to channels on other task managers.
	RowsRemote atomic.Int64
}

// Subtask runs one parallel instance of a job graph vertex: its operator
// chain, fed by its Inbox (or its source) and feeding an Outbox per
// outgoing edge.
type Subtask struct {
	task   Task
	vertex *jobgraph.Vertex
	octx   operators.Context
	key    shuffle.SubtaskKey
	log    *zap.Logger
	inbox  *shuffle.Inbox // nil for a source vertex
	in     []*jobgraph.Edge
	out    []*jobgraph.Edge

	metrics Metrics

	// triggers queues checkpoint triggers for a source subtask; notices
	// queues checkpoint completions and aborts.
	triggers chan trigger
	notices  chan notice

	unregisterOnce sync.Once
	ran            atomic.Bool
}

// NewSubtask checks t and, for a vertex with inputs, registers the
// subtask's Inbox with t.Exchange, so upstream subtasks can connect as soon
// as NewSubtask returns. The caller then calls Run once, or Close to give
// the subtask up without running it.
func NewSubtask(t Task) (*Subtask, error) {
	g := t.Graph
	if g == nil || t.Exchange == nil {
		return nil, errors.New("runtime: task needs a job graph and an exchange")
	}
	v := g.Vertex(t.VertexID)
	if v == nil {
		return nil, fmt.Errorf("runtime: job %s has no vertex %d", g.JobID, t.VertexID)
	}
	if t.Subtask < 0 || t.Subtask >= v.Parallelism {
		return nil, fmt.Errorf("runtime: vertex %d has no subtask %d (parallelism %d)", v.ID, t.Subtask, v.Parallelism)
	}
	// NB: the zone was checked at plan time and by FromProto; it is loaded
	// here once for the whole chain.
	loc, err := types.LoadZone(g.Session.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("runtime: %w", err)
	}
	s := &Subtask{task: t, vertex: v, octx: t.Context,
		key:      shuffle.SubtaskKey{JobID: g.JobID, Vertex: t.VertexID, Subtask: t.Subtask},
		triggers: make(chan trigger, maxQueuedTriggers),
		notices:  make(chan notice, maxQueuedNotices)}
	s.octx.JobID = g.JobID
	s.octx.VertexID = t.VertexID
	s.octx.Subtask = t.Subtask
	s.octx.Parallelism = v.Parallelism
	s.octx.MaxParallelism = g.MaxParallelism
	s.octx.KeyGroups = types.KeyGroupRangeFor(t.Subtask, v.Parallelism, g.MaxParallelism)
	s.octx.TimeZone = loc
	s.octx.MaxStringBytes = g.Session.MaxStringBytes
	s.octx.SourceBatchRows = g.Session.SourceBatchRows
	s.octx.AutoWatermarkInterval = g.Session.AutoWatermarkInterval
	s.octx.Bounded = g.Bounded
	s.octx.Checkpointing = g.Checkpoint.Enabled()
	s.octx.SavepointsOnly = !s.octx.Checkpointing
	if s.octx.Logger == nil {
		s.octx.Logger = zap.NewNop()
	}
	s.log = s.octx.Logger.With(zap.String("job", g.JobID), zap.Int("vertex", t.VertexID), zap.Int("subtask", t.Subtask))
	s.octx.Logger = s.log
	s.in, s.out = g.InputsOf(t.VertexID), g.OutputsOf(t.VertexID)
	if v.NumInputs == 0 {
		return s, nil // a source vertex: its first operator takes no input
	}
	in, err := s.newInbox()
	if err != nil {
		return nil, err
	}
	if err := t.Exchange.Register(s.key, in); err != nil {
		return nil, err
	}
	s.inbox = in
	return s, nil
}

func (s *Subtask) newInbox() (*shuffle.Inbox, error) {
	var specs []shuffle.ChannelSpec
	for _, e := range s.in {
		src := s.findVertex(e.Source)
		for _, u := range shuffle.Sources(e.Partitioning, s.task.Subtask, src.Parallelism, s.vertex.Parallelism) {
			specs = append(specs, shuffle.ChannelSpec{Input: e.TargetInput, SourceVertex: e.Source, SourceSubtask: u})
		}
	}
	return shuffle.NewInbox(s.vertex.NumInputs, specs, s.task.InboxCapacity)
}

func (s *Subtask) findVertex(id int) *jobgraph.Vertex { return s.task.Graph.Vertex(id) }

// trigger asks a source subtask to take checkpoint id; with stop (a
// stop-with-savepoint) the source then emits nothing more until the
// checkpoint's outcome: completed, the subtask ends without flushing;
// aborted, the source resumes.
type trigger struct {
	id   int64
	stop bool
}

// notice is a checkpoint's outcome, as the job manager told it.
type notice struct {
	id        int64
	completed bool
}

// Bounds of the control queues: a trigger or notice beyond them is dropped
// (the checkpoint then times out, or a later notice covers it).
const (
	maxQueuedTriggers = 16
	maxQueuedNotices  = 64
)

// IsSource reports whether the subtask's vertex starts with a source.
func (s *Subtask) IsSource() bool { return s.inbox == nil }

// TriggerCheckpoint asks a source subtask to take checkpoint id: at its
// next batch boundary it records its position, snapshots its chain and
// emits the barrier. With stop (stop-with-savepoint) the source then emits
// nothing more: once the checkpoint completes the subtask ends without
// flushing its chain (the job resumes from the savepoint later), and if it
// is aborted the source resumes. It returns at once; an error means the
// trigger was not queued (not a source, or too many pending).
func (s *Subtask) TriggerCheckpoint(id int64, stop bool) error {
	if !s.IsSource() {
		return fmt.Errorf("runtime: vertex %d is not a source and takes barriers from its inputs", s.task.VertexID)
	}
	select {
	case s.triggers <- trigger{id, stop}:
		return nil
	default:
		return fmt.Errorf("runtime: %d checkpoint triggers already pending", maxQueuedTriggers)
	}
}

// NotifyCheckpoint tells the subtask that checkpoint id completed (or was
// aborted). The operators hear it from the subtask's goroutine. It returns
// at once; a notice that does not fit in the queue is dropped (sinks commit
// on the next one).
func (s *Subtask) NotifyCheckpoint(id int64, completed bool) {
	select {
	case s.notices <- notice{id, completed}:
	default:
		s.log.Warn("checkpoint notice dropped: queue full", zap.Int64("checkpoint", id))
		return
	}
	if s.inbox != nil {
		s.inbox.Wake()
	}
}

// Metrics returns the subtask's live counters.
func (s *Subtask) Metrics() *Metrics { return &s.metrics }

// Close unregisters the inbox of a subtask that will not run. Run does this
// itself; Close is idempotent.
func (s *Subtask) Close() { s.unregister() }

func (s *Subtask) unregister() {
	s.unregisterOnce.Do(func() {
		if s.inbox != nil {
			s.task.Exchange.Unregister(s.key, s.inbox)
		}
	})
}
