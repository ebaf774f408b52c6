package connectors

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

// kafkaAllTypes has one column of each type the json format reads.
var kafkaAllTypes = types.Schema{
	{Name: "b", Type: types.Boolean},
	{Name: "ti", Type: types.TinyInt},
	{Name: "si", Type: types.SmallInt},
	{Name: "i", Type: types.Int},
	{Name: "bi", Type: types.BigInt},
	{Name: "f", Type: types.Float},
	{Name: "d", Type: types.Double},
	{Name: "dec", Type: types.Decimal(10, 2)},
	{Name: "s", Type: types.String},
	{Name: "bs", Type: types.Bytes},
	{Name: "dt", Type: types.Date},
	{Name: "tm", Type: types.Time(0)},
	{Name: "ts", Type: types.Timestamp(3)},
	{Name: "ltz", Type: types.TimestampLTZ(3)},
}

func kafkaTopic(t *testing.T, brokers []string, topic string, partitions int32) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(testCtx(t), partitions, -1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatal(err)
	}
}

// produce writes values, in order, to partition p of topic.
func produce(t *testing.T, brokers []string, topic string, p int32, values ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, v := range values {
		if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: topic, Partition: p, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// readKafka runs a bounded source of spec at parallelism par and returns
// each subtask's rows and error.
func readKafka(t *testing.T, spec jobgraph.KafkaSourceSpec, par int) ([][]string, []error) {
	t.Helper()
	spec.Bounded = true
	out := make([][]string, par)
	errs := make([]error, par)
	var wg sync.WaitGroup
	for sub := range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newCollector(spec.Schema)
			src := NewKafkaSource(spec)
			if err := src.Open(&operators.Context{Subtask: sub, Parallelism: par}); err != nil {
				errs[sub] = err
				return
			}
			defer src.Close()
			errs[sub] = src.Run(testCtx(t), c)
			out[sub] = c.Rows()
		}()
	}
	wg.Wait()
	return out, errs
}

func TestKafkaSourceReadsJSON(t *testing.T) {
	b := startBroker(t)
	kafkaTopic(t, b.Addrs(), "all", 1)
	produce(t, b.Addrs(), "all", 0,
		`{"b":true,"ti":-8,"si":300,"i":70000,"bi":9000000000,"f":1.5,"d":-2.25,"dec":12.3,"s":"héllo","bs":"AQID","dt":"2024-02-29","tm":"10:11:12","ts":"2024-01-02 03:04:05.678","ltz":"2024-01-02 03:04:05.1Z"}`,
		`{"b":"false","i":"42","dec":"0.055","s":{"x":[1,2]},"ts":"2024-01-02T03:04:05","tm":"23:59:59.999","d":1e300}`,
		`{"b":null,"unknown":1}`,
	)
	spec := jobgraph.KafkaSourceSpec{Topic: "all", Brokers: b.Addrs(), Schema: kafkaAllTypes, StartupMode: jobgraph.KafkaStartEarliest}
	rows, errs := readKafka(t, spec, 1)
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	want := []string{
		"+I[TRUE, -8, 300, 70000, 9000000000, 1.5, -2.25, 12.30, héllo, x'010203', 2024-02-29, 10:11:12, 2024-01-02 03:04:05.678, 2024-01-02 03:04:05.100]",
		`+I[FALSE, NULL, NULL, 42, NULL, NULL, 1.0E300, 0.06, {"x":[1,2]}, NULL, NULL, 23:59:59, 2024-01-02 03:04:05.000, NULL]`,
		"+I[NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL]",
	}
	if !equalStrings(rows[0], want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows[0], "\n"), strings.Join(want, "\n"))
	}

	// fail-on-missing-field
	spec.FailOnMissingField = true
	_, errs = readKafka(t, spec, 1)
	if errs[0] == nil || !strings.Contains(errs[0].Error(), `topic "all" partition 0 offset 1: field 'ti' is missing`) {
		t.Errorf("fail-on-missing-field: %v", errs[0])
	}
}

