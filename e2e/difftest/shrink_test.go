package difftest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/sql/parser"
)

// failure is how a query failed the comparison: the engine failed to run
// it (err), or its result differs from the reference's.
type failure struct {
	sql       string
	want, got *result
	err       error
	what      string
}

// sameKind reports whether f is the same kind of failure as g, which a
// shrunk case must keep: an engine error, or a difference of results.
func (f *failure) sameKind(g *failure) bool { return (f.err == nil) == (g.err == nil) }

// checker runs one query against the engine and the reference.
type checker struct {
	e           *engine
	parallelism int
	newDB       func() string
}

// check returns the query's failure, nil when engine and reference agree,
// or an error when the reference itself cannot evaluate it (a candidate
// the shrinker made invalid, or a bug of the test) or the setup failed.
func (c *checker) check(ctx context.Context, tables []*tableSpec, db, sql string) (*failure, error) {
	want, err := refResult(tables, sql)
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	got, err := c.e.query(qctx, sql)
	cancel()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return &failure{sql: sql, want: want, err: err, what: "the engine failed: " + err.Error()}, nil
	}
	if d := diff(want, got); d != "" {
		return &failure{sql: sql, want: want, got: got, what: d}, nil
	}
	return nil, nil
}

// attempt loads tables into a fresh database and checks sql there.
func (c *checker) attempt(ctx context.Context, tables []*tableSpec, sql string) (*failure, error) {
	if _, err := refResult(tables, sql); err != nil {
		return nil, err // not a valid candidate: save the engine the run
	}
	db := c.newDB()
	if err := c.e.load(ctx, db, tables, c.parallelism); err != nil {
		return nil, err
	}
	defer c.e.drop(ctx, db)
	return c.check(ctx, tables, db, sql)
}

// queryTimeout bounds one query on the engine; a query that takes longer
// is reported as failed.
const queryTimeout = time.Minute

// maxShrinkAttempts bounds the engine runs one shrink makes.
const maxShrinkAttempts = 150

// shrink makes f's case smaller while it keeps failing the same way:
// simpler query (fewer conjuncts, select items, joins, branches, simpler
// expressions), fewer tables, rows and columns. It returns the smallest
// failing case found.
func (c *checker) shrink(ctx context.Context, tables []*tableSpec, f *failure) ([]*tableSpec, *failure) {
	attempts := 0
	try := func(ts []*tableSpec, sql string) bool {
		if attempts >= maxShrinkAttempts || ctx.Err() != nil {
			return false
		}
		if _, err := refResult(ts, sql); err != nil {
			return false
		}
		attempts++
		g, err := c.attempt(ctx, ts, sql)
		if err != nil || g == nil || !g.sameKind(f) {
			return false
		}
		tables, f = ts, g
		return true
	}
	shrinkQuery := func() {
		for progress := true; progress; {
			progress = false
			for _, cand := range queryCandidates(f.sql) {
				if try(tables, cand) {
					progress = true
					break
				}
			}
		}
	}
	shrinkQuery()
	// Tables the query does not read, then unread columns.
	used := usedNames(f.sql)
	var kept []*tableSpec
	for _, t := range tables {
		if used[t.name] {
			kept = append(kept, t)
		}
	}
	if len(kept) < len(tables) {
		try(kept, f.sql)
	}
	if ts := dropColumns(tables, used); ts != nil {
		try(ts, f.sql)
	}
	// Rows: each table emptied, then ever smaller chunks removed.
	for ti := range tables {
		for chunk := len(tables[ti].rows); chunk >= 1; chunk /= 2 {
			for start := 0; start < len(tables[ti].rows); {
				ts := withRows(tables, ti, slices.Delete(slices.Clone(tables[ti].rows), start, min(start+chunk, len(tables[ti].rows))))
				if !try(ts, f.sql) {
					start += chunk
				}
			}
		}
	}
	shrinkQuery()
	return tables, f
}

// withRows returns tables with table i's rows replaced.
func withRows(tables []*tableSpec, i int, rows [][]value) []*tableSpec {
	out := slices.Clone(tables)
	t := *out[i]
	t.rows = rows
	out[i] = &t
	return out
}

// usedNames is every identifier a query names: tables, columns, aliases.
func usedNames(sql string) map[string]bool {
	st, err := parser.ParseStatement(sql)
	if err != nil {
		return nil
	}
	used := map[string]bool{}
	ast.Inspect(st, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			used[id.Name] = true
		}
		switch n := n.(type) {
		case *ast.ObjectName:
			for _, p := range n.Parts {
				used[p.Name] = true
			}
		case *ast.ColumnRef:
			for _, p := range n.Parts {
				used[p.Name] = true
			}
		case *ast.Descriptor:
			for _, p := range n.Columns {
				used[p.Name] = true
			}
		}
		return true
	})
	return used
}

