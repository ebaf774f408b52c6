package e2e

import (
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// failoverScript is a bounded query of about eight seconds on a
// checkpointing job that restarts.
func failoverScript(query string) string {
	return `
SET 'execution.checkpointing.interval' = '300ms';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '5';
SET 'restart-strategy.fixed-delay.delay' = '200ms';
CREATE TABLE gen (id BIGINT, v BIGINT) WITH ('connector' = 'datagen',
  'number-of-rows' = '200000', 'rows-per-second' = '25000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '200000',
  'fields.v.min' = '0', 'fields.v.max' = '9');
` + query
}

// runKilled runs query with --format and SIGKILLs (then restarts) a task
// manager that runs the job once rows flow; it returns the CLI's output.
func runKilled(t *testing.T, query, format string) string {
	cl := startProcessCluster(t, 2, 4)
	type result struct {
		out, stderr string
		err         error
	}
	done := make(chan result, 1)
	path := script(t, failoverScript(query))
	go func() {
		out, stderr, err := braid(t, 3*time.Minute, "sql", "--endpoint", cl.endpoint, "--format", format, "-f", path)
		done <- result{out, stderr, err}
	}()
	// Kill once the job has run for a while (and checkpointed), on a task
	// manager that runs part of it.
	var job, desc string
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(300 * time.Millisecond)
		out, _, _ := braid(t, 10*time.Second, "jobs", "list", "--endpoint", cl.endpoint)
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 2 && f[1] == "collect" {
				job = f[0]
			}
		}
		if job == "" {
			continue
		}
		desc, _, _ = braid(t, 10*time.Second, "jobs", "describe", job, "--endpoint", cl.endpoint)
		if rowsIn(desc) > 60000 {
			break
		}
	}
	victim := -1
	for i := range cl.tms {
		if strings.Contains(desc, cl.taskManagerID(i)) {
			victim = i
		}
	}
	if victim < 0 {
		t.Fatalf("job %s runs on no known task manager:\n%s", job, desc)
	}
	cl.restartTaskManager(victim)
	r := <-done
	if r.err != nil {
		t.Fatalf("query: %v\n%s", r.err, r.stderr)
	}
	cl.mu.Lock()
	restarted := strings.Contains(cl.logs["jobmanager"].String(), "job redeploying")
	cl.mu.Unlock()
	if !restarted {
		t.Fatalf("the job was not restarted; the test proves nothing")
	}
	return r.out
}

// TestSelectSurvivesTaskManagerKill kills a task manager while a
// checkpointing SELECT with a restart strategy streams its results: the
// final result equals the uninterrupted one.
func TestSelectSurvivesTaskManagerKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a multi-process cluster; runs without -short (make test)")
	}
	out := runKilled(t, "SELECT v, COUNT(*) AS n, SUM(id) AS s FROM gen GROUP BY v;\n", "tsv")
	rows := strings.Split(strings.TrimSpace(out), "\n")
	if len(rows) != 11 {
		t.Fatalf("want a header and 10 groups, got:\n%s", out)
	}
	var n, s int64
	for _, r := range rows[1:] {
		f := strings.Split(r, "\t")
		if len(f) != 3 {
			t.Fatalf("bad row %q", r)
		}
		c, _ := strconv.ParseInt(f[1], 10, 64)
		x, _ := strconv.ParseInt(f[2], 10, 64)
		n, s = n+c, s+x
	}
	if n != 200000 || s != 200000*200001/2 {
		t.Fatalf("COUNT %d SUM %d, want 200000 and %d:\n%s", n, s, int64(200000*200001/2), out)
	}
}

// TestSelectChangelogExactlyOnceAfterKill: in changelog mode, a plain
// projection's rows arrive exactly once each across a task manager's loss.
func TestSelectChangelogExactlyOnceAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a multi-process cluster; runs without -short (make test)")
	}
	out := runKilled(t, "SELECT id FROM gen;\n", "changelog")
	seen := map[int64]int{}
	var dups []int64
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "+I" {
			continue
		}
		id, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		if err != nil {
			continue
		}
		if seen[id]++; seen[id] == 2 {
			dups = append(dups, id)
		}
	}
	sort.Slice(dups, func(a, b int) bool { return dups[a] < dups[b] })
	if len(dups) > 0 {
		t.Fatalf("%d ids seen twice, first %v", len(dups), dups[:min(10, len(dups))])
	}
	if len(seen) != 200000 {
		t.Fatalf("saw %d distinct ids, want 200000; output starts:\n%s", len(seen), tail(out[:min(len(out), 2000)], 2000))
	}
}