func TestKafkaSourceParseErrors(t *testing.T) {
	b := startBroker(t)
	kafkaTopic(t, b.Addrs(), "bad", 1)
	produce(t, b.Addrs(), "bad", 0, `{"id":1,"v":"a"}`, `not json`, `{"id":"x","v":"b"}`, `[1]`, `{"id":4,"v":"d"}`)
	schema := types.Schema{{Name: "id", Type: types.BigInt}, {Name: "v", Type: types.String}}
	spec := jobgraph.KafkaSourceSpec{Topic: "bad", Brokers: b.Addrs(), Schema: schema, StartupMode: jobgraph.KafkaStartEarliest}
	_, errs := readKafka(t, spec, 1)
	if errs[0] == nil || !strings.Contains(errs[0].Error(), `kafka: topic "bad" partition 0 offset 1: bad JSON`) {
		t.Errorf("parse error: %v", errs[0])
	}
	spec.IgnoreParseErrors = true
	rows, errs := readKafka(t, spec, 1)
	want := []string{"+I[1, a]", "+I[NULL, b]", "+I[4, d]"}
	if errs[0] != nil || !equalStrings(rows[0], want) {
		t.Errorf("ignore-parse-errors: %v %v, want %v", rows[0], errs[0], want)
	}
}

func TestKafkaSourcePartitionsAndStartup(t *testing.T) {
	b := startBroker(t)
	kafkaTopic(t, b.Addrs(), "parts", 3)
	schema := types.Schema{{Name: "id", Type: types.Int}}
	for p := range int32(3) {
		produce(t, b.Addrs(), "parts", p, `{"id":`+string(rune('0'+p))+`}`, `{"id":`+string(rune('5'+p))+`}`)
	}
	spec := jobgraph.KafkaSourceSpec{Topic: "parts", Brokers: b.Addrs(), Schema: schema, StartupMode: jobgraph.KafkaStartEarliest}
	rows, errs := readKafka(t, spec, 2)
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	// Subtask 0 reads partitions 0 and 2, subtask 1 partition 1.
	if got := sorted(rows[0]); !equalStrings(got, []string{"+I[0]", "+I[2]", "+I[5]", "+I[7]"}) {
		t.Errorf("subtask 0: %v", got)
	}
	if got := sorted(rows[1]); !equalStrings(got, []string{"+I[1]", "+I[6]"}) {
		t.Errorf("subtask 1: %v", got)
	}

	spec.StartupMode = jobgraph.KafkaStartLatest
	if rows, errs := readKafka(t, spec, 1); errs[0] != nil || len(rows[0]) != 0 {
		t.Errorf("latest-offset: %v %v", rows[0], errs[0])
	}
	spec.StartupMode = jobgraph.KafkaStartTimestamp
	spec.StartupTimestampMs = time.Now().Add(time.Hour).UnixMilli()
	if rows, errs := readKafka(t, spec, 1); errs[0] != nil || len(rows[0]) != 0 {
		t.Errorf("timestamp in the future: %v %v", rows[0], errs[0])
	}
	spec.StartupTimestampMs = 0
	if rows, errs := readKafka(t, spec, 1); errs[0] != nil || len(rows[0]) != 6 {
		t.Errorf("timestamp 0: %v %v", rows[0], errs[0])
	}

	spec.Topic = "nope"
	_, errs = readKafka(t, spec, 1)
	if errs[0] == nil || !strings.Contains(errs[0].Error(), `topic "nope" on brokers `+b.Addrs()[0]) ||
		!strings.Contains(errs[0].Error(), "does not create topics") {
		t.Errorf("missing topic: %v", errs[0])
	}
}

func TestKafkaSourceBatches(t *testing.T) {
	b := startBroker(t)
	kafkaTopic(t, b.Addrs(), "many", 1)
	vals := make([]string, 5000)
	for i := range vals {
		vals[i] = `{"id":1}`
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.DefaultProduceTopic("many"))
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]*kgo.Record, len(vals))
	for i, v := range vals {
		recs[i] = &kgo.Record{Value: []byte(v)}
	}
	if err := cl.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	c := newCollector(types.Schema{{Name: "id", Type: types.Int}})
	src := NewKafkaSource(jobgraph.KafkaSourceSpec{Topic: "many", Brokers: b.Addrs(), Bounded: true,
		Schema: types.Schema{{Name: "id", Type: types.Int}}, StartupMode: jobgraph.KafkaStartEarliest})
	if err := runSource(t, testCtx(t), src, &operators.Context{Parallelism: 1}, c); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range c.sizes {
		if n > kafkaBatchRows {
			t.Errorf("batch of %d rows", n)
		}
		total += n
	}
	if total != 5000 {
		t.Errorf("read %d rows", total)
	}
}

