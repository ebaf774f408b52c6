package difftest

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// feature names one construct of the query generator. Each can be turned
// off on its own (to silence a known discrepancy) or on (once the engine
// supports it): see defaultFeatures and the -difftest.features flag.
type feature string

const (
	fArith        feature = "arith"      // + - * / % in projections and conditions
	fCase         feature = "case"       // CASE WHEN ... END
	fCoalesce     feature = "coalesce"   // COALESCE(a, b)
	fInList       feature = "in-list"    // x [NOT] IN (literals)
	fBetween      feature = "between"    // x [NOT] BETWEEN a AND b
	fInnerJoin    feature = "inner-join" // JOIN ... ON equality [AND ...]
	fOuterJoin    feature = "outer-join" // LEFT/RIGHT/FULL JOIN ON equality [AND padded side]
	fCrossJoin    feature = "cross-join" // CROSS JOIN and FROM a, b
	fGroupBy      feature = "group-by"   // GROUP BY with COUNT/SUM/MIN/MAX/AVG
	fHaving       feature = "having"     // HAVING
	fGlobalAgg    feature = "global-agg" // aggregates without GROUP BY
	fSelectDist   feature = "select-distinct"
	fSetOps       feature = "set-ops"        // UNION [ALL], INTERSECT [ALL], EXCEPT [ALL]
	fDerived      feature = "derived"        // FROM (query) AS d
	fTumble       feature = "tumble"         // TABLE(TUMBLE(...)) GROUP BY window_start, window_end
	fOuterAnyCond feature = "outer-any-cond" // outer joins with conditions on the preserved side or across sides
	fInSubquery   feature = "in-subquery"    // x IN (SELECT ...)
	fNotIn        feature = "not-in-subquery"
	fExists       feature = "exists" // [NOT] EXISTS (correlated SELECT)
	fDistinctAgg  feature = "distinct-agg"
	fAggFilter    feature = "agg-filter" // agg(x) FILTER (WHERE ...)
	// fComputedKeys lets set-operation branches, SELECT DISTINCT and
	// derived tables select computed expressions, whose NULLs become
	// keys of an aggregate (a NULL computed by an expression once hashed
	// apart from a NULL read from a column).
	fComputedKeys feature = "computed-keys"
)

// defaultFeatures is what make test generates: everything Braid supports
// today. A feature the engine cannot run yet is switched off here (and on
// for one run with -difftest.features=+name).
var defaultFeatures = map[feature]bool{
	fArith: true, fCase: true, fCoalesce: true, fInList: true, fBetween: true,
	fInnerJoin: true, fOuterJoin: true, fCrossJoin: true,
	fGroupBy: true, fHaving: true, fGlobalAgg: true, fSelectDist: true,
	fSetOps: true, fDerived: true, fTumble: true,
	fOuterAnyCond: true, fInSubquery: true, fNotIn: true, fExists: true,
	fDistinctAgg: true, fAggFilter: true,
	fComputedKeys: true,
}

// features is a set of switched-on features.
type features map[feature]bool

// parseFeatures applies a comma-separated list of +name / -name (or
// name, meaning +name) to the defaults; "all" names every feature.
func parseFeatures(spec string) (features, error) {
	fs := features{}
	for f, on := range defaultFeatures {
		fs[f] = on
	}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		on := !strings.HasPrefix(item, "-")
		name := feature(strings.TrimLeft(item, "+-"))
		if name == "all" {
			for f := range fs {
				fs[f] = on
			}
			continue
		}
		if _, ok := defaultFeatures[name]; !ok {
			return nil, fmt.Errorf("unknown feature %q", name)
		}
		fs[name] = on
	}
	return fs, nil
}

// tableSpec is a generated table: its columns, rows, and the column that
// carries a watermark ("" for none).
type tableSpec struct {
	name      string
	cols      []column
	rows      [][]value
	watermark string
}

// caseSpec is one table set and the queries run over it.
type caseSpec struct {
	tables  []*tableSpec
	queries []string
}

// decimalTypes are the DECIMAL columns the generator picks from.
var decimalTypes = []typ{tDec(5, 2), tDec(10, 2), tDec(4, 1), tDec(12, 0)}

// baseTime is the start of generated timestamps: 2024-01-01 00:00 UTC.
var baseTime = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()

