package connectors

import (
	"strings"
	"testing"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/types"
)

func TestAllowlist(t *testing.T) {
	table := func(opts map[string]string) *catalog.Table {
		return &catalog.Table{Database: "db", Name: "t", Columns: []catalog.Column{{Name: "x", Type: types.Int}}, Options: opts}
	}
	kafka := func(servers string) *catalog.Table {
		return table(map[string]string{"connector": "kafka", "topic": "t", "properties.bootstrap.servers": servers, "format": "json"})
	}
	r := &Resolver{Brokers: []string{"127.0.0.1:9092"}, Allow: &Allowlist{
		Connectors: []string{"kafka", "managed", "print"},
		Hosts:      []string{"*.kafka.internal:9092", "10.0.0.7"},
	}}
	for _, ok := range []*catalog.Table{
		table(nil), table(map[string]string{"connector": "print"}),
		kafka("a.kafka.internal:9092,B.Kafka.Internal:9092"), kafka("10.0.0.7:9093"),
		kafka("127.0.0.1:9092"), // the cluster's own default log
	} {
		if err := r.ValidateTable(ok); err != nil {
			t.Errorf("%v: %v", ok.Options, err)
		}
	}
	for _, tc := range []struct {
		t    *catalog.Table
		want string
	}{
		{table(map[string]string{"connector": "datagen"}), "connector 'datagen' is not allowed on this cluster (allowed: kafka, managed, print)"},
		{kafka("a.kafka.internal:9093"), "host a.kafka.internal:9093 is not allowed"},
		{kafka("a.b.kafka.internal:9092"), "host a.b.kafka.internal:9092 is not allowed"},
		{kafka("evil.example:9092"), "host evil.example:9092 is not allowed on this cluster (allowed: *.kafka.internal:9092, 10.0.0.7)"},
	} {
		if err := r.ValidateTable(tc.t); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "db.t") {
			t.Errorf("%v: %v, want %q", tc.t.Options, err, tc.want)
		}
	}
	if err := (&Resolver{}).ValidateTable(kafka("anywhere:9092")); err != nil {
		t.Errorf("without a list: %v", err)
	}
}
