package difftest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/types"
)

// result is a query's final result as a sorted list of rows, each row its
// cells joined by tabs (NULL as NULL), and the column types.
type result struct {
	types []typ
	rows  []string
	// bad lists retractions of rows the changelog never added.
	bad []string
}

func (r *result) String() string {
	var b strings.Builder
	var ts []string
	for _, t := range r.types {
		ts = append(ts, t.sqlName())
	}
	fmt.Fprintf(&b, "  columns: %s\n", strings.Join(ts, ", "))
	for _, row := range r.rows {
		b.WriteString("  " + row + "\n")
	}
	if len(r.rows) == 0 {
		b.WriteString("  (no rows)\n")
	}
	for _, x := range r.bad {
		b.WriteString("  retraction of an absent row: " + x + "\n")
	}
	return b.String()
}

// refResult evaluates sql with the reference.
func refResult(tables []*tableSpec, sql string) (*result, error) {
	rel, err := newRefEval(refTables(tables)).evalSQL(sql)
	if err != nil {
		return nil, err
	}
	res := &result{}
	for _, c := range rel.cols {
		res.types = append(res.types, c.t)
	}
	for _, row := range rel.rows {
		cells := make([]string, len(row))
		for i, v := range row {
			cells[i] = format(v, rel.cols[i].t)
		}
		res.rows = append(res.rows, strings.Join(cells, "\t"))
	}
	slices.Sort(res.rows)
	return res, nil
}

// diff says how got (the engine's) differs from want (the reference's),
// or "" when they agree. Types compare by family, and DECIMALs by scale:
// values print at their type's scale, so the rows compare exactly.
func diff(want, got *result) string {
	var ds []string
	if len(got.bad) > 0 {
		ds = append(ds, "the changelog retracts rows it never added")
	}
	if len(want.types) != len(got.types) {
		ds = append(ds, fmt.Sprintf("%d columns, want %d", len(got.types), len(want.types)))
	} else {
		for i := range want.types {
			w, g := want.types[i], got.types[i]
			if w.k != g.k || (w.k == kDec && w.s != g.s) {
				ds = append(ds, fmt.Sprintf("column %d is %s, want %s", i, g.sqlName(), w.sqlName()))
			}
		}
	}
	if !slices.Equal(want.rows, got.rows) {
		ds = append(ds, "the rows differ")
	}
	return strings.Join(ds, "; ")
}

// engineType maps a result column's type to the reference's types.
func engineType(t types.DataType) typ {
	switch t.Kind {
	case types.KindBoolean:
		return tBool
	case types.KindInt:
		return tInt
	case types.KindBigInt:
		return tBigInt
	case types.KindDecimal:
		return tDec(t.Precision, t.Scale)
	case types.KindChar, types.KindVarChar:
		return tStr
	case types.KindTimestamp:
		return tTs
	}
	return typ{k: kNull}
}

// collector is the client.Handler of one statement: it materializes the
// changelog of a query result into a multiset of rows (+I and +U add a
// row, -U and -D remove one).
type collector struct {
	cols  []client.ResultColumn
	loc   *time.Location
	live  map[string]int
	bad   []string
	cells []string
	seen  bool
}

var _ client.Handler = (*collector)(nil)

func (c *collector) Status(int, string, string) {}

func (c *collector) Schema(_ int, r client.ResultInfo) {
	c.cols, c.loc, c.seen = r.Columns, r.Location, true
	c.live = map[string]int{}
	c.cells = make([]string, len(r.Columns))
}

func (c *collector) Batch(_ int, b types.Batch) {
	for i := 0; i < b.NumRows(); i++ {
		for j, col := range c.cols {
			s, null := types.FormatValue(b.Column(j), i, col.Type, c.loc)
			if null {
				s = "NULL"
			}
			c.cells[j] = s
		}
		line := strings.Join(c.cells, "\t")
		switch {
		case b.Kind(i).IsAccumulate():
			c.live[line]++
		case c.live[line] == 0:
			c.bad = append(c.bad, b.Kind(i).String()+"["+line+"]")
		default:
			c.live[line]--
		}
	}
}

func (c *collector) End(int, string) {}

func (c *collector) result() *result {
	res := &result{bad: c.bad}
	for _, col := range c.cols {
		res.types = append(res.types, engineType(col.Type))
	}
	for line, n := range c.live {
		for range n {
			res.rows = append(res.rows, line)
		}
	}
	slices.Sort(res.rows)
	return res
}

// engine runs statements on one session of the cluster.
type engine struct {
	s *client.Session
}

// exec runs one statement that returns no rows worth keeping.
func (e *engine) exec(ctx context.Context, stmt string) error {
	if err := e.s.Execute(ctx, stmt, false, &collector{}); err != nil {
		return fmt.Errorf("%s: %w", stmt, err)
	}
	return nil
}

// query runs a bounded query and returns its materialized result.
func (e *engine) query(ctx context.Context, sql string) (*result, error) {
	c := &collector{}
	if err := e.s.Execute(ctx, sql, false, c); err != nil {
		return nil, err
	}
	if !c.seen {
		return nil, fmt.Errorf("the query returned no result")
	}
	return c.result(), nil
}

// load creates a case's tables in a fresh database of the session and
// switches to it.
func (e *engine) load(ctx context.Context, db string, tables []*tableSpec, parallelism int) error {
	stmts := []string{
		"CREATE DATABASE " + db,
		"USE " + db,
		fmt.Sprintf("SET 'parallelism.default' = '%d'", parallelism),
	}
	for _, st := range append(stmts, setupSQL(tables)...) {
		if err := e.exec(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

// drop removes a database made by load.
func (e *engine) drop(ctx context.Context, db string) {
	_ = e.exec(ctx, "USE default_database")
	_ = e.exec(ctx, "DROP DATABASE IF EXISTS "+db+" CASCADE")
}

// script is a self-contained reproducer: braid sql --local -f repro.sql
// --format tsv runs it.
func script(tables []*tableSpec, query string, parallelism int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "SET 'parallelism.default' = '%d';\n", parallelism)
	for _, st := range setupSQL(tables) {
		b.WriteString(st + ";\n")
	}
	b.WriteString(query + ";\n")
	return b.String()
}
