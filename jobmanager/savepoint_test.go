package jobmanager_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/localcluster"
)

// jobRows is rows that also records the job id of each status.
type jobRows struct {
	*rows
	jobIDs []string
}

func (r *jobRows) Status(i int, msg, jobID string) {
	r.rows.Status(i, msg, jobID)
	if jobID != "" {
		r.jobIDs = append(r.jobIDs, jobID)
	}
}

// startInsert runs an unbounded INSERT (follow) and returns its job id.
func startInsert(t *testing.T, s *client.Session, sql string) string {
	t.Helper()
	r := &jobRows{rows: newRows()}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Execute(ctx, sql, true, r); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if len(r.jobIDs) == 0 {
		t.Fatalf("%s: no job id", sql)
	}
	return r.jobIDs[len(r.jobIDs)-1]
}

// sumsBatch inserts rows k = i % 13, v = i for i in [from, to) into src and
// adds them to want (k -> [count, sum]).
func sumsBatch(t *testing.T, s *client.Session, want map[int][2]int64, from, to int) {
	t.Helper()
	var vals []string
	for i := from; i < to; i++ {
		k := i % 13
		vals = append(vals, fmt.Sprintf("(%d, %d)", k, i))
		w := want[k]
		want[k] = [2]int64{w[0] + 1, w[1] + int64(i)}
	}
	run(t, s, "INSERT INTO src VALUES "+strings.Join(vals, ", ")+";")
}

func expectedSums(want map[int][2]int64) []string {
	var out []string
	for k, w := range want {
		out = append(out, fmt.Sprintf("[%d, %d, %d]", k, w[0], w[1]))
	}
	sort.Strings(out)
	return out
}

