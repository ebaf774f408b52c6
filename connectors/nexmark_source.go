package connectors

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

// NexmarkSource generates the Nexmark benchmark's events (nexmark_gen.go)
// as fast as it can: event time advances at 'first-event.rate' however
// fast the events are emitted. Subtask i of p is split i: it owns a range
// of event ids (nexmarkSplit) and ends when it has emitted them (Run
// returns nil); an unbounded table's ranges are too large to end.
//
// Its position (SnapshotState) is the base time and the number of events
// it emitted; restored, it continues with exactly the events it would
// have produced. Event ids and timestamps depend on the parallelism, so
// it cannot be restored at another one (Open fails).
type NexmarkSource struct {
	spec    jobgraph.NexmarkSpec
	schema  *arrow.Schema
	gen     *nexmarkGen
	first   int64 // the split's first event id, less one
	count   int64 // events the split emits
	batch   int
	subtask int
	par     int
	base    int64 // base time, ms
	// done counts the events passed to Emit.
	done int64
	// dataHint sizes each ROW column's data buffer from the last batch.
	dataHint [3]int
}

var (
	_ operators.Source       = (*NexmarkSource)(nil)
	_ operators.Checkpointer = (*NexmarkSource)(nil)
)

// nexmarkPosition is a NexmarkSource's position.
type nexmarkPosition struct {
	V           int   `json:"v"`
	Subtask     int   `json:"subtask"`
	Parallelism int   `json:"parallelism"`
	BaseTime    int64 `json:"base_time"`
	Events      int64 `json:"events"`
}

// NewNexmarkSource checks spec and returns its source.
func NewNexmarkSource(spec jobgraph.NexmarkSpec) (*NexmarkSource, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("nexmark: %w", err)
	}
	return &NexmarkSource{spec: spec, schema: spec.Schema.ArrowSchema()}, nil
}

// Open implements operators.Source. It restores the position from
// ctx.Restore.
func (s *NexmarkSource) Open(ctx *operators.Context) error {
	s.subtask, s.par = ctx.Subtask, max(ctx.Parallelism, 1)
	s.base, s.done = s.spec.BaseTime, 0
	if err := s.restore(ctx.Restore); err != nil {
		return err
	}
	s.gen = newNexmarkGen(&s.spec, s.base, s.par)
	s.first, s.count = nexmarkSplit(s.spec.EventsNum, s.gen.total, s.subtask, s.par)
	if s.done > s.count {
		return fmt.Errorf("nexmark table %s: checkpointed position %d is past this subtask's %d events", s.spec.Table, s.done, s.count)
	}
	s.batch = max(batchRows(ctx, maxBatchRows), 1)
	return nil
}

// restore reads the base time and event count from r.
func (s *NexmarkSource) restore(r operators.Restore) error {
	if r.ID == 0 {
		return nil
	}
	var found bool
	for _, b := range r.State {
		if len(b) == 0 {
			continue
		}
		var pos nexmarkPosition
		if err := decodePosition("nexmark table "+s.spec.Table, b, &pos, &pos.V); err != nil {
			return err
		}
		if pos.Parallelism != s.par {
			return fmt.Errorf("nexmark table %s cannot be restored at another parallelism (%d -> %d): its event ids and timestamps are split among the subtasks",
				s.spec.Table, pos.Parallelism, s.par)
		}
		if pos.Subtask == s.subtask {
			s.base, s.done, found = pos.BaseTime, pos.Events, true
		}
	}
	if !found && len(r.State) > 0 {
		return fmt.Errorf("nexmark table %s: checkpoint %d holds no position for subtask %d", s.spec.Table, r.ID, s.subtask)
	}
	return nil
}

// Run implements operators.Source.
func (s *NexmarkSource) Run(ctx context.Context, out operators.Collector) error {
	for s.done < s.count {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := int(min(int64(s.batch), s.count-s.done))
		b := s.generate(s.done, n)
		// The position moves first: a checkpoint taken inside Emit counts b.
		s.done += int64(n)
		err := out.Emit(b)
		b.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// generate builds the split's events k0 .. k0+n-1 (counted from 0).
func (s *NexmarkSource) generate(k0 int64, n int) types.Batch {
	g := s.gen
	etype := make([]int32, n)
	var valid [3][]byte
	var offs [3][]int32
	var data [3][]byte
	var rows [3]int
	for c := range 3 {
		valid[c] = make([]byte, (n+7)/8)
		offs[c] = make([]int32, n+1)
		data[c] = make([]byte, 0, s.dataHint[c])
	}
	p := g.pos(s.first + k0 + 1)
	for j := 0; j < n; j++ {
		num := k0 + int64(j) + 1
		eid := s.first + num
		ts := g.timestamp(num)
		t := g.eventType(p)
		etype[j] = t
		for c := range 3 {
			offs[c][j] = int32(len(data[c]))
		}
		g.r.seed(uint64(eid))
		switch t {
		case 0:
			data[0] = g.appendPerson(data[0], p, ts)
		case 1:
			data[1] = g.appendAuction(data[1], p, num, ts)
		default:
			data[2] = g.appendBid(data[2], p, ts)
		}
		p = g.step(p)
		valid[t][j>>3] |= 1 << (j & 7)
		rows[t]++
	}
	cols := make([]arrow.Array, 4)
	cols[0] = array.MakeFromData(array.NewData(arrow.PrimitiveTypes.Int32, n,
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(etype))}, nil, 0, 0))
	for c := range 3 {
		offs[c][n] = int32(len(data[c]))
		nulls := n - rows[c]
		// Grown by an eighth, so that the next batch rarely reallocates.
		s.dataHint[c] = len(data[c]) + len(data[c])/8
		cols[c+1] = array.MakeFromData(array.NewData(arrow.BinaryTypes.Binary, n,
			[]*memory.Buffer{memory.NewBufferBytes(valid[c]), memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offs[c])), memory.NewBufferBytes(data[c])},
			nil, nulls, 0))
	}
	b := types.NewInsertBatch(s.schema, cols, n)
	for _, c := range cols {
		c.Release()
	}
	return b
}

// SnapshotState implements operators.Checkpointer: the base time and the
// events emitted.
func (s *NexmarkSource) SnapshotState(int64) ([]byte, error) {
	return encodePosition(nexmarkPosition{V: positionVersion, Subtask: s.subtask, Parallelism: s.par, BaseTime: s.base, Events: s.done})
}

// NotifyCheckpointComplete implements operators.Checkpointer; it does
// nothing.
func (s *NexmarkSource) NotifyCheckpointComplete(int64) error { return nil }

// NotifyCheckpointAborted implements operators.Checkpointer; it does
// nothing.
func (s *NexmarkSource) NotifyCheckpointAborted(int64) error { return nil }

// Close implements operators.Source.
func (s *NexmarkSource) Close() error { return nil }
