package jobmanager_test

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/braidflow/braid/client"
)

// runJob runs a bounded statement and returns its job id.
func runJob(t *testing.T, s *client.Session, sql string) string {
	t.Helper()
	r := &jobRows{rows: newRows()}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Execute(ctx, sql, false, r); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if len(r.jobIDs) == 0 {
		t.Fatalf("%s: no job id", sql)
	}
	return r.jobIDs[len(r.jobIDs)-1]
}

// TestBoundedJobTakesFinalCheckpoint: a bounded INSERT in a job that
// checkpoints every hour ends at once with a final checkpoint, triggered
// when its sources' data ended, and its rows are committed by it.
func TestBoundedJobTakesFinalCheckpoint(t *testing.T) {
	cl, s, _ := checkpointCluster(t)
	run(t, s, `SET 'execution.checkpointing.interval' = '1h';
		SET 'parallelism.default' = '2';
		CREATE TABLE src (k INT, v BIGINT);
		CREATE TABLE dst (k INT, n BIGINT, total BIGINT, PRIMARY KEY (k) NOT ENFORCED);`)
	want := map[int][2]int64{}
	start := time.Now()
	sumsBatch(t, s, want, 0, 200)
	id := runJob(t, s, "INSERT INTO dst SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;")
	if took := time.Since(start); took > 30*time.Second {
		t.Fatalf("two bounded jobs took %s: the final checkpoint waited for the interval", took)
	}
	cps, err := cl.JobManager().Checkpoints(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) != 1 {
		t.Fatalf("job %s retained checkpoints %+v, want its final one", id, cps)
	}
	equal(t, "dst", materializeRows(t, run(t, s, "SELECT * FROM dst;").rows), expectedSums(want))
}

// TestCheckpointsGoOnAfterTaskFinished: a job one of whose sources is
// bounded keeps taking checkpoints after that source finished (its final
// state is carried into them).
func TestCheckpointsGoOnAfterTaskFinished(t *testing.T) {
	cl, s, _ := checkpointCluster(t)
	run(t, s, `SET 'execution.checkpointing.interval' = '200ms';
		SET 'parallelism.default' = '1';`+endlessAgg)
	id := startInsert(t, s, "INSERT INTO sink SELECT k, COUNT(*) FROM (SELECT k FROM gen UNION ALL SELECT k FROM (VALUES (CAST(1 AS BIGINT)), (2)) AS t(k)) GROUP BY k;")
	c, err := client.Dial(context.Background(), cl.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.Now().Add(30 * time.Second)
	var finishedAt int64
	for {
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint completed after the values source finished (at checkpoint %d)", finishedAt)
		}
		d, err := c.DescribeJob(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Job.Status != "RUNNING" {
			t.Fatalf("job is %s", d.Job.Status)
		}
		finished := false
		for _, v := range d.Vertices {
			for _, st := range v.Subtasks {
				finished = finished || (strings.Contains(v.Name, "Values") && st.Status == "FINISHED")
			}
		}
		if finished && finishedAt == 0 {
			finishedAt = max(d.Checkpoints.LatestID, 1)
		}
		if finishedAt > 0 && d.Checkpoints.LatestID > finishedAt+2 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := cl.JobManager().CancelJob(context.Background(), id); err != nil {
		t.Fatal(err)
	}
}

// TestStopWithSavepointPausesSources stops a job whose sink writes
// without transactions (no periodic checkpoints) with a savepoint and
// resumes it from there, twice: the table holds every id of the sequence
// once, so no row was written after the savepoint's barrier.
func TestStopWithSavepointPausesSources(t *testing.T) {
	cl, s, _ := checkpointCluster(t)
	run(t, s, `SET 'parallelism.default' = '1';
		CREATE TABLE seq (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '20000',
			'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '100000000');
		CREATE TABLE dst (id BIGINT);`)
	c, err := client.Dial(context.Background(), cl.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const query = "INSERT INTO dst SELECT id FROM seq;"
	id := startInsert(t, s, query)
	for round := 0; round < 3; round++ {
		time.Sleep(700 * time.Millisecond)
		stop := run(t, s, "STOP JOB '"+id+"' WITH SAVEPOINT;")
		if len(stop.rows) != 1 {
			t.Fatalf("STOP JOB: %q", stop.rows)
		}
		if d, err := c.DescribeJob(context.Background(), id); err != nil || d.Job.Status != "FINISHED" {
			t.Fatalf("after STOP JOB: %+v %v", d.Job, err)
		}
		sp := strings.TrimSuffix(strings.TrimPrefix(stop.rows[0], "+I["), "]")
		if round == 2 {
			break
		}
		r := openSession(t, c)
		run(t, r, "SET 'parallelism.default' = '1'; SET 'execution.savepoint.path' = '"+sp+"';")
		id = startInsert(t, r, query)
	}
	var ids []int64
	for _, row := range run(t, s, "SELECT id FROM dst;").rows {
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(row, "+I["), "]"), 10, 64)
		if err != nil {
			t.Fatalf("row %q: %v", row, err)
		}
		ids = append(ids, n)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	if len(ids) == 0 {
		t.Fatal("no rows written")
	}
	for i, n := range ids {
		if n != int64(i+1) {
			t.Fatalf("%d rows; position %d holds id %d (want %d): %s", len(ids), i, n, i+1, around(ids, i))
		}
	}
}

func around(ids []int64, i int) string {
	lo, hi := max(i-3, 0), min(i+3, len(ids))
	return fmt.Sprint(ids[lo:hi])
}
