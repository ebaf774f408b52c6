package render

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/types"
)

// row is one changelog row for makeBatch: its kind and one value per
// column (nil is NULL).
type row struct {
	kind types.RowKind
	vals []any
}

// makeBatch builds a batch of cols from Go values: int for integer types,
// float64, string, bool, int64 unscaled for DECIMAL, time.Time for TIMESTAMP.
func makeBatch(t testing.TB, cols []client.ResultColumn, rows []row) types.Batch {
	t.Helper()
	schema := make(types.Schema, len(cols))
	for i, c := range cols {
		schema[i] = types.Field{Name: c.Name, Type: c.Type}
	}
	as := schema.ArrowSchema()
	rb := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer rb.Release()
	for _, r := range rows {
		for i, v := range r.vals {
			fb := rb.Field(i)
			if v == nil {
				fb.AppendNull()
				continue
			}
			switch b := fb.(type) {
			case *array.Int32Builder:
				b.Append(int32(v.(int)))
			case *array.Int64Builder:
				b.Append(int64(v.(int)))
			case *array.Float64Builder:
				b.Append(v.(float64))
			case *array.StringBuilder:
				b.Append(v.(string))
			case *array.BooleanBuilder:
				b.Append(v.(bool))
			case *array.Decimal128Builder:
				b.Append(decimal128.FromI64(v.(int64)))
			case *array.TimestampBuilder:
				b.Append(arrow.Timestamp(v.(time.Time).UnixNano()))
			case *array.BinaryBuilder:
				b.Append(v.([]byte))
			default:
				t.Fatalf("makeBatch: no support for %T", fb)
			}
		}
		rb.Field(len(cols)).(*array.Int8Builder).Append(int8(r.kind))
	}
	return types.Batch{Rec: rb.NewRecordBatch()}
}

var (
	testCols = []client.ResultColumn{
		{Name: "id", Type: types.Int},
		{Name: "name", Type: types.String},
		{Name: "price", Type: types.Double},
		{Name: "amount", Type: types.Decimal(10, 2)},
		{Name: "ts", Type: types.Timestamp(3)},
		{Name: "ok", Type: types.Boolean},
	}
	ts1 = time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	ts2 = time.Date(2025, 5, 1, 10, 0, 1, 250_000_000, time.UTC)
)

func testBatches(t testing.TB) []types.Batch {
	return []types.Batch{
		makeBatch(t, testCols, []row{
			{types.Insert, []any{1, "Alice", 404.89, int64(1250), ts1, true}},
			{types.Insert, []any{nil, "张三李四王五", 5.0, nil, nil, nil}},
		}),
		makeBatch(t, testCols, []row{
			{types.Insert, []any{2, "a rather long name", 1e20, int64(-300), ts2, false}},
			{types.UpdateBefore, []any{1, "Alice", 404.89, int64(1250), ts1, true}},
			{types.UpdateAfter, []any{1, "Alice", 0.5, int64(9000), ts1, true}},
			{types.Delete, []any{nil, "张三李四王五", 5.0, nil, nil, nil}},
		}),
	}
}

