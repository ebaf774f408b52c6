package connectors

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/braidflow/braid/types"
)

// recordMetadata builds the METADATA columns of a kafka source (see
// jobgraph.ReadableMetadata): per record that made a row, the record's
// topic, partition, headers, leader epoch, offset, timestamp or timestamp
// type, in the key's type.
type recordMetadata struct {
	keys []string // per column, its metadata key or ""
	// builders has a builder per metadata column, in column order.
	builders []array.Builder
	headers  types.DataType
}

func newRecordMetadata(schema types.Schema, keys []string) *recordMetadata {
	m := &recordMetadata{keys: keys}
	for i, k := range keys {
		if k == "" {
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

// arrays returns the metadata columns of the rows added since the last
// call, in column order.
func (m *recordMetadata) arrays() []arrow.Array {
	out := make([]arrow.Array, len(m.builders))
	for i, b := range m.builders {
		out[i] = b.NewArray()
	}
	return out
}

func (m *recordMetadata) release() {
	for _, b := range m.builders {
		b.Release()
	}
}
