package planner

import (
	"fmt"

	"github.com/braidflow/braid/jobgraph"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/types"
)

// stream is the output of a vertex under construction: operators are chained
// onto its vertex while parallelism allows, and a new vertex starts where data
// must be redistributed.
type stream struct {
	vertex *braidv1.Vertex
	schema types.Schema
	// bounded is true when every source feeding the stream ends by itself.
	bounded bool
	// calc is the spec of the vertex's last operator when it is a calc that
	// later calcs may merge into.
	calc *jobgraph.CalcSpec
	// changes names the operator whose updates and deletes the stream
	// carries (as Flink names it in errors); "" for an insert-only stream.
	changes string
	// updatesOnly is true when those changes hold updates but no deletes
	// (a group aggregate over an insert-only input).
	updatesOnly bool
}

// graphBuilder assembles a JobGraph.
type graphBuilder struct {
	g *braidv1.JobGraph
}

func newGraphBuilder(name string, maxParallelism int) *graphBuilder {
	return &graphBuilder{g: &braidv1.JobGraph{
		Name:           name,
		MaxParallelism: int32(maxParallelism),
		Config:         map[string]string{},
	}}
}

// vertex adds a vertex whose chain starts with op.
func (b *graphBuilder) vertex(name string, parallelism, numInputs int, op *braidv1.OperatorSpec) *braidv1.Vertex {
	v := &braidv1.Vertex{
		Id:          int32(len(b.g.Vertices)),
		Name:        name,
		Parallelism: int32(parallelism),
		NumInputs:   int32(numInputs),
		Chain:       []*braidv1.OperatorSpec{op},
	}
	b.g.Vertices = append(b.g.Vertices, v)
	return v
}

// edge connects src to input `input` of dst.
func (b *graphBuilder) edge(src, dst *braidv1.Vertex, input int, p braidv1.Partitioning, keys []int) {
	e := &braidv1.Edge{
		Source:       src.Id,
		Target:       dst.Id,
		TargetInput:  int32(input),
		Partitioning: p,
	}
	for _, k := range keys {
		e.KeyColumns = append(e.KeyColumns, int32(k))
	}
	b.g.Edges = append(b.g.Edges, e)
}

// source starts a stream at a source operator.
func (b *graphBuilder) source(name string, parallelism int, op *braidv1.OperatorSpec, schema types.Schema, bounded bool) *stream {
	return &stream{vertex: b.vertex(name, parallelism, 0, op), schema: schema, bounded: bounded}
}

// chain appends op to s's vertex, or, when the operator must run at another
// parallelism, starts a new vertex fed by a redistributing edge.
func (b *graphBuilder) chain(s *stream, parallelism int, op *braidv1.OperatorSpec, out types.Schema) *stream {
	if parallelism == int(s.vertex.Parallelism) {
		s.vertex.Chain = append(s.vertex.Chain, op)
		s.vertex.Name += " -> " + op.Name
		return &stream{vertex: s.vertex, schema: out, bounded: s.bounded, changes: s.changes, updatesOnly: s.updatesOnly}
	}
	v := b.vertex(op.Name, parallelism, 1, op)
	p := braidv1.Partitioning_PARTITIONING_REBALANCE
	if parallelism == 1 {
		p = braidv1.Partitioning_PARTITIONING_SINGLE
	}
	b.edge(s.vertex, v, 0, p, nil)
	return &stream{vertex: v, schema: out, bounded: s.bounded, changes: s.changes, updatesOnly: s.updatesOnly}
}

// join starts a two-input vertex fed by hash edges on the key columns, or,
// for a join without keys, by edges that send everything to its one subtask.
func (b *graphBuilder) join(name string, parallelism int, op *braidv1.OperatorSpec, left, right *stream, leftKeys, rightKeys []int, out types.Schema) *stream {
	v := b.vertex(name, parallelism, 2, op)
	p := braidv1.Partitioning_PARTITIONING_HASH
	if len(leftKeys) == 0 {
		p = braidv1.Partitioning_PARTITIONING_SINGLE
	}
	b.edge(left.vertex, v, 0, p, leftKeys)
	b.edge(right.vertex, v, 1, p, rightKeys)
	changes := ""
	if left.changes != "" || right.changes != "" {
		changes = "Join(joinType=[InnerJoin])"
	}
	// A join passes its inputs' row kinds through.
	updatesOnly := changes != "" && (left.changes == "" || left.updatesOnly) && (right.changes == "" || right.updatesOnly)
	return &stream{vertex: v, schema: out, bounded: left.bounded && right.bounded, changes: changes, updatesOnly: updatesOnly}
}

// validate checks the graph's shape: every vertex with inputs has edges into
// each input, edges reference existing vertices, and forward edges connect
// equal parallelism.
func validate(g *braidv1.JobGraph) error {
	inputs := map[int32]map[int32]bool{}
	for _, e := range g.Edges {
		if int(e.Source) >= len(g.Vertices) || int(e.Target) >= len(g.Vertices) {
			return fmt.Errorf("planner: edge %d->%d references a missing vertex", e.Source, e.Target)
		}
		if e.Partitioning == braidv1.Partitioning_PARTITIONING_FORWARD &&
			g.Vertices[e.Source].Parallelism != g.Vertices[e.Target].Parallelism {
			return fmt.Errorf("planner: forward edge %d->%d between different parallelism", e.Source, e.Target)
		}
		if inputs[e.Target] == nil {
			inputs[e.Target] = map[int32]bool{}
		}
		inputs[e.Target][e.TargetInput] = true
	}
	for _, v := range g.Vertices {
		for i := int32(0); i < v.NumInputs; i++ {
			if !inputs[v.Id][i] {
				return fmt.Errorf("planner: vertex %d (%s) has no edge into input %d", v.Id, v.Name, i)
			}
		}
	}
	return nil
}
