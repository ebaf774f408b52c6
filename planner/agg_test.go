package planner

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/sql/parser"
)

// TestGroupAggSpec checks what the planner tells the operator: the state
// TTL from table.exec.state.ttl, whether the input retracts (MIN and MAX
// then keep every value), and the aggregate calls over the pre-projection.
func TestGroupAggSpec(t *testing.T) {
	ctx := context.Background()
	store := catalog.NewMemStore()
	for _, ddl := range []string{"CREATE TABLE a (k INT, x INT)", "CREATE TABLE u (k INT, x INT, PRIMARY KEY (k) NOT ENFORCED)"} {
		st, _ := parser.ParseStatement(ddl)
		tbl, err := BuildTable(st.(*ast.CreateTableStmt), catalog.DefaultDatabase, 1)
		if err != nil {
			t.Fatal(err)
		}
		store.CreateTable(ctx, tbl)
	}
	spec := func(sql string, config map[string]string) jobgraph.GroupAggSpec {
		t.Helper()
		p := &Planner{Catalog: testCatalog{store}, Connectors: testConnectors{}, Options: Options{Parallelism: 2, Config: config}}
		st, err := parser.ParseStatement(sql)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := p.PlanQuery(ctx, st.(*ast.QueryStmt).Query, sql)
		if err != nil {
			t.Fatal(err)
		}
		// The last (outermost) aggregate.
		var s *jobgraph.GroupAggSpec
		for _, v := range pl.Graph.Vertices {
			for _, o := range v.Chain {
				if agg, ok := o.Spec.(*jobgraph.GroupAggSpec); ok {
					s = agg
				}
			}
		}
		if s == nil {
			t.Fatalf("no group aggregate in the plan of %s", sql)
		}
		return *s
	}
	s := spec("SELECT k, MIN(x), COUNT(*), SUM(x + 1) FROM a GROUP BY k", map[string]string{"table.exec.state.ttl": "1 h"})
	if s.TTLMs != 3600*1000 || s.InputRetracts {
		t.Fatalf("TTL %d, retracts %v", s.TTLMs, s.InputRetracts)
	}
	if len(s.Keys) != 1 || s.Keys[0] != 0 || len(s.InputSchema) != 3 || !reflect.DeepEqual(s.Aggs, []jobgraph.AggCall{
		{Func: "MIN", Arg: 1}, {Func: "COUNT", Arg: -1}, {Func: "SUM", Arg: 2}}) {
		t.Fatalf("spec %+v", s)
	}
	if s := spec("SELECT x, MAX(k) FROM u GROUP BY x", nil); s.TTLMs != 0 || !s.InputRetracts {
		t.Fatalf("over an upsert table: TTL %d, retracts %v", s.TTLMs, s.InputRetracts)
	}
	// A STATE_TTL hint naming the FROM table sets the aggregate's TTL.
	if s := spec("SELECT /*+ STATE_TTL('x' = '1d') */ k, COUNT(*) FROM a AS x GROUP BY k",
		map[string]string{"table.exec.state.ttl": "1 h"}); s.TTLMs != 24*3600*1000 {
		t.Fatalf("hinted TTL %d", s.TTLMs)
	}
	if s := spec("SELECT /*+ STATE_TTL('a' = '2 h') */ DISTINCT k FROM a", nil); s.TTLMs != 2*3600*1000 {
		t.Fatalf("hinted TTL of DISTINCT %d", s.TTLMs)
	}
	p := &Planner{Catalog: testCatalog{store}, Connectors: testConnectors{}, Options: Options{Parallelism: 2}}
	sql := "SELECT /*+ STATE_TTL('a' = '1d') */ k FROM a"
	st, _ := parser.ParseStatement(sql)
	if _, err := p.PlanQuery(ctx, st.(*ast.QueryStmt).Query, sql); err == nil ||
		!strings.Contains(err.Error(), "line 1, column 22: STATE_TTL names 'a', which is not an input of a join or an aggregate") {
		t.Fatalf("STATE_TTL without a join or aggregate: %v", err)
	}
	// An aggregate over an aggregate sees retractions.
	if s := spec("SELECT c, COUNT(*) FROM (SELECT k, COUNT(*) AS c FROM a GROUP BY k) GROUP BY c", nil); !s.InputRetracts {
		t.Fatal("an aggregate over an aggregate: input not marked retracting")
	}
}