func TestKafkaSinkWritesJSON(t *testing.T) {
	b := startBroker(t)
	kafkaTopic(t, b.Addrs(), "out", 2)
	schema := types.Schema{
		{Name: "id", Type: types.BigInt}, {Name: "name", Type: types.String}, {Name: "amount", Type: types.Decimal(10, 2)},
		{Name: "ts", Type: types.Timestamp(3)}, {Name: "ok", Type: types.Boolean}, {Name: "x", Type: types.Double},
	}
	mem := memory.DefaultAllocator
	ib, sb, db := array.NewInt64Builder(mem), array.NewStringBuilder(mem), array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 10, Scale: 2})
	tb, bb, fb := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Nanosecond}), array.NewBooleanBuilder(mem), array.NewFloat64Builder(mem)
	ts := time.Date(2024, 5, 6, 7, 8, 9, 120e6, time.UTC).UnixNano()
	ib.AppendValues([]int64{1, 2}, nil)
	sb.Append(`a "q"`)
	sb.AppendNull()
	db.Append(decimal128.FromI64(1234))
	db.AppendNull()
	tb.Append(arrow.Timestamp(ts))
	tb.Append(arrow.Timestamp(ts - 120e6))
	bb.AppendValues([]bool{true, false}, nil)
	fb.AppendValues([]float64{1e10, 0.5}, nil)
	var cols []arrow.Array
	for _, bld := range []array.Builder{ib, sb, db, tb, bb, fb} {
		cols = append(cols, bld.NewArray())
		bld.Release()
	}
	batch := types.NewInsertBatch(schema.ArrowSchema(), cols, 2)
	for _, c := range cols {
		c.Release()
	}
	defer batch.Release()

	sink := NewKafkaSink(jobgraph.KafkaSinkSpec{Topic: "out", Brokers: b.Addrs(), Schema: schema, RoundRobin: true})
	if err := sink.Open(&operators.Context{}); err != nil {
		t.Fatal(err)
	}
	if err := sink.Process(0, batch, nil); err != nil {
		t.Fatal(err)
	}
	if err := sink.EndInput(0, nil); err != nil {
		t.Fatal(err)
	}
	_ = sink.Close()

	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.ConsumeTopics("out"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	parts := map[int32]bool{}
	ctx := testCtx(t)
	for len(got) < 2 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			got = append(got, string(r.Value))
			parts[r.Partition] = true
		})
	}
	want := []string{
		`{"id":1,"name":"a \"q\"","amount":12.34,"ts":"2024-05-06 07:08:09.12","ok":true,"x":1.0E10}`,
		`{"id":2,"name":null,"amount":null,"ts":"2024-05-06 07:08:09","ok":false,"x":0.5}`,
	}
	if !equalStrings(sorted(got), want) {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(sorted(got), "\n"), strings.Join(want, "\n"))
	}
	if len(parts) != 2 {
		t.Errorf("round-robin wrote to partitions %v", parts)
	}

	// What the sink writes, the source reads back.
	rows, errs := readKafka(t, jobgraph.KafkaSourceSpec{Topic: "out", Brokers: b.Addrs(), Schema: schema, StartupMode: jobgraph.KafkaStartEarliest}, 1)
	wantRows := []string{"+I[1, a \"q\", 12.34, 2024-05-06 07:08:09.120, TRUE, 1.0E10]", "+I[2, NULL, NULL, 2024-05-06 07:08:09.000, FALSE, 0.5]"}
	if errs[0] != nil || !equalStrings(sorted(rows[0]), wantRows) {
		t.Errorf("read back: %v %v", rows[0], errs[0])
	}

	// A missing topic fails Open, naming topic and brokers; an update row
	// fails Process.
	s2 := NewKafkaSink(jobgraph.KafkaSinkSpec{Topic: "nope", Brokers: b.Addrs(), Schema: schema})
	err = s2.Open(&operators.Context{})
	_ = s2.Close()
	if err == nil || !strings.Contains(err.Error(), `kafka: write topic "nope" on brokers `+b.Addrs()[0]) {
		t.Errorf("missing topic: %v", err)
	}
	s3 := NewKafkaSink(jobgraph.KafkaSinkSpec{Topic: "out", Brokers: b.Addrs(), Schema: testSchema})
	if err := s3.Open(&operators.Context{}); err != nil {
		t.Fatal(err)
	}
	ub := testBatch(0, 2, types.UpdateAfter)
	defer ub.Release()
	if err := s3.Process(0, ub, nil); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Errorf("update row: %v", err)
	}
	_ = s3.Close()
}

