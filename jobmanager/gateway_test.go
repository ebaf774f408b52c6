package jobmanager_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/localcluster"
	"github.com/braidflow/braid/types"
)

// rows collects what a script returns: status lines and result rows as
// "+I[a, b]" strings.
type rows struct {
	mu     sync.Mutex
	status []string
	cols   []client.ResultColumn
	rows   []string
	seen   chan struct{}
}

func newRows() *rows { return &rows{seen: make(chan struct{}, 1024)} }

func (r *rows) Status(_ int, msg, _ string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = append(r.status, msg)
}

func (r *rows) Schema(_ int, cols []client.ResultColumn, _ bool, _ string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cols = cols
}

func (r *rows) Batch(_ int, b types.Batch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := 0; i < b.NumRows(); i++ {
		var cells []string
		for c, col := range r.cols {
			s, null := types.FormatValue(b.Column(c), i, col.Type, time.UTC)
			if null {
				s = "NULL"
			}
			cells = append(cells, s)
		}
		r.rows = append(r.rows, b.Kind(i).String()+"["+strings.Join(cells, ", ")+"]")
		select {
		case r.seen <- struct{}{}:
		default:
		}
	}
}

func (r *rows) End(int, string) {}

func (r *rows) sorted() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]string(nil), r.rows...)
	sort.Strings(out)
	return out
}

func startSQLCluster(t *testing.T, dir string) (*localcluster.Cluster, *client.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := localcluster.Start(ctx, localcluster.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(ctx, cl.Endpoint())
	if err != nil {
		cl.Close()
		t.Fatal(err)
	}
	return cl, c
}

func openSession(t *testing.T, c *client.Client) *client.Session {
	t.Helper()
	s, err := c.OpenSession(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func run(t *testing.T, s *client.Session, sql string) *rows {
	t.Helper()
	r := newRows()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Execute(ctx, sql, false, r); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return r
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s:\ngot  %q\nwant %q", what, got, want)
	}
}

// TestCatalogAcrossSessions: tables outlive the session that created them;
// temporary tables are visible to their own session only.
func TestCatalogAcrossSessions(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	a, b := openSession(t, c), openSession(t, c)
	run(t, a, "CREATE TABLE kept (id INT); CREATE TEMPORARY TABLE mine (id INT); INSERT INTO mine VALUES (7);")
	equal(t, "session a tables", run(t, a, "SHOW TABLES;").sorted(), []string{"+I[kept]", "+I[mine]"})
	equal(t, "session a reads its temporary table", run(t, a, "SELECT id FROM mine;").sorted(), []string{"+I[7]"})
	equal(t, "session b tables", run(t, b, "SHOW TABLES;").sorted(), []string{"+I[kept]"})
	err := b.Execute(context.Background(), "SELECT * FROM mine;", false, newRows())
	if err == nil || !strings.Contains(err.Error(), `line 1, column 15: unknown table "mine"`) {
		t.Fatalf("another session's temporary table: %v", err)
	}
	if err := a.Execute(context.Background(), "CREATE TABLE kept (x INT);", false, newRows()); err == nil ||
		!strings.Contains(err.Error(), "already exists") {
		t.Fatalf("creating an existing table: %v", err)
	}
	run(t, a, "CREATE TABLE IF NOT EXISTS kept (x INT);")
}

// TestCatalogAndDataSurviveRestart restarts the whole local cluster on the
// same data directory: tables and the rows of managed tables are still there.
func TestCatalogAndDataSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	cl, c := startSQLCluster(t, dir)
	s := openSession(t, c)
	run(t, s, "CREATE DATABASE shop; USE shop; CREATE TABLE orders (id INT, item STRING); INSERT INTO orders VALUES (1, 'pen'), (2, 'ink');")
	c.Close()
	if err := cl.Close(); err != nil {
		t.Fatal(err)
	}
	cl, c = startSQLCluster(t, dir)
	defer cl.Close()
	defer c.Close()
	s = openSession(t, c)
	equal(t, "rows after restart", run(t, s, "SELECT id, item FROM shop.orders;").sorted(), []string{"+I[1, pen]", "+I[2, ink]"})
}

// TestDropManagedTableDeletesData: dropping a managed table deletes its
// topic, and a table created again under the name starts empty.
func TestDropManagedTableDeletesData(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	run(t, s, "CREATE TABLE t (id INT); INSERT INTO t VALUES (1), (2);")
	if n := topics(t, cl, "braid.default_database.t."); n != 1 {
		t.Fatalf("%d topics for table t, want 1", n)
	}
	run(t, s, "DROP TABLE t;")
	if n := topics(t, cl, "braid.default_database.t."); n != 0 {
		t.Fatalf("%d topics after DROP TABLE, want 0", n)
	}
	run(t, s, "CREATE TABLE t (id INT);")
	equal(t, "re-created table", run(t, s, "SELECT * FROM t;").sorted(), nil)
}

func topics(t *testing.T, cl *localcluster.Cluster, prefix string) int {
	t.Helper()
	kc, err := kgo.NewClient(kgo.SeedBrokers(cl.JobManager().Brokers()...))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	list, err := kadm.NewClient(kc).ListTopics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range list.Names() {
		if strings.HasPrefix(name, prefix) {
			n++
		}
	}
	return n
}

// TestFollowStreamsNewRows: with follow, a query over a managed table keeps
// running and sees rows inserted after it started; cancelling it stops it.
func TestFollowStreamsNewRows(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	run(t, s, "CREATE TABLE t (id INT); INSERT INTO t VALUES (1);")
	r := newRows()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	follower := openSession(t, c)
	go func() { done <- follower.Execute(ctx, "SELECT id * 10 AS x FROM t;", true, r) }()
	waitRows(t, r, 1)
	run(t, s, "INSERT INTO t VALUES (2), (3);")
	waitRows(t, r, 3)
	equal(t, "followed rows", r.sorted(), []string{"+I[10]", "+I[20]", "+I[30]"})
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a cancelled follow query returned no error")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("cancelling the follow query did not stop it")
	}
	// The job behind it ends.
	deadline := time.Now().Add(20 * time.Second)
	for {
		jobs, err := c.ListJobs(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		running := 0
		for _, j := range jobs {
			if j.Status == "RUNNING" {
				running++
			}
		}
		if running == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs still running after the query was cancelled: %+v", running, jobs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func waitRows(t *testing.T, r *rows, n int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		r.mu.Lock()
		got := len(r.rows)
		r.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-r.seen:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("got %d rows, want %d: %v", got, n, fmt.Sprint(r.sorted()))
		}
	}
}