// genTables makes 2-3 tables. Column c0 is an integer key with a small
// domain, so joins match; every column is nullable but a watermark's;
// values repeat, so groups, duplicates and NULLs occur.
func genTables(r *rand.Rand, prefix string, fs features) []*tableSpec {
	n := 2 + r.IntN(2)
	var out []*tableSpec
	for i := range n {
		t := &tableSpec{name: fmt.Sprintf("%s_t%d", prefix, i)}
		keyT := tInt
		if r.IntN(3) == 0 {
			keyT = tBigInt
		}
		t.cols = append(t.cols, column{name: "c0", t: keyT})
		for j := 1; j < 3+r.IntN(3); j++ {
			var ct typ
			switch r.IntN(6) {
			case 0:
				ct = tInt
			case 1:
				ct = tBigInt
			case 2:
				ct = tStr
			case 3:
				ct = decimalTypes[r.IntN(len(decimalTypes))]
			case 4:
				ct = tBool
			default:
				ct = tTs
			}
			t.cols = append(t.cols, column{name: fmt.Sprintf("c%d", j), t: ct})
		}
		if i == 0 && fs[fTumble] && r.IntN(2) == 0 {
			t.cols = append(t.cols, column{name: "ts", t: tTs})
			t.watermark = "ts"
		}
		for range r.IntN(31) {
			row := make([]value, len(t.cols))
			for j, c := range t.cols {
				row[j] = genValue(r, c.t, c.name == t.watermark)
			}
			t.rows = append(t.rows, row)
		}
		out = append(out, t)
	}
	return out
}

// genValue draws a value of t from a small domain; NULL one time in six
// unless notNull.
func genValue(r *rand.Rand, t typ, notNull bool) value {
	if !notNull && r.IntN(6) == 0 {
		return nil
	}
	switch t.k {
	case kInt, kBigInt:
		return int64(r.IntN(9) - 2)
	case kStr:
		return []string{"a", "b", "c", "ab", "", "B"}[r.IntN(6)]
	case kDec:
		unscaled := int64(r.IntN(41) - 10)
		if t.s == 0 {
			return new(big.Rat).SetInt64(unscaled)
		}
		v := new(big.Rat).SetFrac64(unscaled*int64(pow10(t.s-1)), int64(pow10(t.s)))
		return roundHalfUp(v, t.s)
	case kBool:
		return r.IntN(2) == 0
	case kTs:
		// Minutes 0-29 with a few seconds: a 5-minute tumble has several
		// rows per window and several windows.
		return tsVal(baseTime + int64(r.IntN(30))*60_000 + int64(r.IntN(3))*1500)
	}
	return nil
}

func pow10(n int) int {
	p := 1
	for range n {
		p *= 10
	}
	return p
}

// setupSQL is the statements that create and fill the tables.
func setupSQL(tables []*tableSpec) []string {
	var out []string
	for _, t := range tables {
		var defs []string
		for _, c := range t.cols {
			d := "`" + c.name + "` " + c.t.sqlName()
			if c.name == t.watermark {
				d += " NOT NULL"
			}
			defs = append(defs, d)
		}
		if t.watermark != "" {
			// The watermark trails every row, so none is late and the
			// end of input fires every window.
			defs = append(defs, "WATERMARK FOR `"+t.watermark+"` AS `"+t.watermark+"` - INTERVAL '1' HOUR")
		}
		out = append(out, "CREATE TABLE "+t.name+" ("+strings.Join(defs, ", ")+")")
		if len(t.rows) == 0 {
			continue
		}
		var rows []string
		for _, row := range t.rows {
			var cells []string
			for j, v := range row {
				cells = append(cells, literal(v, t.cols[j].t))
			}
			rows = append(rows, "("+strings.Join(cells, ", ")+")")
		}
		out = append(out, "INSERT INTO "+t.name+" VALUES "+strings.Join(rows, ", "))
	}
	return out
}

func refTables(tables []*tableSpec) []*refTable {
	var out []*refTable
	for _, t := range tables {
		rt := &refTable{name: t.name, rows: t.rows}
		for _, c := range t.cols {
			rt.cols = append(rt.cols, column{qual: t.name, name: c.name, t: c.t})
		}
		out = append(out, rt)
	}
	return out
}

