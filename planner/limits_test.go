package planner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/sql/parser"
)

// planQuery plans one SELECT over the table src (k INT, v BIGINT, s
// STRING) and returns the plan's total operator config bytes.
func planQuery(t testing.TB, q string) int {
	t.Helper()
	store := catalog.NewMemStore()
	st, err := parser.ParseStatement("CREATE TABLE src (k INT, v BIGINT, s STRING)")
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := BuildTable(st.(*ast.CreateTableStmt), catalog.DefaultDatabase, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CreateTable(context.Background(), tbl); err != nil {
		t.Fatal(err)
	}
	p := &Planner{Catalog: testCatalog{store}, Connectors: testConnectors{}, Options: Options{Parallelism: 1, Config: map[string]string{}}}
	stmt, err := parser.ParseStatement(q)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := p.PlanQuery(context.Background(), stmt.(*ast.QueryStmt).Query, "")
	if err != nil {
		t.Fatalf("%.60s...: %v", q, err)
	}
	pg, err := plan.Graph.Proto()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range pg.Vertices {
		for _, op := range v.Chain {
			n += len(op.Config)
		}
	}
	return n
}

// longQueries are SELECTs with n-term expressions, which the planner must
// handle in linear time: a projection, an aggregate's result
// (rewritten over the GROUP BY keys) and a filter of ANDs (split into
// conjuncts).
func longQueries(n int) map[string]string {
	return map[string]string{
		"projection": "SELECT " + strings.Repeat("v + ", n) + "1 FROM src",
		"group by":   "SELECT k + 1, SUM(v) " + strings.Repeat("+ 1 ", n) + "FROM src GROUP BY k + 1",
		"where":      "SELECT k FROM src WHERE " + strings.Repeat("v > 1 AND ", n) + "TRUE",
	}
}

// TestPlanLongExpressions plans longQueries of 9,000 terms, near the
// parser's limit of 10,000 syntax-tree levels (the GROUP BY one took 3
// minutes at 4,000, and EncodeSpec panicked past 5,000).
func TestPlanLongExpressions(t *testing.T) {
	for name, q := range longQueries(9_000) {
		t.Run(name, func(t *testing.T) { planQuery(t, q) })
	}
}

// TestPlanNestedCopiesStayLinear checks that 60 nested SELECT x || x
// levels, 2^60 nodes if their calcs merged, plan into small configs.
func TestPlanNestedCopiesStayLinear(t *testing.T) {
	q := "SELECT s AS x FROM src"
	for range 60 {
		q = "SELECT x || x AS x FROM (" + q + ")"
	}
	if n := planQuery(t, q); n > 200_000 {
		t.Errorf("the plan's configs take %d bytes", n)
	}
}

// BenchmarkPlanLongExpressions plans longQueries at 1K, 5K and 9K terms
// (the parser refuses chains of more than 10,000).
func BenchmarkPlanLongExpressions(b *testing.B) {
	for _, n := range []int{1000, 5000, 9000} {
		for name, q := range longQueries(n) {
			b.Run(fmt.Sprintf("%s/%dK", strings.ReplaceAll(name, " ", "_"), n/1000), func(b *testing.B) {
				for b.Loop() {
					planQuery(b, q)
				}
			})
		}
	}
}

// cancelingCatalog cancels its context at the first table it resolves, as
// a client that leaves while its statement is planned.
type cancelingCatalog struct {
	testCatalog
	cancel context.CancelFunc
}

func (c cancelingCatalog) Table(ctx context.Context, name []string) (*catalog.Table, error) {
	c.cancel()
	return c.testCatalog.Table(ctx, name)
}

// TestPlanningStops: planning stops once its context ends, with an error
// that wraps the context's, instead of planning on for a client that left
// or past the planner timeout.
func TestPlanningStops(t *testing.T) {
	store := catalog.NewMemStore()
	st, _ := parser.ParseStatement("CREATE TABLE src (k INT, v BIGINT, s STRING)")
	tbl, _ := BuildTable(st.(*ast.CreateTableStmt), catalog.DefaultDatabase, 1)
	store.CreateTable(context.Background(), tbl)
	opts := Options{Parallelism: 1, Config: map[string]string{}}
	plan := func(ctx context.Context, cat Catalog, q string) error {
		stmt, err := parser.ParseStatement(q)
		if err != nil {
			t.Fatal(err)
		}
		_, err = (&Planner{Catalog: cat, Connectors: testConnectors{}, Options: opts}).PlanQuery(ctx, stmt.(*ast.QueryStmt).Query, q)
		return err
	}
	union := "SELECT 1" + strings.Repeat(" UNION ALL SELECT 1", 200)
	if err := plan(context.Background(), testCatalog{store}, union); err != nil {
		t.Fatal(err)
	}
	expired, cancel := context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	if err := plan(expired, testCatalog{store}, union); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("planning past its deadline: %v", err)
	}
	// The client leaves once the first of 100 joined tables is resolved:
	// the rest is not bound.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	join := "SELECT a0.k FROM src a0" + strings.Repeat(" JOIN src a1 ON a0.k = a1.k", 1)
	for i := 2; i < 100; i++ {
		join += fmt.Sprintf(" JOIN src a%d ON a0.k = a%d.k", i, i)
	}
	if err := plan(ctx, cancelingCatalog{testCatalog{store}, cancel}, join); !errors.Is(err, context.Canceled) {
		t.Fatalf("planning after the client left: %v", err)
	}
}
