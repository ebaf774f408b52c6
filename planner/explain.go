package planner

import (
	"fmt"
	"strings"

	braidv1 "github.com/braidflow/braid/proto/braid/v1"
)

// ExplainGraph describes a job graph: each vertex with its parallelism and
// operator chain, and each edge with its partitioning.
func ExplainGraph(g *braidv1.JobGraph) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "== Job graph (max parallelism %d) ==\n", g.MaxParallelism)
	for _, v := range g.Vertices {
		var ops []string
		for _, o := range v.Chain {
			ops = append(ops, o.Name)
		}
		fmt.Fprintf(&sb, "vertex %d [parallelism %d]: %s\n", v.Id, v.Parallelism, strings.Join(ops, " -> "))
	}
	for _, e := range g.Edges {
		part := strings.TrimPrefix(e.Partitioning.String(), "PARTITIONING_")
		keys := ""
		if len(e.KeyColumns) > 0 {
			keys = fmt.Sprintf(" on columns %v", e.KeyColumns)
		}
		fmt.Fprintf(&sb, "edge %d -> %d (input %d): %s%s\n", e.Source, e.Target, e.TargetInput, part, keys)
	}
	return strings.TrimRight(sb.String(), "\n")
}