// scol is a column a generated expression may read: how to write it and
// its type.
type scol struct {
	ref string
	t   typ
}

// qgen generates queries over one table set.
type qgen struct {
	r      *rand.Rand
	fs     features
	tables []*tableSpec
	nAlias int
}

func (g *qgen) alias() string {
	g.nAlias++
	return fmt.Sprintf("a%d", g.nAlias)
}

func (g *qgen) on(f feature) bool { return g.fs[f] }

// query generates one query; depth bounds derived tables.
func (g *qgen) query(depth int) string {
	var kinds []func() string
	kinds = append(kinds, func() string { return g.plainSelect(depth, nil) })
	if g.on(fGroupBy) || g.on(fGlobalAgg) {
		kinds = append(kinds, func() string { return g.aggSelect(depth) })
	}
	if g.on(fSetOps) {
		kinds = append(kinds, func() string { return g.setOp(depth) })
	}
	if g.on(fTumble) && g.tables[0].watermark != "" {
		kinds = append(kinds, g.tumble)
	}
	return kinds[g.r.IntN(len(kinds))]()
}

// from generates a FROM clause and returns the columns it offers.
func (g *qgen) from(depth int) (string, []scol) {
	sql, cols := g.fromItem(depth)
	if g.r.IntN(3) == 0 {
		return sql, cols
	}
	var kinds []string
	if g.on(fInnerJoin) {
		kinds = append(kinds, "JOIN")
	}
	if g.on(fOuterJoin) {
		kinds = append(kinds, "LEFT JOIN", "RIGHT JOIN", "FULL JOIN")
	}
	if g.on(fCrossJoin) {
		kinds = append(kinds, "CROSS JOIN", ",")
	}
	joins := 1 + g.r.IntN(2)
	if depth == 0 {
		joins = 1 // keeps derived tables small
	}
	crossed := false
	for i := 0; i < joins && len(kinds) > 0; i++ {
		kind := kinds[g.r.IntN(len(kinds))]
		if kind == "," || kind == "CROSS JOIN" {
			if crossed {
				kind = kinds[0]
			}
			crossed = true
		}
		if kind == "," && i < joins-1 {
			// NB: a comma binds looser than JOIN, so a later ON could
			// not see the tables before it.
			kind = "CROSS JOIN"
		}
		rsql, rcols := g.fromItem(depth)
		all := append(append([]scol{}, cols...), rcols...)
		switch kind {
		case ",":
			sql = sql + ", " + rsql
		case "CROSS JOIN":
			sql = sql + " CROSS JOIN " + rsql
		default:
			conds := []string{g.equality(cols, rcols)}
			switch {
			case kind == "JOIN":
				for range g.r.IntN(2) {
					conds = append(conds, g.boolExpr(all, 1))
				}
			case g.on(fOuterAnyCond):
				for range g.r.IntN(3) {
					switch g.r.IntN(3) {
					case 0:
						conds = append(conds, g.boolExpr(cols, 1))
					case 1:
						conds = append(conds, g.boolExpr(rcols, 1))
					default:
						conds = append(conds, g.comparison(all))
					}
				}
			case kind == "LEFT JOIN" && g.r.IntN(2) == 0:
				conds = append(conds, g.sideCond(rcols))
			case kind == "RIGHT JOIN" && g.r.IntN(2) == 0:
				conds = append(conds, g.sideCond(cols))
			}
			sql = sql + " " + kind + " " + rsql + " ON " + strings.Join(conds, " AND ")
		}
		cols = all
	}
	return sql, cols
}

// fromItem is a table or, sometimes, a derived table.
func (g *qgen) fromItem(depth int) (string, []scol) {
	a := g.alias()
	if depth > 0 && g.on(fDerived) && g.r.IntN(5) == 0 {
		inner, types := g.innerQuery(depth - 1)
		var cols []scol
		for i, t := range types {
			cols = append(cols, scol{ref: fmt.Sprintf("%s.x%d", a, i), t: t})
		}
		return "(" + inner + ") AS " + a, cols
	}
	t := g.tables[g.r.IntN(len(g.tables))]
	var cols []scol
	for _, c := range t.cols {
		cols = append(cols, scol{ref: a + ".`" + c.name + "`", t: c.t})
	}
	return t.name + " AS " + a, cols
}

