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

// envCount reads a count from the environment, with a default.
func envCount(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a count", name, v)
	}
	return n
}

// faultRun is the fault-injection workload: a regular join and a GROUP BY
// at parallelism 4 over a 4-partition managed table of keyed events, each
// INSERT into a managed table (exactly-once), with a checkpoint every
// second and a restart strategy that keeps restarting.
type faultRun struct {
	t        *testing.T
	cl       *processCluster
	rows     int
	database string
	joinJob  string
	aggJob   string
	clients  chan error
}

// startFaultRun loads the input, then submits the two jobs from two
// clients and returns once both are listed.
func startFaultRun(t *testing.T, cl *processCluster, rows int) *faultRun {
	t.Helper()
	r := &faultRun{t: t, cl: cl, rows: rows, database: fmt.Sprintf("faults_%d", time.Now().UnixNano()), clients: make(chan error, 2)}
	load := fmt.Sprintf(`
CREATE DATABASE %[2]s;
USE %[2]s;
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '%[1]d', 'rows-per-second' = '100000000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '%[1]d');
CREATE TABLE events (id BIGINT, k BIGINT) WITH ('managed.partitions' = '4');
CREATE TABLE joined (id BIGINT, k BIGINT);
CREATE TABLE counts (k BIGINT, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED);
INSERT INTO events SELECT id, id %% 1000 FROM gen;
`, rows, r.database)
	out, stderr, err := braid(t, 2*time.Minute, "sql", "--endpoint", cl.endpoint, "-f", scriptFile(t, load))
	if err != nil {
		t.Fatalf("loading: %v\n%s", err, stderr)
	}
	ids := jobIDLine.FindAllStringSubmatch(out+stderr, -1)
	waitJob(t, cl.endpoint, ids[len(ids)-1][1], "FINISHED", 2*time.Minute)

	settings := `
SET 'execution.checkpointing.interval' = '1s';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '1000';
SET 'restart-strategy.fixed-delay.delay' = '100ms';
SET 'parallelism.default' = '4';
`
	for _, sql := range []string{
		fmt.Sprintf("INSERT INTO %[1]s.joined SELECT a.id, a.k FROM %[1]s.events a JOIN %[1]s.events b ON a.id = b.id;", r.database),
		fmt.Sprintf("INSERT INTO %[1]s.counts SELECT k, COUNT(*), SUM(id) FROM %[1]s.events GROUP BY k;", r.database),
	} {
		// Each INSERT runs from its own client, which waits for its end.
		path := scriptFile(t, settings+sql)
		go func() {
			_, stderr, err := braid(t, 10*time.Minute, "sql", "--endpoint", cl.endpoint, "-f", path)
			if err != nil {
				err = fmt.Errorf("%w\n%s", err, stderr)
			}
			r.clients <- err
		}()
	}
	r.joinJob = waitJobNamed(t, cl.endpoint, "insert-into_default_catalog."+r.database+".joined", time.Minute)
	r.aggJob = waitJobNamed(t, cl.endpoint, "insert-into_default_catalog."+r.database+".counts", time.Minute)
	return r
}

// inject calls fault n times at random moments while the jobs run, and
// returns how many it injected before the join finished.
func (r *faultRun) inject(n int, fault func(rng *rand.Rand)) int {
	start := time.Now()
	rng := rand.New(rand.NewPCG(uint64(start.UnixNano()), 1))
	for k := 0; k < n; k++ {
		if jobStatus(r.t, r.cl.endpoint, r.joinJob) == "FINISHED" {
			return k
		}
		waitRunning(r.t, r.cl.endpoint, 2*time.Minute, r.joinJob, r.aggJob)
		time.Sleep(time.Duration(300+rng.IntN(1200)) * time.Millisecond)
		r.t.Logf("%s: fault %d", time.Since(start).Round(time.Millisecond), k+1)
		fault(rng)
	}
	return n
}

// check waits for both jobs to finish and compares the committed output
// with the batch result: every id joined exactly once, every group exact.
func (r *faultRun) check(clientsMayFail bool) {
	t := r.t
	waitJob(t, r.cl.endpoint, r.joinJob, "FINISHED", 5*time.Minute)
	waitJob(t, r.cl.endpoint, r.aggJob, "FINISHED", 5*time.Minute)
	for range 2 {
		if err := <-r.clients; err != nil && !clientsMayFail {
			t.Errorf("a client's INSERT did not succeed: %v", err)
		}
	}
	q := fmt.Sprintf(`
SELECT COUNT(*) AS n, SUM(id) AS s, MIN(id) AS lo, MAX(id) AS hi FROM %[1]s.joined;
SELECT COUNT(*) AS groups, SUM(c) AS n, SUM(s) AS s FROM %[1]s.counts;
`, r.database)
	out, stderr, err := braid(t, 2*time.Minute, "sql", "--endpoint", r.cl.endpoint, "--format", "tsv", "-f", scriptFile(t, q))
	if err != nil {
		t.Fatalf("checking: %v\n%s", err, stderr)
	}
	n := int64(r.rows)
	sum := n * (n + 1) / 2
	want := fmt.Sprintf("n\ts\tlo\thi\n%d\t%d\t1\t%d\ngroups\tn\ts\n1000\t%d\t%d\n", n, sum, n, n, sum)
	if out != want {
		t.Fatalf("the output differs from the batch result\n--- got\n%s--- want\n%s", out, want)
	}
}

