package planner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/sql/parser"
	"github.com/braidflow/braid/types"
)

// binder binds one statement's query.
type binder struct {
	ctx     context.Context
	catalog Catalog
	// ctes are the common table expressions in scope (bind_with.go), and
	// viewDepth counts the views being expanded around the current one.
	ctes      *cteFrame
	viewDepth int
	// database, when set, is where a one-part table name resolves: the
	// database of the view being expanded, as Flink expands a view's query
	// with its own names qualified. Empty: the session's current database.
	database string
	// batch is execution.runtime-mode = batch: ORDER BY, LIMIT and OFFSET
	// bind into a sortNode over the whole result.
	batch bool
}

// bindQuery binds a query into a logical plan whose output columns carry the
// names Flink would give them.
func (b *binder) bindQuery(q *ast.Query) (node, error) {
	if len(q.With) > 0 {
		return b.bindWith(q)
	}
	if b.batch && (len(q.OrderBy) > 0 || q.Limit != nil || q.Offset != nil) {
		return b.bindSort(q)
	}
	if len(q.OrderBy) > 0 || q.Limit != nil {
		return b.bindTopN(q)
	}
	if q.Offset != nil {
		return nil, unsupported(q.Offset.Position(), "OFFSET")
	}
	return b.bindQueryExpr(q.Body)
}

func (b *binder) bindQueryExpr(body ast.QueryExpr) (node, error) {
	if err := stopped(b.ctx); err != nil {
		return nil, err
	}
	switch body := body.(type) {
	case *ast.Query:
		return b.bindQuery(body)
	case *ast.Select:
		return b.bindSelect(body)
	case *ast.Values:
		return b.bindValues(body)
	case *ast.SetOp:
		return b.bindSetOp(body)
	}
	return nil, unsupported(body.Position(), "query "+body.String())
}

// castNode projects n's columns to the types of out (names from out) when
// they differ.
func castNode(n node, out types.Schema) node {
	in := n.schema()
	same := true
	exprs := make([]*expr.Expr, len(in))
	for i, f := range in {
		exprs[i] = expr.Column(i, f.Type)
		if f.Type != out[i].Type {
			same = false
			c, ok := castTo(exprs[i], out[i].Type)
			if !ok {
				c = expr.Cast(exprs[i], out[i].Type)
			}
			exprs[i] = c
			exprs[i].Type = out[i].Type
		}
	}
	if same {
		return n
	}
	return &projectNode{input: n, exprs: exprs, out: out}
}

func (b *binder) bindValues(v *ast.Values) (node, error) {
	empty := &scope{}
	var rows [][]*expr.Expr
	for i, r := range v.Rows {
		if i%1024 == 1023 {
			if err := stopped(b.ctx); err != nil {
				return nil, err
			}
		}
		items := []ast.Expr{r}
		if rc, ok := r.(*ast.RowCtor); ok {
			items = rc.Items
		}
		row, err := bindExprs(empty, items...)
		if err != nil {
			return nil, err
		}
		if len(rows) > 0 && len(row) != len(rows[0]) {
			return nil, errorf(r.Position(), "VALUES rows have different numbers of columns (%d and %d)", len(rows[0]), len(row))
		}
		rows = append(rows, row)
	}
	out := make(types.Schema, len(rows[0]))
	for c := range out {
		ts := make([]types.DataType, len(rows))
		for i, row := range rows {
			ts[i] = row[c].Type
		}
		t, ok := expr.CommonType(ts...)
		if !ok {
			return nil, errorf(v.Rows[0].Position(), "VALUES column %d has incompatible types", c+1)
		}
		out[c] = types.Field{Name: fmt.Sprintf("EXPR$%d", c), Type: t}
		for i, row := range rows {
			if cast, ok := castTo(row[c], t); ok {
				rows[i][c] = cast
			}
		}
	}
	return &valuesNode{rows: rows, out: out}, nil
}

