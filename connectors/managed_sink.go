package connectors

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

func init() {
	operators.RegisterOperator(jobgraph.KindManagedSink, func(config []byte) (operators.Operator, error) {
		var spec jobgraph.ManagedSinkSpec
		if err := jobgraph.DecodeSpec(config, &spec); err != nil {
			return nil, err
		}
		return NewManagedSink(spec), nil
	})
}

// managedOpTimeout bounds the sink's metadata lookup, each flush and each
// record's delivery, so an unreachable broker fails the task instead of
// hanging it.
const managedOpTimeout = 30 * time.Second

// ManagedSink appends each input batch, row kinds included, as one record
// to partition (subtask mod partitions) of a managed table's topic. Records
// are produced asynchronously; EndInput waits until every one is acknowledged,
// so the rows of a finished bounded job are readable. A delivery failure is
// returned from a later Process, EndInput or Close. The sink emits nothing.
type ManagedSink struct {
	spec      jobgraph.ManagedSinkSpec
	schema    *arrow.Schema
	brokers   []string
	partition int32
	cl        *kgo.Client
	lastSize  int

	// ctx bounds blocking produce calls; cancel is called by Close.
	ctx    context.Context
	cancel context.CancelFunc

	mu struct {
		sync.Mutex
		err error // first delivery failure
	}
}

var _ operators.Operator = (*ManagedSink)(nil)

// NewManagedSink returns a sink for spec.
func NewManagedSink(spec jobgraph.ManagedSinkSpec) *ManagedSink {
	return &ManagedSink{spec: spec, schema: spec.Schema.ArrowSchema()}
}

// Open implements operators.Operator: it connects and looks up the topic's
// partition count.
func (s *ManagedSink) Open(ctx *operators.Context) error {
	s.brokers = ctx.Brokers
	topic := s.spec.Topic
	cl, err := newKafkaClient(s.brokers,
		kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordDeliveryTimeout(managedOpTimeout),
		kgo.ProducerBatchMaxBytes(64<<20),
		kgo.MaxBufferedBytes(256<<20),
	)
	if err != nil {
		return topicError("write", topic, s.brokers, err)
	}
	s.cl = cl
	s.ctx, s.cancel = context.WithCancel(context.Background())
	mctx, cancel := context.WithTimeout(s.ctx, managedOpTimeout)
	defer cancel()
	n, err := topicPartitions(mctx, kadm.NewClient(cl), topic)
	if err != nil {
		return topicError("write", topic, s.brokers, err)
	}
	if n == 0 {
		return topicError("write", topic, s.brokers, errors.New("topic has no partitions"))
	}
	s.partition = int32(ctx.Subtask % n)
	return nil
}

// Process implements operators.Operator. It may block while too many bytes
// await acknowledgement.
func (s *ManagedSink) Process(_ int, b types.Batch, _ operators.Collector) error {
	if err := s.failure(); err != nil {
		return err
	}
	if b.NumRows() == 0 {
		return nil
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
	s.cl.Produce(s.ctx, &kgo.Record{Partition: s.partition, Value: v}, s.ack)
	return nil
}

func (s *ManagedSink) ack(_ *kgo.Record, err error) {
	if err == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.err == nil {
		s.mu.err = topicError("write", s.spec.Topic, s.brokers, err)
	}
}

func (s *ManagedSink) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.err
}

// EndInput implements operators.Operator: it waits for every produced record
// to be acknowledged.
func (s *ManagedSink) EndInput(_ int, _ operators.Collector) error {
	return s.flush()
}

func (s *ManagedSink) flush() error {
	ctx, cancel := context.WithTimeout(s.ctx, managedOpTimeout)
	defer cancel()
	if err := s.cl.Flush(ctx); err != nil {
		if ferr := s.failure(); ferr != nil {
			return ferr
		}
		return topicError("flush", s.spec.Topic, s.brokers, err)
	}
	return s.failure()
}

// Close implements operators.Operator. It does not wait for records still in
// flight: a sink that did not reach EndInput was cancelled or failed.
func (s *ManagedSink) Close() error {
	if s.cl == nil {
		return nil
	}
	s.cancel()
	s.cl.Close()
	s.cl = nil
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
