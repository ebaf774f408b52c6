package connectors

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

func TestPrintFormat(t *testing.T) {
	x := testBatch(0, 2, types.Insert)
	defer x.Release()
	y := testBatch(5, 6, types.UpdateBefore)
	defer y.Release()
	for _, tc := range []struct {
		id       string
		sub, par int
		want     string
	}{
		{"", 0, 1, "+I[0, NULL, 0.0]\n+I[1, nx, 0.5]\n-U[5, n, 2.5]\n"},
		{"", 1, 3, "2> +I[0, NULL, 0.0]\n2> +I[1, nx, 0.5]\n2> -U[5, n, 2.5]\n"},
		{"sink", 0, 1, "sink> +I[0, NULL, 0.0]\nsink> +I[1, nx, 0.5]\nsink> -U[5, n, 2.5]\n"},
		{"sink", 3, 4, "sink:4> +I[0, NULL, 0.0]\nsink:4> +I[1, nx, 0.5]\nsink:4> -U[5, n, 2.5]\n"},
	} {
		var buf bytes.Buffer
		s := NewPrintSink(jobgraph.PrintSpec{Schema: testSchema, Identifier: tc.id}, &buf)
		if err := s.Open(&operators.Context{Subtask: tc.sub, Parallelism: tc.par}); err != nil {
			t.Fatal(err)
		}
		for _, b := range []types.Batch{x, y} {
			if err := s.Process(0, b, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.EndInput(0, nil); err != nil {
			t.Fatal(err)
		}
		_ = s.Close()
		if got := buf.String(); got != tc.want {
			t.Errorf("id %q subtask %d/%d:\ngot  %q\nwant %q", tc.id, tc.sub, tc.par, got, tc.want)
		}
	}
}

func TestPrintTypes(t *testing.T) {
	schema := types.Schema{
		{Name: "b", Type: types.Boolean},
		{Name: "ts", Type: types.Timestamp(3)},
		{Name: "ltz", Type: types.TimestampLTZ(3)},
		{Name: "d", Type: types.Date},
	}
	bb := array.NewBooleanBuilder(memory.DefaultAllocator)
	bb.Append(true)
	tb := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Nanosecond})
	ns := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC).UnixNano()
	tb.Append(arrow.Timestamp(ns))
	lb := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"})
	lb.Append(arrow.Timestamp(ns))
	db := array.NewDate32Builder(memory.DefaultAllocator)
	db.AppendNull()
	cols := []arrow.Array{bb.NewArray(), tb.NewArray(), lb.NewArray(), db.NewArray()}
	b := types.NewInsertBatch(schema.ArrowSchema(), cols, 1)
	defer b.Release()
	for _, c := range cols {
		c.Release()
	}
	var buf bytes.Buffer
	s := NewPrintSink(jobgraph.PrintSpec{Schema: schema}, &buf)
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(&operators.Context{Parallelism: 1, TimeZone: shanghai}); err != nil {
		t.Fatal(err)
	}
	if err := s.Process(0, b, nil); err != nil {
		t.Fatal(err)
	}
	want := "+I[TRUE, 2025-05-01 10:00:00.000, 2025-05-01 18:00:00.000, NULL]\n"
	if buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

func TestBlackhole(t *testing.T) {
	op, err := operators.NewOperator(&jobgraph.BlackholeSpec{Schema: testSchema})
	if err != nil {
		t.Fatal(err)
	}
	x := testBatch(0, 10, types.Insert)
	defer x.Release()
	if err := op.Open(&operators.Context{}); err != nil {
		t.Fatal(err)
	}
	if err := op.Process(0, x, nil); err != nil {
		t.Fatal(err)
	}
	if op.(*BlackholeSink).Rows != 10 {
		t.Errorf("dropped %d rows", op.(*BlackholeSink).Rows)
	}
}

// resultWriter is a test double of operators.ResultWriter.
type resultWriter struct {
	rows   []string
	closed int
	fail   error
}

func (w *resultWriter) Write(b types.Batch) error {
	if w.fail != nil {
		return w.fail
	}
	w.rows = append(w.rows, formatted(b)...)
	return nil
}

func (w *resultWriter) Close() error { w.closed++; return nil }

func (w *resultWriter) Checkpoint(id int64) error {
	w.rows = append(w.rows, fmt.Sprintf("barrier %d", id))
	return nil
}

