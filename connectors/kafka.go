package connectors

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// ConnectorKafka is Flink's 'kafka' connector: one topic of an external
// Kafka cluster, record values in one of the formats of formatFor.
const ConnectorKafka = "kafka"

// kafkaOptionNames are the options a 'kafka' table accepts.
var kafkaOptionNames = []string{
	"connector", "topic", "properties.bootstrap.servers", "properties.group.id",
	"scan.startup.mode", "scan.startup.timestamp-millis", "scan.bounded.mode",
	"format", "value.format",
	"sink.partitioner", "sink.delivery-guarantee", "sink.transactional-id-prefix",
	OptionTopicPartitions,
}

// OptionTopicPartitions is Braid's own option of 'kafka' and 'upsert-kafka'
// tables on the cluster's own broker: CREATE TABLE creates the topic with
// this many partitions (default 1) when it does not exist.
const OptionTopicPartitions = "topic.partitions"

// kafkaTable is the checked options of a 'kafka' table.
type kafkaTable struct {
	source jobgraph.KafkaSourceSpec
	sink   jobgraph.KafkaSinkSpec
	// partitions is 'topic.partitions': the partitions of the topic CREATE
	// TABLE creates on the cluster's own broker (0: not given).
	partitions int32
}

// kafkaTableFor reads and checks the options of a 'kafka' table without
// contacting the brokers. Errors name the table and the option.
//
// NB: 'properties.group.id' is only informative: the source assigns
// partitions itself and commits its checkpointed offsets to the group for
// monitoring, as Flink does.
func kafkaTableFor(t *catalog.Table) (kafkaTable, error) {
	name := tableName(t)
	bad := func(k, format string, args ...any) error {
		return fmt.Errorf("table %s: option '%s' %s", name, k, fmt.Sprintf(format, args...))
	}
	opts := t.Options
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch {
		case contains(kafkaOptionNames, k), isFormatOption(k, ""), isFormatOption(k, "value."):
		case k == "topic-pattern":
			return kafkaTable{}, bad(k, "is not supported: give one topic with 'topic'")
		case k == "scan.startup.specific-offsets":
			return kafkaTable{}, bad(k, "is not supported: 'scan.startup.mode' may be earliest-offset, latest-offset or timestamp")
		case strings.HasPrefix(k, "properties."):
			return kafkaTable{}, bad(k, "is not supported: of the Kafka client properties only properties.bootstrap.servers and properties.group.id are")
		default:
			return kafkaTable{}, fmt.Errorf("unsupported option '%s' for connector 'kafka' (table %s; supported: %s)",
				k, name, strings.Join(kafkaOptionNames, ", "))
		}
	}
	get := func(k string) string { return strings.TrimSpace(opts[k]) }

	topic := get("topic")
	switch {
	case topic == "":
		return kafkaTable{}, bad("topic", "is required")
	case strings.Contains(topic, ";") || strings.Contains(topic, ","):
		return kafkaTable{}, bad("topic", "must name one topic, got '%s'", topic)
	}
	var brokers []string
	for _, b := range strings.Split(get("properties.bootstrap.servers"), ",") {
		if b = strings.TrimSpace(b); b != "" {
			brokers = append(brokers, b)
		}
	}
	if len(brokers) == 0 {
		return kafkaTable{}, bad("properties.bootstrap.servers", "is required")
	}

	format, err := formatFor(t, "value.", t.PhysicalSchema())
	if err != nil {
		return kafkaTable{}, err
	}

	src := jobgraph.KafkaSourceSpec{Topic: topic, Brokers: brokers, Schema: t.PhysicalSchema(),
		StartupMode: jobgraph.KafkaStartEarliest, Format: &format, GroupID: get("properties.group.id")}
	if src.Schema, src.Metadata, err = t.SourceSchema(jobgraph.MetadataTypes(t.Connector())); err != nil {
		return kafkaTable{}, err
	}
	switch m := get("scan.startup.mode"); m {
	case "", jobgraph.KafkaStartEarliest, jobgraph.KafkaStartLatest:
		if m != "" {
			src.StartupMode = m
		}
		if _, ok := opts["scan.startup.timestamp-millis"]; ok {
			return kafkaTable{}, bad("scan.startup.timestamp-millis", "needs 'scan.startup.mode' = 'timestamp'")
		}
	case jobgraph.KafkaStartTimestamp:
		ms, err := strconv.ParseInt(get("scan.startup.timestamp-millis"), 10, 64)
		if err != nil || ms < 0 {
			return kafkaTable{}, bad("scan.startup.timestamp-millis", "must be milliseconds since the epoch with 'scan.startup.mode' = 'timestamp', got '%s'",
				get("scan.startup.timestamp-millis"))
		}
		src.StartupMode, src.StartupTimestampMs = m, ms
	case "specific-offsets", "group-offsets":
		return kafkaTable{}, bad("scan.startup.mode", "'%s' is not supported (supported: earliest-offset, latest-offset, timestamp)", m)
	default:
		return kafkaTable{}, bad("scan.startup.mode", "must be earliest-offset, latest-offset or timestamp, got '%s'", m)
	}
	switch m := get("scan.bounded.mode"); m {
	case "", "unbounded":
	case "latest-offset":
		src.Bounded = true
	default:
		return kafkaTable{}, bad("scan.bounded.mode", "must be 'unbounded' or 'latest-offset', got '%s'", m)
	}

	sink := jobgraph.KafkaSinkSpec{Topic: topic, Brokers: brokers, Schema: t.PhysicalSchema(), Format: &format}
	switch p := get("sink.partitioner"); p {
	case "", "default":
	case "round-robin":
		sink.RoundRobin = true
	default:
		return kafkaTable{}, bad("sink.partitioner", "'%s' is not supported (supported: default, round-robin)", p)
	}
	switch g := get("sink.delivery-guarantee"); g {
	case "", jobgraph.KafkaDeliveryAtLeastOnce:
		sink.Guarantee = jobgraph.KafkaDeliveryAtLeastOnce
	case jobgraph.KafkaDeliveryNone, jobgraph.KafkaDeliveryExactlyOnce:
		sink.Guarantee = g
	default:
		return kafkaTable{}, bad("sink.delivery-guarantee", "must be none, at-least-once or exactly-once, got '%s'", g)
	}
	sink.TransactionalIDPrefix = get("sink.transactional-id-prefix")
	if sink.Guarantee == jobgraph.KafkaDeliveryExactlyOnce && sink.TransactionalIDPrefix == "" {
		// Flink: "sink.transactional-id-prefix must be specified when
		// using DeliveryGuarantee.EXACTLY_ONCE."
		return kafkaTable{}, bad("sink.transactional-id-prefix", "is required when 'sink.delivery-guarantee' is 'exactly-once'")
	}

	if len(t.PrimaryKey) > 0 {
		return kafkaTable{}, fmt.Errorf("table %s: the 'kafka' connector with the '%s' format doesn't support a PRIMARY KEY: it cannot guarantee its semantics (use 'upsert-kafka' for a keyed changelog)", name, format.Name)
	}
	kt := kafkaTable{source: src, sink: sink}
	if v, ok := opts[OptionTopicPartitions]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 || n > 10000 {
			return kafkaTable{}, bad(OptionTopicPartitions, "must be a whole number from 1 to 10000, got '%s'", v)
		}
		kt.partitions = int32(n)
	}
	return kt, nil
}

func boolOption(opts map[string]string, k string) (bool, error) {
	v, ok := opts[k]
	if !ok {
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("option '%s' must be 'true' or 'false', got '%s'", k, v)
}

// jsonSupports reports whether the json format reads and writes t.
func jsonSupports(t types.DataType) bool {
	switch t.Kind {
	case types.KindNull, types.KindIntervalDayTime, types.KindIntervalYearMonth:
		return false
	}
	return true
}
