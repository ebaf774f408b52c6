package connectors

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/braidflow/braid/types"
)

// recordMetadata builds the METADATA columns of a kafka source (see
// jobgraph.ReadableMetadata): per record whose value made a row, the
// record's topic, partition, headers, leader epoch, offset, timestamp or
// timestamp type, in the key's type. merge puts them among the value's
// columns in the table's order.
type recordMetadata struct {
	schema types.Schema // every column the source emits
	keys   []string     // per column, its metadata key or ""
	value  types.Schema // the columns read from the record value
	// builders has a builder per metadata column, in column order.
	builders []array.Builder
	arrow    *arrow.Schema
	headers  types.DataType
}

func newRecordMetadata(schema types.Schema, keys []string) *recordMetadata {
	m := &recordMetadata{schema: schema, keys: keys, arrow: schema.ArrowSchema()}
	for i, k := range keys {
		if k == "" {
			m.value = append(m.value, schema[i])
			continue
		}
		if k == "headers" {
			m.headers = schema[i].Type
		}
		m.builders = append(m.builders, array.NewBuilder(memory.DefaultAllocator, schema[i].Type.ArrowType()))
	}
	return m
}

// add appends r's metadata.
func (m *recordMetadata) add(r *kgo.Record) {
	b := 0
	for _, k := range m.keys {
		if k == "" {
			continue
		}
		switch bl := m.builders[b].(type) {
		case *array.StringBuilder:
			if k == "topic" {
				bl.Append(r.Topic)
			} else {
				bl.Append(timestampType(r))
			}
		case *array.Int32Builder:
			if k == "partition" {
				bl.Append(r.Partition)
			} else if r.LeaderEpoch < 0 {
				bl.AppendNull()
			} else {
				bl.Append(r.LeaderEpoch)
			}
		case *array.Int64Builder:
			bl.Append(r.Offset)
		case *array.TimestampBuilder:
			bl.Append(arrow.Timestamp(r.Timestamp.UnixNano()))
		case *array.BinaryBuilder:
			// NB: a repeated header keeps its first place and its last
			// value, as Flink's map of headers does.
			var keys, vals []any
			at := map[string]int{}
			for _, h := range r.Headers {
				var v any
				if h.Value != nil {
					v = h.Value
				}
				if i, ok := at[h.Key]; ok {
					vals[i] = v
					continue
				}
				at[h.Key] = len(keys)
				keys, vals = append(keys, h.Key), append(vals, v)
			}
			bl.Append(types.AppendComposite(nil, m.headers, keys, vals))
		}
		b++
	}
}

// timestampType names how r's timestamp was set, as Flink's
// 'timestamp-type' metadata does.
func timestampType(r *kgo.Record) string {
	switch r.Attrs.TimestampType() {
	case 0:
		return "CreateTime"
	case 1:
		return "LogAppendTime"
	}
	return "NoTimestampType"
}

// merge returns the batch of value columns b with the metadata columns of
// its rows placed among them, and releases b.
func (m *recordMetadata) merge(b types.Batch) types.Batch {
	defer b.Release()
	value := b.Rec.Columns()[:b.NumCols()]
	cols := make([]arrow.Array, 0, len(m.schema))
	v, mb := 0, 0
	for _, k := range m.keys {
		if k == "" {
			cols = append(cols, value[v])
			v++
			continue
		}
		a := m.builders[mb].NewArray()
		defer a.Release()
		cols = append(cols, a)
		mb++
	}
	return types.NewBatch(m.arrow, cols, b.Kinds())
}

func (m *recordMetadata) release() {
	for _, b := range m.builders {
		b.Release()
	}
}
