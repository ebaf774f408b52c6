package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// script writes a SQL script into the test's temp dir, prefixed with a
// database of its own, and returns its path.
func script(t *testing.T, sql string) string {
	t.Helper()
	db := fmt.Sprintf("db_%d", time.Now().UnixNano())
	path := filepath.Join(t.TempDir(), "script.sql")
	full := fmt.Sprintf("CREATE DATABASE %s;\nUSE %s;\n%s", db, db, sql)
	if err := os.WriteFile(path, []byte(full), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// vertexBlock returns the lines of `braid jobs describe` under the vertex
// whose name starts with prefix.
func vertexBlock(describe, prefix string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(describe, "\n") {
		if strings.HasPrefix(line, "Vertex ") {
			_, name, _ := strings.Cut(line, ": ")
			in = strings.HasPrefix(name, prefix)
			continue
		}
		if in && strings.TrimSpace(line) != "" && !strings.Contains(line, "SUBTASK") {
			out = append(out, line)
		}
	}
	return out
}

// latestJob returns the id of the newest job named name in `braid jobs list`.
func latestJob(t *testing.T, endpoint, name string) string {
	t.Helper()
	out, stderr, err := braid(t, 30*time.Second, "jobs", "list", "--endpoint", endpoint)
	if err != nil {
		t.Fatalf("jobs list: %v\n%s", err, stderr)
	}
	id := jobNamed(out, name, true)
	if id == "" {
		t.Fatalf("no job named %s in:\n%s", name, out)
	}
	return id
}

// jobNamed returns the id of a job named name in the output of `braid jobs
// list`: of the last line naming it when last is set, else of the first;
// "" when there is none.
func jobNamed(list, name string, last bool) string {
	id := ""
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[1] == name {
			if id = f[0]; !last {
				break
			}
		}
	}
	return id
}

const joinScript = `
CREATE TABLE l (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '2000',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '2000');
CREATE TABLE r (k BIGINT, w BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '2000',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '2000');
SELECT l.k, r.w FROM l JOIN r ON l.k = r.k;
`

// TestJoinSpreadsOverTaskManagers checks, on a three-process cluster at
// parallelism 4, that the join's subtasks run on both task managers and
// that rows cross between them.
func TestJoinSpreadsOverTaskManagers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a multi-process cluster; runs without -short (make test)")
	}
	cl := startProcessCluster(t, 2, 2)
	out, stderr, err := braid(t, 2*time.Minute, "sql", "--endpoint", cl.endpoint, "--format", "tsv",
		"--set", "parallelism.default=4", "-f", script(t, joinScript))
	if err != nil {
		t.Fatalf("join: %v\n%s", err, stderr)
	}
	if rows := strings.Count(strings.TrimSpace(out), "\n"); rows != 2000 {
		t.Fatalf("join returned %d rows, want 2000", rows)
	}
	id := latestJob(t, cl.endpoint, "collect")
	desc, stderr, err := braid(t, 30*time.Second, "jobs", "describe", id, "--endpoint", cl.endpoint)
	if err != nil {
		t.Fatalf("describe: %v\n%s", err, stderr)
	}
	join := vertexBlock(desc, "Join")
	if len(join) != 4 {
		t.Fatalf("join vertex has %d subtasks, want 4:\n%s", len(join), desc)
	}
	tms := map[string]bool{}
	for _, line := range join {
		tms[strings.Fields(line)[1]] = true
	}
	if len(tms) != 2 {
		t.Fatalf("join subtasks run on %d task managers, want 2:\n%s", len(tms), desc)
	}
	var remote int64
	for _, line := range strings.Split(desc, "\n") {
		f := strings.Fields(line)
		if len(f) == 7 && f[0] != "SUBTASK" {
			n, _ := strconv.ParseInt(f[6], 10, 64)
			remote += n
		}
	}
	if remote == 0 {
		t.Fatalf("no rows crossed between task managers:\n%s", desc)
	}
}

