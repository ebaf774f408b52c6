package planner

import (
	"fmt"
	"strings"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// lateralForm names the one LATERAL subquery form Braid decorrelates, for
// the error on every other form.
const lateralForm = "LATERAL subqueries other than [LEFT] JOIN LATERAL (SELECT <aggregates> FROM t WHERE t.x = outer.y [AND ...]) ON TRUE"

// bindLateralJoin binds `l [LEFT] JOIN LATERAL (SELECT <aggregates> FROM b
// WHERE b.x = l.y [AND <conditions on b>]) s ON TRUE` (or CROSS JOIN
// LATERAL, or `l, LATERAL (...)`) by decorrelating it into a join with the
// grouped subquery:
//
//	l LEFT JOIN (SELECT b.x, <aggregates> FROM b WHERE <conditions on b>
//	             GROUP BY b.x) s ON s.x = l.y
//
// An aggregate subquery without GROUP BY returns exactly one row per outer
// row, so the join is a LEFT join whether or not LEFT was written, and a
// COUNT of an unmatched row is 0 (COALESCE), as SQL has it; other
// aggregates of an unmatched row are NULL. The key columns are dropped
// after the join: the scope shows l's columns, then the subquery's.
// Correlated references resolve against l's scope; only equalities between
// a column of b and a column of l may correlate.
func (b *binder) bindLateralJoin(j *ast.Join, dt *ast.DerivedTable) (node, *scope, error) {
	switch j.Kind {
	case ast.InnerJoin, ast.LeftJoin, ast.CrossJoin, ast.CommaJoin:
	default:
		return nil, nil, unsupported(dt.Pos, "LATERAL subqueries under "+string(j.Kind))
	}
	if len(j.Using) > 0 {
		return nil, nil, unsupported(j.Using[0].Pos, "JOIN LATERAL ... USING")
	}
	if j.On != nil {
		if lit, ok := j.On.(*ast.Literal); !ok || lit.Kind != ast.LitBool || lit.Value != "TRUE" {
			return nil, nil, unsupported(j.On.Position(), "JOIN LATERAL with an ON condition other than TRUE")
		}
	}
	sel, err := lateralSelect(dt)
	if err != nil {
		return nil, nil, err
	}
	l, lsc, err := b.bindFrom(j.L)
	if err != nil {
		return nil, nil, err
	}
	return b.decorrelate(l, lsc, sel, decorrelation{pos: dt.Pos, joinPos: j.Pos, what: "LATERAL subqueries",
		alias: dt.Alias, leftNames: inputNames(j.L), rightNames: inputNames(dt)})
}

// decorrelation describes the subquery decorrelate joins: where it is, how
// errors name it, and its alias.
type decorrelation struct {
	pos, joinPos ast.Pos
	// what names the construct in errors: "LATERAL subqueries".
	what  string
	alias *ast.TableAlias
	// uncorrelated allows a subquery without a correlation: it is joined
	// on a constant key, every outer row with its one result row.
	uncorrelated          bool
	leftNames, rightNames []string
}

// decorrelate joins l with the aggregate subquery sel, correlated to l's
// scope lsc, as bindLateralJoin describes; it returns the join and the
// scope of l's columns, then the subquery's.
func (b *binder) decorrelate(l node, lsc *scope, sel *ast.Select, d decorrelation) (node, *scope, error) {
	_, isc, err := b.bindFrom(sel.From)
	if err != nil {
		return nil, nil, err
	}
	for _, item := range sel.Items {
		if ref := outerRef(item.Expr, isc, lsc); ref != nil {
			return nil, nil, unsupported(ref.Pos, d.what+" that use an outer column outside WHERE")
		}
	}
	// Split WHERE into correlations (inner column = outer column) and the
	// conditions on the subquery's own columns.
	var inner []ast.Expr
	var outer []*ast.ColumnRef
	var rest ast.Expr
	for _, c := range astConjuncts(sel.Where) {
		if outerRef(c, isc, lsc) == nil {
			rest = astAnd(rest, c)
			continue
		}
		in, out, ok := correlation(c, isc, lsc)
		if !ok {
			return nil, nil, unsupported(c.Position(), d.what+" correlated other than by inner column = outer column in WHERE")
		}
		inner, outer = append(inner, in), append(outer, out)
	}
	lw0 := len(l.schema())
	if len(inner) == 0 {
		if !d.uncorrelated {
			return nil, nil, unsupported(d.pos, d.what+" without a correlation to the outer table")
		}
		// A constant key on both sides pairs every outer row with the
		// subquery's one row.
		zero := expr.Literal(int32(0), types.Int.WithNullable(false))
		exprs := identity(l.schema())
		out := append(append(types.Schema{}, l.schema()...), types.Field{Name: "$const", Type: zero.Type})
		l = &projectNode{input: l, exprs: append(exprs, zero), out: out}
		inner = []ast.Expr{&ast.Literal{Pos: d.pos, Kind: ast.LitNumber, Value: "0"}}
	}
	grouped := *sel
	grouped.Where = rest
	grouped.Items = nil
	grouped.GroupBy = nil
	for k, e := range inner {
		grouped.Items = append(grouped.Items, &ast.SelectItem{Pos: e.Position(), Expr: e,
			Alias: &ast.Ident{Pos: e.Position(), Name: fmt.Sprintf("$lateral%d", k)}})
		if outer != nil {
			grouped.GroupBy = append(grouped.GroupBy, e)
		}
	}
	grouped.Items = append(grouped.Items, sel.Items...)
	r, err := b.bindSelect(&grouped)
	if err != nil {
		return nil, nil, err
	}
	nk := len(inner)
	lw := len(l.schema())
	var cond *expr.Expr
	for k := range inner {
		var oe *expr.Expr
		pos := d.pos
		if outer == nil {
			oe = expr.Column(lw0, l.schema()[lw0].Type)
		} else {
			oc, err := lsc.resolve(outer[k])
			if err != nil {
				return nil, nil, err
			}
			oe, pos = expr.Column(oc, lsc.cols[oc].typ), outer[k].Pos
		}
		eq, err := resolve(pos, "=", oe, expr.Column(lw+k, r.schema()[k].Type))
		if err != nil {
			return nil, nil, err
		}
		if cond == nil {
			cond = eq
		} else if cond, err = resolve(pos, "AND", cond, eq); err != nil {
			return nil, nil, err
		}
	}
	jn := &joinNode{pos: d.joinPos, left: l, right: r, cond: cond, outerLeft: true,
		leftNames: d.leftNames, rightNames: d.rightNames}
	jn.out = append(jn.out, l.schema()...)
	for _, f := range r.schema() {
		f.Type = f.Type.WithNullable(true)
		jn.out = append(jn.out, f)
	}
	// Project away the keys; an unmatched COUNT is 0.
	rsc := &scope{}
	var exprs []*expr.Expr
	for i, f := range l.schema()[:lw0] {
		exprs = append(exprs, expr.Column(i, f.Type))
	}
	for i, f := range jn.out[lw+nk:] {
		e := expr.Column(lw+nk+i, f.Type)
		if isCount(sel.Items[i].Expr) {
			if e, err = resolve(sel.Items[i].Pos, "COALESCE", e, expr.Literal(int64(0), types.BigInt.WithNullable(false))); err != nil {
				return nil, nil, err
			}
		}
		exprs = append(exprs, e)
		rsc.cols = append(rsc.cols, scopeColumn{name: f.Name, typ: e.Type})
	}
	if d.alias != nil {
		if rsc, err = applyAlias(rsc, d.alias); err != nil {
			return nil, nil, err
		}
	}
	sc := concat(lsc, rsc)
	out := make(types.Schema, len(exprs))
	for i, e := range exprs {
		out[i] = types.Field{Name: jn.out[i].Name, Type: e.Type}
		if i >= lw0 {
			out[i].Name = rsc.cols[i-lw0].name
		}
	}
	return &projectNode{input: jn, exprs: exprs, out: out}, sc, nil
}

// lateralSelect returns the SELECT of a LATERAL subquery when it has the
// form bindLateralJoin decorrelates: one SELECT of aggregates, without
// GROUP BY, HAVING, DISTINCT, ORDER BY or LIMIT.
func lateralSelect(dt *ast.DerivedTable) (*ast.Select, error) {
	q := dt.Query
	if len(q.With) > 0 || len(q.OrderBy) > 0 || q.Limit != nil || q.Offset != nil {
		return nil, unsupported(dt.Pos, lateralForm)
	}
	sel, ok := q.Body.(*ast.Select)
	if !ok || sel.From == nil || len(sel.GroupBy) > 0 || sel.Having != nil || sel.Distinct || len(sel.Windows) > 0 {
		return nil, unsupported(dt.Pos, lateralForm)
	}
	for _, item := range sel.Items {
		if !hasAggregate(item.Expr) {
			return nil, unsupported(item.Pos, lateralForm)
		}
	}
	return sel, nil
}

// hasAggregate reports whether e calls an aggregate function (not as a
// window function).
func hasAggregate(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if f, ok := n.(*ast.FuncCall); ok && f.Over == nil && f.OverName == nil &&
			aggregates[strings.ToUpper(f.Name.Object())] {
			found = true
		}
		return !found
	})
	return found
}

