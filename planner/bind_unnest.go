package planner

import (
	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// unnestNode joins each row of input with the elements of a collection
// computed from it (CROSS JOIN UNNEST(...), LEFT JOIN UNNEST(...) ON
// TRUE): its output is input's columns, then the element columns
// (expr.UnnestFields, renamed by the alias).
type unnestNode struct {
	input      node
	collection *expr.Expr
	ordinality bool
	outer      bool
	out        types.Schema
}

func (n *unnestNode) schema() types.Schema { return n.out }

// bindUnnestJoin binds l JOIN UNNEST(collection) [WITH ORDINALITY] AS
// alias(cols): a cross, comma or inner join with no condition or ON TRUE,
// or a LEFT JOIN ... ON TRUE. The collection may reference l's columns.
func (b *binder) bindUnnestJoin(j *ast.Join, u *ast.Unnest) (node, *scope, error) {
	switch j.Kind {
	case ast.CrossJoin, ast.CommaJoin, ast.InnerJoin, ast.LeftJoin:
	default:
		return nil, nil, unsupported(j.Pos, string(j.Kind)+" with UNNEST")
	}
	if len(j.Using) > 0 || j.Natural {
		return nil, nil, unsupported(j.Pos, "a USING or NATURAL join with UNNEST")
	}
	if j.On != nil && !isTrueLiteral(j.On) {
		return nil, nil, unsupported(j.On.Position(), "a join condition other than ON TRUE with UNNEST")
	}
	if j.Kind == ast.LeftJoin && j.On == nil {
		return nil, nil, errorf(j.Pos, "%s needs an ON condition", j.Kind)
	}
	if len(u.Args) != 1 {
		return nil, nil, unsupported(u.Pos, "UNNEST of more than one collection")
	}
	l, lsc, err := b.bindFrom(j.L)
	if err != nil {
		return nil, nil, err
	}
	return bindUnnestOver(l, lsc, u, j.Kind == ast.LeftJoin)
}

// bindUnnestFrom binds UNNEST(collection) alone in FROM: the collection
// is a constant expression, unnested once (over one row of no columns).
func (b *binder) bindUnnestFrom(u *ast.Unnest) (node, *scope, error) {
	if len(u.Args) != 1 {
		return nil, nil, unsupported(u.Pos, "UNNEST of more than one collection")
	}
	one := &valuesNode{rows: [][]*expr.Expr{{}}, out: types.Schema{}}
	return bindUnnestOver(one, &scope{}, u, false)
}

// bindUnnestOver binds UNNEST(collection) over the rows of l, whose
// columns sc lists.
func bindUnnestOver(l node, lsc *scope, u *ast.Unnest, outer bool) (node, *scope, error) {
	coll, err := bindExpr(lsc.withoutAggs("Aggregate expression is illegal in UNNEST"), u.Args[0])
	if err != nil {
		return nil, nil, err
	}
	fields, ok := expr.UnnestFields(coll.Type, u.WithOrdinality, outer)
	if !ok {
		return nil, nil, errorf(u.Args[0].Position(), "UNNEST needs an ARRAY, a MAP or a MULTISET, got %s", coll.Type)
	}
	rsc := &scope{}
	for _, f := range fields {
		rsc.cols = append(rsc.cols, scopeColumn{name: f.Name, typ: f.Type})
	}
	if u.Alias != nil {
		if rsc, err = applyAlias(rsc, u.Alias); err != nil {
			return nil, nil, err
		}
		for i := range fields {
			fields[i].Name = rsc.cols[i].name
		}
	}
	n := &unnestNode{input: l, collection: coll, ordinality: u.WithOrdinality, outer: outer,
		out: append(append(types.Schema{}, l.schema()...), fields...)}
	sc := concat(lsc, rsc)
	return n, sc, nil
}

func isTrueLiteral(e ast.Expr) bool {
	l, ok := e.(*ast.Literal)
	return ok && l.Kind == ast.LitBool && l.Value == "TRUE"
}

// buildUnnest chains the Unnest operator onto its input's stream.
func (ph *physical) buildUnnest(n *unnestNode) (*stream, error) {
	in, err := ph.build(n.input)
	if err != nil {
		return nil, err
	}
	spec := &jobgraph.UnnestSpec{InputSchema: in.schema, Collection: n.collection,
		Ordinality: n.ordinality, Outer: n.outer, OutputSchema: n.out}
	name := "Correlate(UNNEST)"
	if n.outer {
		name = "Correlate(LEFT UNNEST)"
	}
	s := ph.b.chain(in, in.vertex.Parallelism, op(name, spec), n.out)
	return s, nil
}