func (b *binder) bindSelect(s *ast.Select) (node, error) {
	for i, w := range s.Windows {
		for _, prev := range s.Windows[:i] {
			if prev.Name.Name == w.Name.Name {
				return nil, errorf(w.Name.Pos, "Duplicate window names not allowed")
			}
		}
	}
	if at := rowNumberItem(s); at >= 0 {
		return b.bindRowNumber(s, at)
	}
	var in node
	sc := &scope{}
	if s.From != nil {
		var err error
		if in, sc, err = b.bindFrom(s.From); err != nil {
			return nil, err
		}
	} else {
		in = &valuesNode{rows: [][]*expr.Expr{{}}, out: types.Schema{}}
	}
	var fromNames []string
	if s.From != nil {
		fromNames = inputNames(s.From)
	}
	aggTTL, err := applyHints(s.Hints, in, fromNames)
	if err != nil {
		return nil, err
	}
	// Subqueries become joins below the WHERE (bind_subquery.go).
	if in, sc, err = b.bindScalarSubqueries(in, sc, s); err != nil {
		return nil, err
	}
	where := s.Where
	if in, where, err = b.bindWhereSubqueries(in, sc, where); err != nil {
		return nil, err
	}
	if where != nil {
		cond, err := bindExpr(sc.withoutAggs("Aggregate expression is illegal in WHERE clause"), where)
		if err != nil {
			return nil, err
		}
		if cond.Type.Kind != types.KindBoolean {
			return nil, errorf(where.Position(), "WHERE must be a BOOLEAN expression, got %s", cond.Type)
		}
		if rk, ok := in.(*rankNode); ok && rk.rowNumber && rk.limit == 0 {
			if cond, err = takeRowNumberLimit(rk, cond, s.Where.Position()); err != nil {
				return nil, err
			}
		}
		if cond != nil {
			in = &filterNode{input: in, cond: cond}
		}
	}
	// Aggregate calls in the SELECT list and HAVING are collected as they
	// are bound; any makes the query an aggregation.
	agg := &aggBinder{width: len(sc.cols)}
	isc := sc.withAggs(agg)
	over := &overBinder{aggs: aggBinder{width: len(sc.cols)}, windows: s.Windows, sc: sc, in: in}
	isc.over = over
	var exprs []*expr.Expr
	var srcs []ast.Expr
	var names []string
	for i, item := range s.Items {
		if star, ok := item.Expr.(*ast.Star); ok {
			n, err := expandStar(sc, star)
			if err != nil {
				return nil, err
			}
			for _, c := range n {
				exprs = append(exprs, expr.Column(c, sc.cols[c].typ))
				srcs = append(srcs, star)
				names = append(names, sc.cols[c].name)
			}
			continue
		}
		e, err := bindExpr(isc, item.Expr)
		if err != nil {
			return nil, err
		}
		exprs = append(exprs, e)
		srcs = append(srcs, item.Expr)
		switch {
		case item.Alias != nil:
			names = append(names, item.Alias.Name)
		case isColumnRef(item.Expr):
			ref := item.Expr.(*ast.ColumnRef)
			names = append(names, ref.Parts[len(ref.Parts)-1].Name)
		default:
			names = append(names, fmt.Sprintf("EXPR$%d", i))
		}
	}
	var having *expr.Expr
	plainHaving, havingSubs := splitHaving(s.Having)
	if plainHaving != nil {
		var err error
		if having, err = bindExpr(isc, plainHaving); err != nil {
			return nil, err
		}
		if having.Type.Kind != types.KindBoolean {
			return nil, errorf(plainHaving.Position(), "HAVING must be a BOOLEAN expression, got %s", having.Type)
		}
	}
	visible := len(exprs)
	var hs *havingSubqueries
	if len(havingSubs) > 0 {
		if hs, err = b.bindHavingPieces(isc, sc, havingSubs); err != nil {
			return nil, err
		}
		exprs, srcs = append(exprs, hs.exprs...), append(srcs, hs.srcs...)
	}
	if rk := rowNumberBelow(in); rk != nil {
		read := exprs
		for _, g := range s.GroupBy {
			// NB: a GROUP BY key may read the row number without the
			// SELECT list naming it; one that fails to bind fails later.
			if e, err := bindExpr(sc, g); err == nil {
				read = append(read, e)
			}
		}
		markRowNumberRead(rk, read, agg, having)
	}
	names = uniquify(names)
	if hs != nil {
		for _, c := range hs.cols {
			names = append(names, c.name)
		}
	}
	out := make(types.Schema, len(exprs))
	for i, e := range exprs {
		out[i] = types.Field{Name: names[i], Type: e.Type}
	}
	aggregated := len(s.GroupBy) > 0 || s.Having != nil || len(agg.calls) > 0
	if len(over.aggs.calls) > 0 {
		if aggregated {
			return nil, unsupported(over.pos, "an OVER aggregate in a SELECT with GROUP BY or aggregates (aggregate in a subquery, then apply OVER to it)")
		}
		if len(in.schema()) != len(sc.cols) {
			// NB: a correlated subquery's scope ends in the outer query's
			// columns, which the placeholders would count.
			return nil, unsupported(over.pos, "an OVER aggregate in a correlated subquery")
		}
		in = over.node(in)
	}
	var n node = &projectNode{input: in, exprs: exprs, out: out}
	if aggregated {
		if n, err = bindGroupBy(s, in, sc, agg, exprs, srcs, out, having, aggTTL.ttl); err != nil {
			return nil, err
		}
		if hs != nil {
			if n, err = b.applyHaving(hs, n, visible); err != nil {
				return nil, err
			}
		}
	}
	if s.Distinct {
		n = distinct(n, aggTTL.ttl)
	} else if !aggregated && aggTTL.ttl != nil {
		return nil, errorf(aggTTL.pos, "STATE_TTL names '%s', which is not an input of a join or an aggregate in this query", aggTTL.name)
	}
	return n, nil
}

