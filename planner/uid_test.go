package planner

import (
	"context"
	"slices"
	"testing"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
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
	var g *jobgraph.Graph
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
			if len(op.UID) != jobgraph.UIDLength {
				t.Fatalf("operator %s has uid %q", op.Name, op.UID)
			}
			uids = append(uids, op.UID)
			byName[op.Name] = op.UID
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
	src := func() *jobgraph.Operator {
		return &jobgraph.Operator{Spec: &jobgraph.ValuesSpec{}}
	}
	g := &jobgraph.Graph{Vertices: []*jobgraph.Vertex{
		{ID: 0, Chain: []*jobgraph.Operator{src()}},
		{ID: 1, Chain: []*jobgraph.Operator{src()}},
		{ID: 2, Chain: []*jobgraph.Operator{{Spec: &jobgraph.CalcSpec{}, UID: "my-calc"}}},
	}}
	if err := jobgraph.AssignUIDs(g); err != nil {
		t.Fatal(err)
	}
	a, b := g.Vertices[0].Chain[0].UID, g.Vertices[1].Chain[0].UID
	if a == "" || a == b {
		t.Errorf("identical sources got uids %q and %q", a, b)
	}
	if u := g.Vertices[2].Chain[0].UID; u != "my-calc" {
		t.Errorf("override replaced by %q", u)
	}
}

// TestOperatorUIDsPinned pins the uids of two plans as the planner gave
// them before the job graph was typed: savepoints taken then restore by
// these uids, so a change of a spec's JSON or of the hash shows up here.
func TestOperatorUIDsPinned(t *testing.T) {
	for _, tc := range []struct {
		script string
		want   []string
	}{
		{uidTables + `INSERT INTO dst SELECT k, COUNT(*), SUM(v) FROM src WHERE v > 0 GROUP BY k;`,
			[]string{"bf96781e5b237364", "0126aa9f0d036723", "37a7e2205613e496", "b94179f8eac56201", "b8b7c9b508ea73f0"}},
		{`CREATE TABLE a (k INT, x STRING); CREATE TABLE b (k INT, y STRING); CREATE TABLE o (k INT, x STRING, y STRING);
INSERT INTO o SELECT a.k, a.x, b.y FROM a JOIN b ON a.k = b.k;`,
			[]string{"aa5482a4bd858d7b", "990472267b0a833e", "7c08507a77e4dd39", "e4b494efdb793b62", "116445597756608d"}},
	} {
		got, _ := planUIDs(t, tc.script, 2)
		if !slices.Equal(got, tc.want) {
			t.Errorf("uids %q, want %q", got, tc.want)
		}
	}
}
