package connectors

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

func init() {
	operators.RegisterOperator(jobgraph.KindKafkaSink, func(spec jobgraph.Spec) (operators.Operator, error) {
		s, err := operators.SpecAs[*jobgraph.KafkaSinkSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewKafkaSink(*s), nil
	})
}

// KafkaSink writes each input row as one record value in its format, with no key, to one
// topic of an external Kafka cluster. Its input must be insert-only; another
// row kind fails the task. The sink emits nothing.
//
// Its 'sink.delivery-guarantee' is Flink's: 'none' produces asynchronously
// and flushes at the end of input; 'at-least-once' (the default) also
// flushes at every checkpoint barrier; 'exactly-once' writes in Kafka
// transactions with the transactional id
// <sink.transactional-id-prefix>-<job>-<operator uid>-<subtask>, committed
// when a checkpoint completes (see sinkWriter), once the job checkpoints. A
// delivery failure is returned from a later Process, SnapshotState,
// EndInput or Close.
type KafkaSink struct {
	spec jobgraph.KafkaSinkSpec
	enc  rowEncoder
	// key encodes the record key of an upsert sink; nil otherwise.
	key rowEncoder
	w   *sinkWriter
	// changelog is set for a changelog value format, which writes every
	// row kind; otherwise the sink is append-only.
	changelog bool
}

var (
	_ operators.Operator     = (*KafkaSink)(nil)
	_ operators.Checkpointer = (*KafkaSink)(nil)
)

// NewKafkaSink returns a sink for spec.
func NewKafkaSink(spec jobgraph.KafkaSinkSpec) *KafkaSink {
	format := spec.ValueFormat()
	s := &KafkaSink{spec: spec, enc: newRowEncoder(format, spec.Schema), changelog: format.Changelog()}
	if spec.Upsert {
		isKey := map[int]bool{}
		var key types.Schema
		for _, k := range spec.KeyFields {
			isKey[k] = true
			key = append(key, types.Field{Name: strings.TrimPrefix(spec.Schema[k].Name, spec.KeyPrefix), Type: spec.Schema[k].Type})
		}
		s.key = newJSONEncoder(key).project(spec.KeyFields)
		if spec.ValueExceptKey {
			var value types.Schema
			var cols []int
			for i, f := range spec.Schema {
				if !isKey[i] {
					value, cols = append(value, f), append(cols, i)
				}
			}
			s.enc = newRowEncoder(format, value).project(cols)
		}
	}
	return s
}

// Open implements operators.Operator: it checks that the topic exists (the
// connector does not create it) and connects; an exactly-once sink that
// resumes from a checkpoint commits what the previous attempt pre-committed
// and did not commit.
func (s *KafkaSink) Open(ctx *operators.Context) error {
	topic, brokers := s.spec.Topic, s.spec.Brokers
	errf := func(op string, err error) error { return kafkaError(op, topic, brokers, err) }
	if err := checkTopicExists(brokers, topic); err != nil {
		return errf("write", err)
	}
	part := kgo.StickyKeyPartitioner(nil)
	if s.spec.RoundRobin {
		part = kgo.RoundRobinPartitioner()
	}
	g := guaranteeAtLeastOnce
	switch s.spec.Guarantee {
	case jobgraph.KafkaDeliveryNone:
		g = guaranteeNone
	case jobgraph.KafkaDeliveryExactlyOnce:
		g = guaranteeExactlyOnce
	}
	s.w = newSinkWriter(sinkWriterConfig{
		Brokers:   brokers,
		Topic:     topic,
		Guarantee: g,
		TxnID: func(i int) string {
			return sinkTxnID(s.spec.TransactionalIDPrefix, ctx.JobID, ctx.OperatorUID, i)
		},
		Partitioner: part,
		Err:         errf,
	})
	return s.w.Open(ctx)
}

// checkTopicExists fails when topic does not exist.
func checkTopicExists(brokers []string, topic string) error {
	cl, err := newKafkaClient(brokers)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), managedOpTimeout)
	defer cancel()
	if _, err := topicPartitions(ctx, kadm.NewClient(cl), topic); err != nil {
		if errors.Is(err, kerr.UnknownTopicOrPartition) {
			err = fmt.Errorf("%w (the kafka connector does not create topics)", err)
		}
		return err
	}
	return nil
}

