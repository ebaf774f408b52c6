package jobmanager_test

import (
	"context"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/jobmanager"
	"github.com/braidflow/braid/localcluster"
	"github.com/braidflow/braid/metastore"
)

// valuesInsert is an INSERT of n literal rows (INT, STRING, DOUBLE) into
// table; each string is width random characters (0: 'item-<i>').
func valuesInsert(table string, n, width int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	rnd := mathrand.New(mathrand.NewPCG(1, 2))
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s VALUES ", table)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		s := fmt.Sprintf("item-%d", i)
		if width > 0 {
			buf := make([]byte, width)
			for k := range buf {
				buf[k] = alphabet[rnd.IntN(len(alphabet))]
			}
			s = string(buf)
		}
		fmt.Fprintf(&b, "(%d, '%s', %d.25)", i, s, i)
	}
	b.WriteString(";")
	return b.String()
}

// jobKeyBytes is the total size of the keys and values etcd holds under
// the job's jobs/<id>/ prefix.
func jobKeyBytes(t *testing.T, cl *localcluster.Cluster, id string) int {
	t.Helper()
	st := cl.JobManager().Store()
	resp, err := st.Client().Get(context.Background(), st.Prefix()+"/jobs/"+id+"/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, kv := range resp.Kvs {
		n += len(kv.Key) + len(kv.Value)
	}
	return n
}

// runLarge is runJob for a statement too long to print in a failure.
func runLarge(t *testing.T, s *client.Session, sql string) string {
	t.Helper()
	r := &jobRows{rows: newRows()}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Execute(ctx, sql, false, r); err != nil {
		msg := err.Error()
		if len(msg) > 2000 {
			msg = msg[:1000] + " ... " + msg[len(msg)-1000:]
		}
		t.Fatalf("statement of %d bytes: %s", len(sql), msg)
	}
	if len(r.jobIDs) == 0 {
		t.Fatalf("statement of %d bytes: no job id", len(sql))
	}
	return r.jobIDs[len(r.jobIDs)-1]
}

// countRows returns SELECT COUNT(*) FROM table.
func countRows(t *testing.T, s *client.Session, table string) string {
	t.Helper()
	r := run(t, s, "SELECT COUNT(*) FROM "+table+";")
	if len(r.rows) == 0 {
		t.Fatalf("no count of %s", table)
	}
	last := r.rows[len(r.rows)-1]
	return last[strings.Index(last, "["):]
}

