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
	operators.RegisterSource(jobgraph.KindKafkaSource, func(spec jobgraph.Spec) (operators.Source, error) {
		s, err := operators.SpecAs[*jobgraph.KafkaSourceSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewKafkaSource(*s), nil
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
// is i modulo p, with isolation level read_committed (see logReader), from
// the offsets its startup mode names, listed when Run starts. A bounded
// source reads up to the last stable offsets listed at the same time and
// then returns nil; an unbounded one polls until its context is cancelled.
// Rows are emitted in insert-only batches of up to 4096 rows (or
// braid.exec.source.batch-size), at the latest
// after each poll.
//
// Its position (SnapshotState) is the topic and the next offset of every
// partition it owns, after the last record whose row it emitted. Restored,
// each owned partition starts at its checkpointed offset and a partition
// the checkpoint does not hold (new since) starts per the startup mode; at
// another parallelism the positions of every old subtask are pooled and
// each subtask takes the partitions it now owns. When a checkpoint
// completes and 'properties.group.id' is set, the offsets of that
// checkpoint are committed to the group, for monitoring only: they are
// never read back.
type KafkaSource struct {
	spec jobgraph.KafkaSourceSpec
	log  logReader
	// batch is the most rows per batch.
	batch int
	// pending holds the positions of checkpoints not yet completed, to
	// commit to the consumer group; only with a group.
	pending map[int64]map[int32]int64
}

var (
	_ operators.Source       = (*KafkaSource)(nil)
	_ operators.Checkpointer = (*KafkaSource)(nil)
)

// maxPendingCommits bounds the positions kept for checkpoints whose notice
// never came.
const maxPendingCommits = 16

// NewKafkaSource returns a source for spec.
func NewKafkaSource(spec jobgraph.KafkaSourceSpec) *KafkaSource {
	s := &KafkaSource{spec: spec}
	s.log = logReader{
		kind: "kafka", topic: spec.Topic, brokers: spec.Brokers, bounded: spec.Bounded,
		wrapErr: func(err error) error {
			if errors.Is(err, kerr.UnknownTopicOrPartition) {
				err = fmt.Errorf("%w (the kafka connector does not create topics)", err)
			}
			return kafkaError("read", spec.Topic, spec.Brokers, err)
		},
		startOffsets: s.startOffsets,
	}
	return s
}

// Open implements operators.Source. It restores the position from
// ctx.Restore.
func (s *KafkaSource) Open(ctx *operators.Context) error {
	s.batch = batchRows(ctx, kafkaBatchRows)
	return s.log.open(ctx.Restore, ctx.Subtask, ctx.Parallelism, ctx.Logger)
}

// Run implements operators.Source. The Kafka client it creates is closed
// before it returns.
func (s *KafkaSource) Run(ctx context.Context, out operators.Collector) error {
	value := s.spec.Schema
	var meta *recordMetadata
	if s.spec.Metadata != nil {
		meta = newRecordMetadata(s.spec.Schema, s.spec.Metadata)
		defer meta.release()
		value = meta.value
	}
	dec := &jsonRecords{dec: newJSONDecoder(value, s.spec.FailOnMissingField, s.spec.IgnoreParseErrors), batch: max(s.batch, 1), meta: meta}
	defer dec.dec.Release()
	return s.log.run(ctx, out, dec)
}

// SnapshotState implements operators.Checkpointer: the next offset of each
// owned partition.
func (s *KafkaSource) SnapshotState(id int64) ([]byte, error) {
	if s.spec.GroupID != "" {
		if s.pending == nil {
			s.pending = map[int64]map[int32]int64{}
		}
		s.pending[id] = s.log.position()
		for len(s.pending) > maxPendingCommits {
			delete(s.pending, minKey(s.pending))
		}
	}
	return s.log.snapshot()
}

// NotifyCheckpointComplete implements operators.Checkpointer: it commits
// checkpoint id's offsets to the consumer group, if one is set.
func (s *KafkaSource) NotifyCheckpointComplete(id int64) error {
	pos, ok := s.pending[id]
	for k := range s.pending {
		if k <= id {
			delete(s.pending, k)
		}
	}
	if ok {
		s.log.commitOffsets(s.spec.GroupID, pos)
	}
	return nil
}

// NotifyCheckpointAborted implements operators.Checkpointer.
func (s *KafkaSource) NotifyCheckpointAborted(id int64) error {
	delete(s.pending, id)
	return nil
}

func minKey(m map[int64]map[int32]int64) int64 {
	first, k := true, int64(0)
	for id := range m {
		if first || id < k {
			first, k = false, id
		}
	}
	return k
}

// jsonRecords decodes JSON record values into batches of up to batch
// rows, with the record's metadata when meta is set.
type jsonRecords struct {
	dec   *jsonDecoder
	batch int
	meta  *recordMetadata
}

func (j *jsonRecords) add(r *kgo.Record) (bool, error) {
	added, err := j.dec.Decode(r.Value)
	if err != nil {
		return false, types.WithClass(fmt.Errorf("kafka: topic %q partition %d offset %d: %w (set 'json.ignore-parse-errors' = 'true' to skip such records)",
			r.Topic, r.Partition, r.Offset, err), types.ClassUser)
	}
	if added && j.meta != nil {
		j.meta.add(r)
	}
	return j.dec.Rows() >= j.batch, nil
}

func (j *jsonRecords) flush(out operators.Collector) error {
	b, ok := j.dec.Flush()
	if !ok {
		return nil
	}
	if j.meta != nil {
		b = j.meta.merge(b)
	}
	defer b.Release()
	return out.Emit(b)
}

// startOffsets lists the offset of each partition where reading starts.
// Latest is the last stable offset: rows of a transaction open now are
// read once it commits.
func (s *KafkaSource) startOffsets(ctx context.Context, adm *kadm.Client) (map[int32]int64, error) {
	topic := s.spec.Topic
	var listed kadm.ListedOffsets
	var err error
	switch s.spec.StartupMode {
	case jobgraph.KafkaStartLatest:
		listed, err = adm.ListCommittedOffsets(ctx, topic)
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
		if ends, err = adm.ListCommittedOffsets(ctx, topic); err == nil {
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

// Close implements operators.Source.
func (s *KafkaSource) Close() error { return nil }
