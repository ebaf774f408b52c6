package planner

import (
	"fmt"
	"strings"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// LookupConnectors is implemented by Connectors that can read tables by
// key for processing-time lookup joins.
type LookupConnectors interface {
	// LookupJoinTable returns where the lookup table t lives, its cache
	// and its retries, or why t cannot be looked up.
	LookupJoinTable(t *catalog.Table) (jobgraph.MySQLTable, jobgraph.LookupCache, int, error)
}

// lookupTable marks a join as a processing-time lookup join (FOR
// SYSTEM_TIME AS OF PROCTIME() or AS OF a PROCTIME() attribute of the left
// input): right is then the lookup table's scan.
type lookupTable struct {
	table *catalog.Table
	pos   ast.Pos
}

// isProctimeAsOf reports whether at, bound over the left input l, asks for
// a lookup join: PROCTIME() itself, or l's processing-time attribute.
func isProctimeAsOf(tn *ast.TableName, at *expr.Expr, l node) bool {
	if f, ok := tn.SystemTime.(*ast.FuncCall); ok && strings.EqualFold(f.Name.String(), "PROCTIME") {
		return true
	}
	return at.Op == expr.OpColumn && timeKindOf(l, at.Col) == proctimeAttr
}

// bindLookupJoin binds l JOIN r FOR SYSTEM_TIME AS OF <processing time>
// ON cond once the left input is bound: r must be a table a connector can
// look up by key.
func (b *binder) bindLookupJoin(j *ast.Join, tn *ast.TableName, l node, lsc *scope) (node, *scope, error) {
	plain := *tn
	plain.SystemTime = nil
	r, rsc, err := b.bindTableName(&plain)
	if err != nil {
		return nil, nil, err
	}
	scan, ok := r.(*scanNode)
	if !ok {
		return nil, nil, unsupported(tn.Name.Pos, "FOR SYSTEM_TIME AS OF PROCTIME() on "+tn.Name.String()+", which is not a table")
	}
	switch scan.table.Connector() {
	case "mysql", "jdbc":
	default:
		return nil, nil, unsupported(tn.SystemTime.Position(), fmt.Sprintf("a processing-time temporal join of table %s, which is not a lookup table (lookup joins read 'mysql' and 'jdbc' tables)", tn.Name.String()))
	}
	if scan.exprs != nil || scan.rowtime >= 0 {
		return nil, nil, unsupported(tn.Name.Pos, "computed columns or a watermark on lookup table "+tn.Name.String())
	}
	if j.On == nil {
		return nil, nil, errorf(j.Pos, "a lookup join needs an ON condition")
	}
	sc := concat(lsc, rsc)
	cond, err := bindExpr(sc.withoutAggs("Aggregate expression is illegal in ON clause"), j.On)
	if err != nil {
		return nil, nil, err
	}
	if cond.Type.Kind != types.KindBoolean {
		return nil, nil, errorf(j.On.Position(), "join condition must be a BOOLEAN expression, got %s", cond.Type)
	}
	n := &joinNode{pos: j.Pos, left: l, right: r, cond: cond, outerLeft: j.Kind == ast.LeftJoin,
		leftNames: inputNames(j.L), rightNames: inputNames(j.R), lookup: &lookupTable{table: scan.table, pos: tn.Name.Pos}}
	lw := len(l.schema())
	for i, f := range append(append(types.Schema{}, l.schema()...), r.schema()...) {
		if i >= lw && n.outerLeft {
			f.Type = f.Type.WithNullable(true)
			sc.cols[i].typ = f.Type
		}
		n.out = append(n.out, f)
	}
	return n, sc, nil
}

// lookupKey is an equality of the ON condition that the lookup reads by: a
// column of the lookup table equal to an expression over the left input
// (or a constant).
type lookupKey struct {
	col   int
	input *expr.Expr
}

// buildLookupJoin plans a lookup join as Flink's LookupJoin: the
// equalities between a lookup column and the left input (or a constant)
// are the keys each left row is looked up by, conditions on the left alone
// filter it first (INNER), and the rest is checked on each looked-up row.
// The operator is chained to the left input: it keeps no keyed state, so
// the input need not be shuffled.
func (ph *physical) buildLookupJoin(n *joinNode, need []bool) (*stream, func(int) int, error) {
	lw := len(n.left.schema())
	lookupSchema := n.right.schema()
	var keys []lookupKey
	var leftFilters, residual []*expr.Expr
	keyed := map[int]bool{}
	for _, c := range conjuncts(n.cond) {
		if k, ok := lookupKeyOf(c, lw); ok && !keyed[k.col] {
			keyed[k.col] = true
			keys = append(keys, k)
			continue
		}
		if sideOf(c, lw) == sideLeft && !n.outerLeft {
			leftFilters = append(leftFilters, c)
			continue
		}
		residual = append(residual, c)
	}
	name := catalog.DefaultCatalog + "." + n.lookup.table.Database + "." + n.lookup.table.Name
	if len(keys) == 0 || allConstant(keys) {
		return nil, nil, &Error{Pos: n.pos, Msg: fmt.Sprintf("Temporal table join requires an equality condition on fields of table [%s].", name)}
	}
	lc, ok := ph.p.Connectors.(LookupConnectors)
	if !ok {
		return nil, nil, unsupported(n.lookup.pos, "lookup joins on this cluster")
	}
	table, cache, retries, err := lc.LookupJoinTable(n.lookup.table)
	if err != nil {
		return nil, nil, &Error{Pos: n.lookup.pos, Msg: fmt.Sprintf("table %s cannot be looked up: %v", name, err)}
	}
	used := append([]bool(nil), need[:lw]...)
	for _, e := range residual {
		for _, c := range columnsOf(e) {
			if c < lw {
				used[c] = true
			}
		}
	}
	inputKeys := make([]*expr.Expr, len(keys))
	for i, k := range keys {
		for _, c := range columnsOf(k.input) {
			used[c] = true
		}
		t := lookupSchema[k.col].Type
		if _, ok := expr.CommonType(k.input.Type, t); !ok {
			return nil, nil, &Error{Pos: n.pos, Msg: fmt.Sprintf("lookup key %s of type %s cannot be compared with %s", lookupSchema[k.col].Name, t, k.input.Type)}
		}
		inputKeys[i] = keyExpr(k.input, t)
	}
	left, lmap := pruneSide(n.left, leftFilters, used)
	ls, err := ph.build(left)
	if err != nil {
		return nil, nil, err
	}
	var extra []*expr.Expr
	spec := &jobgraph.LookupJoinSpec{InputSchema: nil, LookupSchema: lookupSchema, OuterLeft: n.outerLeft,
		TableName: name, Table: table, Cache: cache, MaxRetries: retries}
	for i, k := range keys {
		e := remap(inputKeys[i], lmap)
		if e.Op == expr.OpColumn {
			spec.InputKeys = append(spec.InputKeys, e.Col)
		} else {
			spec.InputKeys = append(spec.InputKeys, len(ls.schema)+len(extra))
			extra = append(extra, e)
		}
		spec.LookupKeys = append(spec.LookupKeys, k.col)
	}
	ls = ph.extend(ls, extra)
	nlw := len(ls.schema)
	where := func(i int) int {
		if i < lw {
			return lmap(i)
		}
		return nlw + i - lw
	}
	out := append(append(types.Schema{}, ls.schema...), lookupSchema...)
	for i := nlw; i < len(out); i++ {
		if n.outerLeft {
			out[i].Type = out[i].Type.WithNullable(true)
		}
	}
	spec.InputSchema, spec.OutputSchema = ls.schema, out
	spec.Residual = remap(and(residual), where)
	opName := fmt.Sprintf("LookupJoin(table=[%s], joinType=[%s])", name, n.kindName())
	s := ph.b.chain(ls, ls.vertex.Parallelism, op(opName, spec), out)
	// NB: each input row is joined once, keeping its kind: the output
	// changes as the input does.
	return s, where, nil
}

// lookupKeyOf reports whether c is lookupColumn = expr over the left input
// (or a constant), either way round.
func lookupKeyOf(c *expr.Expr, lw int) (lookupKey, bool) {
	if c.Op != expr.OpCall || c.Func != "=" || len(c.Args) != 2 {
		return lookupKey{}, false
	}
	for _, p := range [][2]*expr.Expr{{c.Args[0], c.Args[1]}, {c.Args[1], c.Args[0]}} {
		col, other := p[0], p[1]
		if col.Op != expr.OpColumn || col.Col < lw {
			continue
		}
		if s := sideOf(other, lw); s == sideLeft || s == sideNone {
			return lookupKey{col: col.Col - lw, input: other}, true
		}
	}
	return lookupKey{}, false
}

func allConstant(keys []lookupKey) bool {
	for _, k := range keys {
		if len(columnsOf(k.input)) > 0 {
			return false
		}
	}
	return true
}
