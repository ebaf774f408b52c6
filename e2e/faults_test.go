package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// faultKills is how many times TestFaultsExactlyOnce kills a task manager:
// BRAID_FAULT_KILLS, 5 by default (make test-faults runs 50).
func faultKills(t *testing.T) int {
	n := 5
	if v := os.Getenv("BRAID_FAULT_KILLS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 0 {
			t.Fatalf("BRAID_FAULT_KILLS=%q: want a count", v)
		}
	}
	return n
}

// TestFaultsExactlyOnce runs a regular join and a GROUP BY at parallelism 4
// over a 4-partition managed table of 1M keyed events, on two task-manager
// processes, with a checkpoint every second and exactly-once managed-table
// sinks, while a task manager is SIGKILLed at random moments and started
// again. The committed output must equal a batch computation over the same
// input: every id joined exactly once, every group's count and sum exact.
func TestFaultsExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a multi-process cluster; runs without -short (make test)")
	}
	const n = 1_000_000
	kills := faultKills(t)
	cl := startProcessCluster(t, 2, 4)

	load := fmt.Sprintf(`
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '%[1]d', 'rows-per-second' = '100000000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '%[1]d');
CREATE TABLE events (id BIGINT, k BIGINT) WITH ('managed.partitions' = '4');
CREATE TABLE joined (id BIGINT, k BIGINT);
CREATE TABLE counts (k BIGINT, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED);
INSERT INTO events SELECT id, id %% 1000 FROM gen;
`, n)
	database := fmt.Sprintf("faults_%d", time.Now().UnixNano())
	out, stderr, err := braid(t, 2*time.Minute, "sql", "--endpoint", cl.endpoint, "-f",
		scriptFile(t, fmt.Sprintf("CREATE DATABASE %[1]s;\nUSE %[1]s;\n%s", database, load)))
	if err != nil {
		t.Fatalf("loading: %v\n%s", err, stderr)
	}
	ids := jobIDLine.FindAllStringSubmatch(out+stderr, -1)
	waitJob(t, cl.endpoint, ids[len(ids)-1][1], "FINISHED", 2*time.Minute)

	// Each INSERT runs from its own client, which waits for its end.
	settings := `
SET 'execution.checkpointing.interval' = '1s';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '1000';
SET 'restart-strategy.fixed-delay.delay' = '100ms';
SET 'parallelism.default' = '4';
`
	inserts := map[string]string{
		"joined": fmt.Sprintf("INSERT INTO %[1]s.joined SELECT a.id, a.k FROM %[1]s.events a JOIN %[1]s.events b ON a.id = b.id;", database),
		"counts": fmt.Sprintf("INSERT INTO %[1]s.counts SELECT k, COUNT(*), SUM(id) FROM %[1]s.events GROUP BY k;", database),
	}
	clients := make(chan error, len(inserts))
	for _, sql := range inserts {
		path := scriptFile(t, settings+sql)
		go func() {
			_, stderr, err := braid(t, 10*time.Minute, "sql", "--endpoint", cl.endpoint, "-f", path)
			if err != nil {
				err = fmt.Errorf("%w\n%s", err, stderr)
			}
			clients <- err
		}()
	}
	joinJob := waitJobNamed(t, cl.endpoint, "insert-into_default_catalog."+database+".joined", time.Minute)
	aggJob := waitJobNamed(t, cl.endpoint, "insert-into_default_catalog."+database+".counts", time.Minute)

	start := time.Now()
	rng := rand.New(rand.NewPCG(uint64(start.UnixNano()), 1))
	killed := 0
	for ; killed < kills; killed++ {
		if jobStatus(t, cl.endpoint, joinJob) == "FINISHED" {
			break
		}
		waitRunning(t, cl.endpoint, 2*time.Minute, joinJob, aggJob)
		time.Sleep(time.Duration(300+rng.IntN(1200)) * time.Millisecond)
		victim := rng.IntN(2)
		t.Logf("%s: kill %d, task manager %d", time.Since(start).Round(time.Millisecond), killed+1, victim)
		cl.restartTaskManager(victim)
	}
	waitJob(t, cl.endpoint, joinJob, "FINISHED", 5*time.Minute)
	waitJob(t, cl.endpoint, aggJob, "FINISHED", 5*time.Minute)
	for range inserts {
		if err := <-clients; err != nil {
			t.Errorf("a client's INSERT did not succeed: %v", err)
		}
	}
	t.Logf("%s: both jobs finished after %d kills", time.Since(start).Round(time.Millisecond), killed)
	restarts := cl.metric("braid_jobmanager_job_restarts_total")
	completed := cl.metric(`braid_jobmanager_checkpoints_total{outcome="completed"}`)
	t.Logf("job restarts: %v, checkpoints completed: %v", restarts, completed)
	if kills > 0 && (restarts < 1 || completed < 1) {
		t.Errorf("after %d kills: %v restarts and %v completed checkpoints; want both above 0", kills, restarts, completed)
	}
	if killed < kills {
		t.Errorf("the join finished after %d kills, before the %d asked for: make the input larger", killed, kills)
	}

	check := fmt.Sprintf(`
SELECT COUNT(*) AS n, SUM(id) AS s, MIN(id) AS lo, MAX(id) AS hi FROM %[1]s.joined;
SELECT COUNT(*) AS groups, SUM(c) AS n, SUM(s) AS s FROM %[1]s.counts;
`, database)
	out, stderr, err = braid(t, 2*time.Minute, "sql", "--endpoint", cl.endpoint, "--format", "tsv", "-f", scriptFile(t, check))
	if err != nil {
		t.Fatalf("checking: %v\n%s", err, stderr)
	}
	sum := int64(n) * (n + 1) / 2
	want := fmt.Sprintf("n\ts\tlo\thi\n%d\t%d\t1\t%d\ngroups\tn\ts\n1000\t%d\t%d\n", n, sum, n, n, sum)
	if out != want {
		t.Fatalf("after %d kills the output differs from the batch result\n--- got\n%s--- want\n%s", kills, out, want)
	}
}

// jobStatus returns the job's status as `braid jobs describe` shows it.
func jobStatus(t *testing.T, endpoint, id string) string {
	t.Helper()
	desc, _, _ := braid(t, 10*time.Second, "jobs", "describe", id, "--endpoint", endpoint)
	for _, line := range strings.Split(desc, "\n") {
		if v, ok := strings.CutPrefix(line, "Status:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// waitRunning waits until every job is RUNNING or FINISHED.
func waitRunning(t *testing.T, endpoint string, timeout time.Duration, ids ...string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for _, id := range ids {
		for {
			st := jobStatus(t, endpoint, id)
			if st == "RUNNING" || st == "FINISHED" {
				break
			}
			if st == "FAILED" || st == "CANCELED" || time.Now().After(deadline) {
				desc, _, _ := braid(t, 10*time.Second, "jobs", "describe", id, "--endpoint", endpoint)
				t.Fatalf("job %s is %s, want RUNNING:\n%s", id, st, desc)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// scriptFile writes sql to a file and returns its path.
func scriptFile(t *testing.T, sql string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.sql")
	if err := os.WriteFile(path, []byte(sql), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitJobNamed waits until the job manager lists a job named name and
// returns its id.
func waitJobNamed(t *testing.T, endpoint, name string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		out, _, _ := braid(t, 10*time.Second, "jobs", "list", "--endpoint", endpoint)
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 2 && f[1] == name {
				return f[0]
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no job named %s within %s", name, timeout)
	return ""
}
