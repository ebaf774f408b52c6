package connectors

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
)

// Connector names.
const (
	ConnectorDatagen   = "datagen"
	ConnectorPrint     = "print"
	ConnectorBlackhole = "blackhole"
)

// notYetConnectors are Flink connectors users will ask for that Braid does
// not have yet; they get a clearer message than an unknown name.
var notYetConnectors = map[string]bool{
	"mysql-cdc": true, "postgres-cdc": true,
	"filesystem": true, "elasticsearch-7": true, "hbase-2.2": true,
	"socket": true, "pulsar": true, "kinesis": true,
}

// connectorOptions lists the option keys each sink-side connector accepts
// (datagen is checked by DatagenSpecFor).
var connectorOptions = map[string][]string{
	"":                 {OptionManagedPartitions},
	ConnectorPrint:     {"connector", "print-identifier", "standard-error"},
	ConnectorBlackhole: {"connector"},
}

// resolverTimeout bounds the Kafka calls the planner's resolver makes.
const resolverTimeout = 30 * time.Second

// Resolver tells the planner which source or sink implements a catalog table
// and manages the topics of managed tables. Brokers are the bootstrap servers
// of the cluster's default log. Its methods are safe for concurrent use.
type Resolver struct {
	Brokers []string
	// Allow, when set, limits the connectors and hosts of the tables users
	// create (see Allowlist); the cluster's default log is always allowed.
	Allow *Allowlist
}

func tableName(t *catalog.Table) string { return t.Database + "." + t.Name }

// ValidateTable checks the table's connector and options without contacting
// any external system.
func (r *Resolver) ValidateTable(t *catalog.Table) error {
	conn := t.Connector()
	switch {
	case conn == ConnectorDatagen:
		if err := r.Allow.checkTable(t, nil); err != nil {
			return err
		}
		_, err := DatagenSpecFor(t)
		return err
	case conn == ConnectorNexmark:
		if err := r.Allow.checkTable(t, nil); err != nil {
			return err
		}
		_, err := NexmarkSpecFor(t)
		return err
	case conn == ConnectorFaker:
		if err := r.Allow.checkTable(t, nil); err != nil {
			return err
		}
		_, err := FakerSpecFor(t)
		return err
	case conn == ConnectorKafka || conn == ConnectorUpsertKafka:
		kt, err := kafkaTableOf(t)
		if err != nil {
			return err
		}
		outside := r.outsideBrokers(kt)
		if len(outside) > 0 && kt.partitions > 0 {
			return fmt.Errorf("table %s: option '%s' applies only to topics on the cluster's own broker (%s); create topics on %s with Kafka's tools",
				tableName(t), OptionTopicPartitions, strings.Join(r.Brokers, ","), strings.Join(outside, ","))
		}
		return r.Allow.checkTable(t, outside)
	case conn == ConnectorMySQL || conn == ConnectorJDBC:
		mt, err := mysqlTableFor(t)
		if err != nil {
			return err
		}
		return r.Allow.checkTable(t, []string{mysqlAddr(mt.table)})
	case notYetConnectors[conn]:
		return fmt.Errorf("connector '%s' is not supported yet", conn)
	}
	allowed, ok := connectorOptions[conn]
	if !ok {
		return fmt.Errorf("unsupported connector '%s' for table %s (supported: blackhole, datagen, faker, jdbc, kafka, mysql, nexmark, print, upsert-kafka, and managed tables without a 'connector' option)",
			conn, tableName(t))
	}
	keys := make([]string, 0, len(t.Options))
	for k := range t.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !contains(allowed, k) {
			what := "managed table " + tableName(t)
			if conn != "" {
				what = fmt.Sprintf("connector '%s' (table %s)", conn, tableName(t))
			}
			return fmt.Errorf("unsupported option '%s' for %s (supported: %s)", k, what, strings.Join(allowed, ", "))
		}
	}
	switch conn {
	case "":
		if _, err := managedPartitions(t); err != nil {
			return err
		}
	case ConnectorPrint:
		if _, err := boolOption(t.Options, "standard-error"); err != nil {
			return fmt.Errorf("table %s: %w", tableName(t), err)
		}
	}
	return r.Allow.checkTable(t, nil)
}

