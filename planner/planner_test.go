package planner

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/sql/parser"
)

// testCatalog resolves names in the default database of a MemStore.
type testCatalog struct{ store *catalog.MemStore }

func (c testCatalog) Table(ctx context.Context, name []string) (*catalog.Table, error) {
	return c.store.GetTable(ctx, catalog.DefaultDatabase, name[len(name)-1])
}

// testConnectors plans every table as a managed table with one partition.
type testConnectors struct{}

func (testConnectors) SourceSpec(t *catalog.Table, bounded bool) (string, []byte, int, error) {
	if t.Connector() != "" {
		return "", nil, 0, fmt.Errorf("connector '%s' is not supported yet", t.Connector())
	}
	spec := jobgraph.ManagedSourceSpec{Topic: "t." + t.Name, Schema: t.PhysicalSchema(), Bounded: bounded}
	return jobgraph.KindManagedSource, jobgraph.EncodeSpec(spec), 1, nil
}

func (testConnectors) SinkSpec(t *catalog.Table) (string, []byte, error) {
	spec := jobgraph.ManagedSinkSpec{Topic: "t." + t.Name, Schema: t.PhysicalSchema()}
	return jobgraph.KindManagedSink, jobgraph.EncodeSpec(spec), nil
}

// TestPlanner runs testdata/*.txt: "exec" creates tables, "plan" prints the
// job graph and result columns of a SELECT or INSERT, or the error.
func TestPlanner(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		store := catalog.NewMemStore()
		p := &Planner{
			Catalog:    testCatalog{store},
			Connectors: testConnectors{},
			Options:    Options{Parallelism: 4, Config: map[string]string{}},
		}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			stmts, err := parser.ParseScript(d.Input)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			var out strings.Builder
			for _, st := range stmts {
				switch d.Cmd {
				case "exec":
					ct, ok := st.(*ast.CreateTableStmt)
					if !ok {
						t.Fatalf("exec takes CREATE TABLE, got %T", st)
					}
					tbl, err := BuildTable(ct, catalog.DefaultDatabase, 1)
					if err != nil {
						fmt.Fprintf(&out, "error: %v\n", err)
						continue
					}
					if err := store.CreateTable(context.Background(), tbl); err != nil {
						t.Fatal(err)
					}
					fmt.Fprintf(&out, "%s\n", DescribeTable(tbl))
				case "plan":
					var plan *Plan
					switch st := st.(type) {
					case *ast.QueryStmt:
						plan, err = p.PlanQuery(context.Background(), st.Query, st.Source().Text(d.Input))
					case *ast.InsertStmt:
						plan, err = p.PlanInsert(context.Background(), st, st.Source().Text(d.Input))
					default:
						t.Fatalf("plan takes SELECT or INSERT, got %T", st)
					}
					if err != nil {
						fmt.Fprintf(&out, "error: %v\n", err)
						continue
					}
					fmt.Fprintf(&out, "%s\nbounded: %v\n", ExplainGraph(plan.Graph), plan.Bounded)
					for _, f := range plan.Result {
						fmt.Fprintf(&out, "column %s %s\n", f.Name, f.Type)
					}
				default:
					t.Fatalf("unknown command %s", d.Cmd)
				}
			}
			return out.String()
		})
	})
}
