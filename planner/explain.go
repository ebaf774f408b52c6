package planner

import (
	"fmt"
	"sort"
	"strings"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// explainTable is the catalog table a source or sink operator reads or
// writes, as EXPLAIN names it. The planner records it beside the graph
// (graphBuilder.tables); it never travels with the job.
type explainTable struct {
	database, name string
	// schema is the source's output (the table's physical columns) or the
	// sink's input.
	schema types.Schema
	// upsert is a managed table with a primary key: its source replays
	// every row kind its writers appended.
	upsert bool
}

// noteTable records the table of a source or sink operator for Explain.
func (b *graphBuilder) noteTable(op *jobgraph.Operator, t *catalog.Table, schema types.Schema) {
	if b.tables == nil {
		b.tables = map[*jobgraph.Operator]explainTable{}
	}
	b.tables[op] = explainTable{database: t.Database, name: t.Name, schema: schema,
		upsert: isUpsertTable(t)}
}

// Explain describes a plan as EXPLAIN prints it: the "Optimized Execution
// Plan" operator tree in the style of Flink's (sinks at the top, sources at
// the leaves, columns by name), one warning per operator whose state can
// grow without bound, then the job graph (ExplainGraph). With
// changelogMode (EXPLAIN CHANGELOG_MODE) every operator also shows the row
// kinds it emits.
func Explain(plan *Plan, changelogMode bool) string {
	x := newExplainer(plan)
	var sb strings.Builder
	sb.WriteString("== Optimized Execution Plan ==\n")
	x.writePlan(&sb, changelogMode)
	if w := x.warnings(); len(w) > 0 {
		sb.WriteString("\n")
		for _, line := range w {
			sb.WriteString("Warning: " + line + "\n")
		}
	}
	sb.WriteString("\n")
	sb.WriteString(ExplainGraph(plan.Graph))
	return sb.String()
}

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

// explainNode is one node of the operator tree: an operator of a vertex's
// chain, or an Exchange standing for a redistributing edge.
type explainNode struct {
	op     *jobgraph.Operator // nil for an exchange
	edge   *jobgraph.Edge     // the exchange's edge
	inputs []*explainNode
	// schema is the node's output; names are its column names made unique
	// as Flink's plans make them (k, k0, k1), so that a join's columns read
	// apart. A sink has none.
	schema types.Schema
	names  []string
	mode   changelogMode
	// refs counts the nodes that read this one; a node read by several
	// (a source shared by a statement set's INSERTs) is printed once, with
	// a reuse id.
	refs    int
	reuseID int
	desc    string
	// undescribed is set when desc is only the operator's display name:
	// its spec is of a kind Explain does not know.
	undescribed bool
}

type explainer struct {
	plan  *Plan
	nodes []*explainNode // every operator node, by vertex then chain
	roots []*explainNode
}

func newExplainer(plan *Plan) *explainer {
	g := plan.Graph
	x := &explainer{plan: plan}
	chains := make([][]*explainNode, len(g.Vertices))
	for _, v := range g.Vertices {
		for i, op := range v.Chain {
			n := &explainNode{op: op}
			if i > 0 {
				n.inputs = []*explainNode{chains[v.ID][i-1]}
			}
			chains[v.ID] = append(chains[v.ID], n)
			x.nodes = append(x.nodes, n)
		}
	}
	edges := append([]*jobgraph.Edge(nil), g.Edges...)
	sort.SliceStable(edges, func(i, j int) bool { return edges[i].TargetInput < edges[j].TargetInput })
	for _, e := range edges {
		src := chains[e.Source]
		in := src[len(src)-1]
		if e.Partitioning != types.PartitionForward {
			in = &explainNode{edge: e, inputs: []*explainNode{in}}
		}
		first := chains[e.Target][0]
		first.inputs = append(first.inputs, in)
	}
	for _, n := range x.nodes {
		for _, in := range n.inputs {
			in.refs++
			if in.op == nil {
				in.inputs[0].refs++
			}
		}
	}
	for _, n := range x.nodes {
		if n.refs == 0 {
			x.roots = append(x.roots, n)
		}
	}
	done := map[*explainNode]bool{}
	for _, n := range x.roots {
		x.resolve(n, done)
	}
	return x
}

// resolve computes n's schema, changelog mode and description after its
// inputs'.
func (x *explainer) resolve(n *explainNode, done map[*explainNode]bool) {
	if done[n] {
		return
	}
	done[n] = true
	for _, in := range n.inputs {
		x.resolve(in, done)
	}
	n.schema = x.outputSchema(n)
	n.names = uniqueNames(n.schema)
	n.mode = x.mode(n)
	n.desc = x.describe(n)
}

// in returns the names of n's input i.
func (n *explainNode) in(i int) []string {
	if i >= len(n.inputs) {
		return nil
	}
	return n.inputs[i].names
}

// inSchema returns the schema of n's first input, or nil.
func (n *explainNode) inSchema() types.Schema {
	if len(n.inputs) == 0 {
		return nil
	}
	return n.inputs[0].schema
}

func (x *explainer) outputSchema(n *explainNode) types.Schema {
	if n.op == nil {
		return n.inputs[0].schema
	}
	if t, ok := x.plan.tables[n.op]; ok {
		if n.op.Spec.Inputs() == 0 {
			return t.schema
		}
		return nil // a sink
	}
	switch s := n.op.Spec.(type) {
	case *jobgraph.CalcSpec:
		return s.OutputSchema
	case *jobgraph.JoinSpec:
		return s.OutputSchema
	case *jobgraph.IntervalJoinSpec:
		return s.OutputSchema
	case *jobgraph.TemporalJoinSpec:
		return s.OutputSchema
	case *jobgraph.WindowJoinSpec:
		return s.OutputSchema
	case *jobgraph.WindowTVFSpec:
		return s.OutputSchema
	case *jobgraph.SemiJoinSpec:
		return s.LeftSchema
	case *jobgraph.NormalizeSpec:
		return s.Schema
	case *jobgraph.ReplicateSpec:
		return append(append(types.Schema{}, s.Schema[:s.Count]...), s.Schema[s.Count+1:]...)
	case *jobgraph.GroupAggSpec:
		return s.OutputSchema
	case *jobgraph.WindowAggSpec:
		return s.OutputSchema
	case *jobgraph.OverAggSpec:
		return s.OutputSchema
	case *jobgraph.RankSpec:
		return s.OutputSchema()
	case *jobgraph.WindowRankSpec:
		return s.OutputSchema()
	case *jobgraph.WindowDeduplicateSpec:
		return s.InputSchema
	case *jobgraph.BatchSortSpec:
		return s.InputSchema
	case *jobgraph.WatermarkAssignerSpec:
		return s.InputSchema
	case *jobgraph.ValuesSpec:
		return s.Schema
	case *jobgraph.CollectSpec:
		return nil
	}
	if n.op.Spec.Inputs() == 0 {
		return nil
	}
	return n.inSchema()
}

// uniqueNames returns the column names of s, a repeated one suffixed with
// the first free number from 0, as Calcite uniquifies field names.
func uniqueNames(s types.Schema) []string {
	seen := make(map[string]bool, len(s))
	out := make([]string, len(s))
	for i, f := range s {
		name := f.Name
		for k := 0; seen[name]; k++ {
			name = fmt.Sprintf("%s%d", f.Name, k)
		}
		seen[name] = true
		out[i] = name
	}
	return out
}

// writePlan writes the operator trees: first each node that several
// others read, as a tree of its own marked (reuse_id=[n]), then one tree
// per sink (or the query's Collect), in which a shared node reads
// Reused(reference_id=[n]).
func (x *explainer) writePlan(sb *strings.Builder, changelog bool) {
	var shared []*explainNode
	seen := map[*explainNode]bool{}
	var visit func(n *explainNode)
	visit = func(n *explainNode) {
		if seen[n] {
			return
		}
		seen[n] = true
		for _, in := range n.inputs {
			visit(in)
		}
		if n.refs > 1 {
			shared = append(shared, n)
		}
	}
	for _, r := range x.roots {
		visit(r)
	}
	for i, n := range shared {
		n.reuseID = i + 1
	}
	blocks := append(append([]*explainNode{}, shared...), x.roots...)
	for i, n := range blocks {
		if i > 0 {
			sb.WriteString("\n")
		}
		x.writeTree(sb, n, "", "", changelog, true)
	}
}

func (x *explainer) writeTree(sb *strings.Builder, n *explainNode, lead, cont string, changelog, top bool) {
	sb.WriteString(lead)
	if n.reuseID > 0 && !top {
		fmt.Fprintf(sb, "Reused(reference_id=[%d])\n", n.reuseID)
		return
	}
	sb.WriteString(n.text(changelog))
	if n.reuseID > 0 {
		fmt.Fprintf(sb, "(reuse_id=[%d])", n.reuseID)
	}
	sb.WriteString("\n")
	for i, in := range n.inputs {
		l, c := ":- ", ":  "
		if i == len(n.inputs)-1 {
			l, c = "+- ", "   "
		}
		x.writeTree(sb, in, cont+l, cont+c, changelog, false)
	}
}

// text is n's description, with its changelog mode when asked for.
func (n *explainNode) text(changelog bool) string {
	if !changelog {
		return n.desc
	}
	d := strings.TrimSuffix(n.desc, ")")
	if !strings.HasSuffix(d, "(") {
		d += ", "
	}
	return d + "changelogMode=[" + n.mode.String() + "])"
}
