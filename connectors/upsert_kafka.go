package connectors

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/types"
)

// ConnectorUpsertKafka is Flink's 'upsert-kafka' connector: a topic read as
// a changelog keyed by the table's primary key (a record with no value
// deletes its key) and written as upserts and tombstones.
const ConnectorUpsertKafka = "upsert-kafka"

// upsertKafkaOptionNames are the options an 'upsert-kafka' table accepts.
var upsertKafkaOptionNames = []string{
	"connector", "topic", "properties.bootstrap.servers", "properties.group.id",
	"key.format", "key.fields-prefix", "value.format", "value.fields-include",
	"value.json.fail-on-missing-field", "value.json.ignore-parse-errors",
	"scan.bounded.mode", "sink.delivery-guarantee", "sink.transactional-id-prefix",
	OptionTopicPartitions,
}

// upsertKafkaTableFor reads and checks the options of an 'upsert-kafka'
// table without contacting the brokers, with Flink's rules: a PRIMARY KEY
// is required and is the record key; 'value.fields-include' is ALL (the
// value holds every column) or EXCEPT_KEY; 'key.fields-prefix' needs
// EXCEPT_KEY and prefixes every key column's name.
func upsertKafkaTableFor(t *catalog.Table) (kafkaTable, error) {
	name := tableName(t)
	bad := func(k, format string, args ...any) error {
		return fmt.Errorf("table %s: option '%s' %s", name, k, fmt.Sprintf(format, args...))
	}
	opts := t.Options
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		switch {
		case contains(upsertKafkaOptionNames, k):
		case strings.HasPrefix(k, "properties."):
			return kafkaTable{}, bad(k, "is not supported: of the Kafka client properties only properties.bootstrap.servers and properties.group.id are")
		default:
			return kafkaTable{}, fmt.Errorf("unsupported option '%s' for connector 'upsert-kafka' (table %s; supported: %s)",
				k, name, strings.Join(upsertKafkaOptionNames, ", "))
		}
	}
	get := func(k string) string { return strings.TrimSpace(opts[k]) }
	if len(t.PrimaryKey) == 0 {
		return kafkaTable{}, fmt.Errorf("'upsert-kafka' tables require to define a PRIMARY KEY constraint. The PRIMARY KEY specifies which columns should be read from or write to the Kafka message key. The PRIMARY KEY also defines records in the 'upsert-kafka' table should update or delete on which keys. (table %s)", name)
	}
	for _, k := range []string{"key.format", "value.format"} {
		switch f := get(k); f {
		case "json":
		case "":
			return kafkaTable{}, bad(k, "is required ('json')")
		default:
			return kafkaTable{}, bad(k, "'%s' is not supported (supported: json)", f)
		}
	}
	exceptKey := false
	switch v := strings.ToUpper(get("value.fields-include")); v {
	case "", "ALL":
	case "EXCEPT_KEY":
		exceptKey = true
	default:
		return kafkaTable{}, bad("value.fields-include", "must be ALL or EXCEPT_KEY, got '%s'", get("value.fields-include"))
	}
	prefix := opts["key.fields-prefix"]
	if prefix != "" && !exceptKey {
		//lint:ignore ST1005 Flink's message, verbatim
		return kafkaTable{}, fmt.Errorf("A key prefix is not allowed when option 'value.fields-include' is set to 'ALL'. Set it to 'EXCEPT_KEY' instead to avoid field overlaps. (table %s)", name)
	}
	// The options kafkaTableFor shares, under its names.
	shared := map[string]string{"connector": ConnectorKafka, "format": "json"}
	for _, k := range []string{"topic", "properties.bootstrap.servers", "properties.group.id", "scan.bounded.mode",
		"sink.delivery-guarantee", "sink.transactional-id-prefix", OptionTopicPartitions} {
		if v, ok := opts[k]; ok {
			shared[k] = v
		}
	}
	for _, k := range []string{"json.fail-on-missing-field", "json.ignore-parse-errors"} {
		if v, ok := opts["value."+k]; ok {
			shared[k] = v
		}
	}
	plain := *t
	plain.Options, plain.PrimaryKey = shared, nil
	kt, err := kafkaTableFor(&plain)
	if err != nil {
		return kafkaTable{}, err
	}
	src, sink := &kt.source, &kt.sink
	key := func(schema types.Schema) ([]int, error) {
		var cols []int
		for _, k := range t.PrimaryKey {
			if !strings.HasPrefix(k, prefix) {
				//lint:ignore ST1005 Flink's message, verbatim
				return nil, fmt.Errorf("All fields in 'key.fields' must be prefixed with '%s' when option 'key.fields-prefix' is set but field '%s' is not prefixed. (table %s)", prefix, k, name)
			}
			for i, f := range schema {
				if f.Name == k {
					cols = append(cols, i)
				}
			}
		}
		return cols, nil
	}
	if src.KeyFields, err = key(src.Schema); err != nil {
		return kafkaTable{}, err
	}
	if sink.KeyFields, err = key(sink.Schema); err != nil {
		return kafkaTable{}, err
	}
	src.Upsert, src.KeyPrefix, src.ValueExceptKey = true, prefix, exceptKey
	sink.Upsert, sink.KeyPrefix, sink.ValueExceptKey = true, prefix, exceptKey
	sink.RoundRobin = false
	return kt, nil
}
