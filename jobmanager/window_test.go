package jobmanager_test

import (
	"context"
	"strings"
	"testing"
)

// clicksSQL fills a managed table with a watermark, in event-time order.
const clicksSQL = `SET 'parallelism.default' = '4';
CREATE TABLE clicks (user_name STRING, url STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND);
INSERT INTO clicks VALUES
	('a', '/1', TIMESTAMP '2025-05-01 10:01:00'),
	('a', '/2', TIMESTAMP '2025-05-01 10:04:00'),
	('b', '/1', TIMESTAMP '2025-05-01 10:09:59.999'),
	('a', '/3', TIMESTAMP '2025-05-01 10:12:00'),
	('b', '/2', TIMESTAMP '2025-05-01 10:25:00');`

// TestWindowAggregateEndToEnd: window aggregates over a bounded managed
// table with a watermark; the end-of-input watermark fires every window,
// the result is insert-only and goes into an append-only table.
func TestWindowAggregateEndToEnd(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	run(t, s, clicksSQL)

	r := run(t, s, `SELECT window_start, window_end, user_name, COUNT(*) AS cnt, MAX(url) AS last_url
		FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' MINUTES))
		GROUP BY window_start, window_end, user_name;`)
	equal(t, "tumble", r.sorted(), []string{
		"+I[2025-05-01 10:00:00.000, 2025-05-01 10:10:00.000, a, 2, /2]",
		"+I[2025-05-01 10:00:00.000, 2025-05-01 10:10:00.000, b, 1, /1]",
		"+I[2025-05-01 10:10:00.000, 2025-05-01 10:20:00.000, a, 1, /3]",
		"+I[2025-05-01 10:20:00.000, 2025-05-01 10:30:00.000, b, 1, /2]",
	})
	var typs []string
	for _, col := range r.cols {
		typs = append(typs, col.Name+" "+col.Type.String())
	}
	equal(t, "types", typs, []string{"window_start TIMESTAMP(3) NOT NULL", "window_end TIMESTAMP(3) NOT NULL",
		"user_name STRING", "cnt BIGINT NOT NULL", "last_url STRING"})

	equal(t, "hop", run(t, s, `SELECT window_start, window_end, COUNT(*)
		FROM TABLE(HOP(DATA => TABLE clicks, TIMECOL => DESCRIPTOR(ts), SLIDE => INTERVAL '5' MINUTES, SIZE => INTERVAL '10' MINUTES))
		GROUP BY window_start, window_end;`).sorted(), []string{
		"+I[2025-05-01 09:55:00.000, 2025-05-01 10:05:00.000, 2]",
		"+I[2025-05-01 10:00:00.000, 2025-05-01 10:10:00.000, 3]",
		"+I[2025-05-01 10:05:00.000, 2025-05-01 10:15:00.000, 2]",
		"+I[2025-05-01 10:10:00.000, 2025-05-01 10:20:00.000, 1]",
		"+I[2025-05-01 10:20:00.000, 2025-05-01 10:30:00.000, 1]",
		"+I[2025-05-01 10:25:00.000, 2025-05-01 10:35:00.000, 1]",
	})

	equal(t, "cumulate", run(t, s, `SELECT window_start, window_end, window_time, COUNT(*)
		FROM TABLE(CUMULATE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' MINUTES, INTERVAL '30' MINUTES))
		GROUP BY window_start, window_end, window_time;`).sorted(), []string{
		"+I[2025-05-01 10:00:00.000, 2025-05-01 10:10:00.000, 2025-05-01 10:09:59.999, 3]",
		"+I[2025-05-01 10:00:00.000, 2025-05-01 10:20:00.000, 2025-05-01 10:19:59.999, 4]",
		"+I[2025-05-01 10:00:00.000, 2025-05-01 10:30:00.000, 2025-05-01 10:29:59.999, 5]",
	})

	// Insert-only: an append-only managed table takes it.
	run(t, s, `CREATE TABLE per_window (ws TIMESTAMP(3), k STRING, n BIGINT);
		INSERT INTO per_window SELECT window_start, user_name, COUNT(*)
		FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' HOUR)) GROUP BY window_start, window_end, user_name;`)
	equal(t, "into an append-only table", run(t, s, "SELECT * FROM per_window;").sorted(), []string{
		"+I[2025-05-01 10:00:00.000, a, 3]",
		"+I[2025-05-01 10:00:00.000, b, 2]",
	})

	err := s.Execute(context.Background(), `SELECT window_start, window_end, COUNT(*)
		FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(url), INTERVAL '10' MINUTES)) GROUP BY window_start, window_end;`, false, newRows())
	if err == nil || !strings.Contains(err.Error(), "line 2, column 46: The window function requires the timecol is a time attribute type, but is STRING.") {
		t.Fatalf("non-rowtime DESCRIPTOR column: %v", err)
	}
}

// TestNullRowtimeFailsTheJob: Flink's message for a NULL rowtime.
func TestNullRowtimeFailsTheJob(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	run(t, s, `CREATE TABLE ev (id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts);
		INSERT INTO ev VALUES (1, CAST(NULL AS TIMESTAMP(3)));`)
	err := s.Execute(context.Background(), "SELECT id FROM ev;", false, newRows())
	if err == nil || !strings.Contains(err.Error(), "RowTime field should not be null, please convert it to a non-null long value.") {
		t.Fatalf("got %v", err)
	}
}
