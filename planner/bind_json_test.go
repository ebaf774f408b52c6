package planner

import (
	"context"
	"strings"
	"testing"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/sql/parser"
	"github.com/braidflow/braid/types"
)

// planJSONProjection plans SELECT <sel> FROM t and returns the Calc's
// first projection.
func planJSONProjection(t *testing.T, sel string) *expr.Expr {
	t.Helper()
	store := catalog.NewMemStore()
	p := &Planner{Catalog: testCatalog{store}, Connectors: testConnectors{}, Options: Options{Parallelism: 1, Config: map[string]string{}}}
	ddl, err := parser.ParseScript("CREATE TABLE t (j STRING, n INT, s STRING);")
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := BuildTable(ddl[0].(*ast.CreateTableStmt), catalog.DefaultDatabase, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CreateTable(context.Background(), tbl); err != nil {
		t.Fatal(err)
	}
	q := "SELECT " + sel + " FROM t"
	stmts, err := parser.ParseScript(q)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := p.PlanQuery(context.Background(), stmts[0].(*ast.QueryStmt).Query, q)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range plan.Graph.Vertices {
		for _, op := range v.Chain {
			if c, ok := op.Spec.(*jobgraph.CalcSpec); ok {
				return c.Projections[0]
			}
		}
	}
	t.Fatalf("no Calc in the plan of %s", q)
	return nil
}

// TestBindJSONValueDefaults checks that a DEFAULT expression of any type
// castable to JSON_VALUE's result type is cast to it, and that the typed
// call carries every clause.
func TestBindJSONValueDefaults(t *testing.T) {
	cases := []struct {
		sel        string
		want       types.DataType
		defaults   [2]string // the DEFAULT arguments' types
		behaviours [2]string
	}{
		{"JSON_VALUE(j, '$.a' RETURNING INT DEFAULT s ON EMPTY DEFAULT 1.5 ON ERROR)", types.Int,
			[2]string{"INT", "INT"}, [2]string{"DEFAULT", "DEFAULT"}},
		{"JSON_VALUE(j, '$.a' DEFAULT n + 1 ON EMPTY ERROR ON ERROR)", types.String,
			[2]string{"STRING", "STRING"}, [2]string{"DEFAULT", "ERROR"}},
		{"JSON_VALUE(j, '$.a' RETURNING DECIMAL(6, 2) NULL ON EMPTY DEFAULT n ON ERROR)", types.Decimal(6, 2),
			[2]string{"DECIMAL(6, 2)", "DECIMAL(6, 2)"}, [2]string{"NULL", "DEFAULT"}},
		{"JSON_VALUE(j, '$.a' RETURNING BOOLEAN DEFAULT 'true' ON EMPTY)", types.Boolean,
			[2]string{"BOOLEAN NOT NULL", "BOOLEAN"}, [2]string{"DEFAULT", "NULL"}},
	}
	for _, c := range cases {
		e := planJSONProjection(t, c.sel)
		if e.Func != "JSON_VALUE" || len(e.Args) != 7 {
			t.Fatalf("%s: bound to %v", c.sel, e)
		}
		if e.Type != c.want.WithNullable(true) {
			t.Errorf("%s: type %v, want %v", c.sel, e.Type, c.want)
		}
		for k, i := range []int{3, 5} {
			if got := e.Args[i].Value; got != c.behaviours[k] {
				t.Errorf("%s: behaviour %d = %v, want %s", c.sel, k, got, c.behaviours[k])
			}
			d := e.Args[i+1]
			got := strings.TrimSuffix(d.Type.String(), " NOT NULL")
			if d.Type.String() == c.defaults[k] || got == c.defaults[k] {
				continue
			}
			t.Errorf("%s: default %d typed %v, want %s", c.sel, k, d.Type, c.defaults[k])
		}
	}
}