// TestValuesInsertRecordIsSmall: an INSERT of 3,000 literal rows into a
// managed table runs (its record was 2.8 MB raw, which etcd refused), and
// its etcd record is small: the graph compressed, the SQL text cut.
func TestValuesInsertRecordIsSmall(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	run(t, s, "CREATE TABLE t (id INT, name STRING, price DOUBLE);")
	sql := valuesInsert("t", 3000, 0)
	id := runLarge(t, s, sql)
	if got := countRows(t, s, "t"); got != "[3000]" {
		t.Fatalf("count = %s, want 3000 rows", got)
	}
	n := jobKeyBytes(t, cl, id)
	t.Logf("SQL %d bytes, etcd record %d bytes", len(sql), n)
	if n > 128<<10 {
		t.Fatalf("the job's etcd keys hold %d bytes, want at most 128 KiB", n)
	}
	rec, err := cl.JobManager().Store().GetJob(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.GraphRef != nil || len(rec.Graph) == 0 {
		t.Fatalf("graph of %d bytes, ref %+v: want it inline", len(rec.Graph), rec.GraphRef)
	}
	if len(rec.SQL) > metastore.MaxSQLBytes || !strings.Contains(rec.SQL, "[cut: the statement has ") || !strings.HasPrefix(sql, rec.SQL[:1000]) {
		t.Fatalf("recorded SQL of %d bytes ends %q", len(rec.SQL), rec.SQL[max(len(rec.SQL)-100, 0):])
	}
}

// TestLargeGraphKeptInCheckpointStorage: a graph too large for etcd even
// compressed is kept in the job's checkpoint storage, the record holding a
// reference; a job manager restarted on the same data reads it back.
func TestLargeGraphKeptInCheckpointStorage(t *testing.T) {
	dir := t.TempDir()
	cl, c := startSQLCluster(t, dir)
	s := openSession(t, c)
	run(t, s, "CREATE TABLE t (id INT, name STRING, price DOUBLE);")
	sql := valuesInsert("t", 16000, 40)
	id := runLarge(t, s, sql)
	if got := countRows(t, s, "t"); got != "[16000]" {
		t.Fatalf("count = %s, want 16000 rows", got)
	}
	n := jobKeyBytes(t, cl, id)
	rec, err := cl.JobManager().Store().GetJob(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("SQL %d bytes, etcd record %d bytes, graph file %+v", len(sql), n, rec.GraphRef)
	if rec.GraphRef == nil || rec.Graph != nil || rec.GraphRef.Size <= metastore.MaxInlineGraphBytes {
		t.Fatalf("graph of %d bytes inline, ref %+v: want it in a file over %d bytes", len(rec.Graph), rec.GraphRef, metastore.MaxInlineGraphBytes)
	}
	if n > 128<<10 {
		t.Fatalf("the job's etcd keys hold %d bytes, want at most 128 KiB", n)
	}
	c.Close()
	if err := cl.Close(); err != nil {
		t.Fatal(err)
	}
	cl, c = startSQLCluster(t, dir)
	defer cl.Close()
	defer c.Close()
	d, err := c.DescribeJob(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if d.Job.Status != jobmanager.StatusFinished || len(d.Vertices) == 0 {
		t.Fatalf("after the restart the job is %s with %d vertices", d.Job.Status, len(d.Vertices))
	}
}

// startJobStoreCluster starts a local cluster keeping ended jobs as js
// says, and a session on it.
func startJobStoreCluster(t *testing.T, js jobmanager.JobStoreConfig) (*localcluster.Cluster, *client.Client, *client.Session, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	cl, err := localcluster.Start(ctx, localcluster.Options{DataDir: dir, JobStore: js})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	c, err := client.Dial(ctx, cl.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return cl, c, openSession(t, c), dir
}

// listed returns the ids ListJobs shows.
func listed(t *testing.T, c *client.Client) []string {
	t.Helper()
	jobs, err := c.ListJobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, j := range jobs {
		ids = append(ids, j.ID)
	}
	return ids
}

// gone reports whether job id is forgotten: not listed, DescribeJob
// NotFound, no key left in etcd.
func gone(t *testing.T, cl *localcluster.Cluster, c *client.Client, id string) bool {
	t.Helper()
	if slices.Contains(listed(t, c), id) {
		return false
	}
	_, err := c.DescribeJob(context.Background(), id)
	var se *client.ServerError
	if !errors.As(err, &se) || se.Code != codes.NotFound {
		return false
	}
	return jobKeyBytes(t, cl, id) == 0
}

func waitGone(t *testing.T, cl *localcluster.Cluster, c *client.Client, ids ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, id := range ids {
		for !gone(t, cl, c, id) {
			if time.Now().After(deadline) {
				t.Fatalf("job %s is not forgotten; jobs listed: %v", id, listed(t, c))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// TestFinishedJobsExpire: with jobstore.expiration-time at 1 s a finished
// job is forgotten (etcd record, checkpoint pointers, graph file, memory)
// soon after it ended, while its retained checkpoint's files stay; a
// running job is kept.
func TestFinishedJobsExpire(t *testing.T) {
	cl, c, s, dir := startJobStoreCluster(t, jobmanager.JobStoreConfig{ExpirationTime: time.Second})
	run(t, s, `SET 'execution.checkpointing.interval' = '1h';
		CREATE TABLE src (id INT, name STRING, price DOUBLE);
		CREATE TABLE gen (k BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10');
		CREATE TABLE nothing (k BIGINT) WITH ('connector' = 'blackhole');`)
	// A graph large enough to be kept in a file, and a final checkpoint.
	id := runLarge(t, s, valuesInsert("src", 16000, 40))
	rec, err := cl.JobManager().Store().GetJob(context.Background(), id)
	if err != nil && !errors.Is(err, metastore.ErrNotFound) {
		t.Fatal(err)
	}
	cpDir := filepath.Join(dir, "jobmanager", "checkpoints", id)
	waitGone(t, cl, c, id)
	if rec != nil && rec.GraphRef != nil {
		if _, err := os.Stat(filepath.Join(cpDir, strings.SplitN(rec.GraphRef.URI, "#", 2)[1])); !os.IsNotExist(err) {
			t.Fatalf("graph file of the expired job: %v, want it deleted", err)
		}
	}
	chk, _ := filepath.Glob(filepath.Join(cpDir, "chk-*", "_metadata"))
	if len(chk) == 0 {
		t.Fatalf("no retained checkpoint left in %s after the job expired", cpDir)
	}
	running := startInsert(t, s, "INSERT INTO nothing SELECT k FROM gen;")
	time.Sleep(1500 * time.Millisecond)
	if !slices.Contains(listed(t, c), running) {
		t.Fatalf("the running job %s was forgotten", running)
	}
}

// TestJobStoreMaxCapacity: with jobstore.max-capacity 2 only the two
// latest ended jobs are kept.
func TestJobStoreMaxCapacity(t *testing.T) {
	cl, c, s, _ := startJobStoreCluster(t, jobmanager.JobStoreConfig{MaxCapacity: 2})
	run(t, s, "CREATE TABLE t (id INT);")
	var ids []string
	for i := range 4 {
		ids = append(ids, runJob(t, s, fmt.Sprintf("INSERT INTO t VALUES (%d);", i)))
	}
	waitGone(t, cl, c, ids[0], ids[1])
	for _, id := range ids[2:] {
		if _, err := c.DescribeJob(context.Background(), id); err != nil {
			t.Fatalf("job %s, one of the two latest: %v", id, err)
		}
	}
}