// dropColumns returns tables without the columns no identifier of the
// query names, or nil when there are none.
func dropColumns(tables []*tableSpec, used map[string]bool) []*tableSpec {
	changed := false
	var out []*tableSpec
	for _, t := range tables {
		nt := &tableSpec{name: t.name, watermark: t.watermark}
		var keep []int
		for i, c := range t.cols {
			if used[c.name] || c.name == t.watermark {
				keep = append(keep, i)
				nt.cols = append(nt.cols, c)
			}
		}
		if len(keep) == 0 {
			keep, nt.cols = []int{0}, t.cols[:1]
		}
		changed = changed || len(keep) < len(t.cols)
		for _, row := range t.rows {
			var nr []value
			for _, i := range keep {
				nr = append(nr, row[i])
			}
			nt.rows = append(nt.rows, nr)
		}
		out = append(out, nt)
	}
	if !changed {
		return nil
	}
	return out
}

// queryCandidates are the simplifications of sql one step away: each is
// the query with one mutation applied. Mutation i is found by walking a
// fresh parse of sql, so candidates do not share nodes.
func queryCandidates(sql string) []string {
	var out []string
	for i := 0; ; i++ {
		st, err := parser.ParseStatement(sql)
		if err != nil {
			return out
		}
		muts := mutations(st)
		if i >= len(muts) {
			return out
		}
		muts[i]()
		if s := st.String(); s != sql && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
}

// mutations lists the in-place simplifications of st, bigger steps first.
func mutations(st ast.Statement) []func() {
	var big, small []func()
	ast.Inspect(st, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Query:
			if so, ok := n.Body.(*ast.SetOp); ok {
				big = append(big, func() { n.Body = so.L }, func() { n.Body = so.R })
			}
		case *ast.SetOp:
			for _, side := range []*ast.QueryExpr{&n.L, &n.R} {
				if so, ok := (*side).(*ast.SetOp); ok {
					big = append(big, func() { *side = so.L }, func() { *side = so.R })
				}
			}
		case *ast.Select:
			big = append(big, tableMutations(&n.From)...)
			if n.Where != nil {
				big = append(big, func() { n.Where = nil })
				small = append(small, exprMutations(&n.Where)...)
			}
			if n.Having != nil {
				big = append(big, func() { n.Having = nil })
				small = append(small, exprMutations(&n.Having)...)
			}
			if n.Distinct {
				big = append(big, func() { n.Distinct = false })
			}
			for i := range n.Items {
				if len(n.Items) > 1 {
					big = append(big, func() { n.Items = slices.Delete(slices.Clone(n.Items), i, i+1) })
				}
				small = append(small, exprMutations(&n.Items[i].Expr)...)
			}
		case *ast.Join:
			big = append(big, tableMutations(&n.L)...)
			big = append(big, tableMutations(&n.R)...)
			if n.On != nil {
				small = append(small, exprMutations(&n.On)...)
			}
		case *ast.ParenTable:
			big = append(big, tableMutations(&n.Table)...)
		}
		return true
	})
	return append(big, small...)
}

// tableMutations replace a join held in *t by one of its inputs.
func tableMutations(t *ast.TableExpr) []func() {
	j, ok := (*t).(*ast.Join)
	if !ok {
		return nil
	}
	return []func(){func() { *t = j.L }, func() { *t = j.R }}
}

// exprMutations replace the expression held in *e by a part of it: a
// conjunct, an operand, a branch.
func exprMutations(e *ast.Expr) []func() {
	var parts []ast.Expr
	switch x := (*e).(type) {
	case *ast.Binary:
		parts = []ast.Expr{x.L, x.R}
	case *ast.Unary:
		parts = []ast.Expr{x.X}
	case *ast.Case:
		for _, w := range x.Whens {
			parts = append(parts, w.Result)
		}
		if x.Else != nil {
			parts = append(parts, x.Else)
		}
	case *ast.FuncCall:
		if !isAggregate(x) {
			parts = x.Args
		} else if x.Filter != nil {
			return []func(){func() { x.Filter = nil }}
		} else if x.Distinct {
			return []func(){func() { x.Distinct = false }}
		}
	}
	var out []func()
	for _, p := range parts {
		out = append(out, func() { *e = p })
	}
	return out
}

// report prints a shrunk failure: a script that reproduces it and the
// expected and actual results.
func report(tables []*tableSpec, f *failure, parallelism int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n--- repro.sql (braid sql --local -f repro.sql --format tsv)\n%s", f.what, script(tables, f.sql, parallelism))
	fmt.Fprintf(&b, "--- expected (reference)\n%s", f.want)
	if f.err != nil {
		fmt.Fprintf(&b, "--- actual: error\n  %v\n", f.err)
	} else {
		fmt.Fprintf(&b, "--- actual (engine)\n%s", f.got)
	}
	return b.String()
}
