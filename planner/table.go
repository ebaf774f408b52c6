package planner

import (
	"fmt"
	"strings"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// BuildTable checks a CREATE TABLE statement and returns the table it
// defines in database. Computed column and watermark expressions are bound
// against the physical columns here, so a bad one fails at CREATE time;
// they are stored as SQL text.
func BuildTable(s *ast.CreateTableStmt, database string, createdUnixMs int64) (*catalog.Table, error) {
	if s.Like != nil {
		return nil, unsupported(s.Like.Pos, "CREATE TABLE ... LIKE")
	}
	if s.AsQuery != nil {
		return nil, unsupported(s.AsQuery.Pos, "CREATE TABLE ... AS SELECT")
	}
	if len(s.PartitionedBy) > 0 {
		return nil, unsupported(s.PartitionedBy[0].Pos, "PARTITIONED BY")
	}
	if len(s.Columns) == 0 {
		return nil, errorf(s.Pos, "table %s has no columns", s.Name.Object())
	}
	t := &catalog.Table{
		Database:      database,
		Name:          s.Name.Object(),
		Comment:       s.Comment,
		Temporary:     s.Temporary,
		CreatedUnixMs: createdUnixMs,
		Options:       map[string]string{},
	}
	seen := map[string]bool{}
	phys := &scope{}
	for _, c := range s.Columns {
		if seen[c.Name.Name] {
			return nil, errorf(c.Name.Pos, "column %s is defined twice", c.Name.Name)
		}
		seen[c.Name.Name] = true
		if c.Metadata {
			return nil, unsupported(c.Pos, "METADATA columns")
		}
		if c.Expr != nil {
			continue
		}
		dt, err := bindType(c.Type)
		if err != nil {
			return nil, err
		}
		t.Columns = append(t.Columns, catalog.Column{Name: c.Name.Name, Type: dt, Comment: c.Comment})
		phys.cols = append(phys.cols, scopeColumn{name: c.Name.Name, typ: dt})
	}
	// Computed columns, in declaration order among the physical ones.
	var cols []catalog.Column
	p := 0
	for _, c := range s.Columns {
		if c.Expr == nil {
			cols = append(cols, t.Columns[p])
			p++
			continue
		}
		e, err := bindExpr(phys, c.Expr)
		if err != nil {
			return nil, err
		}
		cols = append(cols, catalog.Column{Name: c.Name.Name, Type: e.Type, Expr: c.Expr.String(), Comment: c.Comment})
	}
	t.Columns = cols
	all := &scope{}
	for _, c := range cols {
		all.cols = append(all.cols, scopeColumn{name: c.Name, typ: c.Type})
	}
	// Primary key: table level or on one column, always NOT ENFORCED.
	var pkCols []*ast.Ident
	for _, c := range s.Columns {
		if c.PrimaryKey {
			if !c.NotEnforced {
				return nil, errorf(c.Pos, "Flink doesn't support ENFORCED mode for PRIMARY KEY constraint: write PRIMARY KEY NOT ENFORCED")
			}
			pkCols = append(pkCols, c.Name)
		}
	}
	if s.PrimaryKey != nil {
		if len(pkCols) > 0 {
			return nil, errorf(s.PrimaryKey.Pos, "table %s declares its primary key twice", t.Name)
		}
		if !s.PrimaryKey.NotEnforced {
			return nil, errorf(s.PrimaryKey.Pos, "Flink doesn't support ENFORCED mode for PRIMARY KEY constraint: write PRIMARY KEY (...) NOT ENFORCED")
		}
		pkCols = s.PrimaryKey.Columns
	}
	for _, k := range pkCols {
		found := false
		for i, c := range t.Columns {
			if c.Name == k.Name {
				if c.Computed() {
					return nil, errorf(k.Pos, "primary key column %s is a computed column", k.Name)
				}
				// Primary key columns are NOT NULL.
				t.Columns[i].Type.NotNull = true
				found = true
			}
		}
		if !found {
			return nil, errorf(k.Pos, "primary key column %s is not a column of %s", k.Name, t.Name)
		}
		t.PrimaryKey = append(t.PrimaryKey, k.Name)
	}
	if len(s.Watermarks) > 1 {
		return nil, errorf(s.Watermarks[1].Pos, "a table can have only one WATERMARK")
	}
	for _, w := range s.Watermarks {
		i, err := all.resolve(&ast.ColumnRef{Pos: w.Column.Pos, Parts: []*ast.Ident{w.Column}})
		if err != nil {
			return nil, err
		}
		if ct := all.cols[i].typ; ct.Kind != types.KindTimestamp && ct.Kind != types.KindTimestampLTZ {
			return nil, errorf(w.Column.Pos, "watermark column %s must be TIMESTAMP(3) or TIMESTAMP_LTZ(3), got %s", w.Column.Name, ct)
		}
		e, err := bindExpr(all, w.Expr)
		if err != nil {
			return nil, err
		}
		if !e.Type.IsTimestamp() {
			return nil, errorf(w.Expr.Position(), "watermark expression must return a timestamp, got %s", e.Type)
		}
		t.Watermark = &catalog.Watermark{Column: w.Column.Name, Expr: w.Expr.String()}
	}
	for _, o := range s.Options {
		if _, dup := t.Options[o.Key]; dup {
			return nil, errorf(o.Pos, "option '%s' is given twice", o.Key)
		}
		t.Options[o.Key] = o.Value
	}
	return t, nil
}

// DescribeTable renders a table's columns as SHOW CREATE TABLE would.
func DescribeTable(t *catalog.Table) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "CREATE TABLE `%s`.`%s`.`%s` (\n", catalog.DefaultCatalog, t.Database, t.Name)
	for i, c := range t.Columns {
		if c.Computed() {
			fmt.Fprintf(&sb, "  `%s` AS %s", c.Name, c.Expr)
		} else {
			fmt.Fprintf(&sb, "  `%s` %s", c.Name, c.Type)
		}
		if i < len(t.Columns)-1 || t.Watermark != nil || len(t.PrimaryKey) > 0 {
			sb.WriteString(",")
		}
		sb.WriteString("\n")
	}
	if t.Watermark != nil {
		fmt.Fprintf(&sb, "  WATERMARK FOR `%s` AS %s", t.Watermark.Column, t.Watermark.Expr)
		if len(t.PrimaryKey) > 0 {
			sb.WriteString(",")
		}
		sb.WriteString("\n")
	}
	if len(t.PrimaryKey) > 0 {
		fmt.Fprintf(&sb, "  PRIMARY KEY (`%s`) NOT ENFORCED\n", strings.Join(t.PrimaryKey, "`, `"))
	}
	sb.WriteString(")")
	if len(t.Options) > 0 {
		sb.WriteString(" WITH (\n")
		keys := make([]string, 0, len(t.Options))
		for k := range t.Options {
			keys = append(keys, k)
		}
		sortStrings(keys)
		for i, k := range keys {
			fmt.Fprintf(&sb, "  '%s' = '%s'", k, t.Options[k])
			if i < len(keys)-1 {
				sb.WriteString(",")
			}
			sb.WriteString("\n")
		}
		sb.WriteString(")")
	}
	return sb.String()
}
