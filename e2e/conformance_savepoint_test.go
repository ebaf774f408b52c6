package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/client/render"
	"github.com/braidflow/braid/localcluster"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/sql/parser"
	"github.com/braidflow/braid/types"
)

// savepointPasses are the ways TestConformanceSavepointRescale runs each
// case: where it cuts the case's input (see splitCase), at which
// parallelism the second run resumes from the savepoint the first run (at
// parallelism 2) stopped with, and whether the job takes periodic
// checkpoints (its rows then reach the client only when a checkpoint, or
// the stop savepoint, covers them) or only the savepoint.
var savepointPasses = []struct {
	split       splitKind
	parallelism int
	interval    string // execution.checkpointing.interval; "" for none
}{
	{split: splitByTable, parallelism: 1},
	{split: splitByRows, parallelism: 3, interval: "200ms"},
}

// TestConformanceSavepointRescale is the third way of running the
// conformance cases: with a savepoint taken mid-run and a restore at
// another parallelism. Each case runs in a database of its own on one
// in-process cluster, through the Go client:
//
//  1. its statements, with only the first part of its input (splitCase);
//  2. its final SELECT at parallelism 2, following (sources over managed
//     tables keep running), until its sources have read every row there
//     is, then STOP JOB WITH SAVEPOINT; the rows the client got are kept;
//  3. the rest of its input;
//  4. the SELECT again, bounded, from the savepoint at another
//     parallelism (savepointPasses).
//
// The two changelogs, applied one after the other, must materialize to
// the case's expected result (in order, for an ORDER BY ... LIMIT case, as
// the CLI prints it), and no retraction may miss its row: the first run
// delivered every change before the savepoint's barrier, and the restored
// run went on from exactly there, its keyed state split or merged by key
// group. The restored run's sources must read only the second part of the
// input, so a restore that started over would fail too.
func TestConformanceSavepointRescale(t *testing.T) {
	if testing.Short() {
		t.Skip("restores every case twice on an in-process cluster, about a minute; runs without -short (make test)")
	}
	c := startSavepointCluster(t, 10*time.Minute)
	for _, pass := range savepointPasses {
		for i, name := range supported {
			t.Run(fmt.Sprintf("p%d/%s", pass.parallelism, name), func(t *testing.T) {
				cs := loadCase(t, name)
				split := splitCase(t, cs, pass.split)
				db := fmt.Sprintf("sp%d_case_%d_%d", pass.parallelism, i, time.Now().UnixNano())
				runSavepointCase(t, c, cs, split, db, pass.parallelism, pass.interval)
			})
		}
	}
}