func TestKafkaOptions(t *testing.T) {
	r := &Resolver{}
	base := func(extra ...string) map[string]string {
		m := map[string]string{"connector": "kafka", "topic": "t1", "properties.bootstrap.servers": "h:9092", "format": "json"}
		for i := 0; i+1 < len(extra); i += 2 {
			if extra[i+1] == "-" {
				delete(m, extra[i])
				continue
			}
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	tbl := func(opts map[string]string, cols ...catalog.Column) *catalog.Table {
		if cols == nil {
			cols = []catalog.Column{{Name: "a", Type: types.Int}}
		}
		return &catalog.Table{Database: "db", Name: "k", Options: opts, Columns: cols}
	}
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{base(), ""},
		{base("format", "-", "value.format", "json", "properties.group.id", "g", "scan.startup.mode", "latest-offset",
			"scan.bounded.mode", "latest-offset", "json.fail-on-missing-field", "true", "sink.partitioner", "round-robin"), ""},
		{base("scan.startup.mode", "timestamp", "scan.startup.timestamp-millis", "1700000000000"), ""},
		{base("colour", "red"), "unsupported option 'colour' for connector 'kafka' (table db.k; supported: connector, topic,"},
		{base("topic", "-"), "table db.k: option 'topic' is required"},
		{base("topic", "a;b"), "option 'topic' must name one topic"},
		{base("topic-pattern", "a.*"), "option 'topic-pattern' is not supported"},
		{base("properties.bootstrap.servers", "-"), "option 'properties.bootstrap.servers' is required"},
		{base("properties.acks", "all"), "option 'properties.acks' is not supported"},
		{base("format", "-"), "option 'format' is required"},
		{base("format", "avro"), "option 'format' 'avro' is not supported (supported: json, csv, raw, debezium-json"},
		{base("scan.startup.mode", "specific-offsets"), "'specific-offsets' is not supported"},
		{base("scan.startup.mode", "timestamp"), "option 'scan.startup.timestamp-millis' must be milliseconds"},
		{base("scan.startup.mode", "soon"), "option 'scan.startup.mode' must be"},
		{base("scan.bounded.mode", "timestamp"), "option 'scan.bounded.mode' must be 'unbounded' or 'latest-offset'"},
		{base("json.ignore-parse-errors", "yes"), "option 'json.ignore-parse-errors' must be 'true' or 'false'"},
		{base("json.ignore-parse-errors", "true", "json.fail-on-missing-field", "true"), "cannot both be true"},
		{base("sink.partitioner", "fixed"), "option 'sink.partitioner' 'fixed' is not supported"},
		{base("sink.delivery-guarantee", "exactly-once", "sink.transactional-id-prefix", "app"), ""},
		{base("sink.delivery-guarantee", "none"), ""},
		{base("sink.delivery-guarantee", "exactly-once"), "option 'sink.transactional-id-prefix' is required when 'sink.delivery-guarantee' is 'exactly-once'"},
		{base("sink.delivery-guarantee", "EXACTLY_ONCE"), "option 'sink.delivery-guarantee' must be none, at-least-once or exactly-once"},
	} {
		err := r.ValidateTable(tbl(tc.opts))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.opts, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want %q", tc.opts, err, tc.want)
		}
	}
	pk := tbl(base())
	pk.PrimaryKey = []string{"a"}
	if err := r.ValidateTable(pk); err == nil || !strings.Contains(err.Error(), "PRIMARY KEY") {
		t.Errorf("primary key: %v", err)
	}
	iv := tbl(base(), catalog.Column{Name: "iv", Type: types.IntervalDayTime()})
	if err := r.ValidateTable(iv); err == nil || !strings.Contains(err.Error(), "column iv: the 'json' format does not support") {
		t.Errorf("interval column: %v", err)
	}

	tb := tbl(base("scan.bounded.mode", "latest-offset"))
	spec, maxPar, err := r.SourceSpec(tb, false)
	ss, ok := spec.(*jobgraph.KafkaSourceSpec)
	if err != nil || !ok || maxPar != 0 ||
		!ss.Bounded || ss.Topic != "t1" || ss.Brokers[0] != "h:9092" || ss.StartupMode != jobgraph.KafkaStartEarliest {
		t.Errorf("SourceSpec = %#v %d %v", spec, maxPar, err)
	}
	spec, err = r.SinkSpec(tb)
	if err != nil || spec.Kind() != jobgraph.KindKafkaSink {
		t.Fatalf("SinkSpec = %#v %v", spec, err)
	}
	if _, err := operators.NewOperator(spec); err != nil || !operators.IsSource(jobgraph.KindKafkaSource) {
		t.Errorf("kinds not registered: %v", err)
	}
	if err := r.CreateTable(context.Background(), tb); err != nil {
		t.Errorf("CreateTable of a kafka table: %v", err)
	}
}

