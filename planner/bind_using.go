package planner

import (
	"errors"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// JOIN ... USING (c, ...) and NATURAL JOIN, as the SQL standard and
// Calcite have them: the join condition is l.c = r.c for each named column
// (NATURAL names every column both sides show); SELECT * shows each such
// column once, first, then the other columns of the left side and of the
// right; an unqualified c means the merged column (the left side's for
// INNER and LEFT joins, the right side's for RIGHT, COALESCE(l.c, r.c) for
// FULL), while l.c and r.c still name each side's own.

// usingColumn is one column of a USING list: its name, and its columns in
// the left and right scopes.
type usingColumn struct {
	pos  ast.Pos
	name string
	l, r int
}

// usingColumns finds j's USING (or NATURAL) columns in the two sides'
// scopes and returns them with the join condition; an inner NATURAL join
// with no common column is a cross join (nil condition).
func usingColumns(j *ast.Join, l, r *scope) ([]usingColumn, *expr.Expr, error) {
	idents := j.Using
	if j.Natural {
		idents = nil
		for _, c := range l.visible() {
			name := l.cols[c].name
			if _, err := visibleColumn(r, name); err == nil || errors.Is(err, errNotUnique) {
				idents = append(idents, &ast.Ident{Pos: j.Pos, Name: name})
			}
		}
	}
	var out []usingColumn
	var conds []*expr.Expr
	seen := map[string]bool{}
	for _, id := range idents {
		if seen[id.Name] {
			return nil, nil, errorf(id.Pos, "Column '%s' appears more than once in the USING clause", id.Name)
		}
		seen[id.Name] = true
		u := usingColumn{pos: id.Pos, name: id.Name}
		var err error
		for _, side := range []struct {
			sc  *scope
			col *int
		}{{l, &u.l}, {r, &u.r}} {
			if *side.col, err = visibleColumn(side.sc, id.Name); err != nil {
				if errors.Is(err, errNotUnique) {
					return nil, nil, errorf(id.Pos, "Column '%s' in NATURAL join or USING clause is not unique on one side of join", id.Name)
				}
				return nil, nil, errorf(id.Pos, "Column '%s' not found in any table", id.Name)
			}
		}
		lt, rt := l.cols[u.l].typ, r.cols[u.r].typ
		eq, err := expr.ResolveCall("=", []*expr.Expr{expr.Column(u.l, lt), expr.Column(len(l.cols)+u.r, rt)})
		if err != nil {
			return nil, nil, errorf(id.Pos, "Column '%s' matched using NATURAL keyword or USING clause has incompatible types: cannot compare '%s' to '%s'", id.Name, lt, rt)
		}
		conds = append(conds, eq)
		out = append(out, u)
	}
	if len(out) == 0 {
		// No common columns: a cross join, outer ones included.
		return []usingColumn{}, nil, nil
	}
	return out, and(conds), nil
}

// errNotUnique and errNotFound say a scope shows several or no columns of
// a name; usingColumns words them for the user.
var (
	errNotUnique = errors.New("not unique")
	errNotFound  = errors.New("not found")
)

// visibleColumn returns the column named name among those sc shows (its
// merged USING column when it has one).
func visibleColumn(sc *scope, name string) (int, error) {
	if c, ok := sc.merged[name]; ok {
		return c, nil
	}
	found := -1
	for _, c := range sc.visible() {
		if sc.cols[c].name != name {
			continue
		}
		if found >= 0 {
			return 0, errNotUnique
		}
		found = c
	}
	if found < 0 {
		return 0, errNotFound
	}
	return found, nil
}

// mergeUsing returns the join n (whose scope is sc, the left side's lw
// columns first) with its USING columns merged: the scope shows them once,
// first, and resolves their bare names to them. A FULL join computes each
// as COALESCE(l.c, r.c) in a projection that appends them to the join's
// columns.
func mergeUsing(n *joinNode, sc *scope, using []usingColumn, lw int) (node, *scope, error) {
	out := &scope{cols: sc.cols, merged: map[string]int{}}
	var result node = n
	hidden := map[int]bool{}
	if n.outerLeft && n.outerRight {
		exprs := identity(n.out)
		schema := append(types.Schema{}, n.out...)
		out.cols = append([]scopeColumn{}, sc.cols...)
		for _, u := range using {
			l, r := expr.Column(u.l, n.out[u.l].Type), expr.Column(lw+u.r, n.out[lw+u.r].Type)
			c, err := expr.ResolveCall("COALESCE", []*expr.Expr{l, r})
			if err != nil {
				return nil, nil, errorf(u.pos, "Column '%s' matched using NATURAL keyword or USING clause has incompatible types: %v", u.name, err)
			}
			out.merged[u.name] = len(exprs)
			exprs = append(exprs, c)
			schema = append(schema, types.Field{Name: u.name, Type: c.Type})
			out.cols = append(out.cols, scopeColumn{name: u.name, typ: c.Type})
		}
		result = &projectNode{input: n, exprs: exprs, out: schema}
	} else {
		for _, u := range using {
			if n.outerRight {
				out.merged[u.name] = lw + u.r
			} else {
				out.merged[u.name] = u.l
			}
		}
	}
	for _, u := range using {
		out.star = append(out.star, out.merged[u.name])
		hidden[u.l], hidden[lw+u.r] = true, true
	}
	// The columns each side shows, in order, less the merged ones; the
	// sides' own merged columns carry over.
	for _, c := range sc.visible() {
		if !hidden[c] {
			out.star = append(out.star, c)
		}
	}
	for name, c := range sc.merged {
		if _, ok := out.merged[name]; !ok {
			out.merged[name] = c
		}
	}
	return result, out, nil
}
