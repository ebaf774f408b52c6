package jobmanager_test

import (
	"context"
	"strings"
	"testing"
)

// TestTemporalJoinEndToEnd: event-time temporal joins of an append-only
// table against a versioned upsert table at parallelism 4. Each rate row
// of a currency is a new version (ChangelogNormalize turns it into -U/+U);
// each transaction joins the version valid at its time, and a LEFT join
// pads the ones before any version. The output is insert-only, so it goes
// into an append-only table.
func TestTemporalJoinEndToEnd(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	run(t, s, `SET 'parallelism.default' = '4';
CREATE TABLE rates (currency STRING, rate DECIMAL(6,4), rate_time TIMESTAMP(3),
	WATERMARK FOR rate_time AS rate_time - INTERVAL '15' SECOND, PRIMARY KEY (currency) NOT ENFORCED);
CREATE TABLE tx (id STRING, currency STRING, total DECIMAL(10,2), tx_time TIMESTAMP(3),
	WATERMARK FOR tx_time AS tx_time - INTERVAL '30' SECOND);
INSERT INTO rates VALUES
	('USD', 0.9000, TIMESTAMP '2024-01-01 20:00:00'),
	('GBP', 1.1500, TIMESTAMP '2024-01-01 20:00:00'),
	('USD', 0.9100, TIMESTAMP '2024-01-01 20:16:11'),
	('USD', 0.9200, TIMESTAMP '2024-01-01 20:35:22');
INSERT INTO tx VALUES
	('t1', 'USD', 100.00, TIMESTAMP '2024-01-01 20:10:00'),
	('t2', 'USD', 100.00, TIMESTAMP '2024-01-01 20:16:11'),
	('t3', 'GBP',  50.00, TIMESTAMP '2024-01-01 20:20:00'),
	('t4', 'USD',  10.00, TIMESTAMP '2024-01-01 20:40:00'),
	('t5', 'EUR',   5.00, TIMESTAMP '2024-01-01 20:30:00'),
	('t6', 'GBP',  20.00, TIMESTAMP '2024-01-01 19:59:59');`)

	equal(t, "inner", run(t, s, `SELECT t.id, r.rate FROM tx t
		JOIN rates FOR SYSTEM_TIME AS OF t.tx_time AS r ON t.currency = r.currency;`).sorted(),
		[]string{"+I[t1, 0.9000]", "+I[t2, 0.9100]", "+I[t3, 1.1500]", "+I[t4, 0.9200]"})

	const left = `SELECT t.id, r.rate FROM tx t
		LEFT JOIN rates FOR SYSTEM_TIME AS OF t.tx_time r ON t.currency = r.currency AND t.total > 20`
	want := []string{"+I[t1, 0.9000]", "+I[t2, 0.9100]", "+I[t3, 1.1500]", "+I[t4, NULL]", "+I[t5, NULL]", "+I[t6, NULL]"}
	equal(t, "left with a residual", run(t, s, left+";").sorted(), want)

	run(t, s, `CREATE TABLE converted (id STRING, rate DECIMAL(6,4));
		INSERT INTO converted `+left+`;`)
	equal(t, "into an append-only table", run(t, s, "SELECT * FROM converted;").sorted(), want)

	err := s.Execute(context.Background(), `SELECT t.id FROM tx t JOIN converted FOR SYSTEM_TIME AS OF t.tx_time c ON t.id = c.id;`, false, newRows())
	if err == nil || !strings.Contains(err.Error(), "Temporal Table Join requires primary key in versioned table") || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("no primary key: %v", err)
	}
}
