package planner

import (
	"errors"
	"strings"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/sql/parser"
)

// maxViewDepth bounds how deep views may read other views. A view is
// planned when it is created, so it cannot read itself, but the limit keeps
// a catalog edited by other means from recursing without end.
const maxViewDepth = 32

// cteFrame is one common table expression in scope: a WITH item and the
// frames its query may read (the CTEs before it in its WITH and those of
// enclosing queries). Frames form a chain from the innermost outwards.
type cteFrame struct {
	parent *cteFrame
	cte    *ast.CTE
}

// lookup returns the innermost CTE called name, or nil.
func (f *cteFrame) lookup(name string) *cteFrame {
	for ; f != nil; f = f.parent {
		if f.cte.Name.Name == name {
			return f
		}
	}
	return nil
}

// bindWith binds a query with a WITH clause: its CTEs come into scope one
// after another, then the query itself is bound. A CTE is not planned
// here but wherever it is read (inlining, as Flink does): each reference
// plans its query again.
func (b *binder) bindWith(q *ast.Query) (node, error) {
	saved := b.ctes
	defer func() { b.ctes = saved }()
	seen := map[string]bool{}
	for _, c := range q.With {
		if seen[c.Name.Name] {
			return nil, errorf(c.Name.Pos, "Duplicate name '%s' in WITH clause", c.Name.Name)
		}
		seen[c.Name.Name] = true
		b.ctes = &cteFrame{parent: b.ctes, cte: c}
		// NB: bound once here so that a broken CTE is refused even when
		// nothing reads it, as Flink validates every WITH item.
		if _, _, err := b.bindCTERef(&ast.TableName{Pos: c.Pos, Name: &ast.ObjectName{Parts: []*ast.Ident{c.Name}}}, b.ctes); err != nil {
			return nil, err
		}
	}
	body := *q
	body.With = nil
	return b.bindQuery(&body)
}

// bindCTERef binds a reference to the CTE of f, read as t: the CTE's
// query bound in the scope of its definition, its columns renamed by the
// CTE's column list and then by t's alias.
func (b *binder) bindCTERef(t *ast.TableName, f *cteFrame) (node, *scope, error) {
	if t.SystemTime != nil {
		return nil, nil, unsupported(t.SystemTime.Position(), "FOR SYSTEM_TIME AS OF a common table expression")
	}
	if len(t.Hints) > 0 {
		return nil, nil, unsupported(t.Hints[0].Pos, "a hint on a common table expression")
	}
	saved := b.ctes
	b.ctes = f.parent
	n, err := b.bindQuery(f.cte.Query)
	b.ctes = saved
	if err != nil {
		return nil, nil, err
	}
	var names []string
	if len(f.cte.Columns) > 0 {
		if len(f.cte.Columns) != len(n.schema()) {
			return nil, nil, errorf(f.cte.Pos, "Number of columns must match number of query columns")
		}
		for _, c := range f.cte.Columns {
			names = append(names, c.Name)
		}
	}
	sc, err := relationScope(n, names, f.cte.Name.Name, t.Alias)
	return n, sc, err
}

// bindView binds a read of the view tbl as t: the view's stored query,
// parsed and planned again with no CTEs of the reading query in scope and
// its one-part table names in the view's own database.
// An error inside the view names the view at t and gives its position in
// the view's query.
func (b *binder) bindView(t *ast.TableName, tbl *catalog.Table) (node, *scope, error) {
	if t.SystemTime != nil {
		return nil, nil, unsupported(t.SystemTime.Position(), "FOR SYSTEM_TIME AS OF a view")
	}
	if len(t.Hints) > 0 {
		return nil, nil, unsupported(t.Hints[0].Pos, "a hint on a view")
	}
	name := tbl.Database + "." + tbl.Name
	if b.viewDepth >= maxViewDepth {
		return nil, nil, errorf(t.Name.Pos, "view %s: views nest deeper than %d", name, maxViewDepth)
	}
	st, err := parser.ParseStatement(tbl.View.Query)
	if err != nil {
		return nil, nil, errorf(t.Name.Pos, "view %s: %s", name, strings.TrimPrefix(err.Error(), "sql: "))
	}
	qs, ok := st.(*ast.QueryStmt)
	if !ok {
		return nil, nil, errorf(t.Name.Pos, "view %s does not hold a query", name)
	}
	saved, savedDB := b.ctes, b.database
	b.ctes, b.database = nil, tbl.Database
	b.viewDepth++
	n, err := b.bindQuery(qs.Query)
	b.viewDepth--
	b.ctes, b.database = saved, savedDB
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			return nil, nil, errorf(t.Name.Pos, "view %s: %s", name, strings.TrimPrefix(pe.Error(), "sql: "))
		}
		return nil, nil, err
	}
	if len(n.schema()) != len(tbl.Columns) {
		return nil, nil, errorf(t.Name.Pos, "view %s: its query now has %d columns, the view %d", name, len(n.schema()), len(tbl.Columns))
	}
	names := make([]string, len(tbl.Columns))
	for i, c := range tbl.Columns {
		names[i] = c.Name
	}
	sc, err := relationScope(n, names, tbl.Name, t.Alias)
	return n, sc, err
}

// relationScope is the scope of a named relation over n: columns named by
// names when given, belonging to table, then renamed by alias.
func relationScope(n node, names []string, table string, alias *ast.TableAlias) (*scope, error) {
	sc := &scope{}
	for i, f := range n.schema() {
		name := f.Name
		if names != nil {
			name = names[i]
		}
		sc.cols = append(sc.cols, scopeColumn{table: table, name: name, typ: f.Type})
	}
	sc.markRowtime(n)
	if alias != nil {
		return applyAlias(sc, alias)
	}
	return sc, nil
}