// TestBadInputKeepsServing sends statements with errors: each fails with
// its line and column and a non-zero exit, and the cluster keeps serving.
func TestBadInputKeepsServing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a multi-process cluster; runs without -short (make test)")
	}
	cl := startProcessCluster(t, 2, 2)
	setup := "CREATE TABLE t (id INT, name STRING);\n"
	cases := []struct{ name, sql, want string }{
		// The scripts start with CREATE DATABASE and USE (lines 1-2) and
		// the CREATE TABLE (line 3).
		{"syntax", "SELECT id, FROM t;", `line 4, column 12: unexpected "FROM", expected expression`},
		{"unknown table", "SELECT * FROM nope;", `line 4, column 15: unknown table "nope"`},
		{"unknown column", "SELECT idd FROM t;", `line 4, column 8: unknown column "idd" (did you mean "id"?)`},
		{"type mismatch", "SELECT id + name FROM t;", `line 4, column 8: cannot apply '+' to arguments of type INT and STRING`},
		{"bad insert", "INSERT INTO t VALUES (1);", `line 4, column 15: column count of the query (1) does not match`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, err := braid(t, time.Minute, "sql", "--endpoint", cl.endpoint, "-f", script(t, setup+c.sql))
			if err == nil {
				t.Fatalf("no error for %q", c.sql)
			}
			if !strings.Contains(stderr, c.want) {
				t.Fatalf("error for %q:\n%s\nwant it to contain %q", c.sql, stderr, c.want)
			}
		})
	}
	ok := setup + "INSERT INTO t VALUES (1, 'one'), (2, 'two');\nSELECT name, id * 10 AS x FROM t WHERE id > 1;\n"
	out, stderr, err := braid(t, time.Minute, "sql", "--endpoint", cl.endpoint, "--format", "tsv", "-f", script(t, ok))
	if err != nil {
		t.Fatalf("valid script after errors: %v\n%s", err, stderr)
	}
	if want := "name\tx\ntwo\t20\n"; out != want {
		t.Fatalf("got %q, want %q", out, want)
	}
}

var jobIDLine = regexp.MustCompile(`Job ID: ([0-9a-f]+)`)

// TestTaskManagerKilled kills a task manager with SIGKILL while a job runs:
// the job fails naming the lost task manager, the job manager stays up, and
// the next job runs on the remaining task manager.
func TestTaskManagerKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a multi-process cluster; runs without -short (make test)")
	}
	cl := startProcessCluster(t, 2, 2)
	endless := `
CREATE TABLE gen (k BIGINT, v STRING) WITH ('connector' = 'datagen', 'rows-per-second' = '2000');
CREATE TABLE sink (k BIGINT, v STRING) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT k, v FROM gen;
`
	out, stderr, err := braid(t, time.Minute, "sql", "--endpoint", cl.endpoint, "-f", script(t, endless))
	if err != nil {
		t.Fatalf("submitting: %v\n%s", err, stderr)
	}
	m := jobIDLine.FindStringSubmatch(out + stderr)
	if m == nil {
		t.Fatalf("no job id in output:\n%s%s", out, stderr)
	}
	job := m[1]
	waitJob(t, cl.endpoint, job, "RUNNING", 30*time.Second)
	// Running subtasks report their progress.
	deadline := time.Now().Add(15 * time.Second)
	for {
		desc, _, _ := braid(t, 10*time.Second, "jobs", "describe", job, "--endpoint", cl.endpoint)
		if rowsIn(desc) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a running job shows no rows in:\n%s", desc)
		}
		time.Sleep(200 * time.Millisecond)
	}

	victim := cl.taskManagerID(1)
	cl.kill(1)
	desc := waitJob(t, cl.endpoint, job, "FAILED", 30*time.Second)
	if !strings.Contains(desc, "task manager "+victim) || !strings.Contains(desc, "was lost") {
		t.Fatalf("failure does not name the lost task manager %s:\n%s", victim, desc)
	}

	ok := "CREATE TABLE t (id INT);\nINSERT INTO t VALUES (1), (2), (3);\nSELECT a.id FROM t a JOIN t b ON a.id = b.id;\n"
	out, stderr, err = braid(t, time.Minute, "sql", "--endpoint", cl.endpoint, "--format", "tsv", "-f", script(t, ok))
	if err != nil {
		t.Fatalf("job after the loss: %v\n%s", err, stderr)
	}
	if got := normalize(out, false); got != "id\n1\n2\n3" {
		t.Fatalf("job after the loss returned %q", got)
	}
	desc, _, _ = braid(t, 30*time.Second, "jobs", "describe", latestJob(t, cl.endpoint, "collect"), "--endpoint", cl.endpoint)
	if strings.Contains(desc, victim) {
		t.Fatalf("a job after the loss was placed on the lost task manager %s:\n%s", victim, desc)
	}
}

