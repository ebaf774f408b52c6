package planner

import (
	"context"
	"strings"
	"testing"

	"github.com/braidflow/braid/catalog"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/sql/parser"
)

// TestJobOptions checks that a planned graph carries the resolved
// checkpointing and restart options, over the cluster's default.
func TestJobOptions(t *testing.T) {
	ctx := context.Background()
	plan := func(config map[string]string, cluster *braidv1.CheckpointConfig) (*braidv1.JobGraph, error) {
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
	if g.Checkpoint.GetIntervalMs() != 0 || g.Restart.GetType() != "none" {
		t.Errorf("defaults: checkpoint %v, restart %v", g.Checkpoint, g.Restart)
	}
	g, err = plan(map[string]string{"execution.checkpointing.interval": "5 s"}, &braidv1.CheckpointConfig{Dir: "/ck"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Checkpoint.GetIntervalMs() != 5000 || g.Checkpoint.GetDir() != "/ck" || g.Restart.GetType() != "exponential-delay" {
		t.Errorf("with checkpoints: checkpoint %v, restart %v", g.Checkpoint, g.Restart)
	}
	_, err = plan(map[string]string{"restart-strategy.type": "sometimes"}, nil)
	if err == nil || !strings.Contains(err.Error(), "invalid value 'sometimes' for 'restart-strategy.type'") {
		t.Errorf("bad restart type: %v", err)
	}
}
