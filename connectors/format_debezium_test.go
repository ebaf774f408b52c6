package connectors

import (
	"strings"
	"testing"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

func debeziumFormat(t *testing.T, schema types.Schema, kv ...string) jobgraph.FormatSpec {
	t.Helper()
	opts := map[string]string{"format": "debezium-json"}
	for i := 0; i+1 < len(kv); i += 2 {
		opts[kv[i]] = kv[i+1]
	}
	f, err := formatFor(&catalog.Table{Database: "db", Name: "d", Options: opts}, "value.", schema)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

var debeziumSchema = types.Schema{{Name: "id", Type: types.BigInt}, {Name: "name", Type: types.String}, {Name: "ts", Type: types.Timestamp(3)}}

func TestDebeziumDecode(t *testing.T) {
	f := debeziumFormat(t, debeziumSchema)
	rows, errs := decodeAll(f, debeziumSchema,
		`{"before":null,"after":{"id":1,"name":"a","ts":"2024-01-02 03:04:05"},"op":"c","source":{"db":"x"}}`,
		`{"before":null,"after":{"id":2,"name":"b"},"op":"r"}`,
		`{"before":{"id":1,"name":"a"},"after":{"id":1,"name":"a2","ts":"2024-01-02T03:04:05.5"},"op":"u"}`,
		`{"before":{"id":2,"name":"b"},"after":null,"op":"d"}`,
		`{"op":"t"}`,
	)
	want := []string{
		"+I[1, a, 2024-01-02 03:04:05.000]", "+I[2, b, NULL]",
		"-U[1, a, NULL]", "+U[1, a2, 2024-01-02 03:04:05.500]", "-D[2, b, NULL]",
	}
	if !equalStrings(rows, want) || strings.Join(errs, "") != "" {
		t.Errorf("rows:\n%s\nwant:\n%s\nerrors %q", strings.Join(rows, "\n"), strings.Join(want, "\n"), errs)
	}
	d := newRowDecoder(f, debeziumSchema)
	if ok, err := d.Decode(nil); ok || err != nil {
		t.Errorf("tombstone: %v %v", ok, err)
	}
	d.Release()

	// Errors, with Flink's messages.
	_, errs = decodeAll(f, debeziumSchema,
		`{"before":null,"after":{"id":1},"op":"x"}`,
		`{"before":null,"after":{"id":1},"op":"u"}`,
		`{"before":null,"op":"d"}`,
		`not json`,
		`{"before":null,"after":{"id":"one"},"op":"c"}`,
	)
	for i, w := range []string{
		`Unknown "op" value "x". The Debezium JSON message is '{"before":null,"after":{"id":1},"op":"x"}'`,
		`The "before" field of UPDATE message is null, if you are using Debezium Postgres Connector`,
		`The "before" field of DELETE message is null`,
		`Corrupt Debezium JSON message 'not json'`,
		`field 'id': cannot read "one" as BIGINT`,
	} {
		if !strings.Contains(errs[i], w) {
			t.Errorf("error %d = %q, want %q", i, errs[i], w)
		}
	}

	// ignore-parse-errors skips broken events, whole: an update whose
	// "after" is broken leaves no -U behind.
	f = debeziumFormat(t, debeziumSchema, "debezium-json.ignore-parse-errors", "true")
	rows, errs = decodeAll(f, debeziumSchema, `not json`, `{"before":{"id":1},"after":[1],"op":"u"}`, `{"after":{"id":3},"op":"c"}`)
	if !equalStrings(rows, []string{"+I[3, NULL, NULL]"}) || strings.Join(errs, "") != "" {
		t.Errorf("ignore-parse-errors: %q %q", rows, errs)
	}

	// schema-include reads the payload of the envelope.
	f = debeziumFormat(t, debeziumSchema, "debezium-json.schema-include", "true")
	rows, errs = decodeAll(f, debeziumSchema, `{"schema":{"type":"struct"},"payload":{"before":null,"after":{"id":5},"op":"c"}}`, `{"before":null,"after":{"id":5},"op":"c"}`)
	if !equalStrings(rows, []string{"+I[5, NULL, NULL]"}) || !strings.Contains(errs[1], `no "payload"`) {
		t.Errorf("schema-include: %q %q", rows, errs)
	}
}

// TestDebeziumEncode: +I and +U write "after" with op "c", -U and -D write
// "before" with op "d"; ISO-8601 timestamps on request; what is written
// reads back as the same changelog with -U/+U folded to their Flink forms.
func TestDebeziumEncode(t *testing.T) {
	f := debeziumFormat(t, debeziumSchema)
	d := newRowDecoder(f, debeziumSchema)
	defer d.Release()
	for _, v := range []string{
		`{"after":{"id":1,"name":"a","ts":"2024-01-02 03:04:05.5"},"op":"c"}`,
		`{"before":{"id":1,"name":"a"},"after":{"id":1,"name":"b"},"op":"u"}`,
		`{"before":{"id":1,"name":"b"},"op":"d"}`,
	} {
		if _, err := d.Decode([]byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := d.Flush()
	defer b.Release()
	want := []string{
		`{"before":null,"after":{"id":1,"name":"a","ts":"2024-01-02 03:04:05.5"},"op":"c"}`,
		`{"before":{"id":1,"name":"a","ts":null},"after":null,"op":"d"}`,
		`{"before":null,"after":{"id":1,"name":"b","ts":null},"op":"c"}`,
		`{"before":{"id":1,"name":"b","ts":null},"after":null,"op":"d"}`,
	}
	enc := newRowEncoder(f, debeziumSchema)
	for r := range b.NumRows() {
		if got := string(enc.AppendRow(nil, b, r)); got != want[r] {
			t.Errorf("row %d: %s, want %s", r, got, want[r])
		}
	}
	iso := newRowEncoder(debeziumFormat(t, debeziumSchema, "debezium-json.timestamp-format.standard", "ISO-8601"), debeziumSchema)
	if got := string(iso.AppendRow(nil, b, 0)); !strings.Contains(got, `"ts":"2024-01-02T03:04:05.5"`) {
		t.Errorf("ISO-8601: %s", got)
	}

	r := &Resolver{}
	tbl := &catalog.Table{Database: "db", Name: "d", Columns: []catalog.Column{{Name: "id", Type: types.BigInt}}, Options: map[string]string{
		"connector": "kafka", "topic": "t", "properties.bootstrap.servers": "h:1", "format": "debezium-json", "debezium-json.schema-include": "true"}}
	if _, _, err := r.SourceSpec(tbl, false); err != nil {
		t.Errorf("schema-include source: %v", err)
	}
	if _, err := r.SinkSpec(tbl); err == nil || !strings.Contains(err.Error(), "Debezium JSON serialization doesn't support 'debezium-json.schema-include' option been set to true.") {
		t.Errorf("schema-include sink: %v", err)
	}
	tbl.Options["debezium-json.timestamp-format.standard"] = "RFC"
	if err := r.ValidateTable(tbl); err == nil || !strings.Contains(err.Error(), "option 'debezium-json.timestamp-format.standard' must be 'SQL' or 'ISO-8601', got 'RFC'") {
		t.Errorf("timestamp standard: %v", err)
	}
}

// TestKafkaDebezium: a debezium-json kafka table reads change events as a
// changelog, with metadata per row, and its sink writes every row kind.
func TestKafkaDebezium(t *testing.T) {
	b := startBroker(t)
	kafkaTopic(t, b.Addrs(), "cdc", 1)
	produce(t, b.Addrs(), "cdc", 0,
		`{"before":null,"after":{"id":1,"name":"a"},"op":"c"}`,
		`{"before":{"id":1,"name":"a"},"after":{"id":1,"name":"b"},"op":"u"}`,
		`{"before":{"id":1,"name":"b"},"after":null,"op":"d"}`)
	tbl := &catalog.Table{Database: "db", Name: "cdc", Options: map[string]string{
		"connector": "kafka", "topic": "cdc", "properties.bootstrap.servers": strings.Join(b.Addrs(), ","), "format": "debezium-json"},
		Columns: []catalog.Column{{Name: "id", Type: types.BigInt}, {Name: "name", Type: types.String},
			{Name: "off", Type: types.BigInt, Metadata: "offset", Virtual: true}}}
	kt, err := kafkaTableFor(tbl)
	if err != nil {
		t.Fatal(err)
	}
	rows, errs := readKafka(t, kt.source, 1)
	want := []string{"+I[1, a, 0]", "-U[1, a, 1]", "+U[1, b, 1]", "-D[1, b, 2]"}
	if errs[0] != nil || !equalStrings(rows[0], want) {
		t.Fatalf("read %q %v, want %q", rows[0], errs[0], want)
	}

	kafkaTopic(t, b.Addrs(), "cdcout", 1)
	tbl.Options["topic"] = "cdcout"
	tbl.Columns = tbl.Columns[:2]
	out, err := kafkaTableFor(tbl)
	if err != nil {
		t.Fatal(err)
	}
	sink := NewKafkaSink(out.sink)
	if err := sink.Open(&operators.Context{}); err != nil {
		t.Fatal(err)
	}
	d := newRowDecoder(out.source.ValueFormat(), out.source.Schema)
	_, _ = d.Decode([]byte(`{"before":{"id":7,"name":"x"},"after":{"id":7,"name":"y"},"op":"u"}`))
	batch, _ := d.Flush()
	d.Release()
	defer batch.Release()
	if err := sink.Process(0, batch, nil); err != nil {
		t.Fatal(err)
	}
	if err := sink.EndInput(0, nil); err != nil {
		t.Fatal(err)
	}
	_ = sink.Close()
	rows, errs = readKafka(t, out.source, 1)
	// -U is written as a delete and +U as a create, as Flink writes them.
	if want := []string{"-D[7, x]", "+I[7, y]"}; errs[0] != nil || !equalStrings(rows[0], want) {
		t.Errorf("read back %q %v, want %q", rows[0], errs[0], want)
	}
}