func isColumnRef(e ast.Expr) bool {
	_, ok := e.(*ast.ColumnRef)
	return ok
}

// uniquify renames duplicate output names as Calcite does: the second "c"
// becomes "c0", the third "c1".
func uniquify(names []string) []string {
	seen := map[string]bool{}
	out := make([]string, len(names))
	for i, n := range names {
		if !seen[n] {
			seen[n] = true
			out[i] = n
			continue
		}
		for k := 0; ; k++ {
			c := fmt.Sprintf("%s%d", n, k)
			if !seen[c] {
				seen[c] = true
				out[i] = c
				break
			}
		}
	}
	return out
}

func expandStar(sc *scope, star *ast.Star) ([]int, error) {
	var out []int
	qual := ""
	if len(star.Qualifier) > 0 {
		qual = star.Qualifier[len(star.Qualifier)-1].Name
	}
	if qual == "" && sc.star != nil {
		return sc.star, nil
	}
	for i, c := range sc.cols {
		if qual == "" || c.table == qual {
			out = append(out, i)
		}
	}
	if len(out) == 0 {
		if qual != "" {
			return nil, errorf(star.Pos, "unknown table alias %q in %s.*", qual, qual)
		}
		return nil, errorf(star.Pos, "SELECT * with no FROM clause")
	}
	return out, nil
}

