package planner

import (
	"fmt"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/types"
)

// physical turns a logical plan into vertices and edges.
type physical struct {
	p           *Planner
	b           *graphBuilder
	parallelism int
}

func op(kind, name string, spec any) *braidv1.OperatorSpec {
	return &braidv1.OperatorSpec{Kind: kind, Name: name, Config: jobgraph.EncodeSpec(spec)}
}

func (ph *physical) build(n node) (*stream, error) {
	switch n := n.(type) {
	case *scanNode:
		return ph.buildScan(n)
	case *valuesNode:
		s := ph.b.source("Values", 1, op(jobgraph.KindValues, "Values", jobgraph.ValuesSpec{Schema: n.out, Rows: n.rows}), n.out, true)
		return s, nil
	case *filterNode:
		if j, ok := n.input.(*joinNode); ok {
			// Fold the filter into the join, where its conjuncts are pushed
			// below the join or kept as the residual.
			c := *j
			c.cond = and(append(conjuncts(j.cond), conjuncts(n.cond)...))
			return ph.build(&c)
		}
		in, err := ph.build(n.input)
		if err != nil {
			return nil, err
		}
		return ph.calc(in, n.cond, identity(in.schema), in.schema), nil
	case *projectNode:
		if f, ok := n.input.(*filterNode); ok {
			if _, isJoin := f.input.(*joinNode); !isJoin {
				in, err := ph.build(f.input)
				if err != nil {
					return nil, err
				}
				return ph.calc(in, f.cond, n.exprs, n.out), nil
			}
		}
		in, err := ph.build(n.input)
		if err != nil {
			return nil, err
		}
		if isIdentity(n.exprs, in.schema) && sameNames(in.schema, n.out) {
			return in, nil
		}
		return ph.calc(in, nil, n.exprs, n.out), nil
	case *joinNode:
		return ph.buildJoin(n)
	case *unionNode:
		return ph.buildUnion(n)
	}
	return nil, fmt.Errorf("planner: no physical plan for %T", n)
}

// calc chains a filter-and-project operator onto s. When s ends in a calc
// already, the two merge into one: the new expressions are rewritten over
// the earlier calc's input.
func (ph *physical) calc(s *stream, filter *expr.Expr, exprs []*expr.Expr, out types.Schema) *stream {
	if prev := s.calc; prev != nil {
		merged := &jobgraph.CalcSpec{InputSchema: prev.InputSchema, OutputSchema: out}
		merged.Filter = and(append(conjuncts(prev.Filter), conjuncts(substitute(filter, prev.Projections))...))
		for _, e := range exprs {
			merged.Projections = append(merged.Projections, substitute(e, prev.Projections))
		}
		last := s.vertex.Chain[len(s.vertex.Chain)-1]
		last.Config = jobgraph.EncodeSpec(merged)
		if merged.Filter != nil {
			last.Name = "Calc(filter)"
		}
		return &stream{vertex: s.vertex, schema: out, bounded: s.bounded, calc: merged}
	}
	name := "Calc"
	if filter != nil {
		name = "Calc(filter)"
	}
	spec := &jobgraph.CalcSpec{InputSchema: s.schema, Filter: filter, Projections: exprs, OutputSchema: out}
	ns := ph.b.chain(s, int(s.vertex.Parallelism), op(jobgraph.KindCalc, name, spec), out)
	ns.calc = spec
	return ns
}

func (ph *physical) buildScan(n *scanNode) (*stream, error) {
	kind, cfg, maxPar, err := ph.p.Connectors.SourceSpec(n.table, !ph.p.Options.Follow)
	if err != nil {
		return nil, fmt.Errorf("table %s.%s: %w", n.table.Database, n.table.Name, err)
	}
	par := ph.parallelism
	if maxPar > 0 && par > maxPar {
		par = maxPar
	}
	name := "Source: " + n.table.Name
	s := ph.b.source(name, par, &braidv1.OperatorSpec{Kind: kind, Name: name, Config: cfg}, n.phys, sourceBounded(n, !ph.p.Options.Follow))
	if n.exprs != nil {
		s = ph.calc(s, nil, n.exprs, n.out)
	}
	return s, nil
}

// sourceBounded reports whether a table's source ends by itself.
func sourceBounded(n *scanNode, boundedScan bool) bool {
	switch n.table.Connector() {
	case "":
		return boundedScan
	case "datagen":
		return n.table.Options["number-of-rows"] != ""
	}
	return false
}

func (ph *physical) buildUnion(n *unionNode) (*stream, error) {
	var ins []*stream
	for _, in := range n.inputs {
		s, err := ph.build(in)
		if err != nil {
			return nil, err
		}
		ins = append(ins, s)
	}
	// A union is a vertex whose single input is fed by every branch.
	spec := jobgraph.CalcSpec{InputSchema: n.out, Projections: identity(n.out), OutputSchema: n.out}
	v := ph.b.vertex("Union", ph.parallelism, 1, op(jobgraph.KindCalc, "Union", spec))
	bounded := true
	for _, s := range ins {
		p := braidv1.Partitioning_PARTITIONING_REBALANCE
		if s.vertex.Parallelism == v.Parallelism {
			p = braidv1.Partitioning_PARTITIONING_FORWARD
		}
		ph.b.edge(s.vertex, v, 0, p, nil)
		bounded = bounded && s.bounded
	}
	return &stream{vertex: v, schema: n.out, bounded: bounded}, nil
}