// TestFaultsExactlyOnce SIGKILLs a random task manager at random moments
// (BRAID_FAULT_KILLS times, 5 by default; make test-faults: 50) and starts
// it again, while the fault workload runs over BRAID_FAULT_ROWS events (1M
// by default). The committed output must equal the batch result.
func TestFaultsExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a multi-process cluster; runs without -short (make test)")
	}
	kills := envCount(t, "BRAID_FAULT_KILLS", 5)
	cl := startProcessCluster(t, 2, 4)
	r := startFaultRun(t, cl, envCount(t, "BRAID_FAULT_ROWS", 1_000_000))
	killed := r.inject(kills, func(rng *rand.Rand) { cl.restartTaskManager(rng.IntN(2)) })
	r.check(false)
	restarts := cl.metric("braid_jobmanager_job_restarts_total")
	completed := cl.metric(`braid_jobmanager_checkpoints_total{outcome="completed"}`)
	t.Logf("%d kills, %v job restarts, %v checkpoints completed", killed, restarts, completed)
	if kills > 0 && (restarts < 1 || completed < 1) {
		t.Errorf("after %d kills: %v restarts and %v completed checkpoints; want both above 0", killed, restarts, completed)
	}
	if killed < kills {
		t.Errorf("the join finished after %d kills, before the %d asked for: raise BRAID_FAULT_ROWS", killed, kills)
	}
}

// TestFaultsJobManagerRestart SIGKILLs the job manager 3 times while the
// fault workload runs, starting it again on its data directory each time:
// the jobs resume from the checkpoint etcd points to, and their committed
// output equals the batch result.
func TestFaultsJobManagerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a multi-process cluster; runs without -short (make test)")
	}
	cl := startProcessCluster(t, 2, 4)
	r := startFaultRun(t, cl, envCount(t, "BRAID_FAULT_ROWS", 1_000_000))
	restarted := r.inject(3, func(*rand.Rand) {
		cl.restartJobManager()
		cl.waitTaskManagers(2, time.Minute)
	})
	// The clients lose their connection to the killed job manager.
	r.check(true)
	if restarted < 3 {
		t.Errorf("the join finished after %d job manager restarts, before 3: raise BRAID_FAULT_ROWS", restarted)
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

// waitJobNamed waits until the job manager lists a job named name and
// returns its id.
func waitJobNamed(t *testing.T, endpoint, name string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		out, _, _ := braid(t, 10*time.Second, "jobs", "list", "--endpoint", endpoint)
		if id := jobNamed(out, name, false); id != "" {
			return id
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no job named %s within %s", name, timeout)
	return ""
}

// TestFaultsCorruptCheckpoint damages every file of a job's checkpoints
// right after one completed, then kills a task manager: the restore fails
// with a message naming a damaged file, and the job fails rather than run
// on part of its state.
func TestFaultsCorruptCheckpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a multi-process cluster; runs without -short (make test)")
	}
	cl := startProcessCluster(t, 2, 2)
	sql := `
SET 'execution.checkpointing.interval' = '3s';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '100';
SET 'restart-strategy.fixed-delay.delay' = '100ms';
SET 'parallelism.default' = '2';
CREATE TABLE gen (k BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '5000', 'fields.k.min' = '0', 'fields.k.max' = '999');
CREATE TABLE sink (k BIGINT, c BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT k, COUNT(*) FROM gen GROUP BY k;
`
	out, stderr, err := braid(t, time.Minute, "sql", "--endpoint", cl.endpoint, "-f", script(t, sql))
	if err != nil {
		t.Fatalf("submitting: %v\n%s", err, stderr)
	}
	m := jobIDLine.FindStringSubmatch(out + stderr)
	if m == nil {
		t.Fatalf("no job id in output:\n%s%s", out, stderr)
	}
	job := m[1]
	waitJob(t, cl.endpoint, job, "RUNNING", 30*time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for cl.metric(`braid_jobmanager_checkpoints_total{outcome="completed"}`) < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint completed within 30s\n%s", cl.Logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
	dir := filepath.Join(cl.dir, "jm", "checkpoints", job)
	damaged := 0
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(path, "_metadata") {
			if os.Truncate(path, 1) == nil {
				damaged++
			}
		}
		return nil
	})
	if damaged == 0 {
		t.Fatalf("no checkpoint files under %s", dir)
	}
	cl.restartTaskManager(0)
	desc := waitJob(t, cl.endpoint, job, "FAILED", time.Minute)
	if !strings.Contains(desc, "cannot be restored") || !strings.Contains(desc, filepath.Base(dir)) {
		t.Fatalf("the failure does not name the damaged checkpoint file:\n%s", desc)
	}
}