// bindFrom binds a FROM item into a plan and the scope of its columns.
func (b *binder) bindFrom(te ast.TableExpr) (node, *scope, error) {
	if err := stopped(b.ctx); err != nil {
		return nil, nil, err
	}
	switch t := te.(type) {
	case *ast.TableName:
		return b.bindTableName(t)
	case *ast.ParenTable:
		return b.bindFrom(t.Table)
	case *ast.DerivedTable:
		if t.Lateral {
			return nil, nil, unsupported(t.Pos, "LATERAL subqueries")
		}
		n, err := b.bindQuery(t.Query)
		if err != nil {
			return nil, nil, err
		}
		sc := &scope{}
		for _, f := range n.schema() {
			sc.cols = append(sc.cols, scopeColumn{name: f.Name, typ: f.Type})
		}
		sc.markRowtime(n)
		if t.Alias != nil {
			var err error
			if sc, err = applyAlias(sc, t.Alias); err != nil {
				return nil, nil, err
			}
		}
		return n, sc, nil
	case *ast.Join:
		return b.bindJoin(t)
	case *ast.TableFunc:
		return b.bindWindowTVF(t)
	case *ast.Unnest:
		return b.bindUnnestFrom(t)
	}
	return nil, nil, unsupported(te.Position(), "FROM item "+te.String())
}

// inputNames returns the names a hint may use for a join input: a table's
// name and alias, or a subquery's alias.
func inputNames(te ast.TableExpr) []string {
	switch t := te.(type) {
	case *ast.TableName:
		names := []string{t.Name.Object()}
		if t.Alias != nil {
			names = append(names, t.Alias.Name.Name)
		}
		return names
	case *ast.DerivedTable:
		if t.Alias != nil {
			return []string{t.Alias.Name.Name}
		}
	case *ast.ParenTable:
		return inputNames(t.Table)
	}
	return nil
}

// hintTTL is a STATE_TTL for an aggregate, and where the hint named it.
type hintTTL struct {
	ttl  *time.Duration
	pos  ast.Pos
	name string
}

// applyHints applies a SELECT's hints to the joins of its FROM clause.
// STATE_TTL('input' = 'duration', ...) sets how long the named join input
// keeps its rows, as Flink's hint does; other hints are refused. A key that
// names the FROM clause's only table (fromNames) is returned: it is the
// TTL of the SELECT's aggregate, if it has one.
func applyHints(hints []*ast.Hint, from node, fromNames []string) (hintTTL, error) {
	var agg hintTTL
	for _, h := range hints {
		if !strings.EqualFold(h.Name.Name, "STATE_TTL") {
			// Hints change state retention or join strategy; running without
			// them could keep state Flink would drop, so say so.
			return agg, unsupported(h.Pos, "the "+strings.ToUpper(h.Name.Name)+" hint")
		}
		if len(h.Options) == 0 {
			return agg, errorf(h.Pos, "STATE_TTL takes 'input' = 'duration' pairs, as in STATE_TTL('o' = '1d')")
		}
		for _, o := range h.Options {
			ttl, err := types.ParseDuration(o.Value)
			if err != nil {
				return agg, errorf(o.Pos, "STATE_TTL for '%s': %v", o.Key, err)
			}
			if setJoinTTL(from, o.Key, ttl) {
				continue
			}
			if _, isJoin := from.(*joinNode); !isJoin && slices.Contains(fromNames, o.Key) {
				agg = hintTTL{ttl: &ttl, pos: o.Pos, name: o.Key}
				continue
			}
			return agg, errorf(o.Pos, "STATE_TTL names '%s', which is not an input of a join or an aggregate in this query", o.Key)
		}
	}
	return agg, nil
}

// setJoinTTL sets the TTL of every join input of the tree at n named name.
func setJoinTTL(n node, name string, ttl time.Duration) bool {
	j, ok := n.(*joinNode)
	if !ok {
		return false
	}
	found := false
	for _, ln := range j.leftNames {
		if ln == name {
			j.leftTTL, found = &ttl, true
		}
	}
	for _, rn := range j.rightNames {
		if rn == name {
			j.rightTTL, found = &ttl, true
		}
	}
	l, r := setJoinTTL(j.left, name, ttl), setJoinTTL(j.right, name, ttl)
	return found || l || r
}

