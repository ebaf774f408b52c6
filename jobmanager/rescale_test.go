package jobmanager

import (
	"strings"
	"testing"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// TestRescaledGraph: a rescale keeps collect sinks and VALUES sources at
// parallelism 1, leaves the running graph alone until it is deployed, and
// a rescale the graph cannot run at (a FORWARD edge from a VALUES source)
// fails Validate, so RescaleJob refuses it before taking a savepoint.
func TestRescaledGraph(t *testing.T) {
	schema := types.Schema{{Name: "n", Type: types.BigInt}}
	g := &jobgraph.Graph{Vertices: []*jobgraph.Vertex{
		{ID: 0, Name: "values", Parallelism: 1, Chain: []*jobgraph.Operator{{Name: "Values", Spec: &jobgraph.ValuesSpec{Schema: schema}}}},
		{ID: 1, Name: "union", Parallelism: 1, NumInputs: 1, Chain: []*jobgraph.Operator{
			{Name: "Union", Spec: &jobgraph.CalcSpec{InputSchema: schema}},
			{Name: "Collect", Spec: &jobgraph.CollectSpec{Schema: schema}}}},
	}, Edges: []*jobgraph.Edge{{Source: 0, Target: 1, Partitioning: types.PartitionForward}}}
	g.ApplyDefaults()
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	r := rescaled(g, 4)
	if r.Vertices[0].Parallelism != 1 || r.Vertices[1].Parallelism != 1 || g.Vertices[1].Parallelism != 1 {
		t.Fatalf("collect and values vertices rescaled: %d %d", r.Vertices[0].Parallelism, r.Vertices[1].Parallelism)
	}
	g.Vertices[1].Chain = g.Vertices[1].Chain[:1] // the union alone, fed FORWARD by VALUES
	r = rescaled(g, 4)
	if g.Vertices[1].Parallelism != 1 {
		t.Fatal("rescaled changed the running graph")
	}
	if err := r.Validate(); err == nil || !strings.Contains(err.Error(), "a FORWARD edge joins vertices of one parallelism, not 1 and 4") {
		t.Fatalf("rescaled graph: %v", err)
	}
}
