package planner

import (
	"fmt"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// Subqueries in HAVING are planned as Calcite plans a subquery in a Filter
// above an Aggregate: the aggregate also computes, as hidden columns, the
// parts of each such HAVING conjunct outside its subqueries (SUM(x) in
// SUM(x) > (SELECT ...), k in k IN (SELECT ...)) and the outer columns its
// subqueries correlate on; the conjunct is then a WHERE over the
// aggregate's rows, with its subqueries planned as in WHERE (semi and anti
// joins, scalar subqueries joined in), and a projection drops the hidden
// columns.

// havingSubqueries holds what the aggregate computes for HAVING's
// subquery conjuncts.
type havingSubqueries struct {
	conjuncts []ast.Expr
	// exprs are the hidden columns, bound in the aggregating scope, and
	// srcs the syntax each came from; cols are their scope columns over
	// the aggregate's output, where a correlated or compared column keeps
	// its name so references to it resolve.
	exprs []*expr.Expr
	srcs  []ast.Expr
	cols  []scopeColumn
	// pieces maps a part of a conjunct to its index among the hidden
	// columns.
	pieces map[ast.Expr]int
}

// containsSubquery reports whether e holds a subquery.
func containsSubquery(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Subquery, *ast.Exists:
			found = true
		case *ast.InExpr:
			found = found || n.Query != nil
		}
		return !found
	})
	return found
}

// splitHaving separates the conjuncts of having that hold a subquery from
// the others.
func splitHaving(having ast.Expr) (plain ast.Expr, subs []ast.Expr) {
	if having == nil || !containsSubquery(having) {
		return having, nil
	}
	for _, c := range astConjuncts(having) {
		if containsSubquery(c) {
			subs = append(subs, c)
		} else {
			plain = astAnd(plain, c)
		}
	}
	return plain, subs
}

// bindHavingPieces binds, in the aggregating scope isc over the FROM
// scope sc, the hidden columns the subquery conjuncts of HAVING need.
func (b *binder) bindHavingPieces(isc, sc *scope, conjuncts []ast.Expr) (*havingSubqueries, error) {
	h := &havingSubqueries{conjuncts: conjuncts, pieces: map[ast.Expr]int{}}
	byCol := map[int]int{} // a FROM column's hidden column
	add := func(e ast.Expr) error {
		if _, ok := e.(*ast.Literal); ok {
			return nil
		}
		col := scopeColumn{name: fmt.Sprintf("$h%d", len(h.exprs))}
		if ref, ok := e.(*ast.ColumnRef); ok {
			c, err := sc.resolve(ref)
			if err != nil {
				return err
			}
			if i, ok := byCol[c]; ok {
				h.pieces[e] = i
				return nil
			}
			byCol[c] = len(h.exprs)
			col.table, col.name = sc.cols[c].table, sc.cols[c].name
		}
		be, err := bindExpr(isc, e)
		if err != nil {
			return err
		}
		col.typ = be.Type
		h.pieces[e] = len(h.exprs)
		h.exprs, h.srcs, h.cols = append(h.exprs, be), append(h.srcs, e), append(h.cols, col)
		return nil
	}
	var queries []*ast.Query
	var err error
	for _, c := range conjuncts {
		ast.Inspect(c, func(n ast.Node) bool {
			if err != nil {
				return false
			}
			switch n := n.(type) {
			case *ast.Subquery:
				queries = append(queries, n.Query)
				return false
			case *ast.Exists:
				queries = append(queries, n.Query)
				return false
			case *ast.InExpr:
				if n.Query != nil {
					queries = append(queries, n.Query)
					in := []ast.Expr{n.X}
					if rc, ok := n.X.(*ast.RowCtor); ok && rc.Implicit {
						in = rc.Items
					}
					for _, x := range in {
						if err = add(x); err != nil {
							return false
						}
					}
					return false
				}
			}
			if e, ok := n.(ast.Expr); ok && !containsSubquery(e) {
				err = add(e)
				return false
			}
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	// The outer columns a subquery correlates on.
	for _, q := range queries {
		sel, ok := q.Body.(*ast.Select)
		if !ok || sel.From == nil {
			continue
		}
		_, inner, err := b.bindFrom(sel.From)
		if err != nil {
			return nil, err
		}
		var refs []*ast.ColumnRef
		ast.Inspect(sel, func(n ast.Node) bool {
			ref, ok := n.(*ast.ColumnRef)
			if !ok {
				return true
			}
			if outerRef(ref, inner, sc) != nil {
				refs = append(refs, ref)
			}
			return false
		})
		for _, ref := range refs {
			if err := add(ref); err != nil {
				return nil, err
			}
		}
	}
	return h, nil
}

// applyHaving plans the subquery conjuncts over n, the aggregate, whose first
// visible columns are the SELECT list's and the rest h's hidden columns,
// and returns n filtered by them, without the hidden columns.
func (b *binder) applyHaving(h *havingSubqueries, n node, visible int) (node, error) {
	schema := n.schema()
	sc := &scope{cols: make([]scopeColumn, len(schema)), pieces: map[ast.Expr]int{}}
	for i, f := range schema {
		sc.cols[i] = scopeColumn{name: fmt.Sprintf("$o%d", i), typ: f.Type}
	}
	for i, c := range h.cols {
		c.typ = schema[visible+i].Type
		sc.cols[visible+i] = c
	}
	for e, i := range h.pieces {
		sc.pieces[e] = visible + i
	}
	var where ast.Expr
	for _, c := range h.conjuncts {
		where = astAnd(where, c)
	}
	in, sc, err := b.bindScalarSubqueries(n, sc, &ast.Select{Where: where})
	if err != nil {
		return nil, err
	}
	in, rest, err := b.bindWhereSubqueries(in, sc, where)
	if err != nil {
		return nil, err
	}
	if rest != nil {
		cond, err := bindExpr(sc.withoutAggs("Aggregate expression is illegal in HAVING clause"), rest)
		if err != nil {
			return nil, err
		}
		if cond.Type.Kind != types.KindBoolean {
			return nil, errorf(rest.Position(), "HAVING must be a BOOLEAN expression, got %s", cond.Type)
		}
		in = &filterNode{input: in, cond: cond}
	}
	out := append(types.Schema{}, schema[:visible]...)
	return &projectNode{input: in, exprs: identity(out), out: out}, nil
}