// rowsIn sums the ROWS IN column of `braid jobs describe`.
func rowsIn(desc string) int64 {
	var n int64
	for _, line := range strings.Split(desc, "\n") {
		f := strings.Fields(line)
		if len(f) == 7 && f[0] != "SUBTASK" {
			v, _ := strconv.ParseInt(f[4], 10, 64)
			n += v
		}
	}
	return n
}

// waitJob polls `braid jobs describe` until the job has the status, and
// returns the description.
func waitJob(t *testing.T, endpoint, id, status string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var desc string
	for time.Now().Before(deadline) {
		desc, _, _ = braid(t, 10*time.Second, "jobs", "describe", id, "--endpoint", endpoint)
		if strings.Contains(desc, "Status:   "+status) {
			return desc
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("job %s did not reach %s within %s:\n%s", id, status, timeout, desc)
	return ""
}

// TestJobManagerKilled kills the job manager with SIGKILL while a job runs
// and starts it again on the same data directory: the catalog is intact,
// the lost job is recorded FAILED, the task managers register again, and
// new jobs run on both of them.
func TestJobManagerKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a multi-process cluster; runs without -short (make test)")
	}
	cl := startProcessCluster(t, 2, 2)
	endless := `
CREATE TABLE gen (k BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000');
CREATE TABLE sink (k BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE kept (id INT);
INSERT INTO kept VALUES (1), (2);
INSERT INTO sink SELECT k FROM gen;
`
	path := script(t, endless)
	out, stderr, err := braid(t, time.Minute, "sql", "--endpoint", cl.endpoint, "-f", path)
	if err != nil {
		t.Fatalf("submitting: %v\n%s", err, stderr)
	}
	ids := jobIDLine.FindAllStringSubmatch(out+stderr, -1)
	job := ids[len(ids)-1][1]
	waitJob(t, cl.endpoint, job, "RUNNING", 30*time.Second)

	cl.restartJobManager()
	cl.waitTaskManagers(2, 30*time.Second)
	desc := waitJob(t, cl.endpoint, job, "FAILED", 30*time.Second)
	if !strings.Contains(desc, "job manager restarted") {
		t.Fatalf("the lost job does not say why:\n%s", desc)
	}
	db := strings.Fields(strings.SplitN(readFile(t, path), "\n", 2)[0])[2]
	query := fmt.Sprintf("SELECT a.id FROM %s.kept a JOIN %s.kept b ON a.id = b.id;", strings.TrimSuffix(db, ";"), strings.TrimSuffix(db, ";"))
	q := filepath.Join(t.TempDir(), "q.sql")
	os.WriteFile(q, []byte(query), 0o644)
	out, stderr, err = braid(t, time.Minute, "sql", "--endpoint", cl.endpoint, "--format", "tsv", "--set", "parallelism.default=4", "-f", q)
	if err != nil {
		t.Fatalf("query after the restart: %v\n%s", err, stderr)
	}
	if got := normalize(out, false); got != "id\n1\n2" {
		t.Fatalf("query after the restart returned %q", got)
	}
	desc, _, _ = braid(t, 30*time.Second, "jobs", "describe", latestJob(t, cl.endpoint, "collect"), "--endpoint", cl.endpoint)
	tms := map[string]bool{}
	for _, line := range vertexBlock(desc, "Join") {
		tms[strings.Fields(line)[1]] = true
	}
	if len(tms) != 2 {
		t.Fatalf("after the restart the join ran on %d task managers, want 2:\n%s", len(tms), desc)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