// startSavepointCluster starts the in-process cluster (2 task managers of
// 2 slots) the savepoint tests run their cases on, stopped when the test
// ends, and returns a client of it; timeout bounds starting it.
func startSavepointCluster(t *testing.T, timeout time.Duration) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cl, err := localcluster.Start(ctx, localcluster.Options{DataDir: t.TempDir(), TaskManagers: 2, Slots: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	c, err := client.Dial(ctx, cl.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// runRescaledCases runs the cases names of testdata/dir the third way:
// split by rows, a savepoint mid-run, then a restore at parallelism 1 and
// 3 (see TestConformanceSavepointRescale). Each case runs in a database of
// its own.
func runRescaledCases(t *testing.T, dir string, names []string) {
	t.Helper()
	if testing.Short() {
		t.Skip("restores each case twice on an in-process cluster; runs without -short (make test)")
	}
	c := startSavepointCluster(t, 5*time.Minute)
	for _, par := range []int{1, 3} {
		for i, name := range names {
			t.Run(fmt.Sprintf("p%d/%s", par, name), func(t *testing.T) {
				cs := loadCaseFile(t, name, filepath.Join("testdata", dir, name+".sql"))
				split := splitCase(t, cs, splitByRows)
				db := fmt.Sprintf("%s%d_case_%d_%d", strings.ReplaceAll(dir, "_", ""), par, i, time.Now().UnixNano())
				runSavepointCase(t, c, cs, split, db, par, "")
			})
		}
	}
}

// splitKind says where splitCase cuts a case's input.
type splitKind int

const (
	// splitByTable runs every INSERT but the last before the savepoint,
	// the last one after it. In every case that INSERT fills a table the
	// final SELECT reads (directly, or, in seed-merge-streams, through the
	// table it copies into), so the first run reads the other inputs in
	// full and keeps state for them (one side of a join, the products of
	// the lateral join, the rates of the temporal join), and an outer
	// join's or the Top-3's rows reach the client before the savepoint
	// and are retracted after it.
	splitByTable splitKind = iota
	// splitByRows runs the first half of every INSERT ... VALUES before
	// the savepoint and the rest after it, so both inputs of a join have
	// state on both sides of it and inner joins emit rows in both runs.
	// It falls back to splitByTable for a case with an INSERT ... SELECT
	// (seed-merge-streams: the copy reads what its source holds when it
	// runs, so rows added to the source later would need the copy to run
	// again) or with event time (seed-interval-join, seed-temporal-join).
	//
	// NB: a straight run reads each table's rows in one batch, behind one
	// watermark. Cutting a table's rows would move its watermark ahead of
	// rows that come after the cut (seed-interval-join's order 3 at 09:00
	// follows orders at 10:00) and make them late, changing the result;
	// whole tables keep every source's watermark where a straight run has
	// it.
	splitByRows
)

// caseSplit is a conformance case cut in two around a savepoint.
type caseSplit struct {
	// before runs ahead of the first run of query, in script order.
	before []string
	// after runs between the savepoint and the restored run.
	after []string
	query string
}

// splitCase cuts c's statements (all but its final SELECT) as kind says.
func splitCase(t *testing.T, c conformanceCase, kind splitKind) caseSplit {
	t.Helper()
	stmts, err := parser.ParseScript(c.sql)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	if len(stmts) == 0 {
		t.Fatalf("%s: no statements", c.name)
	}
	q, ok := stmts[len(stmts)-1].(*ast.QueryStmt)
	if !ok {
		t.Fatalf("%s: the last statement is a %T, not a query", c.name, stmts[len(stmts)-1])
	}
	stmts = stmts[:len(stmts)-1]
	if kind == splitByRows && !rowsSplittable(stmts) {
		kind = splitByTable
	}
	s := caseSplit{query: q.Source().Text(c.sql) + ";"}
	last, count := -1, 0
	for i, st := range stmts {
		if _, ok := st.(*ast.InsertStmt); ok {
			last, count = i, count+1
		}
	}
	if kind == splitByTable && count == 1 && rowsSplittable(stmts) {
		// NB: a case with one INSERT (seed-lookup-join, whose other input
		// is a MySQL table) cannot be cut between tables; its rows are.
		kind = splitByRows
	}
	for i, st := range stmts {
		ins, isInsert := st.(*ast.InsertStmt)
		switch {
		case !isInsert:
			s.before = append(s.before, st.Source().Text(c.sql)+";")
		case kind == splitByTable && i == last:
			s.after = append(s.after, st.Source().Text(c.sql)+";")
		case kind == splitByTable:
			s.before = append(s.before, st.Source().Text(c.sql)+";")
		default:
			rows := ins.Query.Body.(*ast.Values).Rows
			half := (len(rows) + 1) / 2
			s.before = append(s.before, withRows(ins, rows[:half]))
			if half < len(rows) {
				s.after = append(s.after, withRows(ins, rows[half:]))
			}
		}
	}
	inserts := 0
	for _, st := range s.before {
		if strings.HasPrefix(strings.TrimSpace(strings.ToUpper(st)), "INSERT") {
			inserts++
		}
	}
	if inserts == 0 || len(s.after) == 0 {
		t.Fatalf("%s: the split leaves %d INSERTs before the savepoint and %d after; each part needs one", c.name, inserts, len(s.after))
	}
	return s
}

// rowsSplittable reports whether splitByRows applies to stmts: every
// INSERT is a plain INSERT ... VALUES and no table declares a watermark.
func rowsSplittable(stmts []ast.Statement) bool {
	for _, st := range stmts {
		switch st := st.(type) {
		case *ast.CreateTableStmt:
			if len(st.Watermarks) > 0 {
				return false
			}
		case *ast.InsertStmt:
			q := st.Query
			if _, ok := q.Body.(*ast.Values); !ok || len(q.With) > 0 || len(q.OrderBy) > 0 || q.Limit != nil {
				return false
			}
		}
	}
	return true
}

// withRows prints ins, an INSERT ... VALUES, with rows in place of its own.
func withRows(ins *ast.InsertStmt, rows []ast.Expr) string {
	v := *ins.Query.Body.(*ast.Values)
	v.Rows = rows
	q := *ins.Query
	q.Body = &v
	cp := *ins
	cp.Query = &q
	return cp.String() + ";"
}

// runSavepointCase runs cs the third way (see
// TestConformanceSavepointRescale) in database db, restoring at
// parallelism par.
func runSavepointCase(t *testing.T, c *client.Client, cs conformanceCase, split caseSplit, db string, par int, interval string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := c.OpenSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.WithoutCancel(ctx))
	setup := []string{"CREATE DATABASE " + db + ";", "USE " + db + ";", "SET 'parallelism.default' = '2';"}
	if interval != "" {
		setup = append(setup, "SET 'execution.checkpointing.interval' = '"+interval+"';")
	}
	for _, st := range append(setup, split.before...) {
		execute(ctx, t, s, st)
	}

	// What the query's sources read of the first part: a bounded run of
	// it at the same parallelism tells.
	firstPart := runQuery(ctx, t, c, s, split.query)
	if total(firstPart) == 0 {
		t.Fatalf("%s: the first part of the split has no rows for the query to read", cs.name)
	}

	// The first run follows, then stops with a savepoint once its sources
	// read all of that.
	res := newResultLog()
	first := res.run()
	done := make(chan error, 1)
	go func() { done <- s.Execute(ctx, split.query, true, first) }()
	var id string
	select {
	case id = <-first.started:
	case err := <-done:
		t.Fatalf("%s: the following query ended before it started: %v", cs.name, err)
	}
	if err := waitSourceRows(ctx, c, id, firstPart); err != nil {
		t.Fatalf("%s: %v", cs.name, err)
	}
	_, sp, err := c.StopJob(ctx, id, true, "")
	if err != nil {
		t.Fatalf("%s: STOP JOB WITH SAVEPOINT: %v", cs.name, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("%s: the stopped query: %v", cs.name, err)
	}
	if first.status != "FINISHED" {
		t.Fatalf("%s: the query stopped with a savepoint ended %s, want FINISHED", cs.name, first.status)
	}
	// NB: a stop-with-savepoint pauses the sources at its barrier: the
	// stopped job read nothing more than what was waited for.
	if got, err := sourceRows(ctx, c, id); err != nil || !maps.Equal(got, firstPart) {
		t.Fatalf("%s: the stopped job's sources read %v (%v), want %v", cs.name, got, err, firstPart)
	}

	for _, st := range split.after {
		execute(ctx, t, s, st)
	}
	execute(ctx, t, s, fmt.Sprintf("SET 'parallelism.default' = '%d';", par))
	execute(ctx, t, s, "SET 'execution.savepoint.path' = '"+sp+"';")
	second := res.run()
	if err := s.Execute(ctx, split.query, false, second); err != nil {
		t.Fatalf("%s: the query restored from %s at parallelism %d: %v", cs.name, sp, par, err)
	}
	if second.err != nil {
		t.Fatalf("%s: %v", cs.name, second.err)
	}
	restored, err := sourceRows(ctx, c, second.jobID)
	if err != nil {
		t.Fatal(err)
	}
	checkRestoredParallelism(ctx, t, c, second.jobID, par)

	// A straight run over all the input: its result must be the case's
	// (else the restore is not to blame), and its sources read what both
	// runs read together.
	execute(ctx, t, s, "RESET 'execution.savepoint.path';")
	straight := newResultLog()
	sr := straight.run()
	if err := s.Execute(ctx, split.query, false, sr); err != nil {
		t.Fatalf("%s: the straight run: %v", cs.name, err)
	}
	compareResult(t, cs, "the straight run", straight.tsv())
	all, err := sourceRows(ctx, c, sr.jobID)
	if err != nil {
		t.Fatal(err)
	}
	for table, n := range all {
		if firstPart[table]+restored[table] != n {
			t.Errorf("%s: the sources of table %s read %d rows before the savepoint and %d after, a straight run %d",
				cs.name, table, firstPart[table], restored[table], n)
		}
	}

	t.Logf("%s: %d changes before the savepoint, %d after (sources read %v, then %v)",
		cs.name, first.changes, second.changes, firstPart, restored)
	if len(res.missing) > 0 {
		t.Errorf("%s: retractions of rows that no earlier change added (the first run lost rows, or the restored one repeated a retraction): %q",
			cs.name, res.missing)
	}
	compareResult(t, cs, "restored from "+sp, res.tsv())
}

// compareResult compares got, a result as resultLog.tsv prints it, with
// the case's. NB: an ORDER BY ... LIMIT case compares in order, since the
// TSV renderer prints the final rows in the result's ORDER BY order.
func compareResult(t *testing.T, c conformanceCase, what, got string) {
	t.Helper()
	g, w := normalize(got, c.ordered), normalize(c.want, c.ordered)
	if g != w {
		t.Fatalf("%s: %s: result differs\n--- got\n%s\n--- want\n%s", c.name, what, g, w)
	}
}

// runQuery runs query bounded and returns how many rows its sources read.
func runQuery(ctx context.Context, t *testing.T, c *client.Client, s *client.Session, query string) map[string]int64 {
	t.Helper()
	l := newResultLog()
	r := l.run()
	if err := s.Execute(ctx, query, false, r); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	n, err := sourceRows(ctx, c, r.jobID)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func total(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// execute runs one statement that returns no rows worth keeping.
func execute(ctx context.Context, t *testing.T, s *client.Session, stmt string) {
	t.Helper()
	if err := s.Execute(ctx, stmt, false, newResultLog().run()); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// sourceRows returns how many rows the sources of job id read, by table
// (a vertex "Source: orders -> Calc" reads orders), as the job's subtasks
// last reported.
func sourceRows(ctx context.Context, c *client.Client, id string) (map[string]int64, error) {
	d, err := c.DescribeJob(ctx, id)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, v := range d.Vertices {
		name, ok := strings.CutPrefix(v.Name, "Source: ")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, " -> ")
		var n int64
		for _, st := range v.Subtasks {
			n += st.RowsIn
		}
		out[name] += n
	}
	return out, nil
}

// waitSourceRows waits until the sources of the running job id have read
// want. NB: subtasks report their counters about once a second, and the
// job may not be submitted yet when its result starts.
func waitSourceRows(ctx context.Context, c *client.Client, id string, want map[string]int64) error {
	deadline := time.Now().Add(45 * time.Second)
	for {
		got, err := sourceRows(ctx, c, id)
		var se *client.ServerError
		if err != nil && !(errors.As(err, &se) && se.Code == codes.NotFound) {
			return err
		}
		if err == nil && maps.Equal(got, want) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("job %s: sources read %v, want %v", id, got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkRestoredParallelism checks that the restored job id runs its
// operators at par. Sources are left out (a managed table's source runs
// at most at its partition count, one here), and so is the collect sink,
// which always runs at 1.
func checkRestoredParallelism(ctx context.Context, t *testing.T, c *client.Client, id string, par int) {
	t.Helper()
	d, err := c.DescribeJob(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range d.Vertices {
		if strings.HasPrefix(v.Name, "Source: ") || strings.Contains(v.Name, "Collect") {
			continue
		}
		if v.Parallelism != par {
			t.Errorf("restored job %s: vertex %s runs at parallelism %d, want %d", id, v.Name, v.Parallelism, par)
		}
	}
}

// resultLog materializes the changelogs of one query's runs, applied one
// after the other, as braid sql --format tsv does (render.TSV: the final
// rows, in ORDER BY order for an ORDER BY ... LIMIT result), and records
// every retraction that retracts no row an earlier change added: TSV
// ignores those, but here each is a lost or repeated change.
type resultLog struct {
	out     bytes.Buffer
	result  *render.TSV
	cols    []client.ResultColumn
	loc     *time.Location
	live    map[string]int
	cells   []string
	missing []string
	runs    []*queryRun
}

func newResultLog() *resultLog { return &resultLog{live: map[string]int{}} }

// run returns the handler for the log's next run. Runs must not overlap.
func (l *resultLog) run() *queryRun {
	r := &queryRun{log: l, started: make(chan string, 1)}
	l.runs = append(l.runs, r)
	return r
}

// tsv returns the materialized result of every run so far.
func (l *resultLog) tsv() string {
	if l.result == nil {
		return ""
	}
	l.out.Reset()
	if err := l.result.End(); err != nil {
		return "render: " + err.Error()
	}
	return l.out.String()
}

// queryRun is the client.Handler of one run of a query. Its fields may be
// read once the run's Execute returned; started receives the job id when
// the result starts.
type queryRun struct {
	log     *resultLog
	started chan string
	jobID   string
	status  string
	changes int
	err     error
}

var _ client.Handler = (*queryRun)(nil)

func (r *queryRun) Status(int, string, string) {}

// Schema starts the shared materialization on the first run; a later run
// must have the same columns.
func (r *queryRun) Schema(_ int, res client.ResultInfo) {
	l := r.log
	r.jobID = res.JobID
	if res.JobID != "" {
		r.started <- res.JobID
	}
	if l.result == nil {
		l.cols, l.loc = res.Columns, res.Location
		l.cells = make([]string, len(res.Columns))
		l.result = render.NewTSV(&l.out, res.Columns, res.Location)
		l.result.OrderBy(res.Order)
		return
	}
	if !slices.EqualFunc(l.cols, res.Columns, func(a, b client.ResultColumn) bool { return a.Name == b.Name && a.Type.String() == b.Type.String() }) {
		r.err = fmt.Errorf("run %d has columns %v, the first had %v", len(l.runs), res.Columns, l.cols)
	}
}

func (r *queryRun) Batch(_ int, b types.Batch) {
	l := r.log
	if l.result == nil {
		return
	}
	for i := 0; i < b.NumRows(); i++ {
		for c, col := range l.cols {
			s, null := types.FormatValue(b.Column(c), i, col.Type, l.loc)
			if null {
				s = "NULL"
			}
			l.cells[c] = s
		}
		line := strings.Join(l.cells, "\t")
		if b.Kind(i).IsAccumulate() {
			l.live[line]++
		} else if l.live[line] == 0 {
			l.missing = append(l.missing, b.Kind(i).String()+"["+line+"]")
		} else {
			l.live[line]--
		}
	}
	r.changes += b.NumRows()
	_ = l.result.Batch(b)
}

func (r *queryRun) End(_ int, status string) { r.status = status }