// innerQuery is a query for a derived table, its columns named x0, x1, ...
func (g *qgen) innerQuery(depth int) (string, []typ) {
	fsql, cols := g.from(depth)
	// x0 is an integer, so joins with the derived table have a key.
	items := []string{g.pick(cols, kInt) + " AS x0"}
	types := []typ{tBigInt}
	for i := 1; i < 1+g.r.IntN(3); i++ {
		e, t := g.anyExpr(cols, 1)
		if !g.on(fComputedKeys) {
			c := cols[g.r.IntN(len(cols))]
			e, t = c.ref, c.t
		}
		items = append(items, fmt.Sprintf("%s AS x%d", e, i))
		types = append(types, t)
	}
	sql := "SELECT " + strings.Join(items, ", ") + " FROM " + fsql
	if g.r.IntN(2) == 0 {
		sql += " WHERE " + g.boolExpr(cols, 1)
	}
	return sql, types
}

// equality is an equi-join condition between a column of l and one of r
// of the same type family (integers with integers, strings with strings).
func (g *qgen) equality(l, r []scol) string {
	type pair struct{ a, b string }
	var pairs []pair
	for _, a := range l {
		for _, b := range r {
			if (a.t.isInteger() && b.t.isInteger()) || (a.t.k == b.t.k && a.t.k != kDec && a.t.k != kTs) {
				pairs = append(pairs, pair{a.ref, b.ref})
			}
		}
	}
	if len(pairs) == 0 {
		// Derived tables may lack integer columns: compare casts.
		return fmt.Sprintf("(%s IS NULL) = (%s IS NULL)", l[0].ref, r[0].ref)
	}
	p := pairs[g.r.IntN(len(pairs))]
	return p.a + " = " + p.b
}

// selectItems generates 1-4 expressions named c0, c1, ...
func (g *qgen) selectItems(cols []scol, want []typ, keys bool) ([]string, []typ) {
	var items []string
	var types []typ
	n := 1 + g.r.IntN(4)
	if want != nil {
		n = len(want)
	}
	for i := range n {
		var e string
		var t typ
		switch {
		case keys && !g.on(fComputedKeys) && want != nil:
			e, t = g.pick(cols, want[i].k), want[i] // a column or a literal
		case keys && !g.on(fComputedKeys):
			c := cols[g.r.IntN(len(cols))]
			e, t = c.ref, c.t
		case want != nil:
			e, t = g.expr(want[i].k, cols, 1), want[i]
		default:
			e, t = g.anyExpr(cols, 1)
		}
		items = append(items, fmt.Sprintf("%s AS c%d", e, i))
		types = append(types, t)
	}
	return items, types
}

// plainSelect is SELECT [DISTINCT] exprs FROM ... [WHERE ...]; with want,
// its columns have those kinds (a branch of a set operation).
func (g *qgen) plainSelect(depth int, want []typ) string {
	fsql, cols := g.from(depth)
	distinct := g.on(fSelectDist) && g.r.IntN(6) == 0
	items, _ := g.selectItems(cols, want, distinct || want != nil)
	sql := "SELECT "
	if distinct {
		sql += "DISTINCT "
	}
	sql += strings.Join(items, ", ") + " FROM " + fsql
	if g.r.IntN(3) > 0 {
		sql += " WHERE " + g.where(cols)
	}
	return sql
}

// where is a condition: a few conjuncts, sometimes with a subquery.
func (g *qgen) where(cols []scol) string {
	var conds []string
	for range 1 + g.r.IntN(2) {
		conds = append(conds, g.boolExpr(cols, 1))
	}
	if sub := g.subqueryPredicate(cols); sub != "" {
		conds = append(conds, sub)
	}
	return strings.Join(conds, " AND ")
}

