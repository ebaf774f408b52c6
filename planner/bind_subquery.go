package planner

import (
	"fmt"
	"strings"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// Subqueries are planned as Flink's FlinkSubQueryRemoveRule plans them:
//
//   - a WHERE conjunct EXISTS (q) or x IN (q) becomes a semi join of the
//     SELECT's input with q, NOT EXISTS (q) an anti join, and x NOT IN (q)
//     a null-aware anti join on x = y OR (x = y) IS NULL. In a correlated
//     q, the WHERE conjuncts that use outer columns become the join's
//     condition: equalities of an inner and an outer column its keys, the
//     rest its residual;
//   - a scalar subquery (SELECT <one aggregate> FROM t [WHERE ...]) in the
//     SELECT list or WHERE is decorrelated as a LATERAL one is
//     (decorrelate): a LEFT join with the subquery grouped by its
//     correlated columns, or, uncorrelated, on a constant key;
//   - a HAVING conjunct holding a subquery becomes a WHERE over the
//     aggregate's rows (bind_having.go).
//
// Subqueries anywhere else, under OR or NOT among them, are refused.

// semiJoinNode keeps the rows of left that have a match in right (anti:
// that have none). A match is a right row for which cond, over left's
// columns then right's, is TRUE. Its output is left's columns.
type semiJoinNode struct {
	pos         ast.Pos
	left, right node
	cond        *expr.Expr
	anti        bool
}

func (n *semiJoinNode) schema() types.Schema { return n.left.schema() }

// subqueryHere is the error for a subquery where Braid cannot plan one.
func subqueryHere(pos ast.Pos) error {
	return unsupported(pos, "a subquery in this position (Braid plans [NOT] EXISTS and [NOT] IN joined by AND in WHERE or HAVING, scalar subqueries in SELECT, WHERE and HAVING, and subqueries in FROM)")
}

// resolveCorrelated resolves ref in a correlated subquery's scope: in the
// subquery's own columns first, then in the outer query's.
func (s *scope) resolveCorrelated(ref *ast.ColumnRef) (int, error) {
	inner := *s
	inner.outer = nil
	inner.cols = s.cols[:len(s.cols)-len(s.outer.cols)]
	i, err := inner.resolve(ref)
	if err == nil {
		return i, nil
	}
	if j, oerr := s.outer.resolve(ref); oerr == nil {
		return len(inner.cols) + j, nil
	}
	return 0, err
}

// subqueryPredicate is a WHERE conjunct that is a subquery predicate.
type subqueryPredicate struct {
	pos   ast.Pos
	query *ast.Query
	// in holds the compared values of [NOT] IN, nil for [NOT] EXISTS.
	in  []ast.Expr
	not bool
}

// asSubqueryPredicate recognises EXISTS (q), NOT EXISTS (q), x [NOT] IN
// (q) and NOT x IN (q).
func asSubqueryPredicate(e ast.Expr) (subqueryPredicate, bool) {
	not := false
	if u, ok := e.(*ast.Unary); ok && u.Op == ast.OpNot {
		not, e = true, u.X
	}
	switch e := e.(type) {
	case *ast.Exists:
		return subqueryPredicate{pos: e.Pos, query: e.Query, not: not}, true
	case *ast.InExpr:
		if e.Query == nil {
			return subqueryPredicate{}, false
		}
		in := []ast.Expr{e.X}
		if rc, ok := e.X.(*ast.RowCtor); ok && rc.Implicit {
			in = rc.Items
		}
		return subqueryPredicate{pos: e.Pos, query: e.Query, in: in, not: not != e.Not}, true
	}
	return subqueryPredicate{}, false
}

// bindWhereSubqueries turns the subquery predicates among where's
// conjuncts into semi and anti joins over in (whose columns sc shows) and
// returns the new input with the conjuncts left.
func (b *binder) bindWhereSubqueries(in node, sc *scope, where ast.Expr) (node, ast.Expr, error) {
	var rest ast.Expr
	for _, c := range astConjuncts(where) {
		p, ok := asSubqueryPredicate(c)
		if !ok {
			rest = astAnd(rest, c)
			continue
		}
		n, err := b.bindSemiJoin(in, sc, p)
		if err != nil {
			return nil, nil, err
		}
		in = n
	}
	return in, rest, nil
}

// simpleSelect returns q's SELECT when it is one whose WHERE may correlate:
// no GROUP BY, HAVING, aggregates, window functions, ORDER BY or LIMIT.
func simpleSelect(q *ast.Query) (*ast.Select, bool) {
	if len(q.With) > 0 || len(q.OrderBy) > 0 || q.Limit != nil || q.Offset != nil {
		return nil, false
	}
	sel, ok := q.Body.(*ast.Select)
	if !ok || sel.From == nil || len(sel.GroupBy) > 0 || sel.Having != nil || len(sel.Windows) > 0 ||
		len(sel.Hints) > 0 || rowNumberItem(sel) >= 0 {
		return nil, false
	}
	for _, item := range sel.Items {
		if hasAggregate(item.Expr) {
			return nil, false
		}
	}
	return sel, true
}

// bindSemiJoin binds one subquery predicate over in.
func (b *binder) bindSemiJoin(in node, sc *scope, p subqueryPredicate) (node, error) {
	lw := len(in.schema())
	var xs []*expr.Expr
	for _, x := range p.in {
		e, err := bindExpr(sc.withoutAggs("Aggregate expression is illegal in WHERE clause"), x)
		if err != nil {
			return nil, err
		}
		xs = append(xs, e)
	}
	right, ys, corr, err := b.bindSubqueryInput(sc, p, lw)
	if err != nil {
		return nil, err
	}
	conds := corr
	if p.in != nil {
		if len(ys) != len(xs) {
			return nil, errorf(p.pos, "IN compares %d values with a subquery of %d columns", len(xs), len(ys))
		}
		var eqs []*expr.Expr
		nullable := false
		for k, x := range xs {
			y := expr.Column(lw+ys[k], right.schema()[ys[k]].Type)
			eq, err := resolve(p.pos, "=", x, y)
			if err != nil {
				return nil, err
			}
			eqs = append(eqs, eq)
			nullable = nullable || x.Type.Nullable() || y.Type.Nullable()
		}
		eq := and(eqs)
		if p.not && nullable {
			// NB: NOT IN is true only when every comparison is FALSE: a
			// NULL comparison is a match of the anti join.
			isNull, err := resolve(p.pos, "IS NULL", eq)
			if err != nil {
				return nil, err
			}
			if eq, err = resolve(p.pos, "OR", eq, isNull); err != nil {
				return nil, err
			}
		}
		conds = append(conds, eq)
	}
	return &semiJoinNode{pos: p.pos, left: in, right: right, cond: and(conds), anti: p.not}, nil
}

// bindSubqueryInput binds the subquery of p as the right input of a semi
// join whose left input has lw columns shown by sc. It returns the input,
// the columns of its SELECT list (for IN) and the correlated conditions,
// over the left columns then the input's.
func (b *binder) bindSubqueryInput(sc *scope, p subqueryPredicate, lw int) (node, []int, []*expr.Expr, error) {
	sel, simple := simpleSelect(p.query)
	if simple {
		// An uncorrelated subquery is planned as any query is.
		_, isc, err := b.bindFrom(sel.From)
		if err != nil {
			return nil, nil, nil, err
		}
		simple = outerRef(sel.Where, isc, sc) != nil
		for _, item := range sel.Items {
			simple = simple || outerRef(item.Expr, isc, sc) != nil
		}
	}
	if !simple {
		if s, ok := p.query.Body.(*ast.Select); ok && s.From != nil {
			_, isc, err := b.bindFrom(s.From)
			if err != nil {
				return nil, nil, nil, err
			}
			for _, e := range []ast.Expr{s.Where, s.Having} {
				if ref := outerRef(e, isc, sc); ref != nil {
					return nil, nil, nil, unsupported(ref.Pos, "correlated subqueries with GROUP BY, HAVING, aggregates, ORDER BY or LIMIT")
				}
			}
			for _, item := range s.Items {
				if ref := outerRef(item.Expr, isc, sc); ref != nil {
					return nil, nil, nil, unsupported(ref.Pos, "a subquery whose SELECT list uses an outer column")
				}
			}
		}
		n, err := b.bindQuery(p.query)
		if err != nil {
			return nil, nil, nil, err
		}
		ys := make([]int, len(n.schema()))
		for i := range ys {
			ys[i] = i
		}
		return n, ys, nil, nil
	}
	r, isc, err := b.bindFrom(sel.From)
	if err != nil {
		return nil, nil, nil, err
	}
	iw := len(isc.cols)
	csc := &scope{cols: append(append([]scopeColumn{}, isc.cols...), sc.cols...), outer: sc,
		star: isc.star, merged: isc.merged}
	// toJoin maps a column of csc (inner, then outer) to the semi join's
	// (outer, then inner).
	toJoin := func(i int) int {
		if i < iw {
			return lw + i
		}
		return i - iw
	}
	var filters, corr []*expr.Expr
	for _, c := range astConjuncts(sel.Where) {
		if q, ok := asSubqueryPredicate(c); ok {
			return nil, nil, nil, unsupported(q.pos, "subqueries nested in a subquery's WHERE")
		}
		e, err := bindExpr(csc.withoutAggs("Aggregate expression is illegal in WHERE clause"), c)
		if err != nil {
			return nil, nil, nil, err
		}
		if e.Type.Kind != types.KindBoolean {
			return nil, nil, nil, errorf(c.Position(), "WHERE must be a BOOLEAN expression, got %s", e.Type)
		}
		outer := false
		for _, col := range columnsOf(e) {
			outer = outer || col >= iw
		}
		if outer {
			corr = append(corr, remap(e, toJoin))
		} else {
			filters = append(filters, e)
		}
	}
	if len(filters) > 0 {
		r = &filterNode{input: r, cond: and(filters)}
	}
	if p.in == nil {
		return r, nil, corr, nil
	}
	// The SELECT list of an IN subquery: its columns after the input's.
	exprs := identity(r.schema())
	out := append(types.Schema{}, r.schema()...)
	var ys []int
	for i, item := range sel.Items {
		if star, ok := item.Expr.(*ast.Star); ok {
			cols, err := expandStar(isc, star)
			if err != nil {
				return nil, nil, nil, err
			}
			ys = append(ys, cols...)
			continue
		}
		e, err := bindExpr(csc.withoutAggs("aggregate functions are not allowed here"), item.Expr)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, col := range columnsOf(e) {
			if col >= iw {
				return nil, nil, nil, unsupported(item.Pos, "a subquery whose SELECT list uses an outer column")
			}
		}
		ys = append(ys, len(exprs))
		exprs = append(exprs, e)
		out = append(out, types.Field{Name: fmt.Sprintf("$in%d", i), Type: e.Type})
	}
	return &projectNode{input: r, exprs: exprs, out: out}, ys, corr, nil
}

// bindScalarSubqueries joins in with each scalar subquery of s's SELECT
// list and WHERE, and returns the new input and a scope in which each of
// those subqueries binds to the column holding its value. SELECT * still
// shows in's columns only.
func (b *binder) bindScalarSubqueries(in node, sc *scope, s *ast.Select) (node, *scope, error) {
	var subs []*ast.Subquery
	var collect func(e ast.Expr)
	collect = func(e ast.Expr) {
		ast.Inspect(e, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Subquery:
				subs = append(subs, n)
				return false
			case *ast.Exists:
				return false
			case *ast.InExpr:
				if n.Query != nil {
					collect(n.X)
					return false
				}
			}
			return true
		})
	}
	aggregating := len(s.GroupBy) > 0 || s.Having != nil
	for _, item := range s.Items {
		aggregating = aggregating || hasOwnAggregate(item.Expr)
	}
	for _, item := range s.Items {
		collect(item.Expr)
	}
	if aggregating && len(subs) > 0 {
		// NB: the value would have to be grouped on, or aggregated.
		return nil, nil, unsupported(subs[0].Pos, "scalar subqueries in the SELECT list of an aggregating SELECT")
	}
	for _, c := range astConjuncts(s.Where) {
		if _, ok := asSubqueryPredicate(c); !ok {
			collect(c)
		}
	}
	if len(subs) == 0 {
		return in, sc, nil
	}
	star := sc.visible()
	for _, sq := range subs {
		sel, err := scalarSelect(sq)
		if err != nil {
			return nil, nil, err
		}
		lw := len(in.schema())
		single := !hasAggregate(sel.Items[0].Expr)
		if single {
			sel = singleValue(sel)
		}
		n, jsc, err := b.decorrelate(in, sc, sel, decorrelation{pos: sq.Pos, joinPos: sq.Pos,
			what: "scalar subqueries", uncorrelated: true})
		if err != nil {
			return nil, nil, err
		}
		if single {
			if n, err = checkSingleValue(n, lw, sq.Pos); err != nil {
				return nil, nil, err
			}
		}
		nsc := &scope{cols: append([]scopeColumn{}, sc.cols...), star: star, merged: sc.merged,
			scalars: map[*ast.Subquery]int{}, pieces: sc.pieces}
		for k, v := range sc.scalars {
			nsc.scalars[k] = v
		}
		c := jsc.cols[lw]
		c.name = fmt.Sprintf("$scalar%d", len(nsc.scalars))
		nsc.cols = append(nsc.cols, c)
		nsc.scalars[sq] = lw
		in, sc = n, nsc
	}
	return in, sc, nil
}