func applyAlias(sc *scope, a *ast.TableAlias) (*scope, error) {
	out := sc.withAlias(a.Name.Name)
	if len(a.Columns) > 0 {
		if len(a.Columns) != len(out.cols) {
			return nil, errorf(a.Pos, "alias %s lists %d columns, the relation has %d", a.Name.Name, len(a.Columns), len(out.cols))
		}
		for i, c := range a.Columns {
			out.cols[i].name = c.Name
		}
	}
	return out, nil
}

func (b *binder) bindJoin(j *ast.Join) (node, *scope, error) {
	if dt, ok := j.R.(*ast.DerivedTable); ok && dt.Lateral {
		return b.bindLateralJoin(j, dt)
	}
	if tn, ok := j.R.(*ast.TableName); ok && tn.SystemTime != nil {
		return b.bindTemporalJoin(j, tn)
	}
	if u, ok := j.R.(*ast.Unnest); ok {
		return b.bindUnnestJoin(j, u)
	}
	l, lsc, err := b.bindFrom(j.L)
	if err != nil {
		return nil, nil, err
	}
	r, rsc, err := b.bindFrom(j.R)
	if err != nil {
		return nil, nil, err
	}
	sc := concat(lsc, rsc)
	var cond *expr.Expr
	var using []usingColumn
	switch {
	case len(j.Using) > 0 || j.Natural:
		if using, cond, err = usingColumns(j, lsc, rsc); err != nil {
			return nil, nil, err
		}
	case j.On != nil:
		if cond, err = bindExpr(sc.withoutAggs("Aggregate expression is illegal in ON clause"), j.On); err != nil {
			return nil, nil, err
		}
		if cond.Type.Kind != types.KindBoolean {
			return nil, nil, errorf(j.On.Position(), "join condition must be a BOOLEAN expression, got %s", cond.Type)
		}
	case j.Kind != ast.CrossJoin && j.Kind != ast.CommaJoin:
		return nil, nil, errorf(j.Pos, "%s needs an ON condition", j.Kind)
	}
	n := &joinNode{pos: j.Pos, left: l, right: r, cond: cond,
		outerLeft:  j.Kind == ast.LeftJoin || j.Kind == ast.FullJoin,
		outerRight: j.Kind == ast.RightJoin || j.Kind == ast.FullJoin,
		leftNames:  inputNames(j.L), rightNames: inputNames(j.R)}
	// Above an outer join, the columns of a side that is padded with NULLs
	// are nullable.
	lw := len(l.schema())
	for i, f := range append(append(types.Schema{}, l.schema()...), r.schema()...) {
		if (i < lw && n.outerRight) || (i >= lw && n.outerLeft) {
			f.Type = f.Type.WithNullable(true)
			sc.cols[i].typ = f.Type
		}
		n.out = append(n.out, f)
	}
	if using != nil {
		return mergeUsing(n, sc, using, len(lsc.cols))
	}
	return n, sc, nil
}

func (b *binder) bindTableName(t *ast.TableName) (node, *scope, error) {
	if len(t.Name.Parts) == 1 {
		if f := b.ctes.lookup(t.Name.Object()); f != nil {
			return b.bindCTERef(t, f)
		}
	}
	if t.SystemTime != nil {
		return nil, nil, unsupported(t.SystemTime.Position(), "FOR SYSTEM_TIME AS OF (temporal joins)")
	}
	if len(t.Hints) > 0 {
		h := t.Hints[0]
		if !strings.EqualFold(h.Name.Name, "OPTIONS") {
			return nil, nil, errorf(h.Pos, "unknown table hint %s", h.Name.Name)
		}
		return nil, nil, unsupported(h.Pos, "the OPTIONS table hint")
	}
	name := t.Name.Strings()
	if len(name) == 1 && b.database != "" {
		name = []string{b.database, name[0]}
	}
	tbl, err := b.catalog.Table(b.ctx, name)
	if err != nil {
		if errors.Is(err, catalog.ErrNotFound) {
			return nil, nil, errorf(t.Name.Pos, "unknown table \"%s\"", t.Name.String())
		}
		return nil, nil, errorf(t.Name.Pos, "looking up table %s: %v", t.Name.String(), err)
	}
	if tbl.IsView() {
		return b.bindView(t, tbl)
	}
	scan, err := bindScan(tbl)
	if err != nil {
		return nil, nil, errorf(t.Name.Pos, "%v", err)
	}
	scan.pos = t.Name.Pos
	alias := t.Name.Object()
	sc := &scope{}
	for _, f := range scan.out {
		sc.cols = append(sc.cols, scopeColumn{table: alias, name: f.Name, typ: f.Type})
	}
	sc.markRowtime(scan)
	if t.Alias != nil {
		if sc, err = applyAlias(sc, t.Alias); err != nil {
			return nil, nil, err
		}
	}
	return scan, sc, nil
}

