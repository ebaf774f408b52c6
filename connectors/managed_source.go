package connectors

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

func init() {
	operators.RegisterSource(jobgraph.KindManagedSource, func(spec jobgraph.Spec) (operators.Source, error) {
		s, err := operators.SpecAs[*jobgraph.ManagedSourceSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewManagedSource(*s), nil
	})
}

// ManagedSource reads a managed table's topic from the earliest offset, with
// isolation level read_committed (see logReader). Subtask i of p reads the
// partitions whose number is i modulo p. A bounded source (the spec's
// Bounded or the Context's) reads up to the last stable offsets it lists
// when Run starts and then returns nil; an empty topic ends at once. An
// unbounded one polls until its context is cancelled. Each record is
// emitted as the batch the sink wrote.
//
// Its position (SnapshotState) is the topic and the next offset of every
// partition it owns, after the last record it emitted. Restored, each owned
// partition starts at its checkpointed offset, one the checkpoint does not
// hold at the earliest offset; at another parallelism the positions of
// every old subtask are pooled and each subtask takes the partitions it now
// owns. Checkpoint notices need nothing.
type ManagedSource struct {
	spec   jobgraph.ManagedSourceSpec
	schema *arrow.Schema
	log    logReader
}

var (
	_ operators.Source       = (*ManagedSource)(nil)
	_ operators.Checkpointer = (*ManagedSource)(nil)
)

// NewManagedSource returns a source for spec.
func NewManagedSource(spec jobgraph.ManagedSourceSpec) *ManagedSource {
	return &ManagedSource{spec: spec, schema: spec.Schema.ArrowSchema()}
}

// Open implements operators.Source. It restores the position from
// ctx.Restore.
func (s *ManagedSource) Open(ctx *operators.Context) error {
	topic, brokers := s.spec.Topic, ctx.Brokers
	if len(brokers) == 0 {
		return topicError("read", topic, nil, errors.New("no brokers configured for the cluster's default log"))
	}
	s.log = logReader{
		kind: "managed table", topic: topic, brokers: brokers, bounded: s.spec.Bounded || ctx.Bounded,
		wrapErr: func(err error) error { return topicError("read", topic, brokers, err) },
		startOffsets: func(ctx context.Context, adm *kadm.Client) (map[int32]int64, error) {
			return listedOffsets(adm.ListStartOffsets(ctx, topic))
		},
	}
	return s.log.open(ctx.Restore, ctx.Subtask, ctx.Parallelism, ctx.Logger)
}

// Run implements operators.Source. The Kafka client it creates is closed
// before it returns.
func (s *ManagedSource) Run(ctx context.Context, out operators.Collector) error {
	dec := &ipcRecords{schema: s.schema}
	defer dec.release()
	return s.log.run(ctx, out, dec)
}

// SnapshotState implements operators.Checkpointer: the next offset of each
// owned partition.
func (s *ManagedSource) SnapshotState(int64) ([]byte, error) { return s.log.snapshot() }

// NotifyCheckpointComplete implements operators.Checkpointer; it does
// nothing.
func (s *ManagedSource) NotifyCheckpointComplete(int64) error { return nil }

// NotifyCheckpointAborted implements operators.Checkpointer; it does
// nothing.
func (s *ManagedSource) NotifyCheckpointAborted(int64) error { return nil }

// Close implements operators.Source.
func (s *ManagedSource) Close() error { return nil }

// ipcRecords decodes the batch each record of a managed table holds; every
// record is emitted as it is.
type ipcRecords struct {
	schema *arrow.Schema
	b      types.Batch
	held   bool
}

func (d *ipcRecords) add(r *kgo.Record) (bool, error) {
	b, err := decodeBatch(r.Value, d.schema)
	if err != nil {
		return false, fmt.Errorf("managed table: topic %q partition %d offset %d: bad record: %w",
			r.Topic, r.Partition, r.Offset, err)
	}
	d.release()
	d.b, d.held = b, true
	return true, nil
}

func (d *ipcRecords) flush(out operators.Collector) error {
	if !d.held {
		return nil
	}
	defer d.release()
	return out.Emit(d.b)
}

func (d *ipcRecords) release() {
	if d.held {
		d.b.Release()
		d.held = false
	}
}

// listedOffsets returns the offset of each listed partition.
func listedOffsets(listed kadm.ListedOffsets, err error) (map[int32]int64, error) {
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out, nil
}
