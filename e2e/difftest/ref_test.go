package difftest

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/sql/parser"
)

// The reference evaluator: a query's syntax tree (from sql/parser)
// evaluated with nested loops over in-memory rows. It shares no code with
// the planner, expr or operators; what it knows of SQL it knows from
// FLINK-SEMANTICS.md: three-valued logic, Flink's result types (SUM keeps
// the argument's type, AVG of integers truncates, INT/INT is INT), exact
// decimals, set operations over multisets. A global aggregate over no
// rows gives no row, as in a streaming engine.

// relation is a bag of rows with named, typed columns.
type relation struct {
	cols []column
	rows [][]value
}

// column is a column of a relation: qual is the table alias it is read
// under ("" for a query's output), name its name.
type column struct {
	qual, name string
	t          typ
}

// refTable is a table of a case as the reference holds it.
type refTable struct {
	name string
	cols []column
	rows [][]value
}

// env is the context an expression is evaluated in: a row of a scope,
// the rows of its group in an aggregating SELECT, and the enclosing
// query's env for correlated subqueries.
type env struct {
	cols  []column
	row   []value
	group [][]value // nil outside an aggregate context
	outer *env
}

// refEval evaluates queries over a fixed set of tables.
type refEval struct {
	tables map[string]*refTable
}

func newRefEval(tables []*refTable) *refEval {
	r := &refEval{tables: map[string]*refTable{}}
	for _, t := range tables {
		r.tables[t.name] = t
	}
	return r
}

// maxJoinRows bounds a join's result: a query over more rows is skipped
// (the nested loops above it would take too long).
const maxJoinRows = 5000

var errTooBig = errors.New("the query's joins make too many rows")

// errUnsupported marks SQL the reference does not evaluate; a generated
// query never hits it, a shrunk candidate may.
var errUnsupported = errors.New("not supported by the reference")

func unsupported(n ast.Node) error {
	return fmt.Errorf("%w: %T %s", errUnsupported, n, n)
}

// evalSQL parses one query and evaluates it.
func (r *refEval) evalSQL(sql string) (*relation, error) {
	st, err := parser.ParseStatement(sql)
	if err != nil {
		return nil, err
	}
	q, ok := st.(*ast.QueryStmt)
	if !ok {
		return nil, fmt.Errorf("%T is not a query", st)
	}
	return r.query(q.Query, nil)
}

func (r *refEval) query(q *ast.Query, outer *env) (*relation, error) {
	if len(q.With) > 0 || len(q.OrderBy) > 0 || q.Limit != nil || q.Offset != nil {
		return nil, unsupported(q)
	}
	return r.queryExpr(q.Body, outer)
}

func (r *refEval) queryExpr(q ast.QueryExpr, outer *env) (*relation, error) {
	switch q := q.(type) {
	case *ast.Query:
		return r.query(q, outer)
	case *ast.Select:
		return r.selectBlock(q, outer)
	case *ast.SetOp:
		return r.setOp(q, outer)
	}
	return nil, unsupported(q)
}

// setOp evaluates UNION, INTERSECT and EXCEPT, ALL or distinct, over
// multisets; NULLs are equal to each other.
func (r *refEval) setOp(q *ast.SetOp, outer *env) (*relation, error) {
	l, err := r.queryExpr(q.L, outer)
	if err != nil {
		return nil, err
	}
	rr, err := r.queryExpr(q.R, outer)
	if err != nil {
		return nil, err
	}
	if len(l.cols) != len(rr.cols) {
		return nil, fmt.Errorf("set operation of %d and %d columns", len(l.cols), len(rr.cols))
	}
	out := &relation{}
	for i := range l.cols {
		t, err := commonType(l.cols[i].t, rr.cols[i].t)
		if err != nil {
			return nil, err
		}
		out.cols = append(out.cols, column{name: l.cols[i].name, t: t})
	}
	key := func(row []value) string { return rowKey(row, out.cols) }
	countR := map[string]int{}
	for _, row := range rr.rows {
		countR[key(row)]++
	}
	seen := map[string]int{}
	switch q.Op {
	case ast.Union:
		for _, row := range append(append([][]value{}, l.rows...), rr.rows...) {
			k := key(row)
			seen[k]++
			if q.All || seen[k] == 1 {
				out.rows = append(out.rows, row)
			}
		}
	case ast.Intersect, ast.Except:
		for _, row := range l.rows {
			k := key(row)
			seen[k]++
			n, c := seen[k], countR[k]
			var keep bool
			switch {
			case q.Op == ast.Intersect && q.All:
				keep = n <= c
			case q.Op == ast.Intersect:
				keep = n == 1 && c > 0
			case q.All:
				keep = n > c
			default:
				keep = n == 1 && c == 0
			}
			if keep {
				out.rows = append(out.rows, row)
			}
		}
	default:
		return nil, unsupported(q)
	}
	return out, nil
}

