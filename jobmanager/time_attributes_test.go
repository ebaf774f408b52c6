package jobmanager_test

import (
	"strings"
	"testing"
	"time"
)

// TestTimeAttributes: DESCRIBE marks the rowtime and proctime attributes
// as Flink does; a PROCTIME() column reads the processing time;
// CURRENT_WATERMARK gives the watermark the calc has seen (NULL before
// the first), so it can drop late rows; and its argument must be a
// rowtime attribute, with Flink's messages.
func TestTimeAttributes(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	run(t, s, `CREATE TABLE t (k STRING, ts TIMESTAMP(3), pt AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND);
		INSERT INTO t VALUES ('a', TIMESTAMP '2024-01-01 00:00:10'), ('b', TIMESTAMP '2024-01-01 00:00:20');
		INSERT INTO t VALUES ('c', TIMESTAMP '2024-01-01 00:00:05'), ('d', TIMESTAMP '2024-01-01 00:00:30');`)
	equal(t, "DESCRIBE", run(t, s, "DESCRIBE t;").rows, []string{
		"+I[k, STRING, TRUE, , , ]",
		"+I[ts, TIMESTAMP(3) *ROWTIME*, TRUE, , , ts - INTERVAL '1' SECOND]",
		"+I[pt, TIMESTAMP_LTZ(3) *PROCTIME*, FALSE, , AS PROCTIME(), ]",
	})

	before := time.Now().Add(-time.Second).UTC().Format("2006-01-02 15:04:05")
	got := run(t, s, "SELECT k, CAST(pt AS STRING) FROM t WHERE k = 'a';").rows
	if len(got) != 1 || !strings.HasPrefix(got[0], "+I[a, ") || got[0][6:25] < before {
		t.Errorf("PROCTIME: %v, want a time after %s", got, before)
	}

	// Each INSERT is one batch of the table's source: the first batch's
	// rows see no watermark yet, the second's the first one's, 00:00:19.
	equal(t, "CURRENT_WATERMARK", run(t, s, "SELECT k, CURRENT_WATERMARK(ts) FROM t;").rows, []string{
		"+I[a, NULL]", "+I[b, NULL]", "+I[c, 2024-01-01 00:00:19.000]", "+I[d, 2024-01-01 00:00:19.000]",
	})
	equal(t, "late rows dropped", run(t, s, "SELECT k FROM t WHERE CURRENT_WATERMARK(ts) IS NULL OR ts > CURRENT_WATERMARK(ts);").rows,
		[]string{"+I[a]", "+I[b]", "+I[d]"})
	equal(t, "through a subquery", run(t, s, "SELECT k FROM (SELECT k, ts FROM t) AS s WHERE ts < CURRENT_WATERMARK(ts);").rows,
		[]string{"+I[c]"})

	for _, tc := range []struct{ sql, want string }{
		{"SELECT CURRENT_WATERMARK(pt) FROM t;", "line 1, column 26: The argument of CURRENT_WATERMARK() must be a rowtime attribute, but was 'TIMESTAMP_LTZ(3) NOT NULL'."},
		{"SELECT CURRENT_WATERMARK(ts + INTERVAL '1' SECOND) FROM t;", "line 1, column 26: The argument of CURRENT_WATERMARK() must be a rowtime attribute, but was 'TIMESTAMP(3)'."},
		{"SELECT CURRENT_WATERMARK(k) FROM t;", "line 1, column 8: CURRENT_WATERMARK() must be called with a single rowtime attribute argument, but 'STRING' cannot be a time attribute."},
	} {
		err := execErr(t, s, tc.sql)
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.sql, err, tc.want)
		}
	}
}