func TestCollect(t *testing.T) {
	op, err := operators.NewOperator(&jobgraph.CollectSpec{Schema: testSchema})
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Open(&operators.Context{}); err == nil {
		t.Fatal("collect opened without a result writer")
	}
	w := &resultWriter{}
	if err := op.Open(&operators.Context{Results: w}); err != nil {
		t.Fatal(err)
	}
	x, y := testBatch(0, 3, types.Insert), testBatch(1, 2, types.UpdateAfter)
	defer x.Release()
	defer y.Release()
	if err := op.Process(0, x, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := op.(operators.Checkpointer).SnapshotState(7); err != nil {
		t.Fatal(err)
	}
	if err := op.Process(0, y, nil); err != nil {
		t.Fatal(err)
	}
	if w.closed != 0 {
		t.Fatal("writer closed before end of input")
	}
	if err := op.EndInput(0, nil); err != nil {
		t.Fatal(err)
	}
	_ = op.Close()
	if want := append(append(formatted(x), "barrier 7"), formatted(y)...); !equalStrings(w.rows, want) {
		t.Errorf("got %q, want %q", w.rows, want)
	}
	if w.closed != 1 {
		t.Errorf("writer closed %d times", w.closed)
	}
	boom := errors.New("client gone")
	w2 := &resultWriter{fail: boom}
	op2 := &CollectSink{}
	_ = op2.Open(&operators.Context{Results: w2})
	if err := op2.Process(0, x, nil); !errors.Is(err, boom) {
		t.Errorf("write failure not returned: %v", err)
	}
}

func TestValues(t *testing.T) {
	schema := types.Schema{
		{Name: "a", Type: types.Int},
		{Name: "b", Type: types.String},
		{Name: "c", Type: types.Decimal(10, 2)},
	}
	var rows [][]*expr.Expr
	var want []string
	for i := range 5000 {
		rows = append(rows, []*expr.Expr{
			expr.Literal(int64(i), types.Int),
			expr.Literal("v", types.String),
			expr.Literal(decimal128.FromI64(450), types.Decimal(10, 2)),
		})
		want = append(want, "+I["+itoa(i)+", v, 4.50]")
	}
	rows[1][1] = expr.NullLiteral(types.String)
	want[1] = "+I[1, NULL, 4.50]"
	// Through the spec's JSON, as a task manager receives it.
	wire, err := json.Marshal(jobgraph.ValuesSpec{Schema: schema, Rows: rows})
	if err != nil {
		t.Fatal(err)
	}
	var spec jobgraph.ValuesSpec
	if err := json.Unmarshal(wire, &spec); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []int{0, 1} {
		src, err := operators.NewSource(&spec)
		if err != nil {
			t.Fatal(err)
		}
		c := newCollector(schema)
		if err := runSource(t, context.Background(), src, &operators.Context{Subtask: sub, Parallelism: 2}, c); err != nil {
			t.Fatal(err)
		}
		if sub == 1 {
			if len(c.Rows()) != 0 {
				t.Errorf("subtask 1 emitted %d rows", len(c.Rows()))
			}
			continue
		}
		if !equalStrings(c.Rows(), want) {
			t.Errorf("got %d rows, first %q", len(c.Rows()), c.Rows()[:3])
		}
		if len(c.sizes) != 2 || c.sizes[0] != 4096 {
			t.Errorf("batch sizes %v, want [4096 904]", c.sizes)
		}
	}
	// braid.exec.source.batch-size sets the batch size.
	src, err := operators.NewSource(&spec)
	if err != nil {
		t.Fatal(err)
	}
	c := newCollector(schema)
	if err := runSource(t, context.Background(), src, &operators.Context{Parallelism: 1, SourceBatchRows: 1000}, c); err != nil {
		t.Fatal(err)
	}
	if !equalStrings(c.Rows(), want) || !reflect.DeepEqual(c.sizes, []int{1000, 1000, 1000, 1000, 1000}) {
		t.Errorf("batch size 1000: %d rows in batches %v", len(c.Rows()), c.sizes)
	}
	// Expressions that are not literals are evaluated: 40 + 2, cast.
	sum, err := expr.ResolveCall("+", []*expr.Expr{expr.Literal(int64(40), types.Int.WithNullable(false)), expr.Literal(int64(2), types.Int.WithNullable(false))})
	if err != nil {
		t.Fatal(err)
	}
	src, err = NewValuesSource(jobgraph.ValuesSpec{Schema: schema[:1], Rows: [][]*expr.Expr{{expr.Cast(sum, types.Int)}}})
	if err != nil {
		t.Fatal(err)
	}
	c = newCollector(schema[:1])
	if err := runSource(t, context.Background(), src, &operators.Context{Parallelism: 1}, c); err != nil {
		t.Fatal(err)
	}
	if got := c.Rows(); !equalStrings(got, []string{"+I[42]"}) {
		t.Errorf("computed value: got %q, want [+I[42]]", got)
	}
	if _, err := NewValuesSource(jobgraph.ValuesSpec{Schema: schema[:1], Rows: [][]*expr.Expr{{nil}}}); err == nil || !strings.Contains(err.Error(), "column a") {
		t.Errorf("missing expression: %v", err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
