package connectors

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

func init() {
	operators.RegisterOperator(jobgraph.KindManagedSink, func(spec jobgraph.Spec) (operators.Operator, error) {
		s, err := operators.SpecAs[*jobgraph.ManagedSinkSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewManagedSink(*s), nil
	})
}

// managedOpTimeout bounds the sink's metadata lookup, each flush and each
// record's delivery, so an unreachable broker fails the task instead of
// hanging it.
const managedOpTimeout = 30 * time.Second

// ManagedSink appends each input batch, row kinds included, as one record
// to partition (subtask mod partitions) of a managed table's topic. The sink
// emits nothing.
//
// When the job checkpoints, the sink is exactly-once: each subtask writes
// in Kafka transactions with the transactional id
// braid-<job>-<operator uid>-<subtask>, committed when a checkpoint
// completes (see sinkWriter for the epochs and their recovery), so a
// read_committed reader sees every row once. Without
// checkpoints records are produced asynchronously and EndInput waits until
// every one is acknowledged, so the rows of a finished bounded job are
// readable. A delivery failure is returned from a later Process,
// SnapshotState, EndInput or Close.
type ManagedSink struct {
	spec      jobgraph.ManagedSinkSpec
	schema    *arrow.Schema
	w         *sinkWriter
	partition int32
	lastSize  int
}

var (
	_ operators.Operator     = (*ManagedSink)(nil)
	_ operators.Checkpointer = (*ManagedSink)(nil)
)

// NewManagedSink returns a sink for spec.
func NewManagedSink(spec jobgraph.ManagedSinkSpec) *ManagedSink {
	return &ManagedSink{spec: spec, schema: spec.Schema.ArrowSchema()}
}

// Open implements operators.Operator: it looks up the topic's partition
// count, connects, and when the subtask resumes from a checkpoint, commits
// what the previous attempt pre-committed and did not commit.
func (s *ManagedSink) Open(ctx *operators.Context) error {
	topic, brokers := s.spec.Topic, ctx.Brokers
	errf := func(op string, err error) error { return topicError(op, topic, brokers, err) }
	n, err := managedTopicPartitions(brokers, topic)
	if err != nil {
		return errf("write", err)
	}
	partition := int32(ctx.Subtask % n)
	s.w = newSinkWriter(sinkWriterConfig{
		Brokers:   brokers,
		Topic:     topic,
		Guarantee: guaranteeExactlyOnce,
		TxnID: func(i int) string {
			return sinkTxnID("braid", ctx.JobID, ctx.OperatorUID, i)
		},
		Opts: []kgo.Opt{kgo.ProducerBatchMaxBytes(64 << 20), kgo.MaxBufferedBytes(256 << 20)},
		Err:  errf,
	})
	s.partition = partition
	return s.w.Open(ctx)
}

// managedTopicPartitions returns the partition count of topic, which must
// have at least one.
func managedTopicPartitions(brokers []string, topic string) (int, error) {
	cl, err := newKafkaClient(brokers)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), managedOpTimeout)
	defer cancel()
	n, err := topicPartitions(ctx, kadm.NewClient(cl), topic)
	if err == nil && n == 0 {
		err = errors.New("topic has no partitions")
	}
	return n, err
}

// Process implements operators.Operator. It may block while too many bytes
// await acknowledgement.
func (s *ManagedSink) Process(_ int, b types.Batch, _ operators.Collector) error {
	if b.NumRows() == 0 {
		return s.w.failure()
	}
	if err := checkColumns(b.Rec.Schema(), s.schema); err != nil {
		return fmt.Errorf("managed table: topic %q: %w", s.spec.Topic, err)
	}
	if err := checkNotNull(b, s.spec.Schema); err != nil {
		return err
	}
	v, err := encodeBatch(s.schema, b, s.lastSize+s.lastSize/8)
	if err != nil {
		return fmt.Errorf("managed table: topic %q: encode batch: %w", s.spec.Topic, err)
	}
	s.lastSize = len(v)
	return s.w.Write([]sinkRecord{{Partition: s.partition, Value: v}})
}

// EndInput implements operators.Operator: it waits for every produced record
// to be acknowledged and commits what is not committed yet.
func (s *ManagedSink) EndInput(_ int, _ operators.Collector) error {
	return s.w.End()
}

// SnapshotState implements operators.Checkpointer: it pre-commits the
// epoch that checkpoint id ends and returns its records.
func (s *ManagedSink) SnapshotState(id int64) ([]byte, error) { return s.w.Snapshot(id) }

// NotifyCheckpointComplete implements operators.Checkpointer: it commits
// the epochs up to id.
func (s *ManagedSink) NotifyCheckpointComplete(id int64) error { return s.w.Complete(id) }

// NotifyCheckpointAborted implements operators.Checkpointer. The aborted
// epoch stays pending and commits with a later checkpoint.
func (s *ManagedSink) NotifyCheckpointAborted(int64) error { return nil }

// Close implements operators.Operator. It does not wait for records still in
// flight: a sink that did not reach EndInput was cancelled or failed. It is
// safe after a failed Open.
func (s *ManagedSink) Close() error {
	if s.w != nil {
		s.w.Close()
	}
	return nil
}

// checkNotNull fails on a NULL in a NOT NULL column (a primary key column,
// say), as Flink's default table.exec.sink.not-null-enforcer=ERROR does.
func checkNotNull(b types.Batch, schema types.Schema) error {
	for i, f := range schema {
		if f.Type.NotNull && b.Column(i).NullN() > 0 {
			return fmt.Errorf("column '%s' is NOT NULL, however, a null value is being written into it", f.Name)
		}
	}
	return nil
}