// scalarForm names the scalar subqueries Braid plans, for the error on the
// others.
const scalarForm = "scalar subqueries other than (SELECT <one value> FROM t [WHERE ...])"

// scalarSelect returns the SELECT of a scalar subquery when it has a form
// decorrelate takes, once a non-aggregate value is made one (singleValue):
// one value, no GROUP BY, HAVING, DISTINCT, ORDER BY or LIMIT.
func scalarSelect(sq *ast.Subquery) (*ast.Select, error) {
	q := sq.Query
	if len(q.With) > 0 || len(q.OrderBy) > 0 || q.Limit != nil || q.Offset != nil {
		return nil, unsupported(sq.Pos, scalarForm)
	}
	sel, ok := q.Body.(*ast.Select)
	if !ok || sel.From == nil || len(sel.GroupBy) > 0 || sel.Having != nil || sel.Distinct || len(sel.Windows) > 0 {
		return nil, unsupported(sq.Pos, scalarForm)
	}
	if len(sel.Items) != 1 {
		return nil, errorf(sq.Pos, "a scalar subquery must return one column, this one returns %d", len(sel.Items))
	}
	return sel, nil
}

// tooManyRows is the run-time error of a scalar subquery that returns more
// than one row, as Flink's SINGLE_VALUE fails the job.
const tooManyRows = "a scalar subquery returned more than one row"

