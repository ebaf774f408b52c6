package jobmanager_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/localcluster"
)

// jobsOf returns the names of the session's jobs, as SHOW JOBS lists them.
func jobsOf(t *testing.T, s *client.Session) []string {
	t.Helper()
	var names []string
	for _, r := range run(t, s, "SHOW JOBS;").sorted() {
		names = append(names, strings.Split(r, ", ")[1])
	}
	return names
}

// TestStatementSets: BEGIN STATEMENT SET ... END and EXECUTE STATEMENT SET
// run their INSERTs as one job writing every sink, with Flink's client
// replies; a non-INSERT in an open set is refused and leaves it open, and
// an empty set submits nothing.
func TestStatementSets(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	run(t, s, `CREATE TABLE src (id INT, name STRING);
		INSERT INTO src VALUES (1, 'a'), (2, 'b'), (3, 'c');
		CREATE TABLE evens (id INT, name STRING);
		CREATE TABLE odds (id INT);`)
	before := len(jobsOf(t, s))

	r := run(t, s, "BEGIN STATEMENT SET;")
	equal(t, "BEGIN", r.status, []string{"Begin a statement set."})
	r = run(t, s, "INSERT INTO evens SELECT id, name FROM src WHERE id % 2 = 0;")
	equal(t, "an INSERT in the set", r.status, []string{"Add SQL update statement to the statement set."})
	if err := execErr(t, s, "SELECT 1;"); !strings.Contains(err.Error(), "line 1, column 1: Only INSERT statement is allowed in Statement Set.") {
		t.Errorf("a SELECT in the set: %v", err)
	}
	if err := execErr(t, s, "INSERT INTO odds SELECT nope FROM src;"); !strings.Contains(err.Error(), `unknown column "nope"`) {
		t.Errorf("a bad INSERT in the set: %v", err)
	}
	r = run(t, s, "INSERT INTO odds SELECT id FROM src WHERE id % 2 = 1;\nEND;")
	equal(t, "the second INSERT and END", r.status, []string{"Add SQL update statement to the statement set.", "Complete execution of the SQL update statement."})
	equal(t, "evens", run(t, s, "SELECT * FROM evens;").sorted(), []string{"+I[2, b]"})
	equal(t, "odds", run(t, s, "SELECT * FROM odds;").sorted(), []string{"+I[1]", "+I[3]"})
	jobs := jobsOf(t, s)
	if len(jobs) != before+3 {
		t.Fatalf("jobs after the set: %q, want one more INSERT job than %d (and the two SELECTs)", jobs, before)
	}
	found := false
	for _, j := range jobs {
		found = found || j == "insert-into_default_catalog.default_database.evens,default_catalog.default_database.odds"
	}
	if !found {
		t.Errorf("no job named for both sinks among %q", jobs)
	}

	// The parser's form, in one statement.
	r = run(t, s, `EXECUTE STATEMENT SET BEGIN
		INSERT INTO evens VALUES (4, 'd');
		INSERT INTO odds SELECT id + 10 FROM src WHERE id = 1;
		END;`)
	equal(t, "EXECUTE STATEMENT SET", r.status, []string{"Complete execution of the SQL update statement."})
	equal(t, "evens again", run(t, s, "SELECT * FROM evens;").sorted(), []string{"+I[2, b]", "+I[4, d]"})
	equal(t, "odds again", run(t, s, "SELECT * FROM odds;").sorted(), []string{"+I[11]", "+I[1]", "+I[3]"})

	// EXPLAIN shows the one graph with both sinks.
	plan := run(t, s, "EXPLAIN STATEMENT SET BEGIN INSERT INTO evens SELECT * FROM src; INSERT INTO odds SELECT id FROM src; END;").rows
	if len(plan) != 1 || !strings.Contains(plan[0], "Sink: evens") || !strings.Contains(plan[0], "Sink: odds") {
		t.Errorf("EXPLAIN STATEMENT SET: %q", plan)
	}

	run(t, s, "BEGIN STATEMENT SET;")
	r = run(t, s, "END;")
	equal(t, "an empty set", r.status, []string{"No statement in the statement set, skip submit."})
	if err := execErr(t, s, "END;"); !strings.Contains(err.Error(), "No Statement Set to submit.") {
		t.Errorf("END without BEGIN: %v", err)
	}
}

// TestStatementSetLimit: an open set takes at most 64 INSERTs.
func TestStatementSetLimit(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	run(t, s, "CREATE TABLE t (id INT);")
	var b strings.Builder
	b.WriteString("BEGIN STATEMENT SET;\n")
	for range 64 {
		b.WriteString("INSERT INTO t VALUES (1);\n")
	}
	run(t, s, b.String())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := s.Execute(ctx, "INSERT INTO t VALUES (1);", false, newRows())
	if err == nil || !strings.Contains(err.Error(), "the statement set holds 64 INSERT statements, its limit") {
		t.Fatalf("the 65th INSERT: %v", err)
	}
	r := run(t, s, "END;")
	equal(t, "END of a full set", r.status, []string{"Complete execution of the SQL update statement."})
	if n := len(run(t, s, "SELECT * FROM t;").rows); n != 64 {
		t.Errorf("%d rows, want 64", n)
	}
}

// TestStatementSetSavepointRestore: a running statement set of two
// aggregates into two upsert tables is one job whose checkpoints hold both
// aggregates' state: stopped with a savepoint and restored at another
// parallelism, with rows arriving in between, both tables equal an
// uninterrupted run.
func TestStatementSetSavepointRestore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
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
		CREATE TABLE dst (k INT, n BIGINT, total BIGINT, PRIMARY KEY (k) NOT ENFORCED);
		CREATE TABLE dst2 (k INT, n BIGINT, total BIGINT, PRIMARY KEY (k) NOT ENFORCED);`)
	const set = `EXECUTE STATEMENT SET BEGIN
		INSERT INTO dst SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;
		INSERT INTO dst2 SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;
		END;`
	want := map[int][2]int64{}
	sumsBatch(t, s, want, 0, 100)
	id := startInsert(t, s, set)
	waitTable(t, s, "SELECT * FROM dst;", expectedSums(want))
	waitTable(t, s, "SELECT * FROM dst2;", expectedSums(want))
	_, sp, err := c.StopJob(ctx, id, true, "")
	if err != nil {
		t.Fatal(err)
	}
	sumsBatch(t, s, want, 100, 160)
	r := openSession(t, c)
	run(t, r, fmt.Sprintf("SET 'parallelism.default' = '3'; SET 'execution.savepoint.path' = '%s';", sp))
	id = startInsert(t, r, set)
	waitTable(t, s, "SELECT * FROM dst;", expectedSums(want))
	waitTable(t, s, "SELECT * FROM dst2;", expectedSums(want))
	d, err := c.DescribeJob(ctx, id)
	if err != nil || d.Job.Status != "RUNNING" {
		t.Fatalf("the restored set: %+v, %v", d.Job, err)
	}
	sinks := 0
	for _, v := range d.Vertices {
		if strings.Contains(v.Name, "Sink: dst") {
			sinks++
		}
	}
	if sinks != 2 {
		t.Errorf("the restored job has %d sink vertices, want 2: %+v", sinks, d.Vertices)
	}
	if _, _, err := c.StopJob(ctx, id, false, ""); err != nil {
		t.Fatal(err)
	}
}
