package planner

import (
	"github.com/braidflow/braid/expr"
	"slices"
	"strings"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// stream is the output of a vertex under construction: operators are chained
// onto its vertex while parallelism allows, and a new vertex starts where data
// must be redistributed.
type stream struct {
	vertex *jobgraph.Vertex
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
	// keyed says upsertKey holds a unique key of a changing stream: the
	// columns no two live rows share (a group aggregate's keys, an upsert
	// table's primary key), which the stream is hashed on; empty for a
	// stream of at most one live row. Unknown (false) is the safe default:
	// an upsert sink then materializes.
	keyed     bool
	upsertKey []int
}

// withUpsertKey returns s with a known unique key.
func (s *stream) withUpsertKey(key []int) *stream {
	s.keyed, s.upsertKey = true, key
	return s
}

// mapUpsertKey maps s's unique key through a projection over s: known when
// every key column is passed through unchanged.
func mapUpsertKey(s *stream, exprs []*expr.Expr) ([]int, bool) {
	if !s.keyed {
		return nil, false
	}
	out := make([]int, 0, len(s.upsertKey))
	for _, k := range s.upsertKey {
		at := -1
		for j, e := range exprs {
			if e.Op == expr.OpColumn && e.Col == k {
				at = j
				break
			}
		}
		if at < 0 {
			return nil, false
		}
		out = append(out, at)
	}
	return out, true
}

// graphBuilder assembles a job graph.
type graphBuilder struct {
	g *jobgraph.Graph
	// shared marks the vertices several pipelines read (see share):
	// chaining onto one starts a vertex of its own instead.
	shared map[int]bool
	// tables names the catalog table each source and sink operator reads
	// or writes, for EXPLAIN (see noteTable); it is not part of the graph.
	tables map[*jobgraph.Operator]explainTable
}

func newGraphBuilder(name string, maxParallelism int) *graphBuilder {
	return &graphBuilder{g: &jobgraph.Graph{Name: name, MaxParallelism: maxParallelism}}
}

// vertex adds a vertex whose chain starts with op.
func (b *graphBuilder) vertex(name string, parallelism, numInputs int, op *jobgraph.Operator) *jobgraph.Vertex {
	v := &jobgraph.Vertex{
		ID:          len(b.g.Vertices),
		Name:        name,
		Parallelism: parallelism,
		NumInputs:   numInputs,
		Chain:       []*jobgraph.Operator{op},
	}
	b.g.Vertices = append(b.g.Vertices, v)
	return v
}

// edge connects src to input `input` of dst.
func (b *graphBuilder) edge(src, dst *jobgraph.Vertex, input int, p types.Partitioning, keys []int) {
	b.g.Edges = append(b.g.Edges, &jobgraph.Edge{
		Source:       src.ID,
		Target:       dst.ID,
		TargetInput:  input,
		Partitioning: p,
		KeyColumns:   slices.Clone(keys),
	})
}

// source starts a stream at a source operator.
func (b *graphBuilder) source(name string, parallelism int, op *jobgraph.Operator, schema types.Schema, bounded bool) *stream {
	return &stream{vertex: b.vertex(name, parallelism, 0, op), schema: schema, bounded: bounded}
}

// chain appends op to s's vertex, or, when the operator must run at another
// parallelism, starts a new vertex fed by a redistributing edge.
func (b *graphBuilder) chain(s *stream, parallelism int, op *jobgraph.Operator, out types.Schema) *stream {
	if parallelism == s.vertex.Parallelism && b.shared[s.vertex.ID] {
		v := b.vertex(op.Name, parallelism, 1, op)
		b.edge(s.vertex, v, 0, types.PartitionForward, nil)
		return &stream{vertex: v, schema: out, bounded: s.bounded, changes: s.changes, updatesOnly: s.updatesOnly}
	}
	if parallelism == s.vertex.Parallelism {
		s.vertex.Chain = append(s.vertex.Chain, op)
		s.vertex.Name += " -> " + op.Name
		return &stream{vertex: s.vertex, schema: out, bounded: s.bounded, changes: s.changes, updatesOnly: s.updatesOnly}
	}
	v := b.vertex(op.Name, parallelism, 1, op)
	p, keys := redistribute(s, parallelism)
	b.edge(s.vertex, v, 0, p, keys)
	return &stream{vertex: v, schema: out, bounded: s.bounded, changes: s.changes, updatesOnly: s.updatesOnly}
}

// redistribute picks the edge that moves s to another parallelism with no
// key of its own: one subtask, or round robin for an insert-only stream.
// The changes of a changelog stream go by a hash of the whole row instead,
// so a row's insert and its retraction take one path and arrive in order;
// round robin could deliver the retraction first, to another subtask.
func redistribute(s *stream, parallelism int) (types.Partitioning, []int) {
	switch {
	case parallelism == 1:
		return types.PartitionSingle, nil
	case s.changes == "":
		return types.PartitionRebalance, nil
	}
	keys := make([]int, len(s.schema))
	for i := range keys {
		keys[i] = i
	}
	return types.PartitionHash, keys
}

// share makes v, a source vertex that one pipeline chained operators onto,
// readable by another: the operators after its first move to a vertex of
// their own, fed by a forward edge, and v emits the source's rows to both.
// The caller must hold no stream of v's old chain.
func (b *graphBuilder) share(v *jobgraph.Vertex) {
	if b.shared[v.ID] {
		return
	}
	if b.shared == nil {
		b.shared = map[int]bool{}
	}
	if len(v.Chain) > 1 {
		rest := b.vertex("", v.Parallelism, 1, v.Chain[1])
		rest.Chain = append(rest.Chain, v.Chain[2:]...)
		names := make([]string, len(rest.Chain))
		for i, op := range rest.Chain {
			names[i] = op.Name
		}
		rest.Name = strings.Join(names, " -> ")
		for _, e := range b.g.Edges {
			if e.Source == v.ID {
				e.Source = rest.ID
			}
		}
		b.edge(v, rest, 0, types.PartitionForward, nil)
		v.Chain = []*jobgraph.Operator{v.Chain[0]}
		v.Name = v.Chain[0].Name
	}
	b.shared[v.ID] = true
}

// join starts a two-input vertex fed by hash edges on the key columns, or,
// for a join without keys, by edges that send everything to its one subtask.
func (b *graphBuilder) join(name string, parallelism int, op *jobgraph.Operator, left, right *stream, leftKeys, rightKeys []int, out types.Schema) *stream {
	v := b.vertex(name, parallelism, 2, op)
	p := types.PartitionHash
	if len(leftKeys) == 0 {
		p = types.PartitionSingle
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