// isCount reports whether e is a COUNT call, whose value for no rows is 0.
func isCount(e ast.Expr) bool {
	f, ok := e.(*ast.FuncCall)
	return ok && f.Over == nil && f.OverName == nil && strings.EqualFold(f.Name.Object(), "COUNT")
}

// outerRef returns the first column reference in e that names a column of
// the outer scope and none of the inner one, or nil.
func outerRef(e ast.Expr, inner, outer *scope) *ast.ColumnRef {
	var found *ast.ColumnRef
	ast.Inspect(e, func(n ast.Node) bool {
		ref, ok := n.(*ast.ColumnRef)
		if !ok || found != nil {
			return found == nil
		}
		if _, err := inner.resolve(ref); err != nil {
			if _, err := outer.resolve(ref); err == nil {
				found = ref
			}
		}
		return false
	})
	return found
}

// correlation splits `inner = outer` (either way round) into its inner
// and outer column.
func correlation(c ast.Expr, inner, outer *scope) (in, out *ast.ColumnRef, ok bool) {
	eq, isEq := c.(*ast.Binary)
	if !isEq || eq.Op != ast.OpEq {
		return nil, nil, false
	}
	l, lok := eq.L.(*ast.ColumnRef)
	r, rok := eq.R.(*ast.ColumnRef)
	if !lok || !rok {
		return nil, nil, false
	}
	if outerRef(l, inner, outer) != nil {
		l, r = r, l
	}
	if _, err := inner.resolve(l); err != nil || outerRef(r, inner, outer) == nil {
		return nil, nil, false
	}
	return l, r, true
}

// astConjuncts splits e at its top-level ANDs.
func astConjuncts(e ast.Expr) []ast.Expr {
	if e == nil {
		return nil
	}
	if b, ok := e.(*ast.Binary); ok && b.Op == ast.OpAnd {
		return append(astConjuncts(b.L), astConjuncts(b.R)...)
	}
	return []ast.Expr{e}
}

// astAnd returns a AND b; a may be nil.
func astAnd(a, b ast.Expr) ast.Expr {
	if a == nil {
		return b
	}
	return &ast.Binary{Pos: a.Position(), Op: ast.OpAnd, L: a, R: b}
}