// rowKey is a row's identity for grouping and set operations.
func rowKey(row []value, cols []column) string {
	var b strings.Builder
	for i, v := range row {
		if v == nil {
			b.WriteString("\x00N")
		} else {
			b.WriteString("\x00V")
			b.WriteString(format(v, cols[i].t))
		}
	}
	return b.String()
}

func (r *refEval) selectBlock(s *ast.Select, outer *env) (*relation, error) {
	if len(s.Windows) > 0 || len(s.Hints) > 0 {
		return nil, unsupported(s)
	}
	in := &relation{rows: [][]value{{}}}
	if s.From != nil {
		var err error
		if in, err = r.from(s.From, outer); err != nil {
			return nil, err
		}
	}
	var rows [][]value
	for _, row := range in.rows {
		if s.Where != nil {
			ok, err := r.predicate(s.Where, &env{cols: in.cols, row: row, outer: outer})
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		rows = append(rows, row)
	}

	out := &relation{}
	for i, it := range s.Items {
		if _, ok := it.Expr.(*ast.Star); ok {
			return nil, unsupported(it.Expr)
		}
		t, err := r.typeOf(it.Expr, &env{cols: in.cols, outer: outer})
		if err != nil {
			return nil, err
		}
		out.cols = append(out.cols, column{name: itemName(it, i), t: t})
	}

	aggregating := len(s.GroupBy) > 0 || s.Having != nil
	for _, it := range s.Items {
		aggregating = aggregating || hasAggregate(it.Expr)
	}
	if !aggregating {
		for _, row := range rows {
			o, err := r.project(s.Items, &env{cols: in.cols, row: row, outer: outer})
			if err != nil {
				return nil, err
			}
			out.rows = append(out.rows, o)
		}
	} else {
		groups, err := r.groupRows(s.GroupBy, in.cols, rows, outer)
		if err != nil {
			return nil, err
		}
		for _, g := range groups {
			e := &env{cols: in.cols, row: g[0], group: g, outer: outer}
			if s.Having != nil {
				ok, err := r.predicate(s.Having, e)
				if err != nil {
					return nil, err
				}
				if !ok {
					continue
				}
			}
			o, err := r.project(s.Items, e)
			if err != nil {
				return nil, err
			}
			out.rows = append(out.rows, o)
		}
	}
	if s.Distinct {
		seen := map[string]bool{}
		var kept [][]value
		for _, row := range out.rows {
			k := rowKey(row, out.cols)
			if !seen[k] {
				seen[k] = true
				kept = append(kept, row)
			}
		}
		out.rows = kept
	}
	return out, nil
}

// groupRows splits rows into groups by the GROUP BY expressions, in order
// of first appearance. Without GROUP BY all rows are one group, and no
// rows are no group (a streaming global aggregate emits nothing).
func (r *refEval) groupRows(by []ast.Expr, cols []column, rows [][]value, outer *env) ([][][]value, error) {
	var order []string
	groups := map[string][][]value{}
	for _, row := range rows {
		e := &env{cols: cols, row: row, outer: outer}
		var key []value
		var kcols []column
		for _, g := range by {
			if _, ok := g.(*ast.GroupingSets); ok {
				return nil, unsupported(g)
			}
			v, err := r.eval(g, e)
			if err != nil {
				return nil, err
			}
			t, err := r.typeOf(g, e)
			if err != nil {
				return nil, err
			}
			key = append(key, v)
			kcols = append(kcols, column{t: t})
		}
		k := rowKey(key, kcols)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], row)
	}
	out := make([][][]value, 0, len(order))
	for _, k := range order {
		out = append(out, groups[k])
	}
	return out, nil
}

