package connectors

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
)

func init() {
	operators.RegisterSource(jobgraph.KindManagedSource, func(config []byte) (operators.Source, error) {
		var spec jobgraph.ManagedSourceSpec
		if err := jobgraph.DecodeSpec(config, &spec); err != nil {
			return nil, err
		}
		return NewManagedSource(spec), nil
	})
}

// ManagedSource reads a managed table's topic from the earliest offset.
// Subtask i of p reads the partitions whose number is i modulo p. A bounded
// source (the spec's Bounded or the Context's) reads up to the end offsets it
// lists when Run starts and then returns nil; an empty topic ends at once. An
// unbounded one polls until its context is cancelled. Each record is emitted
// as the batch the sink wrote.
type ManagedSource struct {
	spec    jobgraph.ManagedSourceSpec
	schema  *arrow.Schema
	bounded bool
	subtask int
	par     int
	brokers []string
	logger  *zap.Logger
}

var _ operators.Source = (*ManagedSource)(nil)

// NewManagedSource returns a source for spec.
func NewManagedSource(spec jobgraph.ManagedSourceSpec) *ManagedSource {
	return &ManagedSource{spec: spec, schema: spec.Schema.ArrowSchema()}
}

// Open implements operators.Source.
func (s *ManagedSource) Open(ctx *operators.Context) error {
	s.bounded = s.spec.Bounded || ctx.Bounded
	s.subtask, s.par = ctx.Subtask, max(ctx.Parallelism, 1)
	s.brokers = ctx.Brokers
	s.logger = ctx.Logger
	if s.logger == nil {
		s.logger = zap.NewNop()
	}
	if len(s.brokers) == 0 {
		return topicError("read", s.spec.Topic, nil, errors.New("no brokers configured for the cluster's default log"))
	}
	return nil
}

// Run implements operators.Source. The Kafka clients it creates are closed
// before it returns.
func (s *ManagedSource) Run(ctx context.Context, out operators.Collector) error {
	topic := s.spec.Topic
	cl, err := newKafkaClient(s.brokers)
	if err != nil {
		return topicError("read", topic, s.brokers, err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	nparts, err := topicPartitions(ctx, adm, topic)
	if err != nil {
		return s.runError(ctx, err)
	}
	var mine []int32
	for p := 0; p < nparts; p++ {
		if p%s.par == s.subtask {
			mine = append(mine, int32(p))
		}
	}
	// end holds, for a bounded read, the offset each unfinished partition
	// must reach.
	var end map[int32]int64
	if s.bounded {
		end, err = s.endOffsets(ctx, adm, mine)
		if err != nil {
			return s.runError(ctx, err)
		}
		if len(end) == 0 {
			return nil
		}
	}
	if len(mine) == 0 {
		<-ctx.Done()
		return ctx.Err()
	}
	assign := map[int32]kgo.Offset{}
	for _, p := range mine {
		if end == nil || end[p] > 0 {
			assign[p] = kgo.NewOffset().AtStart()
		}
	}
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign})
	s.logger.Debug("managed source reading", zap.String("topic", topic), zap.Int32s("partitions", mine),
		zap.Bool("bounded", s.bounded))
	for {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for _, fe := range fetches.Errors() {
			if errors.Is(fe.Err, context.Canceled) || errors.Is(fe.Err, context.DeadlineExceeded) {
				return ctx.Err()
			}
			return topicError("read", topic, s.brokers, fmt.Errorf("partition %d: %w", fe.Partition, fe.Err))
		}
		var emitErr error
		fetches.EachRecord(func(r *kgo.Record) {
			if emitErr != nil {
				return
			}
			if !admitBounded(end, r) {
				return // written after the bounded read started
			}
			emitErr = s.emitRecord(r, out)
		})
		if emitErr != nil {
			return emitErr
		}
		if end != nil && len(end) == 0 {
			return nil
		}
	}
}

func (s *ManagedSource) emitRecord(r *kgo.Record, out operators.Collector) error {
	b, err := decodeBatch(r.Value, s.schema)
	if err != nil {
		return fmt.Errorf("managed table: topic %q partition %d offset %d: bad record: %w",
			r.Topic, r.Partition, r.Offset, err)
	}
	defer b.Release()
	return out.Emit(b)
}

// endOffsets lists where a bounded read of partitions stops, leaving out
// partitions that hold nothing to read.
func (s *ManagedSource) endOffsets(ctx context.Context, adm *kadm.Client, partitions []int32) (map[int32]int64, error) {
	ends, err := adm.ListEndOffsets(ctx, s.spec.Topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, err
	}
	starts, err := adm.ListStartOffsets(ctx, s.spec.Topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	for _, p := range partitions {
		e, ok := ends.Lookup(s.spec.Topic, p)
		if !ok {
			return nil, fmt.Errorf("no end offset for partition %d", p)
		}
		st, _ := starts.Lookup(s.spec.Topic, p)
		if e.Offset > st.Offset {
			out[p] = e.Offset
		}
	}
	return out, nil
}

func (s *ManagedSource) runError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return topicError("read", s.spec.Topic, s.brokers, err)
}

// Close implements operators.Source.
func (s *ManagedSource) Close() error { return nil }

// admitBounded reports whether a bounded read (end: the end offset of each
// partition still being read; nil when unbounded) takes record r, and
// forgets r's partition once r is its last record.
func admitBounded(end map[int32]int64, r *kgo.Record) bool {
	if end == nil {
		return true
	}
	e, open := end[r.Partition]
	if !open || r.Offset >= e {
		return false
	}
	if r.Offset+1 >= e {
		delete(end, r.Partition)
	}
	return true
}
