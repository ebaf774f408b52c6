package planner

import (
	"context"
	"fmt"
	"strings"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/sql/ast"
)

// BuildView plans the query of a CREATE VIEW, so that a broken view is
// refused where it is written, and returns the view to store in database
// db: its query as SQL text and its columns, named by the statement's
// column list when it has one.
func (p *Planner) BuildView(ctx context.Context, st *ast.CreateViewStmt, db string, createdUnixMs int64) (*catalog.Table, error) {
	b := p.binder(ctx)
	n, err := b.bindQuery(st.Query)
	if err != nil {
		return nil, err
	}
	s := n.schema()
	names := s.Names()
	if len(st.Columns) > 0 {
		if len(st.Columns) != len(s) {
			def := make([]string, len(st.Columns))
			for i, c := range st.Columns {
				def[i] = c.Name
			}
			return nil, errorf(st.Name.Pos, "VIEW definition and input fields not match:\n\tDef fields: [%s].\n\tInput fields: [%s].",
				strings.Join(def, ", "), strings.Join(names, ", "))
		}
		for i, c := range st.Columns {
			names[i] = c.Name
		}
	}
	seen := map[string]bool{}
	t := &catalog.Table{
		Database:      db,
		Name:          st.Name.Object(),
		Comment:       st.Comment,
		Temporary:     st.Temporary,
		View:          &catalog.View{Query: st.Query.String()},
		CreatedUnixMs: createdUnixMs,
	}
	for i, f := range s {
		if seen[names[i]] {
			return nil, errorf(st.Name.Pos, "view %s has two columns named %s; name them with a column list", t.Name, names[i])
		}
		seen[names[i]] = true
		t.Columns = append(t.Columns, catalog.Column{Name: names[i], Type: f.Type})
	}
	return t, nil
}

// DescribeView returns the CREATE VIEW statement of v, as SHOW CREATE VIEW
// prints it.
func DescribeView(v *catalog.Table) string {
	var b strings.Builder
	b.WriteString("CREATE ")
	if v.Temporary {
		b.WriteString("TEMPORARY ")
	}
	fmt.Fprintf(&b, "VIEW %s.%s.%s (\n", ast.QuoteIdent(catalog.DefaultCatalog), ast.QuoteIdent(v.Database), ast.QuoteIdent(v.Name))
	for i, c := range v.Columns {
		sep := ","
		if i == len(v.Columns)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "  %s%s\n", ast.QuoteIdent(c.Name), sep)
	}
	b.WriteString(")\n")
	if v.Comment != "" {
		fmt.Fprintf(&b, "COMMENT '%s'\n", strings.ReplaceAll(v.Comment, "'", "''"))
	}
	fmt.Fprintf(&b, "AS %s\n", v.View.Query)
	return b.String()
}
