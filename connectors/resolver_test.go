package connectors

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

func TestResolverValidate(t *testing.T) {
	r := &Resolver{}
	tbl := func(opts map[string]string) *catalog.Table {
		return &catalog.Table{Database: "db", Name: "t", Options: opts,
			Columns: []catalog.Column{{Name: "a", Type: types.Int}}}
	}
	for _, tc := range []struct {
		opts map[string]string
		want string // "" = valid
	}{
		{nil, ""},
		{map[string]string{"managed.partitions": "4"}, ""},
		{map[string]string{"connector": "print", "print-identifier": "x"}, ""},
		{map[string]string{"connector": "blackhole"}, ""},
		{map[string]string{"connector": "datagen", "number-of-rows": "3"}, ""},
		{map[string]string{"connector": "foo"}, "unsupported connector 'foo' for table db.t (supported: blackhole, datagen, faker, jdbc, kafka, mysql, nexmark, print, upsert-kafka, and managed tables without a 'connector' option)"},
		{map[string]string{"connector": "upsert-kafka", "topic": "x"}, "'upsert-kafka' tables require to define a PRIMARY KEY constraint."},
		{map[string]string{"connector": "pulsar"}, "connector 'pulsar' is not supported yet"},
		{map[string]string{"connector": "mysql-cdc"}, "connector 'mysql-cdc' is not supported yet"},
		{map[string]string{"connector": "print", "colour": "red"}, "unsupported option 'colour' for connector 'print' (table db.t) (supported: connector, print-identifier, standard-error)"},
		{map[string]string{"connector": "print", "standard-error": "true"}, ""},
		{map[string]string{"connector": "print", "standard-error": "yes"}, "table db.t: option 'standard-error' must be 'true' or 'false', got 'yes'"},
		{map[string]string{"format": "json"}, "unsupported option 'format' for managed table db.t (supported: managed.partitions)"},
		{map[string]string{"managed.partitions": "0"}, "'managed.partitions' must be"},
	} {
		err := r.ValidateTable(tbl(tc.opts))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.opts, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want %q", tc.opts, err, tc.want)
		}
	}
}

func TestResolverSpecs(t *testing.T) {
	b := startBroker(t)
	ctx := testCtx(t)
	r := &Resolver{Brokers: b.Addrs()}
	tb := managedTable("resolved", 3)
	if err := r.CreateTable(ctx, tb); err != nil {
		t.Fatal(err)
	}
	spec, maxPar, err := r.SourceSpec(tb, true)
	if err != nil || maxPar != 3 {
		t.Fatalf("SourceSpec = %#v, %d, %v", spec, maxPar, err)
	}
	ss, ok := spec.(*jobgraph.ManagedSourceSpec)
	if !ok || ss.Topic != ManagedTopic(tb) || !ss.Bounded || len(ss.Schema) != 3 {
		t.Fatalf("source spec %#v", spec)
	}
	if !operators.IsSource(spec.Kind()) {
		t.Errorf("%s not registered as a source", spec.Kind())
	}
	spec, err = r.SinkSpec(tb)
	if err != nil || spec.Kind() != jobgraph.KindManagedSink {
		t.Fatalf("SinkSpec = %#v, %v", spec, err)
	}
	if _, err := operators.NewOperator(spec); err != nil {
		t.Errorf("sink kind not registered: %v", err)
	}

	pr := &catalog.Table{Database: "db", Name: "out", Options: map[string]string{"connector": "print", "print-identifier": "p"},
		Columns: []catalog.Column{{Name: "a", Type: types.Int}}}
	spec, err = r.SinkSpec(pr)
	if ps, ok := spec.(*jobgraph.PrintSpec); err != nil || !ok || ps.Identifier != "p" || ps.TableName != "db.out" {
		t.Fatalf("print SinkSpec = %#v %v", spec, err)
	}
	if _, _, err := r.SourceSpec(pr, true); err == nil || !strings.Contains(err.Error(), "only be used as a sink") {
		t.Errorf("print as source: %v", err)
	}
	gen := datagenTable(map[string]string{"number-of-rows": "5"}, types.Field{Name: "a", Type: types.Int})
	if spec, maxPar, err := r.SourceSpec(gen, true); err != nil || spec.Kind() != jobgraph.KindDatagen || maxPar != 0 {
		t.Errorf("datagen SourceSpec = %#v %d %v", spec, maxPar, err)
	}
	if _, err := r.SinkSpec(gen); err == nil || !strings.Contains(err.Error(), "only be used as a source") {
		t.Errorf("datagen as sink: %v", err)
	}
	if err := r.CreateTable(ctx, pr); err != nil {
		t.Errorf("CreateTable of a print table: %v", err)
	}

	if err := r.DropTable(ctx, tb); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.SourceSpec(tb, true); err == nil || !strings.Contains(err.Error(), ManagedTopic(tb)) {
		t.Errorf("SourceSpec after drop: %v", err)
	}
}

// TestResolverKafkaTopics: CREATE TABLE creates the topic of a kafka table
// on the cluster's own broker (topic.partitions, default 1) and leaves an
// existing one alone; 'topic.partitions' for another Kafka is refused, and
// nothing is created there.
func TestResolverKafkaTopics(t *testing.T) {
	own, other := startBroker(t), startBroker(t)
	r := &Resolver{Brokers: own.Addrs()}
	tbl := func(brokers []string, topic string, extra map[string]string) *catalog.Table {
		opts := map[string]string{"connector": "kafka", "topic": topic, "format": "json",
			"properties.bootstrap.servers": strings.Join(brokers, ",")}
		for k, v := range extra {
			opts[k] = v
		}
		return &catalog.Table{Database: "db", Name: topic, Options: opts, Columns: []catalog.Column{{Name: "a", Type: types.Int}}}
	}
	for _, tb := range []*catalog.Table{
		tbl(own.Addrs(), "one", nil),
		tbl(own.Addrs(), "three", map[string]string{"topic.partitions": "3"}),
		tbl(own.Addrs(), "three", map[string]string{"topic.partitions": "5"}), // exists: left alone
		tbl(other.Addrs(), "elsewhere", nil),
	} {
		if err := r.ValidateTable(tb); err != nil {
			t.Fatal(err)
		}
		if err := r.CreateTable(testCtx(t), tb); err != nil {
			t.Fatal(err)
		}
	}
	count := func(b *Broker, topic string) int {
		n, err := topicPartitionCount(t, b.Addrs(), topic)
		if err != nil {
			return -1
		}
		return n
	}
	if a, b, c := count(own, "one"), count(own, "three"), count(other, "elsewhere"); a != 1 || b != 3 || c != -1 {
		t.Errorf("partitions: one %d, three %d, elsewhere %d (want 1, 3, none)", a, b, c)
	}
	err := r.ValidateTable(tbl(other.Addrs(), "x", map[string]string{"topic.partitions": "2"}))
	if err == nil || !strings.Contains(err.Error(), "option 'topic.partitions' applies only to topics on the cluster's own broker") {
		t.Errorf("topic.partitions elsewhere: %v", err)
	}
	err = r.ValidateTable(tbl(own.Addrs(), "x", map[string]string{"topic.partitions": "0"}))
	if err == nil || !strings.Contains(err.Error(), "must be a whole number from 1 to 10000") {
		t.Errorf("topic.partitions 0: %v", err)
	}
}

// topicPartitionCount asks brokers how many partitions topic has.
func topicPartitionCount(t *testing.T, brokers []string, topic string) (int, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	return topicPartitions(testCtx(t), kadm.NewClient(cl), topic)
}