// waitTable waits until the materialized rows of query equal want.
func waitTable(t *testing.T, s *client.Session, query string, want []string) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	var got []string
	for time.Now().Before(deadline) {
		got = materializeRows(t, run(t, s, query).rows)
		if strings.Join(got, "\n") == strings.Join(want, "\n") {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s:\ngot  %q\nwant %q", query, got, want)
}

const sumsQuery = "INSERT INTO dst SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;"

// TestSavepointRestoreAtOtherParallelism runs a GROUP BY into an upsert
// table at parallelism 2 without periodic checkpoints, stops it with a
// savepoint, and restores that savepoint at parallelism 1, 3 and 5 (more
// rows arriving before each), then rescales the last run to 2: every time
// the table equals what an uninterrupted run computes. A changed GROUP BY is
// refused, naming the aggregate, unless unclaimed state may be dropped.
func TestSavepointRestoreAtOtherParallelism(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// NB: a job at parallelism 5 and the queries reading its table at 2 need
	// 7 slots.
	cl, err := localcluster.Start(ctx, localcluster.Options{DataDir: t.TempDir(), TaskManagers: 2, Slots: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c, err := client.Dial(ctx, cl.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := openSession(t, c)
	run(t, s, `SET 'parallelism.default' = '2';
		CREATE TABLE src (k INT, v BIGINT);
		CREATE TABLE dst (k INT, n BIGINT, total BIGINT, PRIMARY KEY (k) NOT ENFORCED);`)
	want := map[int][2]int64{}
	sumsBatch(t, s, want, 0, 100)
	id := startInsert(t, s, sumsQuery)
	waitTable(t, s, "SELECT * FROM dst;", expectedSums(want))

	// A savepoint of a running job, copied to a directory of our choosing.
	dir := t.TempDir()
	_, copied, err := c.TriggerSavepoint(ctx, id[:6], dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(copied, dir) || !strings.HasSuffix(copied, "/_metadata") {
		t.Errorf("copied savepoint at %s, want it under %s", copied, dir)
	}
	_, sp, err := c.StopJob(ctx, id, true, "")
	if err != nil {
		t.Fatal(err)
	}
	if d, err := c.DescribeJob(ctx, id); err != nil || d.Job.Status != "FINISHED" {
		t.Fatalf("after stop with savepoint: %+v, %v", d.Job, err)
	}

	next := 100
	for _, par := range []int{1, 3, 5} {
		sumsBatch(t, s, want, next, next+50)
		next += 50
		r := openSession(t, c)
		run(t, r, fmt.Sprintf("SET 'parallelism.default' = '%d'; SET 'execution.savepoint.path' = '%s';", par, sp))
		id = startInsert(t, r, sumsQuery)
		waitTable(t, s, "SELECT * FROM dst;", expectedSums(want))
		if _, _, err := c.StopJob(ctx, id, false, ""); err != nil {
			t.Fatal(err)
		}
	}
	// The copy restores as well, named by its directory.
	sumsBatch(t, s, want, next, next+20)
	next += 20
	r := openSession(t, c)
	run(t, r, fmt.Sprintf("SET 'parallelism.default' = '3'; SET 'execution.savepoint.path' = '%s';", strings.TrimSuffix(strings.ReplaceAll(copied, "#", "/"), "/_metadata")))
	id = startInsert(t, r, sumsQuery)
	waitTable(t, s, "SELECT * FROM dst;", expectedSums(want))

	// Rescale the running job, then feed it more.
	if _, _, err := c.RescaleJob(ctx, id, 2); err != nil {
		t.Fatal(err)
	}
	sumsBatch(t, s, want, next, next+30)
	waitTable(t, s, "SELECT * FROM dst;", expectedSums(want))
	d, err := c.DescribeJob(ctx, id)
	if err != nil || d.Job.Status != "RUNNING" {
		t.Fatalf("after rescale: %+v, %v", d.Job, err)
	}
	for _, v := range d.Vertices {
		if v.Parallelism != 2 && !strings.Contains(v.Name, "Values") {
			t.Errorf("after rescale vertex %s runs at %d", v.Name, v.Parallelism)
		}
	}
	// The uninterrupted run.
	equal(t, "uninterrupted", materializeRows(t, run(t, s, "SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;").rows), expectedSums(want))
	if _, _, err := c.StopJob(ctx, id, false, ""); err != nil {
		t.Fatal(err)
	}

	// A changed GROUP BY cannot take the aggregate's state.
	changed := "INSERT INTO dst SELECT k % 2, COUNT(*), SUM(v) FROM src GROUP BY k % 2;"
	r = openSession(t, c)
	run(t, r, fmt.Sprintf("SET 'execution.savepoint.path' = '%s';", sp))
	err = r.Execute(ctx, changed, true, newRows())
	if err == nil || !strings.Contains(err.Error(), "has state for operator") || !strings.Contains(err.Error(), "(GroupAggregate)") ||
		!strings.Contains(err.Error(), "execution.savepoint.ignore-unclaimed-state") {
		t.Fatalf("changed GROUP BY: %v", err)
	}
	run(t, r, "SET 'execution.savepoint.ignore-unclaimed-state' = 'true';")
	id = startInsert(t, r, changed)
	if _, _, err := c.StopJob(ctx, id, false, ""); err != nil {
		t.Fatal(err)
	}
}

// TestStopJobStatement runs SHOW JOBS and STOP JOB ... WITH SAVEPOINT
// through the SQL gateway, then starts the query again from the savepoint.
func TestStopJobStatement(t *testing.T) {
	cl, c := startSQLCluster(t, t.TempDir())
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	run(t, s, `SET 'parallelism.default' = '2'; CREATE TABLE src (k INT, v BIGINT);
		CREATE TABLE dst (k INT, n BIGINT, total BIGINT, PRIMARY KEY (k) NOT ENFORCED);`)
	want := map[int][2]int64{}
	sumsBatch(t, s, want, 0, 40)
	id := startInsert(t, s, sumsQuery)
	waitTable(t, s, "SELECT * FROM dst;", expectedSums(want))

	jobs := run(t, s, "SHOW JOBS;")
	found := false
	for _, r := range jobs.rows {
		found = found || strings.HasPrefix(r, "+I["+id+", insert-into_default_catalog.default_database.dst, RUNNING, ")
	}
	if !found {
		t.Fatalf("SHOW JOBS: %q has no running job %s", jobs.rows, id)
	}
	if got := jobs.cols; len(got) != 4 || got[0].Name != "job id" || got[3].Name != "start time" {
		t.Errorf("SHOW JOBS columns: %+v", got)
	}
	stop := run(t, s, "STOP JOB '"+id+"' WITH SAVEPOINT;")
	if len(stop.rows) != 1 || !strings.Contains(stop.rows[0], "#savepoint-") || stop.cols[0].Name != "savepoint path" {
		t.Fatalf("STOP JOB WITH SAVEPOINT: %q %+v", stop.rows, stop.cols)
	}
	sp := strings.TrimSuffix(strings.TrimPrefix(stop.rows[0], "+I["), "]")
	if d, err := c.DescribeJob(context.Background(), id); err != nil || d.Job.Status != "FINISHED" {
		t.Fatalf("after STOP JOB: %+v %v", d.Job, err)
	}
	sumsBatch(t, s, want, 40, 60)
	r := openSession(t, c)
	run(t, r, "SET 'parallelism.default' = '2'; SET 'execution.savepoint.path' = '"+sp+"';")
	id = startInsert(t, r, sumsQuery)
	waitTable(t, s, "SELECT * FROM dst;", expectedSums(want))
	run(t, s, "STOP JOB '"+id+"';")
	if d, err := c.DescribeJob(context.Background(), id); err != nil || d.Job.Status != "CANCELED" {
		t.Fatalf("after STOP JOB without savepoint: %+v %v", d.Job, err)
	}
}
