package jobgraph

import (
	"errors"
	"fmt"

	"github.com/braidflow/braid/types"
)

// Validate checks everything the readers of a graph rely on, so that they
// need not check it again:
//
//   - MaxParallelism is in [1, types.UpperBoundMaxParallelism];
//   - there is at least one vertex, and vertex ids are their indexes;
//   - each vertex runs at a parallelism in [1, MaxParallelism], has 0 to 2
//     inputs, and a non-empty chain whose first operator consumes that many
//     inputs and whose later operators one each; a vertex holding a collect
//     sink runs at parallelism 1;
//   - every operator has a spec that passes its own Validate, and no two
//     operators share a uid;
//   - every edge joins two existing vertices, into an input its target has,
//     with a partitioning; a FORWARD edge joins vertices of one
//     parallelism; a HASH edge has key columns; key columns are not
//     negative;
//   - every input of every vertex has an edge, and the edges form no cycle;
//   - the checkpoint config, restart strategy and session are in range.
//
// The error names the vertex, operator or edge at fault:
// "jobgraph: vertex 2 (GroupAggregate): parallelism 0 is outside [1, 128]".
func (g *Graph) Validate() error {
	if g.MaxParallelism < 1 || g.MaxParallelism > types.UpperBoundMaxParallelism {
		return fmt.Errorf("jobgraph: max parallelism %d is outside [1, %d]", g.MaxParallelism, types.UpperBoundMaxParallelism)
	}
	if len(g.Vertices) == 0 {
		return errors.New("jobgraph: the job graph has no vertices")
	}
	uids := map[string]string{} // uid -> where
	for i, v := range g.Vertices {
		if v == nil {
			return fmt.Errorf("jobgraph: vertex %d is missing", i)
		}
		if v.ID != i {
			return fmt.Errorf("jobgraph: vertex %d (%s) is at position %d: vertex ids must number the vertices from 0 in order", v.ID, v.Name, i)
		}
		if err := g.validateVertex(v, uids); err != nil {
			return err
		}
	}
	fed := make([][]bool, len(g.Vertices)) // vertex -> input -> has an edge
	for i, v := range g.Vertices {
		fed[i] = make([]bool, v.NumInputs)
	}
	for _, e := range g.Edges {
		if err := g.validateEdge(e); err != nil {
			return err
		}
		fed[e.Target][e.TargetInput] = true
	}
	for i, inputs := range fed {
		for in, ok := range inputs {
			if !ok {
				v := g.Vertices[i]
				return fmt.Errorf("jobgraph: vertex %d (%s) has no edge into its input %d", v.ID, v.Name, in)
			}
		}
	}
	if _, err := topoOrder(g); err != nil {
		return err
	}
	if err := g.Checkpoint.Validate(); err != nil {
		return fmt.Errorf("jobgraph: %w", err)
	}
	if err := g.Restart.Validate(); err != nil {
		return fmt.Errorf("jobgraph: %w", err)
	}
	if err := g.Session.Validate(); err != nil {
		return fmt.Errorf("jobgraph: %w", err)
	}
	return nil
}

func (g *Graph) validateVertex(v *Vertex, uids map[string]string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("jobgraph: vertex %d (%s): %s", v.ID, v.Name, fmt.Sprintf(format, args...))
	}
	if v.Parallelism < 1 || v.Parallelism > g.MaxParallelism {
		return bad("parallelism %d is outside [1, %d] (the job's max parallelism)", v.Parallelism, g.MaxParallelism)
	}
	if v.NumInputs < 0 || v.NumInputs > 2 {
		return bad("%d inputs; a vertex has 0 (a source), 1 or 2 (a join)", v.NumInputs)
	}
	if len(v.Chain) == 0 {
		return bad("no operators")
	}
	for i, op := range v.Chain {
		if op == nil || op.Spec == nil {
			return bad("operator %d has no spec", i)
		}
		where := fmt.Sprintf("operator %d (%s)", i, op.Name)
		want := 1
		if i == 0 {
			want = v.NumInputs
		}
		if n := op.Spec.Inputs(); n != want {
			if i == 0 {
				return bad("%s is a %s, which takes %d inputs, but the vertex has %d", where, op.Kind(), n, want)
			}
			return bad("%s is a %s, which takes %d inputs, but only the first operator of a chain may take other than 1", where, op.Kind(), n)
		}
		if err := op.Spec.Validate(); err != nil {
			return bad("%s: %s: %v", where, op.Kind(), err)
		}
		if op.Kind() == KindCollect && v.Parallelism != 1 {
			// NB: a collect sink streams one Arrow IPC stream to one
			// client; several subtasks would interleave several streams.
			return bad("%s is a collect sink and must run at parallelism 1, not %d", where, v.Parallelism)
		}
		if bs, ok := op.Spec.(*BatchSortSpec); ok && bs.Global() && v.Parallelism != 1 {
			// NB: a sort, OFFSET or LIMIT is over the whole result.
			return bad("%s sorts or limits the whole result and must run at parallelism 1, not %d", where, v.Parallelism)
		}
		if op.UID != "" {
			here := fmt.Sprintf("vertex %d %s", v.ID, where)
			if other, dup := uids[op.UID]; dup {
				return bad("%s has uid %s, as %s has", where, op.UID, other)
			}
			uids[op.UID] = here
		}
	}
	return nil
}

func (g *Graph) validateEdge(e *Edge) error {
	if e == nil {
		return errors.New("jobgraph: an edge is missing")
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("jobgraph: edge %d -> %d (input %d): %s", e.Source, e.Target, e.TargetInput, fmt.Sprintf(format, args...))
	}
	src, dst := g.Vertex(e.Source), g.Vertex(e.Target)
	switch {
	case src == nil || dst == nil:
		return bad("references a missing vertex (the graph has %d)", len(g.Vertices))
	case e.Source == e.Target:
		return bad("connects a vertex to itself")
	case dst.NumInputs == 0:
		return bad("vertex %d (%s) is a source and takes no input", dst.ID, dst.Name)
	case e.TargetInput < 0 || e.TargetInput >= dst.NumInputs:
		return bad("vertex %d (%s) has inputs 0 to %d", dst.ID, dst.Name, dst.NumInputs-1)
	case !e.Partitioning.Valid():
		return bad("%v is not a partitioning (FORWARD, HASH, BROADCAST, REBALANCE or SINGLE)", e.Partitioning)
	case e.Partitioning == types.PartitionForward && src.Parallelism != dst.Parallelism:
		return bad("a FORWARD edge joins vertices of one parallelism, not %d and %d", src.Parallelism, dst.Parallelism)
	case e.Partitioning == types.PartitionHash && len(e.KeyColumns) == 0:
		return bad("a HASH edge needs key columns")
	}
	for _, k := range e.KeyColumns {
		if k < 0 {
			return bad("negative key column %d", k)
		}
	}
	return nil
}
