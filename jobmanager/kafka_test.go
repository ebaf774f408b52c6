package jobmanager_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaConnectorEndToEnd: 'kafka' tables with the 'json' format on the
// cluster's own broker: INSERT from VALUES, a bounded SELECT back (records
// produced by another client included), a join with a managed table, the
// error of updating input, and topics CREATE TABLE creates.
func TestKafkaConnectorEndToEnd(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	brokers := cl.JobManager().Brokers()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kc, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	if _, err := kadm.NewClient(kc).CreateTopic(ctx, 2, -1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	if err := kc.ProduceSync(ctx, &kgo.Record{Topic: "orders",
		Value: []byte(`{"id":9,"user_id":2,"amount":"99.5","ts":"2025-05-01T12:00:00","note":"external"}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	s := openSession(t, c)
	with := fmt.Sprintf(`'connector' = 'kafka', 'topic' = 'orders', 'properties.bootstrap.servers' = '%s',
		'format' = 'json', 'scan.bounded.mode' = 'latest-offset'`, strings.Join(brokers, ","))
	run(t, s, `SET 'parallelism.default' = '2';
CREATE TABLE orders (id INT, user_id INT, amount DECIMAL(10, 2), ts TIMESTAMP(3)) WITH (`+with+`);
CREATE TABLE users (id INT, name STRING);
INSERT INTO users VALUES (1, 'ann'), (2, 'bob');
INSERT INTO orders VALUES
	(1, 1, 10.25, TIMESTAMP '2025-05-01 10:00:00.5'),
	(2, 1, 3, TIMESTAMP '2025-05-01 11:00:00'),
	(3, 3, NULL, NULL);`)

	equal(t, "select", run(t, s, "SELECT * FROM orders;").sorted(), []string{
		"+I[1, 1, 10.25, 2025-05-01 10:00:00.500]",
		"+I[2, 1, 3.00, 2025-05-01 11:00:00.000]",
		"+I[3, 3, NULL, NULL]",
		"+I[9, 2, 99.50, 2025-05-01 12:00:00.000]",
	})
	equal(t, "join", run(t, s, "SELECT o.id, u.name, o.amount FROM orders o JOIN users u ON o.user_id = u.id;").sorted(), []string{
		"+I[1, ann, 10.25]",
		"+I[2, ann, 3.00]",
		"+I[9, bob, 99.50]",
	})

	err = s.Execute(context.Background(), `INSERT INTO orders SELECT user_id, COUNT(*), CAST(NULL AS DECIMAL(10, 2)), CAST(NULL AS TIMESTAMP(3)) FROM orders GROUP BY user_id;`, false, newRows())
	if err == nil || !strings.Contains(err.Error(), "Table sink 'default_catalog.default_database.orders' doesn't support consuming update changes") {
		t.Errorf("updating input into a kafka table: %v", err)
	}

	// On the cluster's own broker CREATE TABLE creates a missing topic,
	// with 'topic.partitions' partitions (default 1).
	run(t, s, `CREATE TABLE fresh (id INT) WITH ('connector' = 'kafka', 'topic' = 'fresh', 'properties.bootstrap.servers' = '`+
		brokers[0]+`', 'format' = 'json', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE fresh3 (id INT) WITH ('connector' = 'kafka', 'topic' = 'fresh3', 'properties.bootstrap.servers' = '`+
		brokers[0]+`', 'format' = 'json', 'scan.bounded.mode' = 'latest-offset', 'topic.partitions' = '3');
INSERT INTO fresh3 VALUES (1), (2);`)
	if got := run(t, s, "SELECT * FROM fresh;").sorted(); len(got) != 0 {
		t.Errorf("a new topic holds %v", got)
	}
	equal(t, "fresh3", run(t, s, "SELECT * FROM fresh3;").sorted(), []string{"+I[1]", "+I[2]"})
	details, err := kadm.NewClient(kc).ListTopics(ctx, "fresh", "fresh3")
	if err != nil {
		t.Fatal(err)
	}
	if n, n3 := len(details["fresh"].Partitions), len(details["fresh3"].Partitions); n != 1 || n3 != 3 {
		t.Errorf("partitions: fresh %d, fresh3 %d; want 1 and 3", n, n3)
	}
}

// TestKafkaIdlePartition: a Kafka table of two partitions read at
// parallelism 2, with every record in partition 0. With
// table.exec.source.idle-timeout the subtask reading the empty partition
// goes idle and the window closes on the other's watermark; without it the
// empty partition would hold the watermark at its start and no window
// would ever fire.
func TestKafkaIdlePartition(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	brokers := cl.JobManager().Brokers()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kc, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	if _, err := kadm.NewClient(kc).CreateTopic(ctx, 2, -1, nil, "clicks"); err != nil {
		t.Fatal(err)
	}
	for _, ts := range []string{"10:00:01", "10:00:02", "10:00:25"} {
		if err := kc.ProduceSync(ctx, &kgo.Record{Topic: "clicks", Partition: 0,
			Value: []byte(`{"ts":"2025-05-01T` + ts + `"}`)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	s := openSession(t, c)
	run(t, s, fmt.Sprintf(`SET 'parallelism.default' = '2';
SET 'table.exec.source.idle-timeout' = '200 ms';
CREATE TABLE clicks (ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'kafka', 'topic' = 'clicks',
	'properties.bootstrap.servers' = '%s', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset');`, strings.Join(brokers, ",")))
	r := newRows()
	qctx, qcancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- s.Execute(qctx, `SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY window_start, window_end;`, false, r)
	}()
	waitRows(t, r, 1)
	equal(t, "the first window", r.sorted(), []string{"+I[2025-05-01 10:00:00.000, 2]"})
	qcancel()
	<-done
}

// TestKafkaMetadataColumns: METADATA columns read each record's partition,
// offset and timestamp (here the rowtime, with a watermark on it, and a
// window over it), and a table whose metadata column is not VIRTUAL cannot
// be written yet.
func TestKafkaMetadataColumns(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	brokers := cl.JobManager().Brokers()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kc, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	if _, err := kadm.NewClient(kc).CreateTopic(ctx, 2, -1, nil, "pings"); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	for i, r := range []struct {
		p   int32
		sec int
	}{{0, 1}, {1, 2}, {0, 12}, {1, 25}} {
		if err := kc.ProduceSync(ctx, &kgo.Record{Topic: "pings", Partition: r.p, Timestamp: base.Add(time.Duration(r.sec) * time.Second),
			Value: []byte(fmt.Sprintf(`{"id":%d}`, i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	s := openSession(t, c)
	run(t, s, fmt.Sprintf(`SET 'table.local-time-zone' = 'UTC';
CREATE TABLE pings (
  id INT,
  part INT METADATA FROM 'partition' VIRTUAL,
  off BIGINT METADATA FROM 'offset' VIRTUAL,
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  WATERMARK FOR ts AS ts
) WITH ('connector' = 'kafka', 'topic' = 'pings', 'properties.bootstrap.servers' = '%s',
  'format' = 'json', 'scan.bounded.mode' = 'latest-offset');`, strings.Join(brokers, ",")))
	equal(t, "select", run(t, s, "SELECT id, part, off, ts FROM pings;").sorted(), []string{
		"+I[0, 0, 0, 2025-05-01 10:00:01.000]",
		"+I[1, 1, 0, 2025-05-01 10:00:02.000]",
		"+I[2, 0, 1, 2025-05-01 10:00:12.000]",
		"+I[3, 1, 1, 2025-05-01 10:00:25.000]",
	})
	equal(t, "window", run(t, s, `SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE pings, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY window_start, window_end;`).sorted(), []string{
		"+I[2025-05-01 10:00:00.000, 2]",
		"+I[2025-05-01 10:00:10.000, 1]",
		"+I[2025-05-01 10:00:20.000, 1]",
	})
	err = s.Execute(context.Background(), `INSERT INTO pings SELECT 9, TO_TIMESTAMP_LTZ(0, 3);`, false, newRows())
	if err == nil || !strings.Contains(err.Error(), "writing the METADATA column ts of default_catalog.default_database.pings") {
		t.Errorf("insert into a table with a persisted METADATA column: %v", err)
	}
}

// TestUpsertKafka: an updating query into an 'upsert-kafka' table writes
// one record per change keyed by the primary key (JSON); reading the table
// back yields its changelog normalized by key, so the materialized result
// is the query's final one, and a tombstone deletes its key. With EXCEPT_KEY and a key prefix the value holds the other columns
// only. An upsert-kafka table is also a versioned table for an event-time
// temporal join.
func TestUpsertKafka(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	brokers := cl.JobManager().Brokers()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kc, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	for _, topic := range []string{"totals", "rates"} {
		if _, err := kadm.NewClient(kc).CreateTopic(ctx, 2, -1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	s := openSession(t, c)
	servers := strings.Join(brokers, ",")
	run(t, s, fmt.Sprintf(`SET 'parallelism.default' = '2';
CREATE TABLE orders (cust STRING, amount INT, PRIMARY KEY (cust, amount) NOT ENFORCED);
INSERT INTO orders VALUES ('a', 1), ('a', 2), ('b', 5), ('c', 7);
CREATE TABLE totals (k_cust STRING, total INT, n BIGINT, PRIMARY KEY (k_cust) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'totals', 'properties.bootstrap.servers' = '%s',
  'key.format' = 'json', 'key.fields-prefix' = 'k_', 'value.format' = 'json', 'value.fields-include' = 'EXCEPT_KEY',
  'scan.bounded.mode' = 'latest-offset');
INSERT INTO totals SELECT cust, SUM(amount), COUNT(*) FROM orders GROUP BY cust;`, servers))
	equal(t, "read back", materializeRows(t, run(t, s, "SELECT * FROM totals;").rows), []string{
		"[a, 3, 2]", "[b, 5, 1]", "[c, 7, 1]",
	})

	// The records: keys without the prefix, values without the key.
	var got []string
	kr, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics("totals"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer kr.Close()
	for len(got) < 3 {
		fs := kr.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("records so far: %v", got)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Key)+" "+string(r.Value)) })
	}
	sort.Strings(got)
	last := map[string]string{}
	for _, g := range got {
		k, v, _ := strings.Cut(g, " ")
		last[k] = v
	}
	if last[`{"cust":"a"}`] != `{"total":3,"n":2}` || last[`{"cust":"c"}`] != `{"total":7,"n":1}` {
		t.Errorf("records: %q", got)
	}

	// A tombstone from another writer deletes its key.
	if err := kc.ProduceSync(ctx, &kgo.Record{Topic: "totals", Key: []byte(`{"cust":"c"}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	equal(t, "after a tombstone", materializeRows(t, run(t, s, "SELECT * FROM totals;").rows), []string{
		"[a, 3, 2]", "[b, 5, 1]",
	})

	// Currency rates as a versioned table (value.fields-include ALL).
	run(t, s, fmt.Sprintf(`CREATE TABLE rates (currency STRING, rate DECIMAL(5, 2), ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts, PRIMARY KEY (currency) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'rates', 'properties.bootstrap.servers' = '%s',
  'key.format' = 'json', 'value.format' = 'json', 'scan.bounded.mode' = 'latest-offset');
INSERT INTO rates VALUES ('EUR', 1.10, TIMESTAMP '2025-05-01 10:00:00'), ('EUR', 1.20, TIMESTAMP '2025-05-01 11:00:00'),
  ('USD', 1.00, TIMESTAMP '2025-05-01 09:00:00'), ('EUR', 1.30, TIMESTAMP '2025-05-01 23:00:00'), ('USD', 1.00, TIMESTAMP '2025-05-01 23:00:00');
CREATE TABLE tx (id INT, currency STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3), WATERMARK FOR ts AS ts);
INSERT INTO tx VALUES (1, 'EUR', 10, TIMESTAMP '2025-05-01 10:30:00'), (2, 'EUR', 10, TIMESTAMP '2025-05-01 11:30:00'),
  (3, 'USD', 5, TIMESTAMP '2025-05-01 12:00:00'), (4, 'EUR', 1, TIMESTAMP '2025-05-01 09:00:00');`, servers))
	equal(t, "temporal join", run(t, s, `SELECT tx.id, tx.amount * r.rate FROM tx
JOIN rates FOR SYSTEM_TIME AS OF tx.ts AS r ON tx.currency = r.currency;`).sorted(), []string{
		"+I[1, 11.0000]", "+I[2, 12.0000]", "+I[3, 5.0000]",
	})
}
