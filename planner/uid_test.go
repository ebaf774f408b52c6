package planner

import (
	"context"
	"testing"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/sql/parser"
)

// planUIDs plans the INSERT at the end of script at parallelism par and
// returns its operators' uids in plan order, by operator name.
func planUIDs(t *testing.T, script string, par int) (uids []string, byName map[string]string) {
	t.Helper()
	store := catalog.NewMemStore()
	p := &Planner{Catalog: testCatalog{store}, Connectors: testConnectors{},
		Options: Options{Parallelism: par, Config: map[string]string{}}}
	stmts, err := parser.ParseScript(script)
	if err != nil {
		t.Fatal(err)
	}
	var g *braidv1.JobGraph
	for _, st := range stmts {
		switch st := st.(type) {
		case *ast.CreateTableStmt:
			tbl, err := BuildTable(st, catalog.DefaultDatabase, 1)
			if err != nil {
				t.Fatal(err)
			}
			if err := store.CreateTable(context.Background(), tbl); err != nil {
				t.Fatal(err)
			}
		case *ast.InsertStmt:
			plan, err := p.PlanInsert(context.Background(), st, "")
			if err != nil {
				t.Fatal(err)
			}
			g = plan.Graph
		}
	}
	byName = map[string]string{}
	for _, v := range g.Vertices {
		for _, op := range v.Chain {
			if len(op.Uid) != jobgraph.UIDLength {
				t.Fatalf("operator %s has uid %q", op.Name, op.Uid)
			}
			uids = append(uids, op.Uid)
			byName[op.Name] = op.Uid
		}
	}
	return uids, byName
}

const uidTables = `
CREATE TABLE src (k INT, v BIGINT, s STRING);
CREATE TABLE dst (k INT, n BIGINT, total BIGINT, PRIMARY KEY (k) NOT ENFORCED);
`

// TestOperatorUIDsStable checks that uids depend on the query's structure:
// the same at another parallelism and when planned again, different when
// the GROUP BY changes, and unique within a job.
func TestOperatorUIDsStable(t *testing.T) {
	q := uidTables + `INSERT INTO dst SELECT k, COUNT(*), SUM(v) FROM src WHERE v > 0 GROUP BY k;`
	base, names := planUIDs(t, q, 2)
	seen := map[string]bool{}
	for _, u := range base {
		if seen[u] {
			t.Fatalf("duplicate uid %s in %v", u, base)
		}
		seen[u] = true
	}
	for _, par := range []int{1, 2, 3, 5, 128} {
		_, got := planUIDs(t, q, par)
		if len(got) != len(names) {
			t.Fatalf("parallelism %d: operators %v, want %v", par, got, names)
		}
		for name, u := range names {
			if got[name] != u {
				t.Errorf("parallelism %d: operator %s has uid %s, want %s", par, name, got[name], u)
			}
		}
	}
	changed := uidTables + `INSERT INTO dst SELECT CAST(v AS INT), COUNT(*), SUM(v) FROM src WHERE v > 0 GROUP BY v;`
	_, other := planUIDs(t, changed, 2)
	var same, differ int
	for name, u := range other {
		if names[name] == u {
			same++
		} else {
			differ++
		}
	}
	if differ == 0 {
		t.Errorf("a changed GROUP BY kept every uid: %v", other)
	}
	if same == 0 {
		t.Errorf("a changed GROUP BY changed the source's uid too: %v vs %v", other, names)
	}
}

// TestOperatorUIDsKeepOverrides checks that AssignUIDs keeps a uid already
// set and numbers operators that would collide.
func TestOperatorUIDsKeepOverrides(t *testing.T) {
	src := func() *braidv1.OperatorSpec {
		return &braidv1.OperatorSpec{Kind: jobgraph.KindValues, Config: []byte(`{"rows":[]}`)}
	}
	g := &braidv1.JobGraph{Vertices: []*braidv1.Vertex{
		{Id: 0, Chain: []*braidv1.OperatorSpec{src()}},
		{Id: 1, Chain: []*braidv1.OperatorSpec{src()}},
		{Id: 2, Chain: []*braidv1.OperatorSpec{{Kind: jobgraph.KindCalc, Uid: "my-calc"}}},
	}}
	if err := jobgraph.AssignUIDs(g); err != nil {
		t.Fatal(err)
	}
	a, b := g.Vertices[0].Chain[0].Uid, g.Vertices[1].Chain[0].Uid
	if a == "" || a == b {
		t.Errorf("identical sources got uids %q and %q", a, b)
	}
	if u := g.Vertices[2].Chain[0].Uid; u != "my-calc" {
		t.Errorf("override replaced by %q", u)
	}
}
