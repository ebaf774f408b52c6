package jobgraph

import "github.com/braidflow/braid/types"

// MetadataKey is a piece of connector metadata that a METADATA column reads,
// with the type the source produces it in (a column may declare any type
// it casts to).
type MetadataKey struct {
	Name string
	Type types.DataType
}

// kafkaMetadata are the kafka connector's readable metadata, in the order
// and with the types of Flink's KafkaDynamicSource.
var kafkaMetadata = []MetadataKey{
	{"topic", types.String.WithNullable(false)},
	{"partition", types.Int.WithNullable(false)},
	{"headers", types.Map(types.String, types.Bytes).WithNullable(false)},
	{"leader-epoch", types.Int},
	{"offset", types.BigInt.WithNullable(false)},
	{"timestamp", types.TimestampLTZ(3).WithNullable(false)},
	{"timestamp-type", types.String.WithNullable(false)},
}

// ReadableMetadata returns the metadata keys a connector's source offers to
// METADATA columns, or nil when it offers none.
func ReadableMetadata(connector string) []MetadataKey {
	if connector == "kafka" || connector == "upsert-kafka" {
		return kafkaMetadata
	}
	return nil
}

// MetadataTypes returns the type of each readable metadata key of
// connector, for catalog.Table.SourceSchema.
func MetadataTypes(connector string) func(key string) (types.DataType, bool) {
	return func(key string) (types.DataType, bool) {
		k, ok := LookupMetadata(connector, key)
		return k.Type, ok
	}
}

// LookupMetadata returns the readable metadata key name of connector.
func LookupMetadata(connector, name string) (MetadataKey, bool) {
	for _, k := range ReadableMetadata(connector) {
		if k.Name == name {
			return k, true
		}
	}
	return MetadataKey{}, false
}