// buildJoin plans an inner join: equality conjuncts between the two sides
// become hash keys, conjuncts over one side are pushed below the join, and
// the rest is checked on each match.
func (ph *physical) buildJoin(n *joinNode) (*stream, error) {
	lw := len(n.left.schema())
	var leftFilters, rightFilters, residual []*expr.Expr
	var leftKeys, rightKeys []*expr.Expr
	for _, c := range conjuncts(n.cond) {
		side := sideOf(c, lw)
		switch {
		case side == sideLeft:
			leftFilters = append(leftFilters, c)
			continue
		case side == sideRight:
			rightFilters = append(rightFilters, remap(c, func(i int) int { return i - lw }))
			continue
		}
		if c.Op == expr.OpCall && c.Func == "=" && len(c.Args) == 2 {
			a, b := c.Args[0], c.Args[1]
			sa, sb := sideOf(a, lw), sideOf(b, lw)
			if sa == sideRight && sb == sideLeft {
				a, b, sa, sb = b, a, sb, sa
			}
			if sa == sideLeft && sb == sideRight {
				leftKeys = append(leftKeys, a)
				rightKeys = append(rightKeys, remap(b, func(i int) int { return i - lw }))
				continue
			}
		}
		residual = append(residual, c)
	}
	if len(leftKeys) == 0 {
		return nil, &Error{Pos: n.pos, Msg: "a join without an equality condition between its two inputs (a cross or theta join) is not supported yet"}
	}
	left, right := n.left, n.right
	if len(leftFilters) > 0 {
		left = &filterNode{input: left, cond: and(leftFilters)}
	}
	if len(rightFilters) > 0 {
		right = &filterNode{input: right, cond: and(rightFilters)}
	}
	ls, err := ph.build(left)
	if err != nil {
		return nil, err
	}
	rs, err := ph.build(right)
	if err != nil {
		return nil, err
	}
	// Keys are columns of one type on both sides: cast or computed keys are
	// appended as extra columns, which a projection drops after the join.
	lk, rk := make([]int, len(leftKeys)), make([]int, len(rightKeys))
	var lextra, rextra []*expr.Expr
	for i := range leftKeys {
		a, b := leftKeys[i], rightKeys[i]
		t, ok := expr.CommonType(a.Type, b.Type)
		if !ok {
			return nil, &Error{Pos: n.pos, Msg: fmt.Sprintf("join keys of types %s and %s cannot be compared", a.Type, b.Type)}
		}
		a, b = keyExpr(a, t), keyExpr(b, t)
		if a.Op == expr.OpColumn {
			lk[i] = a.Col
		} else {
			lk[i] = lw + len(lextra)
			lextra = append(lextra, a)
		}
		if b.Op == expr.OpColumn {
			rk[i] = b.Col
		} else {
			rk[i] = len(rs.schema) + len(rextra)
			rextra = append(rextra, b)
		}
	}
	ls = ph.extend(ls, lextra)
	rs = ph.extend(rs, rextra)
	// Shift right references past the left side's extra columns.
	shift := func(i int) int {
		if i >= lw {
			return i + len(lextra)
		}
		return i
	}
	out := append(append(types.Schema{}, ls.schema...), rs.schema...)
	spec := jobgraph.JoinSpec{
		LeftSchema:   ls.schema,
		RightSchema:  rs.schema,
		LeftKeys:     lk,
		RightKeys:    rk,
		Residual:     remap(and(residual), shift),
		OutputSchema: out,
	}
	v := ph.b.join("Join", ph.parallelism, op(jobgraph.KindJoinInner, "Join", spec), ls, rs, lk, rk, out)
	if len(lextra) == 0 && len(rextra) == 0 {
		return v, nil
	}
	var keep []*expr.Expr
	for i, f := range out {
		if (i >= lw && i < lw+len(lextra)) || i >= len(out)-len(rextra) {
			continue
		}
		keep = append(keep, expr.Column(i, f.Type))
	}
	return ph.calc(v, nil, keep, n.out), nil
}

// extend appends computed columns to s.
func (ph *physical) extend(s *stream, extra []*expr.Expr) *stream {
	if len(extra) == 0 {
		return s
	}
	exprs := identity(s.schema)
	out := append(types.Schema{}, s.schema...)
	for i, e := range extra {
		exprs = append(exprs, e)
		out = append(out, types.Field{Name: fmt.Sprintf("$key%d", i), Type: e.Type})
	}
	return ph.calc(s, nil, exprs, out)
}

func keyExpr(e *expr.Expr, t types.DataType) *expr.Expr {
	if sameType(e.Type, t) {
		return e
	}
	return expr.Cast(e, t.WithNullable(e.Type.Nullable()))
}

type side int

const (
	sideNone side = iota
	sideLeft
	sideRight
	sideBoth
)

// sideOf tells which join input the columns of e come from.
func sideOf(e *expr.Expr, leftWidth int) side {
	s := sideNone
	for _, c := range columnsOf(e) {
		cs := sideLeft
		if c >= leftWidth {
			cs = sideRight
		}
		if s == sideNone {
			s = cs
		} else if s != cs {
			return sideBoth
		}
	}
	return s
}

func identity(s types.Schema) []*expr.Expr {
	out := make([]*expr.Expr, len(s))
	for i, f := range s {
		out[i] = expr.Column(i, f.Type)
	}
	return out
}

func isIdentity(exprs []*expr.Expr, in types.Schema) bool {
	if len(exprs) != len(in) {
		return false
	}
	for i, e := range exprs {
		if e.Op != expr.OpColumn || e.Col != i {
			return false
		}
	}
	return true
}

func sameNames(a, b types.Schema) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name {
			return false
		}
	}
	return true
}
