package connectors

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

func init() {
	operators.RegisterOperator(jobgraph.KindKafkaSink, func(config []byte) (operators.Operator, error) {
		var spec jobgraph.KafkaSinkSpec
		if err := jobgraph.DecodeSpec(config, &spec); err != nil {
			return nil, err
		}
		return NewKafkaSink(spec), nil
	})
}

// KafkaSink writes each input row as one JSON object, with no key, to one
// topic of an external Kafka cluster (at-least-once: no transactions). Its
// input must be insert-only; another row kind fails the task. Records are
// produced asynchronously; EndInput waits until every one is acknowledged. A
// delivery failure is returned from a later Process, EndInput or Close. The
// sink emits nothing.
type KafkaSink struct {
	spec jobgraph.KafkaSinkSpec
	enc  *jsonEncoder
	cl   *kgo.Client

	// ctx bounds blocking produce calls; cancel is called by Close.
	ctx    context.Context
	cancel context.CancelFunc

	mu struct {
		sync.Mutex
		err error // first delivery failure
	}
}

var _ operators.Operator = (*KafkaSink)(nil)

// NewKafkaSink returns a sink for spec.
func NewKafkaSink(spec jobgraph.KafkaSinkSpec) *KafkaSink {
	return &KafkaSink{spec: spec, enc: newJSONEncoder(spec.Schema)}
}

// Open implements operators.Operator: it connects and checks that the topic
// exists (the connector does not create it).
func (s *KafkaSink) Open(_ *operators.Context) error {
	topic, brokers := s.spec.Topic, s.spec.Brokers
	part := kgo.StickyKeyPartitioner(nil)
	if s.spec.RoundRobin {
		part = kgo.RoundRobinPartitioner()
	}
	cl, err := newKafkaClient(brokers,
		kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(part),
		kgo.RecordDeliveryTimeout(managedOpTimeout),
	)
	if err != nil {
		return kafkaError("write", topic, brokers, err)
	}
	s.cl = cl
	s.ctx, s.cancel = context.WithCancel(context.Background())
	mctx, cancel := context.WithTimeout(s.ctx, managedOpTimeout)
	defer cancel()
	if _, err := topicPartitions(mctx, kadm.NewClient(cl), topic); err != nil {
		if errors.Is(err, kerr.UnknownTopicOrPartition) {
			err = fmt.Errorf("%w (the kafka connector does not create topics)", err)
		}
		return kafkaError("write", topic, brokers, err)
	}
	return nil
}

// Process implements operators.Operator. It may block while too many bytes
// await acknowledgement.
func (s *KafkaSink) Process(_ int, b types.Batch, _ operators.Collector) error {
	if err := s.failure(); err != nil {
		return err
	}
	n := b.NumRows()
	if n == 0 {
		return nil
	}
	if b.NumCols() != len(s.spec.Schema) {
		return fmt.Errorf("kafka: topic %q: batch has %d columns, table has %d", s.spec.Topic, b.NumCols(), len(s.spec.Schema))
	}
	if err := checkNotNull(b, s.spec.Schema); err != nil {
		return err
	}
	kinds := b.Kinds()
	// One buffer per batch: each record's value is a slice of it, which
	// the client keeps until the record is acknowledged.
	buf := make([]byte, 0, 64*n)
	ends := make([]int, n)
	for r := range n {
		if k := types.RowKind(kinds[r]); k != types.Insert {
			return fmt.Errorf("kafka: topic %q: the kafka sink is append-only and cannot write a %s row", s.spec.Topic, k)
		}
		buf = s.enc.AppendRow(buf, b, r)
		ends[r] = len(buf)
	}
	start := 0
	for r := range n {
		s.cl.Produce(s.ctx, &kgo.Record{Value: buf[start:ends[r]:ends[r]]}, s.ack)
		start = ends[r]
	}
	return nil
}

func (s *KafkaSink) ack(_ *kgo.Record, err error) {
	if err == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.err == nil {
		s.mu.err = kafkaError("write", s.spec.Topic, s.spec.Brokers, err)
	}
}

func (s *KafkaSink) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.err
}

// EndInput implements operators.Operator: it waits for every produced record
// to be acknowledged.
func (s *KafkaSink) EndInput(_ int, _ operators.Collector) error {
	ctx, cancel := context.WithTimeout(s.ctx, managedOpTimeout)
	defer cancel()
	if err := s.cl.Flush(ctx); err != nil {
		if ferr := s.failure(); ferr != nil {
			return ferr
		}
		return kafkaError("flush", s.spec.Topic, s.spec.Brokers, err)
	}
	return s.failure()
}

// Close implements operators.Operator. It does not wait for records still in
// flight: a sink that did not reach EndInput was cancelled or failed.
func (s *KafkaSink) Close() error {
	if s.cl == nil {
		return nil
	}
	s.cancel()
	s.cl.Close()
	s.cl = nil
	return nil
}
