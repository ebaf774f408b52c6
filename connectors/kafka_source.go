package connectors

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
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
	dec := newJSONRecords(&s.spec, max(s.batch, 1))
	defer dec.release()
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

// jsonRecords decodes JSON records into batches of up to batch rows: the
// value's fields, for upsert-kafka with EXCEPT_KEY the key's fields from
// the record key, and the record's metadata, laid out in the table's
// column order.
type jsonRecords struct {
	dec   rowDecoder   // the columns read from the value
	key   *jsonDecoder // the key's columns (upsert-kafka, EXCEPT_KEY), or nil
	batch int
	// format names the value format in errors.
	format string
	meta   *recordMetadata
	// upsert marks each row +U, or -D for a record without a value.
	upsert bool
	kinds  []int8
	// layout places, per output column, a column of dec (from >= 0), of
	// key (from < 0: -1 - i) or the next metadata column (meta); nil when
	// dec's batch is the output as it is.
	layout []recordColumn
	schema *arrow.Schema
}

type recordColumn struct {
	from int
	meta bool
}

// newJSONRecords returns the decoder of spec's records.
func newJSONRecords(spec *jobgraph.KafkaSourceSpec, batch int) *jsonRecords {
	j := &jsonRecords{batch: batch, upsert: spec.Upsert, format: spec.ValueFormat().Name}
	isKey := map[int]bool{}
	if spec.Upsert && spec.ValueExceptKey {
		for _, k := range spec.KeyFields {
			isKey[k] = true
		}
	}
	var value, key types.Schema
	layout := make([]recordColumn, len(spec.Schema))
	plain := true
	for i, f := range spec.Schema {
		switch {
		case spec.Metadata != nil && spec.Metadata[i] != "":
			layout[i], plain = recordColumn{meta: true}, false
		case isKey[i]:
			// NB: the key's JSON names its fields without the prefix.
			layout[i], plain = recordColumn{from: -1 - len(key)}, false
			key = append(key, types.Field{Name: strings.TrimPrefix(f.Name, spec.KeyPrefix), Type: f.Type})
		default:
			layout[i] = recordColumn{from: len(value)}
			value = append(value, f)
		}
	}
	j.dec = newRowDecoder(spec.ValueFormat(), value)
	if len(key) > 0 {
		j.key = newJSONDecoder(key, false, false)
	}
	if spec.Metadata != nil {
		j.meta = newRecordMetadata(spec.Schema, spec.Metadata)
	}
	if !plain {
		j.layout, j.schema = layout, spec.Schema.ArrowSchema()
	}
	return j
}

func (j *jsonRecords) add(r *kgo.Record) (bool, error) {
	fail := func(what string, err error) error {
		return types.WithClass(fmt.Errorf("kafka: topic %q partition %d offset %d: %s%w (set '%s.ignore-parse-errors' = 'true' to skip such records)",
			r.Topic, r.Partition, r.Offset, what, err, j.format), types.ClassUser)
	}
	kind := types.UpdateAfter
	value := r.Value
	if j.upsert && value == nil {
		// A tombstone deletes its key. NB: with ALL the value's columns
		// hold the key's: they are read from the record key.
		kind, value = types.Delete, []byte("{}")
		if j.key == nil {
			value = r.Key
		}
	}
	before := j.dec.Rows()
	added, err := j.dec.Decode(value)
	if err != nil {
		return false, fail("", err)
	}
	if !added {
		return false, nil
	}
	if j.key != nil {
		ok, err := j.key.Decode(r.Key)
		if err == nil && !ok {
			err = fmt.Errorf("the record has no key")
		}
		if err != nil {
			return false, types.WithClass(fmt.Errorf("kafka: topic %q partition %d offset %d: key: %w", r.Topic, r.Partition, r.Offset, err), types.ClassUser)
		}
	}
	if j.meta != nil {
		// NB: a changelog format's record may make two rows (-U, +U).
		for range j.dec.Rows() - before {
			j.meta.add(r)
		}
	}
	if j.upsert {
		j.kinds = append(j.kinds, int8(kind))
	}
	return j.dec.Rows() >= j.batch, nil
}

func (j *jsonRecords) flush(out operators.Collector) error {
	b, ok := j.dec.Flush()
	if !ok {
		return nil
	}
	if j.layout != nil || j.upsert {
		b = j.arrange(b)
	}
	defer b.Release()
	return out.Emit(b)
}

// arrange lays the columns of the value batch b, the key's and the
// metadata's out in the table's order, with the rows' kinds, and releases
// b.
func (j *jsonRecords) arrange(b types.Batch) types.Batch {
	defer b.Release()
	value := b.Rec.Columns()[:b.NumCols()]
	kinds := b.Kinds()
	if j.upsert {
		kinds = j.kinds
		defer func() { j.kinds = j.kinds[:0] }()
	}
	if j.layout == nil {
		return types.NewBatch(b.Rec.Schema(), value, kinds)
	}
	var key []arrow.Array
	if j.key != nil {
		kb, _ := j.key.Flush()
		defer kb.Release()
		key = kb.Rec.Columns()[:kb.NumCols()]
	}
	var meta []arrow.Array
	if j.meta != nil {
		meta = j.meta.arrays()
		defer func() {
			for _, a := range meta {
				a.Release()
			}
		}()
	}
	cols := make([]arrow.Array, len(j.layout))
	m := 0
	for i, c := range j.layout {
		switch {
		case c.meta:
			cols[i] = meta[m]
			m++
		case c.from < 0:
			cols[i] = key[-1-c.from]
		default:
			cols[i] = value[c.from]
		}
	}
	return types.NewBatch(j.schema, cols, kinds)
}

func (j *jsonRecords) release() {
	j.dec.Release()
	if j.key != nil {
		j.key.Release()
	}
	if j.meta != nil {
		j.meta.release()
	}
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