// singleValue rewrites a scalar subquery of one non-aggregate value v as
// SELECT MAX(v), COUNT(*): for at most one row MAX(v) is its value (NULL
// for none), and checkSingleValue fails on a count above one. This is
// Flink's SINGLE_VALUE aggregate.
func singleValue(sel *ast.Select) *ast.Select {
	item := sel.Items[0]
	c := *sel
	name := func(n string) *ast.ObjectName {
		return &ast.ObjectName{Pos: item.Pos, Parts: []*ast.Ident{{Pos: item.Pos, Name: n}}}
	}
	c.Items = []*ast.SelectItem{
		{Pos: item.Pos, Expr: &ast.FuncCall{Pos: item.Pos, Name: name("MAX"), Args: []ast.Expr{item.Expr}}, Alias: item.Alias},
		{Pos: item.Pos, Expr: &ast.FuncCall{Pos: item.Pos, Name: name("COUNT"), Star: true},
			Alias: &ast.Ident{Pos: item.Pos, Name: "$rows"}},
	}
	return &c
}

// checkSingleValue replaces the value and row count that singleValue's
// subquery put at columns lw and lw+1 of n by the value, which fails the
// job at run time when the count is above one.
func checkSingleValue(n node, lw int, pos ast.Pos) (node, error) {
	out := n.schema()
	v, rows := expr.Column(lw, out[lw].Type), expr.Column(lw+1, out[lw+1].Type)
	many, err := resolve(pos, ">", rows, expr.Literal(int64(1), types.BigInt.WithNullable(false)))
	if err != nil {
		return nil, err
	}
	fail := expr.Cast(expr.StringLiteral(tooManyRows), v.Type.WithNullable(true))
	val, err := resolve(pos, "CASE", many, fail, v)
	if err != nil {
		return nil, err
	}
	exprs := append(identity(out[:lw]), val)
	schema := append(append(types.Schema{}, out[:lw]...), types.Field{Name: out[lw].Name, Type: val.Type})
	return &projectNode{input: n, exprs: exprs, out: schema}, nil
}

// hasOwnAggregate reports whether e calls an aggregate function outside
// the subqueries it holds.
func hasOwnAggregate(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Subquery, *ast.Exists:
			return false
		case *ast.InExpr:
			if n.Query != nil {
				found = found || hasOwnAggregate(n.X)
				return false
			}
		case *ast.FuncCall:
			if n.Over == nil && n.OverName == nil && aggregates[strings.ToUpper(n.Name.Object())] {
				found = true
			}
		}
		return !found
	})
	return found
}