// subqueryPredicate is an IN, NOT IN or EXISTS predicate, or "".
func (g *qgen) subqueryPredicate(cols []scol) string {
	var kinds []feature
	for _, f := range []feature{fInSubquery, fNotIn, fExists} {
		if g.on(f) {
			kinds = append(kinds, f)
		}
	}
	if len(kinds) == 0 || g.r.IntN(2) == 0 {
		return ""
	}
	t := g.tables[g.r.IntN(len(g.tables))]
	a := g.alias()
	var inner []scol
	for _, c := range t.cols {
		inner = append(inner, scol{ref: a + ".`" + c.name + "`", t: c.t})
	}
	key := g.pick(cols, kInt)
	ikey := g.pick(inner, kInt)
	cond := ""
	if g.r.IntN(2) == 0 {
		cond = " WHERE " + g.boolExpr(inner, 1)
	}
	switch kinds[g.r.IntN(len(kinds))] {
	case fInSubquery:
		return fmt.Sprintf("%s IN (SELECT %s FROM %s AS %s%s)", key, ikey, t.name, a, cond)
	case fNotIn:
		return fmt.Sprintf("%s NOT IN (SELECT %s FROM %s AS %s%s)", key, ikey, t.name, a, cond)
	}
	not := ""
	if g.r.IntN(2) == 0 {
		not = "NOT "
	}
	corr := " WHERE " + ikey + " = " + key
	if cond != "" {
		corr += " AND" + strings.TrimPrefix(cond, " WHERE")
	}
	return fmt.Sprintf("%sEXISTS (SELECT 1 FROM %s AS %s%s)", not, t.name, a, corr)
}

// aggSelect is a GROUP BY (or global) aggregate, with HAVING sometimes.
func (g *qgen) aggSelect(depth int) string {
	fsql, cols := g.from(depth)
	var keys []string
	if g.on(fGroupBy) && (!g.on(fGlobalAgg) || g.r.IntN(4) > 0) {
		for range 1 + g.r.IntN(2) {
			c := cols[g.r.IntN(len(cols))]
			if !slices.Contains(keys, c.ref) {
				keys = append(keys, c.ref)
			}
		}
	}
	return g.aggBody(fsql, cols, keys, "")
}

// aggBody completes an aggregating SELECT over fsql grouped by keys,
// with extra (window columns) selected first.
func (g *qgen) aggBody(fsql string, cols []scol, keys []string, where string) string {
	var items []string
	items = append(items, keys...)
	for range 1 + g.r.IntN(3) {
		items = append(items, g.aggCall(cols))
	}
	for i := range items {
		items[i] = fmt.Sprintf("%s AS c%d", items[i], i)
	}
	sql := "SELECT " + strings.Join(items, ", ") + " FROM " + fsql
	if where != "" {
		sql += " WHERE " + where
	} else if g.r.IntN(2) == 0 {
		sql += " WHERE " + g.where(cols)
	}
	if len(keys) > 0 {
		sql += " GROUP BY " + strings.Join(keys, ", ")
	}
	if g.on(fHaving) && g.r.IntN(3) == 0 {
		having := []string{"COUNT(*)", "SUM(" + g.expr(kInt, cols, 1) + ")", "MAX(" + g.expr(kDec, cols, 1) + ")"}[g.r.IntN(3)]
		sql += " HAVING " + having + " " + []string{">", "<", ">=", "<>"}[g.r.IntN(4)] + " " + fmt.Sprint(g.r.IntN(5))
	}
	return sql
}

// aggCall is an aggregate over cols, sometimes inside arithmetic.
func (g *qgen) aggCall(cols []scol) string {
	fn := []string{"COUNT", "COUNT", "SUM", "MIN", "MAX", "AVG"}[g.r.IntN(6)]
	var call string
	distinct := ""
	if g.on(fDistinctAgg) && g.r.IntN(4) == 0 && fn != "MIN" && fn != "MAX" {
		distinct = "DISTINCT "
	}
	switch {
	case fn == "COUNT" && distinct == "" && g.r.IntN(2) == 0:
		call = "COUNT(*)"
	case fn == "COUNT":
		e, _ := g.anyExpr(cols, 1)
		call = "COUNT(" + distinct + e + ")"
	case fn == "MIN" || fn == "MAX":
		k := []kind{kInt, kDec, kStr, kTs}[g.r.IntN(4)]
		call = fn + "(" + g.expr(k, cols, 1) + ")"
	default:
		k := []kind{kInt, kDec}[g.r.IntN(2)]
		call = fn + "(" + distinct + g.expr(k, cols, 1) + ")"
	}
	if g.on(fAggFilter) && g.r.IntN(4) == 0 {
		call += " FILTER (WHERE " + g.boolExpr(cols, 1) + ")"
	}
	if g.on(fArith) && g.r.IntN(6) == 0 && !strings.HasPrefix(call, "MIN") && !strings.HasPrefix(call, "MAX") {
		call = "(" + call + ") + 1"
	}
	return call
}

