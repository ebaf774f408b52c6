package runtime

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/braidflow/braid/operators"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/shuffle"
	"github.com/braidflow/braid/types"
)

// Task says which subtask to run and with what.
type Task struct {
	Graph    *braidv1.JobGraph
	VertexID int
	Subtask  int
	// Placements say where every subtask of the job runs.
	Placements []*braidv1.Placement
	// TaskManagerID is this task manager's id: targets placed on it are
	// local, the others are reached at their placement's address.
	TaskManagerID string
	// Exchange is this task manager's shuffle registry.
	Exchange *shuffle.Exchange
	// Context carries what the caller provides to operators: StateDir,
	// StateCacheBytes, Results, Brokers, Logger. JobID, VertexID, Subtask,
	// Parallelism, MaxParallelism, KeyGroups, Config and Bounded are set
	// from the graph.
	Context operators.Context
	// InboxCapacity is the number of events buffered per input channel
	// (shuffle.DefaultChannelCapacity when 0).
	InboxCapacity int
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
	vertex *braidv1.Vertex
	octx   operators.Context
	key    shuffle.SubtaskKey
	log    *zap.Logger
	inbox  *shuffle.Inbox // nil for a source vertex
	in     []*braidv1.Edge
	out    []*braidv1.Edge

	metrics Metrics

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
	var v *braidv1.Vertex
	for _, cand := range g.Vertices {
		if int(cand.Id) == t.VertexID {
			v = cand
		}
	}
	if v == nil {
		return nil, fmt.Errorf("runtime: job %s has no vertex %d", g.JobId, t.VertexID)
	}
	if t.Subtask < 0 || t.Subtask >= int(v.Parallelism) {
		return nil, fmt.Errorf("runtime: vertex %d has no subtask %d (parallelism %d)", v.Id, t.Subtask, v.Parallelism)
	}
	if len(v.Chain) == 0 {
		return nil, fmt.Errorf("runtime: vertex %d has an empty operator chain", v.Id)
	}
	maxP := int(g.MaxParallelism)
	if maxP == 0 {
		maxP = types.DefaultMaxParallelism
	}
	s := &Subtask{task: t, vertex: v, octx: t.Context,
		key: shuffle.SubtaskKey{JobID: g.JobId, Vertex: t.VertexID, Subtask: t.Subtask}}
	s.octx.JobID = g.JobId
	s.octx.VertexID = t.VertexID
	s.octx.Subtask = t.Subtask
	s.octx.Parallelism = int(v.Parallelism)
	s.octx.MaxParallelism = maxP
	s.octx.KeyGroups = types.KeyGroupRangeFor(t.Subtask, int(v.Parallelism), maxP)
	s.octx.Config = g.Config
	s.octx.Bounded = g.Bounded
	if s.octx.Logger == nil {
		s.octx.Logger = zap.NewNop()
	}
	s.log = s.octx.Logger.With(zap.String("job", g.JobId), zap.Int("vertex", t.VertexID), zap.Int("subtask", t.Subtask))
	s.octx.Logger = s.log
	for _, e := range g.Edges {
		if int(e.Target) == t.VertexID {
			s.in = append(s.in, e)
		}
		if int(e.Source) == t.VertexID {
			s.out = append(s.out, e)
		}
	}
	if operators.IsSource(v.Chain[0].Kind) {
		if len(s.in) > 0 {
			return nil, fmt.Errorf("runtime: vertex %d starts with source %q but has inputs", v.Id, v.Chain[0].Kind)
		}
		return s, nil
	}
	if len(s.in) == 0 {
		return nil, fmt.Errorf("runtime: vertex %d has no inputs and %q is not a source", v.Id, v.Chain[0].Kind)
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
	numInputs := int(s.vertex.NumInputs)
	if numInputs == 0 {
		numInputs = 1
	}
	var specs []shuffle.ChannelSpec
	for _, e := range s.in {
		src := s.findVertex(int(e.Source))
		if src == nil {
			return nil, fmt.Errorf("runtime: edge from unknown vertex %d", e.Source)
		}
		for _, u := range shuffle.Sources(e.Partitioning, s.task.Subtask, int(src.Parallelism), int(s.vertex.Parallelism)) {
			specs = append(specs, shuffle.ChannelSpec{Input: int(e.TargetInput), SourceVertex: int(e.Source), SourceSubtask: u})
		}
	}
	return shuffle.NewInbox(numInputs, specs, s.task.InboxCapacity)
}

func (s *Subtask) findVertex(id int) *braidv1.Vertex {
	for _, v := range s.task.Graph.Vertices {
		if int(v.Id) == id {
			return v
		}
	}
	return nil
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