func (r *refEval) project(items []*ast.SelectItem, e *env) ([]value, error) {
	out := make([]value, len(items))
	for i, it := range items {
		v, err := r.eval(it.Expr, e)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// itemName names a select item as Flink does: its alias, the column's
// name, or EXPR$i.
func itemName(it *ast.SelectItem, i int) string {
	if it.Alias != nil {
		return it.Alias.Name
	}
	if c, ok := it.Expr.(*ast.ColumnRef); ok {
		return c.Parts[len(c.Parts)-1].Name
	}
	return "EXPR$" + strconv.Itoa(i)
}

func (r *refEval) from(t ast.TableExpr, outer *env) (*relation, error) {
	switch t := t.(type) {
	case *ast.TableName:
		if len(t.Hints) > 0 || t.SystemTime != nil || len(t.Name.Parts) != 1 {
			return nil, unsupported(t)
		}
		tab, ok := r.tables[t.Name.Object()]
		if !ok {
			return nil, fmt.Errorf("unknown table %s", t.Name.Object())
		}
		return aliased(&relation{cols: tab.cols, rows: tab.rows}, tab.name, t.Alias)
	case *ast.DerivedTable:
		if t.Lateral || t.Alias == nil {
			return nil, unsupported(t)
		}
		rel, err := r.query(t.Query, outer)
		if err != nil {
			return nil, err
		}
		return aliased(rel, "", t.Alias)
	case *ast.ParenTable:
		return r.from(t.Table, outer)
	case *ast.TableFunc:
		return r.tumble(t)
	case *ast.Join:
		return r.join(t, outer)
	}
	return nil, unsupported(t)
}

// aliased returns rel with its columns read under alias (or name).
func aliased(rel *relation, name string, alias *ast.TableAlias) (*relation, error) {
	if alias != nil {
		name = alias.Name.Name
	}
	out := &relation{rows: rel.rows}
	for i, c := range rel.cols {
		c.qual = name
		if alias != nil && len(alias.Columns) > 0 {
			if len(alias.Columns) != len(rel.cols) {
				return nil, fmt.Errorf("alias %s names %d of %d columns", name, len(alias.Columns), len(rel.cols))
			}
			c.name = alias.Columns[i].Name
		}
		out.cols = append(out.cols, c)
	}
	return out, nil
}

// tumble evaluates TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL 'n'
// unit)): t's columns plus window_start, window_end and window_time. Every
// row belongs to the window [floor(ts/size)*size, +size); none is late,
// since the generated watermarks trail the data by more than its span.
func (r *refEval) tumble(t *ast.TableFunc) (*relation, error) {
	c := t.Call
	if t.Lateral || !strings.EqualFold(c.FuncName(), "TUMBLE") || len(c.Args) != 3 {
		return nil, unsupported(t)
	}
	ta, ok1 := c.Args[0].(*ast.TableArg)
	d, ok2 := c.Args[1].(*ast.Descriptor)
	iv, ok3 := c.Args[2].(*ast.IntervalLit)
	if !ok1 || !ok2 || !ok3 || len(d.Columns) != 1 || len(ta.PartitionBy) > 0 {
		return nil, unsupported(t)
	}
	size, err := intervalMillis(iv)
	if err != nil {
		return nil, err
	}
	tab, ok := r.tables[ta.Name.Object()]
	if !ok {
		return nil, fmt.Errorf("unknown table %s", ta.Name.Object())
	}
	tsCol := -1
	for i, col := range tab.cols {
		if col.name == d.Columns[0].Name {
			tsCol = i
		}
	}
	if tsCol < 0 || tab.cols[tsCol].t.k != kTs {
		return nil, fmt.Errorf("no time column %s", d.Columns[0].Name)
	}
	out := &relation{}
	for _, col := range tab.cols {
		col.qual = ""
		out.cols = append(out.cols, col)
	}
	out.cols = append(out.cols, column{name: "window_start", t: tTs}, column{name: "window_end", t: tTs}, column{name: "window_time", t: tTs})
	for _, row := range tab.rows {
		ts := int64(row[tsCol].(tsVal))
		start := ts - ((ts%size)+size)%size
		o := append(append([]value{}, row...), tsVal(start), tsVal(start+size), tsVal(start+size-1))
		out.rows = append(out.rows, o)
	}
	if t.Alias != nil {
		return aliased(out, "", t.Alias)
	}
	return out, nil
}

func intervalMillis(iv *ast.IntervalLit) (int64, error) {
	n, err := strconv.ParseInt(iv.Value, 10, 64)
	if err != nil || iv.Qualifier.End != "" {
		return 0, unsupported(iv)
	}
	unit := map[ast.TimeUnit]time.Duration{"SECOND": time.Second, "MINUTE": time.Minute, "HOUR": time.Hour, "DAY": 24 * time.Hour}
	d, ok := unit[ast.TimeUnit(strings.TrimSuffix(string(iv.Qualifier.Start.Canonical()), "S"))]
	if !ok {
		return 0, unsupported(iv)
	}
	if iv.Negative {
		n = -n
	}
	return n * d.Milliseconds(), nil
}

// join evaluates a join by nested loops; outer joins pad the rows of a
// preserved side that matched nothing.
func (r *refEval) join(j *ast.Join, outer *env) (*relation, error) {
	if j.Natural || len(j.Using) > 0 {
		return nil, unsupported(j)
	}
	l, err := r.from(j.L, outer)
	if err != nil {
		return nil, err
	}
	rr, err := r.from(j.R, outer)
	if err != nil {
		return nil, err
	}
	out := &relation{cols: append(append([]column{}, l.cols...), rr.cols...)}
	matchedR := make([]bool, len(rr.rows))
	for _, lrow := range l.rows {
		matched := false
		for ri, rrow := range rr.rows {
			row := append(append([]value{}, lrow...), rrow...)
			if j.On != nil {
				ok, err := r.predicate(j.On, &env{cols: out.cols, row: row, outer: outer})
				if err != nil {
					return nil, err
				}
				if !ok {
					continue
				}
			}
			matched, matchedR[ri] = true, true
			out.rows = append(out.rows, row)
			if len(out.rows) > maxJoinRows {
				return nil, errTooBig
			}
		}
		if !matched && (j.Kind == ast.LeftJoin || j.Kind == ast.FullJoin) {
			out.rows = append(out.rows, append(append([]value{}, lrow...), make([]value, len(rr.cols))...))
		}
	}
	if j.Kind == ast.RightJoin || j.Kind == ast.FullJoin {
		for ri, rrow := range rr.rows {
			if !matchedR[ri] {
				out.rows = append(out.rows, append(make([]value, len(l.cols)), rrow...))
			}
		}
	}
	return out, nil
}

// predicate evaluates a condition: only TRUE passes.
func (r *refEval) predicate(e ast.Expr, en *env) (bool, error) {
	v, err := r.eval(e, en)
	if err != nil {
		return false, err
	}
	b, _ := v.(bool)
	return v != nil && b, nil
}

// resolve finds a column reference in en or an enclosing env: the env it
// is in and its index there.
func resolve(c *ast.ColumnRef, en *env) (*env, int, error) {
	var qual, name string
	switch len(c.Parts) {
	case 1:
		name = c.Parts[0].Name
	case 2:
		qual, name = c.Parts[0].Name, c.Parts[1].Name
	default:
		return nil, 0, unsupported(c)
	}
	for e := en; e != nil; e = e.outer {
		found := -1
		for i, col := range e.cols {
			if col.name == name && (qual == "" || col.qual == qual) {
				if found >= 0 {
					return nil, 0, fmt.Errorf("column %s is ambiguous", c)
				}
				found = i
			}
		}
		if found >= 0 {
			return e, found, nil
		}
	}
	return nil, 0, fmt.Errorf("unknown column %s", c)
}

var aggregates = map[string]bool{"COUNT": true, "SUM": true, "MIN": true, "MAX": true, "AVG": true}

func isAggregate(f *ast.FuncCall) bool {
	return aggregates[strings.ToUpper(f.FuncName())] && f.Over == nil
}

// hasAggregate reports whether e holds an aggregate call outside a subquery.
func hasAggregate(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncCall:
			if isAggregate(n) {
				found = true
			}
		case *ast.Query, *ast.Subquery, *ast.Exists:
			return false
		case *ast.InExpr:
			if n.Query != nil {
				ast.Inspect(n.X, func(m ast.Node) bool {
					if f, ok := m.(*ast.FuncCall); ok && isAggregate(f) {
						found = true
					}
					return true
				})
				return false
			}
		}
		return !found
	})
	return found
}

// parseNumber types a numeric literal as Calcite does: an integer is INT
// (BIGINT beyond INT's range), a decimal DECIMAL(digits, fraction digits).
func parseNumber(s string) (value, typ, error) {
	if !strings.ContainsAny(s, ".eE") {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, typ{}, err
		}
		if n > 2147483647 {
			return n, tBigInt, nil
		}
		return n, tInt, nil
	}
	if strings.ContainsAny(s, "eE") {
		return nil, typ{}, fmt.Errorf("%w: DOUBLE literal %s", errUnsupported, s)
	}
	v, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, typ{}, fmt.Errorf("bad number %s", s)
	}
	intPart, frac, _ := strings.Cut(s, ".")
	intPart = strings.TrimLeft(intPart, "0")
	return v, tDec(max(1, len(intPart)+len(frac)), len(frac)), nil
}