// Process implements operators.Operator. It may block while too many bytes
// await acknowledgement.
func (s *KafkaSink) Process(_ int, b types.Batch, _ operators.Collector) error {
	n := b.NumRows()
	if n == 0 {
		return s.w.failure()
	}
	if b.NumCols() != len(s.spec.Schema) {
		return fmt.Errorf("kafka: topic %q: batch has %d columns, table has %d", s.spec.Topic, b.NumCols(), len(s.spec.Schema))
	}
	if err := checkNotNull(b, s.spec.Schema); err != nil {
		return err
	}
	kinds := b.Kinds()
	// One buffer per batch: each record's value is a slice of it, which
	// the writer keeps until the record is acknowledged (or, exactly-once,
	// committed).
	buf := make([]byte, 0, 64*n)
	// spans are each record's key (an upsert sink's) and value in buf; a
	// value end of -1 is a tombstone.
	type span struct{ keyStart, keyEnd, valEnd int }
	spans := make([]span, 0, n)
	for r := range n {
		k := types.RowKind(kinds[r])
		if s.key == nil {
			if k != types.Insert && !s.changelog {
				return fmt.Errorf("kafka: topic %q: the kafka sink is append-only and cannot write a %s row", s.spec.Topic, k)
			}
			start := len(buf)
			buf = s.enc.AppendRow(buf, b, r)
			spans = append(spans, span{start, start, len(buf)})
			continue
		}
		if k == types.UpdateBefore {
			continue // the +U that follows replaces it
		}
		start := len(buf)
		buf = s.key.AppendRow(buf, b, r)
		sp := span{start, len(buf), -1}
		if k != types.Delete {
			buf = s.enc.AppendRow(buf, b, r)
			sp.valEnd = len(buf)
		}
		spans = append(spans, sp)
	}
	recs := make([]sinkRecord, len(spans))
	for i, sp := range spans {
		rec := sinkRecord{Partition: -1}
		if s.key != nil {
			rec.Key = buf[sp.keyStart:sp.keyEnd:sp.keyEnd]
		}
		if sp.valEnd >= 0 {
			rec.Value = buf[sp.keyEnd:sp.valEnd:sp.valEnd]
		}
		recs[i] = rec
	}
	return s.w.Write(recs)
}

// EndInput implements operators.Operator: it waits for every produced record
// to be acknowledged and commits what is not committed yet.
func (s *KafkaSink) EndInput(_ int, _ operators.Collector) error {
	return s.w.End()
}

// SnapshotState implements operators.Checkpointer: at-least-once flushes,
// exactly-once pre-commits the epoch that checkpoint id ends and returns its
// records.
func (s *KafkaSink) SnapshotState(id int64) ([]byte, error) { return s.w.Snapshot(id) }

// NotifyCheckpointComplete implements operators.Checkpointer: exactly-once
// commits the epochs up to id.
func (s *KafkaSink) NotifyCheckpointComplete(id int64) error { return s.w.Complete(id) }

// NotifyCheckpointAborted implements operators.Checkpointer. The aborted
// epoch stays pending and commits with a later checkpoint.
func (s *KafkaSink) NotifyCheckpointAborted(int64) error { return nil }

// Close implements operators.Operator. It does not wait for records still in
// flight: a sink that did not reach EndInput was cancelled or failed. It is
// safe after a failed Open.
func (s *KafkaSink) Close() error {
	if s.w != nil {
		s.w.Close()
	}
	return nil
}
