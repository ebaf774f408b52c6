package planner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/sql/parser"
)

// TestJobOptions checks that a planned graph carries the resolved
// checkpointing and restart options, over the cluster's default.
func TestJobOptions(t *testing.T) {
	ctx := context.Background()
	plan := func(config map[string]string, cluster *jobgraph.CheckpointConfig) (*jobgraph.Graph, error) {
		p := &Planner{Catalog: testCatalog{catalog.NewMemStore()}, Connectors: testConnectors{},
			Options: Options{Parallelism: 1, Config: config, Checkpoint: cluster}}
		st, err := parser.ParseStatement("SELECT 1")
		if err != nil {
			t.Fatal(err)
		}
		pl, err := p.PlanQuery(ctx, st.(*ast.QueryStmt).Query, "SELECT 1")
		if err != nil {
			return nil, err
		}
		return pl.Graph, nil
	}
	g, err := plan(map[string]string{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.Checkpoint.Interval != 0 || g.Restart.Type != "none" {
		t.Errorf("defaults: checkpoint %v, restart %v", g.Checkpoint, g.Restart)
	}
	g, err = plan(map[string]string{"execution.checkpointing.interval": "5 s"}, &jobgraph.CheckpointConfig{Dir: "/ck"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Checkpoint.Interval != 5*time.Second || g.Checkpoint.Dir != "/ck" || g.Restart.Type != "exponential-delay" {
		t.Errorf("with checkpoints: checkpoint %v, restart %v", g.Checkpoint, g.Restart)
	}
	_, err = plan(map[string]string{"restart-strategy.type": "sometimes"}, nil)
	if err == nil || !strings.Contains(err.Error(), "invalid value 'sometimes' for 'restart-strategy.type'") {
		t.Errorf("bad restart type: %v", err)
	}
	g, err = plan(map[string]string{"table.local-time-zone": "Asia/Tokyo",
		"execution.savepoint.path": "/sp/savepoint-1", "execution.savepoint.ignore-unclaimed-state": "TRUE"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.Session.TimeZone != "Asia/Tokyo" || g.Savepoint != (jobgraph.SavepointRestore{Path: "/sp/savepoint-1", IgnoreUnclaimedState: true}) {
		t.Errorf("session %+v, savepoint %+v", g.Session, g.Savepoint)
	}
	if g, _ = plan(map[string]string{}, nil); g.Session.TimeZone != "UTC" || g.Savepoint.Path != "" {
		t.Errorf("default session %+v, savepoint %+v", g.Session, g.Savepoint)
	}
}

// TestMaxParallelism: pipeline.max-parallelism sets the graph's key groups
// and caps the parallelism; a value outside [1, 32768] is refused at plan
// time, naming the option (2e9 used to reach task managers, which
// allocated a table of that many key groups).
func TestMaxParallelism(t *testing.T) {
	store := catalog.NewMemStore()
	st, err := parser.ParseStatement("CREATE TABLE t (k INT, n BIGINT)")
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
	const sql = "SELECT k, COUNT(*) FROM t GROUP BY k"
	plan := func(config map[string]string) (*jobgraph.Graph, error) {
		p := &Planner{Catalog: testCatalog{store}, Connectors: testConnectors{}, Options: Options{Parallelism: 8, Config: config}}
		st, err := parser.ParseStatement(sql)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := p.PlanQuery(context.Background(), st.(*ast.QueryStmt).Query, sql)
		if err != nil {
			return nil, err
		}
		return pl.Graph, nil
	}
	g, err := plan(map[string]string{"pipeline.max-parallelism": "4", "parallelism.default": "6"})
	if err != nil {
		t.Fatal(err)
	}
	if g.MaxParallelism != 4 || g.Vertices[1].Parallelism != 4 {
		t.Errorf("max parallelism %d, aggregate at %d, want 4 and 4", g.MaxParallelism, g.Vertices[1].Parallelism)
	}
	if g, _ = plan(nil); g.MaxParallelism != 128 || g.Vertices[1].Parallelism != 8 {
		t.Errorf("defaults: max parallelism %d, aggregate at %d", g.MaxParallelism, g.Vertices[1].Parallelism)
	}
	for _, v := range []string{"2000000000", "0", "32769", "many"} {
		_, err := plan(map[string]string{"pipeline.max-parallelism": v})
		want := "invalid value '" + v + "' for 'pipeline.max-parallelism': it must be an integer from 1 to 32768"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("max parallelism %s: %v, want %q", v, err, want)
		}
	}
}