// bindScan builds the scan of a catalog table: the source reads the
// physical and METADATA columns; when the table has computed columns (or a
// METADATA column of another type than its key's), a projection lays out
// every column in declaration order.
func bindScan(tbl *catalog.Table) (*scanNode, error) {
	phys, _, err := tbl.SourceSchema(jobgraph.MetadataTypes(tbl.Connector()))
	if err != nil {
		return nil, err
	}
	// src are the source's columns as the table declares them: a METADATA
	// column is read in its key's type and cast to its own.
	physScope := &scope{}
	var src []*expr.Expr
	cast := false
	p := 0
	for _, c := range tbl.Columns {
		if c.Computed() {
			continue
		}
		col := expr.Column(p, phys[p].Type)
		if !phys[p].Type.WithNullable(true).Equal(c.Type.WithNullable(true)) {
			col, cast = expr.Cast(col, c.Type), true
		} else if c.Metadata != "" {
			// NB: a NOT NULL key read into a nullable column.
			col = expr.Column(p, c.Type)
		}
		src = append(src, col)
		physScope.cols = append(physScope.cols, scopeColumn{name: c.Name, typ: c.Type})
		p++
	}
	scan := &scanNode{table: tbl, phys: phys, rowtime: -1}
	computed := cast
	p = 0
	for _, c := range tbl.Columns {
		if !c.Computed() {
			scan.exprs = append(scan.exprs, src[p])
			scan.out = append(scan.out, types.Field{Name: c.Name, Type: c.Type})
			p++
			continue
		}
		computed = true
		ae, err := parser.ParseExpr(c.Expr)
		if err != nil {
			return nil, fmt.Errorf("computed column %s of table %s.%s: %v", c.Name, tbl.Database, tbl.Name, err)
		}
		e, err := bindExpr(physScope, ae)
		if err != nil {
			return nil, fmt.Errorf("computed column %s of table %s.%s: %v", c.Name, tbl.Database, tbl.Name, err)
		}
		if cast {
			e = substituteColumns(e, 0, src)
		}
		scan.exprs = append(scan.exprs, e)
		scan.out = append(scan.out, types.Field{Name: c.Name, Type: e.Type})
	}
	if !computed {
		scan.exprs = nil
	}
	if w := tbl.Watermark; w != nil {
		all := &scope{}
		for i, f := range scan.out {
			all.cols = append(all.cols, scopeColumn{name: f.Name, typ: f.Type})
			if f.Name == w.Column {
				scan.rowtime = i
			}
		}
		ae, err := parser.ParseExpr(w.Expr)
		if err != nil {
			return nil, fmt.Errorf("watermark of table %s.%s: %v", tbl.Database, tbl.Name, err)
		}
		if scan.watermark, err = bindExpr(all, ae); err != nil {
			return nil, fmt.Errorf("watermark of table %s.%s: %v", tbl.Database, tbl.Name, err)
		}
		if scan.rowtime < 0 {
			return nil, fmt.Errorf("watermark column %s is not a column of table %s.%s", w.Column, tbl.Database, tbl.Name)
		}
	}
	return scan, nil
}
