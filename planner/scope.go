package planner

import (
	"slices"
	"strings"

	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// scopeColumn is a column visible to expressions: the relation alias it
// belongs to, its name, its type and its index in the input row.
type scopeColumn struct {
	table string
	name  string
	typ   types.DataType
	// rowtime marks the relation's rowtime attribute (its table's
	// WATERMARK FOR column, passed through unchanged), which
	// CURRENT_WATERMARK takes.
	rowtime bool
}

// scope lists the columns an expression may reference, in input order.
type scope struct {
	cols []scopeColumn
	// aggs collects the aggregate calls of a SELECT list or HAVING clause;
	// nil where aggregates are not allowed, and noAgg then says why.
	aggs  *aggBinder
	noAgg string
	// over collects the OVER aggregates of a SELECT list; nil elsewhere.
	over *overBinder
	// star, when set, lists the columns SELECT * shows, in order: a join
	// USING columns shows each of them once (see bindUsing). merged maps
	// the name of such a column to the one an unqualified reference means.
	star   []int
	merged map[string]int
	// outer, in a correlated subquery, is the scope of the query around
	// it, whose columns end cols; a reference resolves in the subquery's
	// own columns first (bind_subquery.go). scalars maps each scalar
	// subquery of a SELECT to the column holding its value.
	outer   *scope
	scalars map[*ast.Subquery]int
	// pieces maps parts of a HAVING conjunct that holds a subquery to the
	// aggregate's hidden column computing them (bind_having.go).
	pieces map[ast.Expr]int
}

// markRowtime marks the columns of sc that are rowtime attributes of n
// (see timeAttrs); sc holds n's columns in order.
func (s *scope) markRowtime(n node) *scope {
	if a, ok := n.(*aggNode); ok {
		if r := aggTimeAttrs(a).rowtime; r >= 0 && r < len(s.cols) {
			s.cols[r].rowtime = true
		}
		return s
	}
	for c := range s.cols {
		if timeKindOf(n, c) == rowtimeAttr {
			s.cols[c].rowtime = true
		}
	}
	return s
}

// withAggs returns s collecting aggregate calls into a.
func (s *scope) withAggs(a *aggBinder) *scope {
	c := *s
	c.aggs, c.noAgg = a, ""
	return &c
}

// withoutAggs returns s refusing aggregate calls with the message msg.
func (s *scope) withoutAggs(msg string) *scope {
	c := *s
	c.aggs, c.noAgg, c.over = nil, msg, nil
	return &c
}

func (s *scope) schema() types.Schema {
	out := make(types.Schema, len(s.cols))
	for i, c := range s.cols {
		out[i] = types.Field{Name: c.name, Type: c.typ}
	}
	return out
}

// concat returns the scope of a join: l's columns, then r's. What SELECT *
// shows of each side, and its merged USING columns, carry over.
func concat(l, r *scope) *scope {
	cols := make([]scopeColumn, 0, len(l.cols)+len(r.cols))
	cols = append(cols, l.cols...)
	cols = append(cols, r.cols...)
	out := &scope{cols: cols}
	if l.star != nil || r.star != nil {
		out.star = append(l.visible(), r.visible()...)
		for i := len(l.visible()); i < len(out.star); i++ {
			out.star[i] += len(l.cols)
		}
	}
	if len(l.merged)+len(r.merged) > 0 {
		out.merged = map[string]int{}
		for n, c := range l.merged {
			out.merged[n] = c
		}
		for n, c := range r.merged {
			if _, both := out.merged[n]; both {
				// NB: both sides merged a column of this name; a bare
				// reference to it is then ambiguous, as resolve says.
				delete(out.merged, n)
				continue
			}
			out.merged[n] = c + len(l.cols)
		}
	}
	return out
}

// visible returns the columns SELECT * shows.
func (s *scope) visible() []int {
	if s.star != nil {
		return slices.Clone(s.star)
	}
	out := make([]int, len(s.cols))
	for i := range out {
		out[i] = i
	}
	return out
}

// withAlias returns s with every column belonging to alias.
func (s *scope) withAlias(alias string) *scope {
	cols := make([]scopeColumn, len(s.cols))
	for i, c := range s.cols {
		c.table = alias
		cols[i] = c
	}
	return &scope{cols: cols}
}

// resolve finds the column a reference names. Identifiers are case-sensitive,
// as in Flink; a near miss is suggested.
func (s *scope) resolve(ref *ast.ColumnRef) (int, error) {
	if s.outer != nil {
		return s.resolveCorrelated(ref)
	}
	var table, name string
	switch len(ref.Parts) {
	case 1:
		name = ref.Parts[0].Name
	case 2:
		table, name = ref.Parts[0].Name, ref.Parts[1].Name
	default:
		return 0, unsupported(ref.Pos, "column reference "+ref.String())
	}
	if c, ok := s.merged[name]; ok && table == "" {
		return c, nil
	}
	found := -1
	for i, c := range s.cols {
		if c.name != name || (table != "" && c.table != table) {
			continue
		}
		if found >= 0 {
			return 0, errorf(ref.Pos, "column %q is ambiguous: it exists in %s and %s; qualify it with a table alias",
				name, s.cols[found].table, c.table)
		}
		found = i
	}
	if found >= 0 {
		return found, nil
	}
	if table != "" && !s.hasTable(table) {
		return 0, errorf(ref.Parts[0].Pos, "unknown table alias %q in %s (tables in scope: %s)",
			table, ref.String(), strings.Join(s.tables(), ", "))
	}
	msg := "unknown column \"" + ref.String() + "\""
	if sug := s.suggest(table, name); sug != "" {
		msg += " (did you mean \"" + sug + "\"?)"
	}
	return 0, errorf(ref.Pos, "%s", msg)
}

func (s *scope) hasTable(t string) bool {
	for _, c := range s.cols {
		if c.table == t {
			return true
		}
	}
	return false
}

func (s *scope) tables() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range s.cols {
		if c.table != "" && !seen[c.table] {
			seen[c.table] = true
			out = append(out, c.table)
		}
	}
	return out
}

// suggest returns the closest column name (by case-insensitive match or
// edit distance at most 2), qualified as the reference was.
func (s *scope) suggest(table, name string) string {
	best, bestDist := "", 3
	for _, c := range s.cols {
		if table != "" && c.table != table {
			continue
		}
		d := types.EditDistance(strings.ToLower(c.name), strings.ToLower(name))
		if strings.EqualFold(c.name, name) {
			d = 0
		}
		if d < bestDist {
			best, bestDist = c.name, d
			if table != "" {
				best = table + "." + c.name
			}
		}
	}
	return best
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
