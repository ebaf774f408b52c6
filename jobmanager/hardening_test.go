package jobmanager_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/braidflow/braid/client"
)

// execErr runs sql and returns its error, failing the test if there is
// none.
func execErr(t *testing.T, s *client.Session, sql string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := s.Execute(ctx, sql, false, newRows())
	if err == nil {
		t.Fatalf("%s: no error", sql)
	}
	return err
}

// TestDatagenNaNRefused: NaN and infinite datagen options are refused
// with the option's name when the table is created (they once passed the
// range checks and crashed the job manager at every query over the table),
// and the job manager keeps serving.
func TestDatagenNaNRefused(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	for _, opt := range []string{"'rows-per-second' = 'NaN'", "'fields.x.null-rate' = 'NaN'", "'rows-per-second' = 'Infinity'"} {
		err := execErr(t, s, "CREATE TABLE g (x INT) WITH ('connector' = 'datagen', "+opt+");")
		if name := strings.Split(opt, "'")[1]; !strings.Contains(err.Error(), "'"+name+"'") {
			t.Errorf("%s: error %v does not name the option", opt, err)
		}
	}
	equal(t, "after the refusals", run(t, s, "SELECT 1 + 1;").rows, []string{"+I[2]"})
}

// TestHealthAndReadiness: /healthz is live once started; /readyz lists its
// checks and fails (503) until a task manager registered, unless that check
// is excluded.
func TestHealthAndReadiness(t *testing.T) {
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	c := startCluster(t, 0)
	base := "http://" + c.jm.HTTPAddr()
	if code, body := get(base + "/healthz"); code != 200 || body != "ok live\n" {
		t.Fatalf("/healthz: %d %q", code, body)
	}
	code, body := get(base + "/readyz")
	if code != 503 || !strings.Contains(body, "fail taskmanagers: no task manager registered") ||
		!strings.Contains(body, "ok etcd") || !strings.Contains(body, "ok broker") || !strings.Contains(body, "ok leader") {
		t.Fatalf("/readyz without task managers: %d %q", code, body)
	}
	if code, body := get(base + "/readyz?exclude=taskmanagers"); code != 200 || strings.Contains(body, "taskmanagers") {
		t.Fatalf("/readyz?exclude=taskmanagers: %d %q", code, body)
	}
	c2 := startCluster(t, 1)
	if code, body := get("http://" + c2.jm.HTTPAddr() + "/readyz"); code != 200 || !strings.Contains(body, "ok taskmanagers") {
		t.Fatalf("/readyz with a task manager: %d %q", code, body)
	}
	c2.jm.Close()
	if _, err := http.Get("http://" + c2.jm.HTTPAddr() + "/healthz"); err == nil {
		t.Fatal("/healthz answers after Close")
	}
}

// TestMaxStringBytesOption: a session sets the limit on the strings
// functions build (braid.exec.max-string-bytes, in Flink's memory-size
// syntax); a value over it fails the query naming the option, one under
// it is computed, and a bad setting is refused naming the option.
func TestMaxStringBytesOption(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	// 'aaaa' with each a replaced by 500 b's: 2,000 bytes.
	query := "SELECT CHAR_LENGTH(REPLACE(s, 'a', '" + strings.Repeat("b", 500) + "')) FROM (VALUES ('aaaa')) AS t(s);"
	equal(t, "under the default limit", run(t, s, query).rows, []string{"+I[2000]"})
	run(t, s, "SET 'braid.exec.max-string-bytes' = '1kb';")
	if err := execErr(t, s, query); !strings.Contains(err.Error(), "braid.exec.max-string-bytes") || !strings.Contains(err.Error(), "REPLACE") {
		t.Errorf("over a 1kb limit: %v, want an error naming REPLACE and the option", err)
	}
	run(t, s, "SET 'braid.exec.max-string-bytes' = '4 KB';")
	equal(t, "under a 4 KB limit", run(t, s, query).rows, []string{"+I[2000]"})
	for _, bad := range []string{"0", "-5", "2gb", "lots"} {
		err := execErr(t, s, "SET 'braid.exec.max-string-bytes' = '"+bad+"';")
		if !strings.Contains(err.Error(), "'braid.exec.max-string-bytes'") {
			t.Errorf("SET to %q: %v, want an error naming the option", bad, err)
		}
	}
}