// kafkaTableOf checks a 'kafka' or 'upsert-kafka' table.
func kafkaTableOf(t *catalog.Table) (kafkaTable, error) {
	if t.Connector() == ConnectorUpsertKafka {
		return upsertKafkaTableFor(t)
	}
	return kafkaTableFor(t)
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// SourceSpec returns the spec of the source that reads t. bounded asks
// a managed table to be read up to its current end. maxParallelism is the
// most subtasks that get data (a managed table's partition count), or 0 for
// any. For a managed table it asks the brokers for the partition count.
func (r *Resolver) SourceSpec(t *catalog.Table, bounded bool) (_ jobgraph.Spec, maxParallelism int, _ error) {
	if err := r.ValidateTable(t); err != nil {
		return nil, 0, err
	}
	switch conn := t.Connector(); conn {
	case "":
		ctx, cancel := context.WithTimeout(context.Background(), resolverTimeout)
		defer cancel()
		if len(r.Brokers) == 0 {
			return nil, 0, fmt.Errorf("managed table %s: no brokers configured for the cluster's default log", tableName(t))
		}
		n, err := ManagedPartitionCount(ctx, r.Brokers, t)
		if err != nil {
			return nil, 0, err
		}
		return &jobgraph.ManagedSourceSpec{Topic: ManagedTopic(t), Schema: t.PhysicalSchema(), Bounded: bounded}, n, nil
	case ConnectorDatagen:
		dg, err := DatagenSpecFor(t)
		if err != nil {
			return nil, 0, err
		}
		return &dg, 0, nil
	case ConnectorNexmark:
		nx, err := NexmarkSpecFor(t)
		if err != nil {
			return nil, 0, err
		}
		return &nx, 0, nil
	case ConnectorFaker:
		fk, err := FakerSpecFor(t)
		if err != nil {
			return nil, 0, err
		}
		return &fk, 0, nil
	case ConnectorKafka, ConnectorUpsertKafka:
		kt, err := kafkaTableOf(t)
		if err != nil {
			return nil, 0, err
		}
		return &kt.source, 0, nil
	case ConnectorMySQL, ConnectorJDBC:
		mt, err := mysqlTableFor(t)
		if err != nil {
			return nil, 0, err
		}
		// NB: one subtask reads the whole table.
		return &jobgraph.MySQLScanSpec{Table: mt.table, Schema: t.PhysicalSchema()}, 1, nil
	default:
		return nil, 0, fmt.Errorf("connector '%s' can only be used as a sink (table %s)", conn, tableName(t))
	}
}

// SinkSpec returns the spec of the sink that writes t.
func (r *Resolver) SinkSpec(t *catalog.Table) (jobgraph.Spec, error) {
	if err := r.ValidateTable(t); err != nil {
		return nil, err
	}
	schema := t.PhysicalSchema()
	switch conn := t.Connector(); conn {
	case "":
		return &jobgraph.ManagedSinkSpec{Topic: ManagedTopic(t), Schema: schema}, nil
	case ConnectorPrint:
		stderr, err := boolOption(t.Options, "standard-error")
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", tableName(t), err)
		}
		return &jobgraph.PrintSpec{Schema: schema, Identifier: t.Options["print-identifier"], StandardError: stderr,
			TableName: tableName(t)}, nil
	case ConnectorBlackhole:
		return &jobgraph.BlackholeSpec{Schema: schema}, nil
	case ConnectorKafka, ConnectorUpsertKafka:
		kt, err := kafkaTableOf(t)
		if err != nil {
			return nil, err
		}
		if err := formatSinkError(kt.sink.ValueFormat(), tableName(t)); err != nil {
			return nil, err
		}
		return &kt.sink, nil
	case ConnectorMySQL, ConnectorJDBC:
		return nil, fmt.Errorf("writing to a '%s' table is not supported yet (table %s)", conn, tableName(t))
	default:
		return nil, fmt.Errorf("connector '%s' can only be used as a source (table %s)", conn, tableName(t))
	}
}

// outsideBrokers are the brokers of a kafka table that are not the
// cluster's own.
func (r *Resolver) outsideBrokers(kt kafkaTable) []string {
	var outside []string
	for _, b := range kt.source.Brokers {
		if !contains(r.Brokers, b) { // NB: the default log is the cluster's own
			outside = append(outside, b)
		}
	}
	return outside
}

// CreateTable creates the topic of a managed table, failing if it already
// exists. For a 'kafka' or 'upsert-kafka' table on the cluster's own broker
// it creates the table's topic when it does not exist, with
// 'topic.partitions' partitions (default 1), so a local cluster runs Kafka
// examples with nothing else installed; against another Kafka a missing
// topic is an error when a job reads or writes it. Other connectors have
// nothing to create.
func (r *Resolver) CreateTable(ctx context.Context, t *catalog.Table) error {
	if c := t.Connector(); c == ConnectorKafka || c == ConnectorUpsertKafka {
		kt, err := kafkaTableOf(t)
		if err != nil || len(r.outsideBrokers(kt)) > 0 {
			return err
		}
		return createTopic(ctx, kt.source.Brokers, kt.source.Topic, max(kt.partitions, 1), true)
	}
	if !t.Managed() {
		return nil
	}
	if err := r.ValidateTable(t); err != nil {
		return err
	}
	if len(r.Brokers) == 0 {
		return errors.New("managed table " + tableName(t) + ": no brokers configured for the cluster's default log")
	}
	return CreateManagedTopic(ctx, r.Brokers, t)
}

// DropTable deletes the topic of a managed table; for other connectors it
// does nothing. It is idempotent.
func (r *Resolver) DropTable(ctx context.Context, t *catalog.Table) error {
	if !t.Managed() || len(r.Brokers) == 0 {
		return nil
	}
	return DeleteManagedTopic(ctx, r.Brokers, t)
}
