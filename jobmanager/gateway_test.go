package jobmanager_test

import (
	"context"
	"fmt"
	mathrand "math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/grpc"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/internal/memberauth"
	"github.com/braidflow/braid/localcluster"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/types"
)

// rows collects what a script returns: status lines and result rows as
// "+I[a, b]" strings.
type rows struct {
	mu     sync.Mutex
	status []string
	cols   []client.ResultColumn
	loc    *time.Location
	rows   []string
	seen   chan struct{}
}

func newRows() *rows { return &rows{seen: make(chan struct{}, 1024)} }

func (r *rows) Status(_ int, msg, _ string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = append(r.status, msg)
}

func (r *rows) Schema(_ int, res client.ResultInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cols = res.Columns
	r.loc = res.Location
}

func (r *rows) Batch(_ int, b types.Batch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := 0; i < b.NumRows(); i++ {
		var cells []string
		for c, col := range r.cols {
			s, null := types.FormatValue(b.Column(c), i, col.Type, r.loc)
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
	// An unbounded job is still running when the cluster shuts down.
	r := run(t, s, "CREATE TABLE gen (k BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10'); CREATE TABLE nothing (k BIGINT) WITH ('connector' = 'blackhole'); INSERT INTO nothing SELECT k FROM gen;")
	if len(r.status) == 0 {
		t.Fatal("no status for the unbounded INSERT")
	}
	c.Close()
	if err := cl.Close(); err != nil {
		t.Fatal(err)
	}
	cl, c = startSQLCluster(t, dir)
	defer cl.Close()
	defer c.Close()
	s = openSession(t, c)
	equal(t, "rows after restart", run(t, s, "SELECT id, item FROM shop.orders;").sorted(), []string{"+I[1, pen]", "+I[2, ink]"})
	jobs, err := c.ListJobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for _, j := range jobs {
		if strings.HasPrefix(j.Name, "insert-into_default_catalog.shop.nothing") {
			// A graceful shutdown cancels running jobs; e2e's
			// TestJobManagerKilled covers a crash.
			if j.Status != "CANCELED" || !strings.Contains(j.Error, "shut down") {
				t.Fatalf("the job running at the shutdown is %s (%q), want CANCELED naming the shutdown", j.Status, j.Error)
			}
			lost++
		}
	}
	if lost != 1 {
		t.Fatalf("%d records of the job running at the restart: %+v", lost, jobs)
	}
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

// TestQueryFailsWhenDeployFails: a query whose job cannot be deployed (a
// registered task manager does not answer) ends with an error instead of
// hanging.
func TestQueryFailsWhenDeployFails(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	members, err := memberauth.New(cl.JobManager().MemberConfig())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(cl.Endpoint(), members.DialOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A task manager (a member: it has the cluster's secret) that registers
	// and never serves: it has the most free slots, so placement uses it.
	_, err = braidv1.NewClusterServiceClient(conn).RegisterTaskManager(context.Background(),
		&braidv1.RegisterTaskManagerRequest{TaskManagerId: "ghost", Address: "127.0.0.1:1", Slots: 8})
	if err != nil {
		t.Fatal(err)
	}
	s := openSession(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = s.Execute(ctx, "SELECT a.x FROM (VALUES (1)) AS a(x) JOIN (VALUES (1)) AS b(y) ON a.x = b.y;", false, newRows())
	if err == nil || ctx.Err() != nil {
		t.Fatalf("query on an unreachable task manager: err %v, ctx %v", err, ctx.Err())
	}
	if !strings.Contains(err.Error(), "ghost") && !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("the error does not name the unreachable task manager: %v", err)
	}
}

// TestExpressionsEndToEnd runs expressions through the whole path: binder,
// planner, VALUES source or calc, result rows.
func TestExpressionsEndToEnd(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	got := run(t, s, `SELECT TRIM('  a  '), TRIM(BOTH FROM '  b '), TRIM(LEADING 'x' FROM 'xxcx'), TRIM(TRAILING FROM 'd  '),
		7 / 2, -7 % 3, 1.5 * 2, CAST('12.50' AS DECIMAL(10, 2)), CASE WHEN 1 > 2 THEN 'a' ELSE 'bcd' END,
		FROM_UNIXTIME(44), TIMESTAMPDIFF(MINUTE, TIMESTAMP '2024-01-01 00:00:00', TIMESTAMP '2024-01-01 01:02:59'),
		TIMESTAMP '2024-01-01 10:00:00.5' + INTERVAL '7' DAY, 2 IN (1, 2, 3), NULL IS NULL, 404.89e0;`).sorted()
	equal(t, "expressions", got, []string{"+I[a, b, cx, d, 3, -1, 3.0, 12.50, bcd, 1970-01-01 00:00:44, 62, 2024-01-08 10:00:00.5, TRUE, TRUE, 404.89]"})
	run(t, s, "SET 'table.local-time-zone' = 'Asia/Tokyo';")
	got = run(t, s, "SELECT FROM_UNIXTIME(44), CAST(TIMESTAMP '2024-01-01 00:00:00' AS TIMESTAMP_LTZ(3));").sorted()
	equal(t, "in Asia/Tokyo", got, []string{"+I[1970-01-01 09:00:44, 2024-01-01 00:00:00.000]"})
}

// TestUpsertTable: a managed table with a primary key keeps the latest row
// of each key; reading it yields a changelog that joins and results apply.
func TestUpsertTable(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	run(t, s, `CREATE TABLE prices (item STRING, price INT, PRIMARY KEY (item) NOT ENFORCED);
		CREATE TABLE orders (id INT, item STRING);
		INSERT INTO prices VALUES ('pen', 1), ('ink', 5);
		INSERT INTO prices VALUES ('pen', 2);
		INSERT INTO orders VALUES (1, 'pen'), (2, 'ink'), (3, 'cap');`)
	var pen, ink []string
	for _, r := range run(t, s, "SELECT item, price FROM prices;").rows {
		if strings.Contains(r, "pen") {
			pen = append(pen, r)
		} else {
			ink = append(ink, r)
		}
	}
	// Keys are normalized in parallel: order holds within a key.
	equal(t, "changelog of key pen", pen, []string{"+I[pen, 1]", "-U[pen, 1]", "+U[pen, 2]"})
	equal(t, "changelog of key ink", ink, []string{"+I[ink, 5]"})
	got := run(t, s, "SELECT o.id, p.price FROM orders o JOIN prices p ON o.item = p.item;").rows
	// Apply the changelog: the final result holds the latest price.
	final := map[string]int{}
	for _, r := range got {
		if strings.HasPrefix(r, "+") {
			final[r[2:]]++
		} else {
			final[r[2:]]--
		}
	}
	var rows []string
	for r, n := range final {
		if n > 0 {
			rows = append(rows, r)
		}
	}
	sort.Strings(rows)
	equal(t, "join over the upsert table", rows, []string{"[1, 2]", "[2, 5]"})
	err := s.Execute(context.Background(), "INSERT INTO prices VALUES (CAST(NULL AS STRING), 3);", false, newRows())
	if err == nil || !strings.Contains(err.Error(), "column 'item' is NOT NULL") {
		t.Fatalf("NULL into a primary key column: %v", err)
	}
}

// TestUpsertIntoUpsertTable: updates flow from one upsert table into
// another; an append-only table refuses them at planning time.
func TestUpsertIntoUpsertTable(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	run(t, s, `CREATE TABLE prices (item STRING, price INT, PRIMARY KEY (item) NOT ENFORCED);
		CREATE TABLE latest (item STRING, price INT, PRIMARY KEY (item) NOT ENFORCED);
		CREATE TABLE log (item STRING, price INT);
		INSERT INTO prices VALUES ('pen', 1), ('ink', 5);
		INSERT INTO prices VALUES ('pen', 2);
		INSERT INTO latest SELECT item, price * 10 FROM prices;`)
	final := map[string]bool{}
	for _, r := range run(t, s, "SELECT * FROM latest;").rows {
		switch r[:2] {
		case "+I", "+U":
			final[r[2:]] = true
		default:
			delete(final, r[2:])
		}
	}
	if len(final) != 2 || !final["[pen, 20]"] || !final["[ink, 50]"] {
		t.Fatalf("latest holds %v, want [pen, 20] and [ink, 50]", final)
	}
	err := s.Execute(context.Background(), "INSERT INTO log SELECT item, price FROM prices;", false, newRows())
	if err == nil || !strings.Contains(err.Error(), "doesn't support consuming update and delete changes") {
		t.Fatalf("updates into an append-only table: %v", err)
	}
}

// TestJoinsAgainstOracle runs random tables through inner, outer and cross
// joins on the whole cluster (parallelism 4, rows crossing subtasks) and
// compares the final results with a nested-loop join computed here.
func TestJoinsAgainstOracle(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	r := mathrand.New(mathrand.NewPCG(42, 1))
	type row struct {
		k *int
		v int
	}

	gen := func(n int) []row {
		var rows []row
		for i := 0; i < n; i++ {
			var k *int
			if r.IntN(8) > 0 {
				x := r.IntN(12)
				k = &x
			}
			rows = append(rows, row{k, r.IntN(5)})
		}
		return rows
	}
	values := func(rows []row) string {
		var parts []string
		for _, x := range rows {
			k := "CAST(NULL AS INT)"
			if x.k != nil {
				k = fmt.Sprint(*x.k)
			}
			parts = append(parts, fmt.Sprintf("(%s, %d)", k, x.v))
		}
		return strings.Join(parts, ", ")
	}
	left, right := gen(60), gen(50)
	run(t, s, "SET 'parallelism.default' = '4'; CREATE TABLE l (k INT, v INT); CREATE TABLE r (k INT, w INT);"+
		"INSERT INTO l VALUES "+values(left)+"; INSERT INTO r VALUES "+values(right)+";")
	str := func(k *int, v int, null bool) string {
		if null {
			return "NULL, NULL"
		}
		if k == nil {
			return fmt.Sprintf("NULL, %d", v)
		}
		return fmt.Sprintf("%d, %d", *k, v)
	}
	oracle := func(outerL, outerR bool, cond func(a, b row) bool) []string {
		var out []string
		matchedR := make([]bool, len(right))
		for _, a := range left {
			m := false
			for i, b := range right {
				if cond(a, b) {
					out = append(out, "["+str(a.k, a.v, false)+", "+str(b.k, b.v, false)+"]")
					m, matchedR[i] = true, true
				}
			}
			if !m && outerL {
				out = append(out, "["+str(a.k, a.v, false)+", NULL, NULL]")
			}
		}
		if outerR {
			for i, b := range right {
				if !matchedR[i] {
					out = append(out, "[NULL, NULL, "+str(b.k, b.v, false)+"]")
				}
			}
		}
		sort.Strings(out)
		return out
	}
	eq := func(a, b row) bool { return a.k != nil && b.k != nil && *a.k == *b.k }
	for _, tc := range []struct {
		sql          string
		outerL, outR bool
		cond         func(a, b row) bool
	}{
		{"SELECT l.k, l.v, r.k, r.w FROM l JOIN r ON l.k = r.k", false, false, eq},
		{"SELECT l.k, l.v, r.k, r.w FROM l JOIN r ON l.k = r.k AND l.v < r.w", false, false,
			func(a, b row) bool { return eq(a, b) && a.v < b.v }},
		{"SELECT l.k, l.v, r.k, r.w FROM l LEFT JOIN r ON l.k = r.k", true, false, eq},
		{"SELECT l.k, l.v, r.k, r.w FROM l RIGHT JOIN r ON l.k = r.k AND l.v > 1", false, true,
			func(a, b row) bool { return eq(a, b) && a.v > 1 }},
		{"SELECT l.k, l.v, r.k, r.w FROM l FULL JOIN r ON r.k = l.k", true, true, eq},
		{"SELECT l.k, l.v, r.k, r.w FROM l CROSS JOIN r WHERE l.v = r.w", false, false,
			func(a, b row) bool { return a.v == b.v }},
	} {
		got := materializeRows(t, run(t, s, tc.sql+";").rows)
		want := oracle(tc.outerL, tc.outR, tc.cond)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s:\ngot  %d rows %v\nwant %d rows %v", tc.sql, len(got), got, len(want), want)
		}
	}
}

// materializeRows applies a changelog of "+I[...]" strings and returns the
// remaining rows sorted, failing on a retraction of a missing row.
func materializeRows(t *testing.T, changes []string) []string {
	t.Helper()
	count := map[string]int{}
	for _, ch := range changes {
		kind, row := ch[:2], ch[2:]
		if kind == "+I" || kind == "+U" {
			count[row]++
		} else if count[row]--; count[row] < 0 {
			t.Fatalf("%s retracts a row that is not in the result", ch)
		}
	}
	var out []string
	for row, n := range count {
		for ; n > 0; n-- {
			out = append(out, row)
		}
	}
	sort.Strings(out)
	return out
}