// setOp is two selects of the same column kinds joined by a set operation.
func (g *qgen) setOp(depth int) string {
	var want []typ
	for range 1 + g.r.IntN(2) {
		want = append(want, typ{k: []kind{kInt, kDec, kStr, kBool}[g.r.IntN(4)]})
	}
	op := []string{"UNION ALL", "UNION", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL"}[g.r.IntN(6)]
	return g.plainSelect(depth, want) + " " + op + " " + g.plainSelect(depth, want)
}

// tumble is a TUMBLE window aggregate over the table with a watermark.
func (g *qgen) tumble() string {
	t := g.tables[0]
	var cols []scol
	for _, c := range t.cols {
		cols = append(cols, scol{ref: "`" + c.name + "`", t: c.t})
	}
	size := []string{"INTERVAL '5' MINUTES", "INTERVAL '10' MINUTES", "INTERVAL '1' HOUR"}[g.r.IntN(3)]
	fsql := fmt.Sprintf("TABLE(TUMBLE(TABLE %s, DESCRIPTOR(%s), %s))", t.name, t.watermark, size)
	keys := []string{"window_start", "window_end"}
	if g.r.IntN(2) == 0 {
		keys = append(keys, cols[g.r.IntN(len(cols)-1)].ref)
	}
	var items []string
	items = append(items, keys...)
	for range 1 + g.r.IntN(3) {
		items = append(items, g.aggCall(cols))
	}
	for i := range items {
		items[i] = fmt.Sprintf("%s AS c%d", items[i], i)
	}
	return "SELECT " + strings.Join(items, ", ") + " FROM " + fsql + " GROUP BY " + strings.Join(keys, ", ")
}

// pick returns a column of kind k (integers for kInt) or a literal.
func (g *qgen) pick(cols []scol, k kind) string {
	var cands []string
	for _, c := range cols {
		if c.t.k == k || (k == kInt && c.t.isInteger()) {
			cands = append(cands, c.ref)
		}
	}
	if len(cands) == 0 {
		return g.lit(k)
	}
	return cands[g.r.IntN(len(cands))]
}

func (g *qgen) lit(k kind) string {
	switch k {
	case kInt:
		return fmt.Sprint(g.r.IntN(9) - 2)
	case kDec:
		return []string{"1.5", "0.25", "2", "10.00", "-3.5"}[g.r.IntN(5)]
	case kStr:
		return []string{"'a'", "'b'", "'ab'", "''"}[g.r.IntN(4)]
	case kBool:
		return []string{"TRUE", "FALSE"}[g.r.IntN(2)]
	case kTs:
		return literal(genValue(g.r, tTs, true), tTs)
	}
	return "NULL"
}

// anyExpr is an expression of a random kind.
func (g *qgen) anyExpr(cols []scol, depth int) (string, typ) {
	c := cols[g.r.IntN(len(cols))]
	if g.r.IntN(2) == 0 {
		return c.ref, c.t
	}
	k := []kind{kInt, kDec, kStr, kBool, kTs}[g.r.IntN(5)]
	return g.expr(k, cols, depth), typ{k: k}
}

// expr is an expression of kind k (kInt: INT or BIGINT).
func (g *qgen) expr(k kind, cols []scol, depth int) string {
	if k == kBool {
		return g.boolExpr(cols, depth)
	}
	if depth <= 0 || g.r.IntN(3) == 0 {
		if g.r.IntN(5) == 0 {
			return g.lit(k)
		}
		return g.pick(cols, k)
	}
	switch g.r.IntN(4) {
	case 0:
		if g.on(fCase) {
			e := "CASE WHEN " + g.boolExpr(cols, depth-1) + " THEN " + g.expr(k, cols, depth-1)
			if g.r.IntN(3) > 0 {
				e += " ELSE " + g.expr(k, cols, depth-1)
			}
			return e + " END"
		}
	case 1:
		if g.on(fCoalesce) {
			return "COALESCE(" + g.expr(k, cols, depth-1) + ", " + g.expr(k, cols, depth-1) + ")"
		}
	}
	if !g.on(fArith) || (k != kInt && k != kDec) {
		return g.pick(cols, k)
	}
	a := g.expr(k, cols, depth-1)
	switch g.r.IntN(6) {
	case 0:
		return "(" + a + " + " + g.expr(k, cols, depth-1) + ")"
	case 1:
		return "(" + a + " - " + g.expr(kInt, cols, depth-1) + ")"
	case 2:
		return "(" + a + " * " + g.expr(kInt, cols, 0) + ")"
	case 3:
		// Divisors are non-zero literals: division by zero is not a
		// semantic question this test asks.
		return "(" + a + " / " + fmt.Sprint(1+g.r.IntN(4)) + ")"
	case 4:
		if k == kInt {
			return "(" + a + " % " + fmt.Sprint(2+g.r.IntN(3)) + ")"
		}
	}
	return "-(" + a + ")"
}

// sideCond is a condition that reads at least one of cols: Braid takes
// an outer join's conditions on the padded side only if they read it.
func (g *qgen) sideCond(cols []scol) string {
	c := cols[g.r.IntN(len(cols))]
	switch g.r.IntN(3) {
	case 0:
		return "(" + c.ref + " IS NOT NULL)"
	case 1:
		if c.t.k != kBool {
			op := []string{"=", "<>", "<", ">="}[g.r.IntN(4)]
			return "(" + c.ref + " " + op + " " + g.lit(c.t.k) + ")"
		}
	}
	return "(" + c.ref + " IS NULL OR " + g.comparison(cols) + ")"
}

// comparison compares two expressions of one kind.
func (g *qgen) comparison(cols []scol) string {
	k := []kind{kInt, kInt, kDec, kStr, kTs, kBool}[g.r.IntN(6)]
	op := []string{"=", "<>", "<", "<=", ">", ">="}[g.r.IntN(6)]
	return "(" + g.expr(k, cols, 1) + " " + op + " " + g.expr(k, cols, 0) + ")"
}

// boolExpr is a condition over cols.
func (g *qgen) boolExpr(cols []scol, depth int) string {
	if depth <= 0 {
		return g.comparison(cols)
	}
	switch g.r.IntN(9) {
	case 0:
		return "(" + g.boolExpr(cols, depth-1) + " AND " + g.boolExpr(cols, depth-1) + ")"
	case 1:
		return "(" + g.boolExpr(cols, depth-1) + " OR " + g.boolExpr(cols, depth-1) + ")"
	case 2:
		return "NOT (" + g.boolExpr(cols, depth-1) + ")"
	case 3:
		c := cols[g.r.IntN(len(cols))]
		if g.r.IntN(2) == 0 {
			return "(" + c.ref + " IS NULL)"
		}
		return "(" + c.ref + " IS NOT NULL)"
	case 4:
		if g.on(fInList) {
			k := []kind{kInt, kStr, kDec}[g.r.IntN(3)]
			var list []string
			for range 1 + g.r.IntN(3) {
				list = append(list, g.lit(k))
			}
			not := ""
			if g.r.IntN(3) == 0 {
				not = "NOT "
			}
			return "(" + g.pick(cols, k) + " " + not + "IN (" + strings.Join(list, ", ") + "))"
		}
	case 5:
		if g.on(fBetween) {
			k := []kind{kInt, kDec, kTs}[g.r.IntN(3)]
			not := ""
			if g.r.IntN(3) == 0 {
				not = "NOT "
			}
			return "(" + g.pick(cols, k) + " " + not + "BETWEEN " + g.lit(k) + " AND " + g.lit(k) + ")"
		}
	case 6:
		if b := g.pick(cols, kBool); b != "TRUE" && b != "FALSE" {
			return b
		}
	}
	return g.comparison(cols)
}

// genCase generates a table set and n queries over it.
func genCase(seed uint64, prefix string, n int, fs features) *caseSpec {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	c := &caseSpec{tables: genTables(r, prefix, fs)}
	g := &qgen{r: r, fs: fs, tables: c.tables}
	for range n {
		c.queries = append(c.queries, g.query(1))
	}
	return c
}