// TestKafkaSourceMetadata: METADATA columns read each record's topic,
// partition, offset, timestamp, timestamp type, leader epoch and headers,
// placed among the value's columns in the table's order; a record the
// format skips makes no row, so the columns stay aligned.
func TestKafkaSourceMetadata(t *testing.T) {
	b := startBroker(t)
	kafkaTopic(t, b.Addrs(), "meta", 2)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ts := time.UnixMilli(1_700_000_000_123)
	for _, r := range []*kgo.Record{
		{Topic: "meta", Partition: 1, Value: []byte(`{"v":"a"}`), Timestamp: ts,
			Headers: []kgo.RecordHeader{{Key: "k", Value: []byte("x")}, {Key: "n"}, {Key: "k", Value: []byte("y")}}},
		{Topic: "meta", Partition: 1, Value: []byte(`not json`), Timestamp: ts},
		{Topic: "meta", Partition: 1, Value: []byte(`{"v":"b"}`), Timestamp: ts.Add(time.Second)},
	} {
		if err := cl.ProduceSync(testCtx(t), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	tbl := &catalog.Table{Database: "default_database", Name: "m", Options: map[string]string{
		"connector": "kafka", "topic": "meta", "properties.bootstrap.servers": strings.Join(b.Addrs(), ","),
		"format": "json", "json.ignore-parse-errors": "true"},
		Columns: []catalog.Column{
			{Name: "off", Type: types.BigInt, Metadata: "offset", Virtual: true},
			{Name: "v", Type: types.String},
			{Name: "topic", Type: types.String, Metadata: "topic", Virtual: true},
			{Name: "p", Type: types.Int, Metadata: "partition", Virtual: true},
			{Name: "ts", Type: types.TimestampLTZ(3), Metadata: "timestamp"},
			{Name: "tt", Type: types.String, Metadata: "timestamp-type", Virtual: true},
			{Name: "h", Type: types.Map(types.String, types.Bytes), Metadata: "headers", Virtual: true},
		}}
	kt, err := kafkaTableFor(tbl)
	if err != nil {
		t.Fatal(err)
	}
	if err := kt.source.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(kt.sink.Schema.Names(), ","); got != "v" {
		t.Errorf("sink writes %s, want v", got)
	}
	rows, errs := readKafka(t, kt.source, 1)
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	want := []string{
		"+I[0, a, meta, 1, 2023-11-14 22:13:20.123, CreateTime, {k=x'79', n=null}]",
		"+I[2, b, meta, 1, 2023-11-14 22:13:21.123, CreateTime, {}]",
	}
	if !equalStrings(rows[0], want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows[0], "\n"), strings.Join(want, "\n"))
	}
}
