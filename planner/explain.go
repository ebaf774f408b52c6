package planner

import (
	"fmt"
	"strings"

	"github.com/braidflow/braid/jobgraph"
)

// ExplainGraph describes a job graph: each vertex with its parallelism and
// operator chain, and each edge with its partitioning.
func ExplainGraph(g *jobgraph.Graph) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "== Job graph (max parallelism %d) ==\n", g.MaxParallelism)
	for _, v := range g.Vertices {
		var ops []string
		for _, o := range v.Chain {
			ops = append(ops, o.Name)
		}
		fmt.Fprintf(&sb, "vertex %d [parallelism %d]: %s\n", v.ID, v.Parallelism, strings.Join(ops, " -> "))
	}
	for _, e := range g.Edges {
		keys := ""
		if len(e.KeyColumns) > 0 {
			keys = fmt.Sprintf(" on columns %v", e.KeyColumns)
		}
		fmt.Fprintf(&sb, "edge %d -> %d (input %d): %s%s\n", e.Source, e.Target, e.TargetInput, e.Partitioning, keys)
	}
	return strings.TrimRight(sb.String(), "\n")
}
