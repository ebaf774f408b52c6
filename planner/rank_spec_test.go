package planner

import (
	"context"
	"testing"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/sql/parser"
)

// TestRankAndDeduplicateSpecs checks what the planner tells the operators:
// the deduplicate's keys, kept row, rowtime column and state TTL; the
// rank's OutputRankNumber when the row number is read.
func TestRankAndDeduplicateSpecs(t *testing.T) {
	ctx := context.Background()
	store := catalog.NewMemStore()
	for _, ddl := range []string{
		"CREATE TABLE e (k INT, x INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)",
		"CREATE TABLE p (k INT, x INT, pt AS PROCTIME())",
	} {
		st, _ := parser.ParseStatement(ddl)
		tbl, err := BuildTable(st.(*ast.CreateTableStmt), catalog.DefaultDatabase, 1)
		if err != nil {
			t.Fatal(err)
		}
		store.CreateTable(ctx, tbl)
	}
	plan := func(sql string, config map[string]string) jobgraph.Spec {
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
		for _, v := range pl.Graph.Vertices {
			for _, o := range v.Chain {
				switch o.Spec.(type) {
				case *jobgraph.DeduplicateSpec, *jobgraph.RankSpec:
					return o.Spec
				}
			}
		}
		t.Fatalf("no rank or deduplicate in the plan of %s", sql)
		return nil
	}
	d := plan("SELECT k, x FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn FROM e) WHERE rn = 1",
		map[string]string{"table.exec.state.ttl": "1 h"}).(*jobgraph.DeduplicateSpec)
	if !d.KeepLastRow || d.TTLMs != 3600*1000 || len(d.Keys) != 1 || d.InputSchema[d.Keys[0]].Name != "$partition0" ||
		d.RowtimeCol < 0 || d.InputSchema[d.RowtimeCol].Name != "$order0" {
		t.Fatalf("rowtime keep-last: %+v", d)
	}
	d = plan("SELECT k FROM (SELECT k, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt) AS rn FROM p) WHERE rn = 1", nil).(*jobgraph.DeduplicateSpec)
	if d.KeepLastRow || d.TTLMs != 0 || d.RowtimeCol != -1 {
		t.Fatalf("proctime keep-first: %+v", d)
	}
	r := plan("SELECT k, rn FROM (SELECT k, ROW_NUMBER() OVER (PARTITION BY k ORDER BY x) AS rn FROM e) WHERE rn <= 2", nil).(*jobgraph.RankSpec)
	if !r.OutputRankNumber || r.Limit != 2 {
		t.Fatalf("rank with rn: %+v", r)
	}
	r = plan("SELECT k FROM (SELECT k, ROW_NUMBER() OVER (PARTITION BY k ORDER BY x) AS rn FROM e) WHERE rn <= 2", nil).(*jobgraph.RankSpec)
	if r.OutputRankNumber {
		t.Fatalf("rank without rn: %+v", r)
	}
	// rn = 1 read: a constant after the rank, which does not output it
	// (Flink's RankNumberColumnRemoveRule).
	r = plan("SELECT * FROM (SELECT k, ROW_NUMBER() OVER (PARTITION BY k ORDER BY x) AS rn FROM e) WHERE rn = 1", nil).(*jobgraph.RankSpec)
	if r.OutputRankNumber {
		t.Fatalf("Top-1 with rn read: %+v", r)
	}
	if _, ok := plan("SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) AS rn FROM e) WHERE rn = 1", nil).(*jobgraph.DeduplicateSpec); !ok {
		t.Fatal("SELECT * over rn = 1 on a rowtime is not a deduplication")
	}
}
