package connectors

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

func init() {
	operators.RegisterSource(jobgraph.KindKafkaSource, func(config []byte) (operators.Source, error) {
		var spec jobgraph.KafkaSourceSpec
		if err := jobgraph.DecodeSpec(config, &spec); err != nil {
			return nil, err
		}
		return NewKafkaSource(spec), nil
	})
}

// kafkaBatchRows is the most rows a Kafka source puts in one batch.
const kafkaBatchRows = 4096

// kafkaError names the topic and brokers of a failed operation on a 'kafka'
// table.
func kafkaError(op, topic string, brokers []string, err error) error {
	return types.WithClass(fmt.Errorf("kafka: %s topic %q on brokers %s: %w", op, topic, strings.Join(brokers, ","), err), types.ClassExternal)
}

// KafkaSource reads one topic of an external Kafka cluster whose record
// values are JSON objects. Subtask i of p reads the partitions whose number
// is i modulo p, from the offsets its startup mode names, listed when Run
// starts. A bounded source reads up to the end offsets listed at the same
// time and then returns nil; an unbounded one polls until its context is
// cancelled. Rows are emitted in insert-only batches of up to 4096 rows,
// at the latest after each poll. No offsets are committed.
type KafkaSource struct {
	spec    jobgraph.KafkaSourceSpec
	subtask int
	par     int
	logger  *zap.Logger
}

var _ operators.Source = (*KafkaSource)(nil)

// NewKafkaSource returns a source for spec.
func NewKafkaSource(spec jobgraph.KafkaSourceSpec) *KafkaSource {
	return &KafkaSource{spec: spec}
}

// Open implements operators.Source.
func (s *KafkaSource) Open(ctx *operators.Context) error {
	s.subtask, s.par = ctx.Subtask, max(ctx.Parallelism, 1)
	s.logger = ctx.Logger
	if s.logger == nil {
		s.logger = zap.NewNop()
	}
	return nil
}

// Run implements operators.Source. The Kafka client it creates is closed
// before it returns.
func (s *KafkaSource) Run(ctx context.Context, out operators.Collector) error {
	topic := s.spec.Topic
	cl, err := newKafkaClient(s.spec.Brokers)
	if err != nil {
		return kafkaError("read", topic, s.spec.Brokers, err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	nparts, err := topicPartitions(ctx, adm, topic)
	if errors.Is(err, kerr.UnknownTopicOrPartition) {
		err = fmt.Errorf("%w (the kafka connector does not create topics)", err)
	}
	if err != nil {
		return s.runError(ctx, err)
	}
	var mine []int32
	for p := 0; p < nparts; p++ {
		if p%s.par == s.subtask {
			mine = append(mine, int32(p))
		}
	}
	if len(mine) == 0 {
		if s.spec.Bounded {
			return nil
		}
		<-ctx.Done()
		return ctx.Err()
	}
	starts, err := s.startOffsets(ctx, adm)
	if err != nil {
		return s.runError(ctx, err)
	}
	// end holds, for a bounded read, the offset each unfinished partition
	// must reach.
	var end map[int32]int64
	if s.spec.Bounded {
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err == nil {
			err = ends.Error()
		}
		if err != nil {
			return s.runError(ctx, err)
		}
		end = map[int32]int64{}
		for _, p := range mine {
			e, ok := ends.Lookup(topic, p)
			if !ok {
				return s.runError(ctx, fmt.Errorf("no end offset for partition %d", p))
			}
			if e.Offset > starts[p] {
				end[p] = e.Offset
			}
		}
		if len(end) == 0 {
			return nil
		}
	}
	assign := map[int32]kgo.Offset{}
	for _, p := range mine {
		if end == nil || end[p] > 0 {
			assign[p] = kgo.NewOffset().At(starts[p])
		}
	}
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign})
	s.logger.Debug("kafka source reading", zap.String("topic", topic), zap.Int32s("partitions", mine),
		zap.String("startup", s.spec.StartupMode), zap.Bool("bounded", s.spec.Bounded))

	dec := newJSONDecoder(s.spec.Schema, s.spec.FailOnMissingField, s.spec.IgnoreParseErrors)
	defer dec.Release()
	emit := func() error {
		b, ok := dec.Flush()
		if !ok {
			return nil
		}
		defer b.Release()
		return out.Emit(b)
	}
	for {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for _, fe := range fetches.Errors() {
			if errors.Is(fe.Err, context.Canceled) || errors.Is(fe.Err, context.DeadlineExceeded) {
				return ctx.Err()
			}
			return kafkaError("read", topic, s.spec.Brokers, fmt.Errorf("partition %d: %w", fe.Partition, fe.Err))
		}
		var recErr error
		fetches.EachRecord(func(r *kgo.Record) {
			if recErr != nil {
				return
			}
			if !admitBounded(end, r) {
				return // written after the bounded read started
			}
			if _, err := dec.Decode(r.Value); err != nil {
				recErr = types.WithClass(fmt.Errorf("kafka: topic %q partition %d offset %d: %w (set 'json.ignore-parse-errors' = 'true' to skip such records)",
					r.Topic, r.Partition, r.Offset, err), types.ClassUser)
				return
			}
			if dec.Rows() >= kafkaBatchRows {
				recErr = emit()
			}
		})
		if recErr != nil {
			return recErr
		}
		if err := emit(); err != nil {
			return err
		}
		if end != nil && len(end) == 0 {
			return nil
		}
	}
}

// startOffsets lists the offset of each partition where reading starts.
func (s *KafkaSource) startOffsets(ctx context.Context, adm *kadm.Client) (map[int32]int64, error) {
	topic := s.spec.Topic
	var listed kadm.ListedOffsets
	var err error
	switch s.spec.StartupMode {
	case jobgraph.KafkaStartLatest:
		listed, err = adm.ListEndOffsets(ctx, topic)
	case jobgraph.KafkaStartTimestamp:
		listed, err = adm.ListOffsetsAfterMilli(ctx, s.spec.StartupTimestampMs, topic)
	default:
		listed, err = adm.ListStartOffsets(ctx, topic)
	}
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		return nil, err
	}
	var ends kadm.ListedOffsets
	if s.spec.StartupMode == jobgraph.KafkaStartTimestamp {
		// NB: a partition with no record at or after the timestamp may
		// list -1; reading then starts at its end.
		if ends, err = adm.ListEndOffsets(ctx, topic); err == nil {
			err = ends.Error()
		}
		if err != nil {
			return nil, err
		}
	}
	out := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) {
		if o.Topic != topic {
			return
		}
		if o.Offset < 0 && ends != nil {
			if e, ok := ends.Lookup(topic, o.Partition); ok {
				o.Offset = e.Offset
			}
		}
		out[o.Partition] = o.Offset
	})
	return out, nil
}

func (s *KafkaSource) runError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return kafkaError("read", s.spec.Topic, s.spec.Brokers, err)
}

// Close implements operators.Source.
func (s *KafkaSource) Close() error { return nil }