func render(t *testing.T, r Result, batches []types.Batch) {
	t.Helper()
	for _, b := range batches {
		if err := r.Batch(b); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	if err := r.End(); err != nil {
		t.Fatal(err)
	}
}

func TestTableau(t *testing.T) {
	var buf bytes.Buffer
	render(t, NewTableau(&buf, testCols, nil, 10), testBatches(t))
	want := `+----+-------------+------------+------------+--------------+-------------------------+--------+
| op |          id |       name |      price |       amount |                      ts |     ok |
+----+-------------+------------+------------+--------------+-------------------------+--------+
| +I |           1 |      Alice |     404.89 |        12.50 | 2025-05-01 10:00:00.000 |   TRUE |
| +I |      <NULL> |  张三李... |        5.0 |       <NULL> |                  <NULL> | <NULL> |
| +I |           2 | a rathe... |     1.0E20 |        -3.00 | 2025-05-01 10:00:01.250 |  FALSE |
| -U |           1 |      Alice |     404.89 |        12.50 | 2025-05-01 10:00:00.000 |   TRUE |
| +U |           1 |      Alice |        0.5 |        90.00 | 2025-05-01 10:00:00.000 |   TRUE |
| -D |      <NULL> |  张三李... |        5.0 |       <NULL> |                  <NULL> | <NULL> |
+----+-------------+------------+------------+--------------+-------------------------+--------+
Received a total of 6 rows
`
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestTableauDefaultWidthsAndEmpty(t *testing.T) {
	cols := []client.ResultColumn{
		{Name: "a_long_column_name", Type: types.TinyInt},
		{Name: "s", Type: types.String},
		{Name: "c", Type: types.BigInt},
	}
	var buf bytes.Buffer
	r := NewTableau(&buf, cols, nil, 0)
	if err := r.End(); err != nil {
		t.Fatal(err)
	}
	want := `+----+--------------------+--------------------------------+----------------------+
| op | a_long_column_name |                              s |                    c |
+----+--------------------+--------------------------------+----------------------+
Received a total of 0 row
`
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestTableauOneRowAndCancel(t *testing.T) {
	cols := []client.ResultColumn{{Name: "cnt", Type: types.BigInt}}
	b := makeBatch(t, cols, []row{{types.Insert, []any{7}}})
	var buf bytes.Buffer
	r := NewTableau(&buf, cols, nil, 0)
	if err := r.Batch(b); err != nil {
		t.Fatal(err)
	}
	b.Release()
	if err := r.Cancelled(); err != nil {
		t.Fatal(err)
	}
	want := `+----+----------------------+
| op |                  cnt |
+----+----------------------+
| +I |                    7 |
Query terminated, received a total of 1 row
`
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestFit(t *testing.T) {
	for _, c := range []struct {
		s    string
		w    int
		want string
	}{
		{"abc", 5, "  abc"},
		{"abcdef", 5, "ab..."},
		{"abcde", 5, "abcde"},
		{"日本", 4, "日本"},
		{"日本語", 5, "日..."},
		{"日本語", 6, "日本語"},
		{"日本語テキスト", 8, " 日本..."},
	} {
		if got := fit(c.s, c.w); got != c.want || displayWidth(got) != c.w {
			t.Errorf("fit(%q, %d) = %q (width %d), want %q", c.s, c.w, got, displayWidth(got), c.want)
		}
	}
}

func TestTSVAppliesChangelog(t *testing.T) {
	var buf bytes.Buffer
	render(t, NewTSV(&buf, testCols, nil), testBatches(t))
	want := "id\tname\tprice\tamount\tts\tok\n" +
		"2\ta rather long name\t1.0E20\t-3.00\t2025-05-01 10:00:01.250\tFALSE\n" +
		"1\tAlice\t0.5\t90.00\t2025-05-01 10:00:00.000\tTRUE\n"
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestTSVRemovesOneEqualRow(t *testing.T) {
	cols := []client.ResultColumn{{Name: "k", Type: types.String}, {Name: "v", Type: types.Int}}
	b := makeBatch(t, cols, []row{
		{types.Insert, []any{"a", 1}},
		{types.Insert, []any{"b", nil}},
		{types.Insert, []any{"a", 1}},
		{types.Insert, []any{"c", 3}},
		{types.Delete, []any{"a", 1}},
		{types.Delete, []any{"zz", 9}}, // matches nothing: ignored
		{types.UpdateBefore, []any{"b", nil}},
		{types.UpdateAfter, []any{"b", 2}},
	})
	var buf bytes.Buffer
	render(t, NewTSV(&buf, cols, nil), []types.Batch{b})
	want := "k\tv\na\t1\nc\t3\nb\t2\n"
	if got := buf.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestChangelog(t *testing.T) {
	var buf bytes.Buffer
	render(t, NewChangelog(&buf, testCols, nil), testBatches(t))
	want := "op\tid\tname\tprice\tamount\tts\tok\n" +
		"+I\t1\tAlice\t404.89\t12.50\t2025-05-01 10:00:00.000\tTRUE\n" +
		"+I\tNULL\t张三李四王五\t5.0\tNULL\tNULL\tNULL\n" +
		"+I\t2\ta rather long name\t1.0E20\t-3.00\t2025-05-01 10:00:01.250\tFALSE\n" +
		"-U\t1\tAlice\t404.89\t12.50\t2025-05-01 10:00:00.000\tTRUE\n" +
		"+U\t1\tAlice\t0.5\t90.00\t2025-05-01 10:00:00.000\tTRUE\n" +
		"-D\tNULL\t张三李四王五\t5.0\tNULL\tNULL\tNULL\n"
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestTimestampLTZInZone(t *testing.T) {
	cols := []client.ResultColumn{{Name: "t", Type: types.TimestampLTZ(3)}}
	b := makeBatch(t, cols, []row{{types.Insert, []any{ts1}}})
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skip("no zone database:", err)
	}
	var buf bytes.Buffer
	render(t, NewChangelog(&buf, cols, tokyo), []types.Batch{b})
	if got, want := buf.String(), "op\tt\n+I\t2025-05-01 19:00:00.000\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// fakeExec plays a canned sequence of handler calls, standing in for a
// session in tests of the printer and the shell.
func fakeExec(t *testing.T, fail error) ExecFunc {
	return func(ctx context.Context, script string, h client.Handler) error {
		h.Status(0, "Execute statement succeeded.", "")
		h.Status(1, "SQL update statement has been successfully submitted to the cluster:", "job-1")
		cols := []client.ResultColumn{{Name: "k", Type: types.String}, {Name: "n", Type: types.BigInt}}
		h.Schema(2, client.ResultInfo{Columns: cols, Changelog: true, JobID: "job-2"})
		b := makeBatch(t, cols, []row{
			{types.Insert, []any{"x", 1}},
			{types.UpdateBefore, []any{"x", 1}},
			{types.UpdateAfter, []any{"x", 2}},
		})
		h.Batch(2, b)
		b.Release()
		if fail != nil {
			return fail
		}
		h.End(2, "FINISHED")
		return nil
	}
}

func TestRunScriptTSVKeepsStatusOffStdout(t *testing.T) {
	var out, status bytes.Buffer
	p := &Printer{Format: FormatTSV, Out: &out, StatusOut: &status}
	if err := RunScript(context.Background(), fakeExec(t, nil), "...", p); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "k\tn\nx\t2\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	wantStatus := "[INFO] Execute statement succeeded.\n" +
		"[INFO] SQL update statement has been successfully submitted to the cluster:\nJob ID: job-1\n"
	if got := status.String(); got != wantStatus {
		t.Errorf("status = %q, want %q", got, wantStatus)
	}
}

func TestRunScriptErrorAndCancel(t *testing.T) {
	var out bytes.Buffer
	p := &Printer{Format: FormatTableau, Out: &out}
	boom := errors.New(`sql: line 1, column 8: unknown column "x"`)
	if err := RunScript(context.Background(), fakeExec(t, boom), "...", p); err != boom {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	if ErrorLine(boom) != `[ERROR] sql: line 1, column 8: unknown column "x"` {
		t.Errorf("ErrorLine = %q", ErrorLine(boom))
	}

	out.Reset()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p = &Printer{Format: FormatTableau, Out: &out}
	err := RunScript(ctx, fakeExec(t, context.Canceled), "...", p)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if !strings.HasSuffix(out.String(), "| -U |                              x |                    1 |\n"+
		"| +U |                              x |                    2 |\n"+
		"Query terminated, received a total of 3 rows\n") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestStatementComplete(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"SELECT 1;", true},
		{"SELECT 1", false},
		{"SELECT 1;  ", true},
		{"SELECT ';'", false},
		{"SELECT ';' ;", true},
		{"SELECT 'it''s;'", false},
		{"SELECT 'it''s';", true},
		{"SELECT 1 -- done;", false},
		{"SELECT 1; -- done", true},
		{"SELECT 1 /* ; */", false},
		{"SELECT 1 /* ; */;", true},
		{"SELECT 1; /* open", false},
		{"SELECT `a;b`", false},
		{"SELECT \"a;\"\n;", true},
		{"SELECT 1;\nSELECT 2", false},
		{"", false},
		{"EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1;", false},
		{"EXECUTE STATEMENT SET\nBEGIN\nINSERT INTO a SELECT 1;\nINSERT INTO b SELECT ';';\n", false},
		{"EXECUTE STATEMENT SET\nBEGIN\nINSERT INTO a SELECT 1;\nINSERT INTO b SELECT 2;\nEND;", true},
		{"execute statement set begin insert into a select 1; end ;", true},
		{"EXPLAIN STATEMENT SET BEGIN INSERT INTO a SELECT 1;", false},
		{"EXPLAIN CHANGELOG_MODE EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; END;", true},
		{"EXECUTE INSERT INTO a SELECT 1;", true},
		{"EXPLAIN SELECT 1 AS statement_set;", true},
		{"BEGIN STATEMENT SET;", true},
		{"SELECT 1;\nEXECUTE STATEMENT SET BEGIN", false},
		{"EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; END; SELECT 1", false},
	} {
		if got := StatementComplete(c.text); got != c.want {
			t.Errorf("StatementComplete(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

func TestJobList(t *testing.T) {
	start := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	jobs := []client.JobSummary{
		{ID: "j1", Name: "insert-into_t", Status: "RUNNING", Start: start},
		{ID: "j22", Name: "q", Status: "FAILED", Start: start, End: start.Add(1500 * time.Millisecond), Error: "boom\nstack"},
		{ID: "j3", Name: "done", Status: "FINISHED", Start: start, End: start.Add(2 * time.Second)},
	}
	var buf bytes.Buffer
	if err := JobList(&buf, jobs, start.Add(time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	want := `JOB ID  NAME           STATUS    START TIME           DURATION / ERROR
j1      insert-into_t  RUNNING   2025-05-01 10:00:00  1m0s
j22     q              FAILED    2025-05-01 10:00:00  boom ...
j3      done           FINISHED  2025-05-01 10:00:00  2s
`
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestJobListOwners shows the OWNER column once a job has an owner.
func TestJobListOwners(t *testing.T) {
	start := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	jobs := []client.JobSummary{
		{ID: "j1", Name: "q", Status: "RUNNING", Start: start, Owner: "alice"},
		{ID: "j2", Name: "q", Status: "RUNNING", Start: start},
	}
	var buf bytes.Buffer
	if err := JobList(&buf, jobs, start.Add(time.Second), nil); err != nil {
		t.Fatal(err)
	}
	want := `OWNER  JOB ID  NAME  STATUS   START TIME           DURATION / ERROR
alice  j1      q     RUNNING  2025-05-01 10:00:00  1s
-      j2      q     RUNNING  2025-05-01 10:00:00  1s
`
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestJobDetail(t *testing.T) {
	d := client.JobDetail{
		Job: client.JobSummary{ID: "j1", Name: "n", Status: "RUNNING"},
		Vertices: []client.Vertex{{ID: 1, Name: "Source: t", Parallelism: 2, Subtasks: []client.Subtask{
			{Index: 0, TaskManagerID: "tm-1", TaskManagerAddress: "127.0.0.1:7001", Status: "RUNNING", RowsOut: 1234},
			{Index: 1, TaskManagerID: "tm-2", TaskManagerAddress: "127.0.0.1:7002", Status: "RUNNING", RowsIn: 5, RowsOut: 5},
		}}},
	}
	var buf bytes.Buffer
	if err := JobDetail(&buf, d, time.Time{}, nil); err != nil {
		t.Fatal(err)
	}
	want := `Job ID:   j1
Name:     n
Status:   RUNNING

Vertex 1: Source: t (parallelism 2)
  SUBTASK  TASK MANAGER  ADDRESS         STATUS   ROWS IN  ROWS OUT  TO OTHER TMS
  0        tm-1          127.0.0.1:7001  RUNNING  0        1234      0
  1        tm-2          127.0.0.1:7002  RUNNING  5        5         0
`
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestJobDetailCheckpoints(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 10, 0, time.UTC)
	d := client.JobDetail{
		Job:         client.JobSummary{ID: "j1", Name: "n", Status: "RUNNING"},
		Checkpoints: &client.CheckpointSummary{Interval: 10 * time.Second, LatestID: 7, Latest: now.Add(-4 * time.Second), Attempt: 2, Restarts: 2},
	}
	var buf bytes.Buffer
	if err := JobDetail(&buf, d, now, nil); err != nil {
		t.Fatal(err)
	}
	want := "Job ID:   j1\nName:     n\nStatus:   RUNNING\nCheckpoints: every 10s, latest 7 at 2026-12-01 12:00:06 (4s ago)\nAttempt:  2 (2 restarts)\n"
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	d.Checkpoints = &client.CheckpointSummary{Interval: time.Second}
	buf.Reset()
	JobDetail(&buf, d, now, nil)
	if !strings.Contains(buf.String(), "Checkpoints: every 1s, latest none yet\nAttempt:  0 (0 restarts)\n") {
		t.Errorf("without a checkpoint yet:\n%s", buf.String())
	}
}

func TestTable(t *testing.T) {
	cols := []client.ResultColumn{{Name: "table name", Type: types.String}}
	var out strings.Builder
	tb := NewTable(&out, cols, time.UTC, 0)
	b := stringBatch(t, []string{"orders", "shipments_by_warehouse"})
	if err := tb.Batch(b); err != nil {
		t.Fatal(err)
	}
	if err := tb.End(); err != nil {
		t.Fatal(err)
	}
	want := `+------------------------+
|             table name |
+------------------------+
|                 orders |
| shipments_by_warehouse |
+------------------------+
2 rows in set
`
	if out.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	empty := NewTable(&out, cols, time.UTC, 0)
	empty.End()
	if out.String() != "Empty set\n" {
		t.Fatalf("empty: got %q", out.String())
	}
}

func stringBatch(t *testing.T, vals []string) types.Batch {
	t.Helper()
	bld := array.NewStringBuilder(memory.DefaultAllocator)
	bld.AppendValues(vals, nil)
	col := bld.NewArray()
	defer col.Release()
	schema := types.Schema{{Name: "table name", Type: types.String}}
	return types.NewInsertBatch(schema.ArrowSchema(), []arrow.Array{col}, len(vals))
}

// TestCompositeValues prints ROW, ARRAY and MAP columns as Flink's SQL
// client does (its cast to STRING): (1, abc), [1, null], {a=1}, in a
// column of the default width.
func TestCompositeValues(t *testing.T) {
	rt := types.Row(types.Field{Name: "id", Type: types.Int}, types.Field{Name: "s", Type: types.String})
	at := types.Array(types.Int)
	mt := types.Map(types.String, types.Double)
	cols := []client.ResultColumn{{Name: "r", Type: rt}, {Name: "a", Type: at}, {Name: "m", Type: mt}}
	b := makeBatch(t, cols, []row{
		{types.Insert, []any{
			types.AppendComposite(nil, rt, nil, []any{int64(1), "abc"}),
			types.AppendComposite(nil, at, nil, []any{int64(1), nil}),
			types.AppendComposite(nil, mt, []any{"a"}, []any{1.0}),
		}},
		{types.Insert, []any{nil, nil, nil}},
	})
	defer b.Release()
	var buf bytes.Buffer
	r := NewTableau(&buf, cols, nil, 0)
	if err := r.Batch(b); err != nil {
		t.Fatal(err)
	}
	if err := r.End(); err != nil {
		t.Fatal(err)
	}
	want := `+----+--------------------------------+--------------------------------+--------------------------------+
| op |                              r |                              a |                              m |
+----+--------------------------------+--------------------------------+--------------------------------+
| +I |                       (1, abc) |                      [1, null] |                        {a=1.0} |
| +I |                         <NULL> |                         <NULL> |                         <NULL> |
+----+--------------------------------+--------------------------------+--------------------------------+
Received a total of 2 rows
`
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestRawText: a statement's one STRING column "result" (EXPLAIN) prints
// as plain text in tableau format and keeps its header in tsv; a query's
// column of that name (it has a job) still prints as a table.
func TestRawText(t *testing.T) {
	plan := "== Optimized Execution Plan ==\nCollect(fields=[a])\n+- TableSourceScan(table=[[default_catalog, default_database, t]], fields=[a])"
	cols := []client.ResultColumn{{Name: "result", Type: types.String}}
	show := func(f Format, res client.ResultInfo) string {
		var out bytes.Buffer
		p := &Printer{Format: f, Out: &out}
		p.Schema(0, res)
		b := makeBatch(t, cols, []row{{types.Insert, []any{plan}}})
		p.Batch(0, b)
		p.End(0, "FINISHED")
		if err := p.Err(); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if got := show(FormatTableau, client.ResultInfo{Columns: cols}); got != plan+"\n" {
		t.Errorf("tableau:\n%s", got)
	}
	if got := show(FormatTSV, client.ResultInfo{Columns: cols}); got != "result\n"+plan+"\n" {
		t.Errorf("tsv:\n%s", got)
	}
	if got := show(FormatTableau, client.ResultInfo{Columns: cols, JobID: "job-1"}); !strings.HasPrefix(got, "+---") {
		t.Errorf("a query's result column printed as text:\n%s", got)
	}
	two := []client.ResultColumn{{Name: "result", Type: types.String}, {Name: "x", Type: types.String}}
	if IsRawText(client.ResultInfo{Columns: two}) || IsRawText(client.ResultInfo{Columns: cols, Changelog: true}) ||
		!IsRawText(client.ResultInfo{Columns: cols}) {
		t.Error("IsRawText")
	}
}
