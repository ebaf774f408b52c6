package planner

import (
	"context"
	"fmt"
	"strings"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
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
		return nil, fmt.Errorf("planner: internal error: BuildTable of CREATE TABLE ... AS SELECT (PlanCreateTableAs plans it)")
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
	var metadata []*ast.ColumnDef
	for _, c := range s.Columns {
		if seen[c.Name.Name] {
			return nil, errorf(c.Name.Pos, "column %s is defined twice", c.Name.Name)
		}
		seen[c.Name.Name] = true
		if c.Expr != nil {
			continue
		}
		dt, err := bindType(c.Type)
		if err != nil {
			return nil, err
		}
		col := catalog.Column{Name: c.Name.Name, Type: dt, Comment: c.Comment}
		if c.Metadata {
			col.Metadata, col.Virtual = c.MetadataKey, c.Virtual
			if col.Metadata == "" {
				col.Metadata = c.Name.Name
			}
			metadata = append(metadata, c)
		}
		t.Columns = append(t.Columns, col)
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
	for _, c := range metadata {
		if err := checkMetadataColumn(t, c); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// checkMetadataColumn checks a METADATA column of t against the metadata
// its connector's source offers, as Flink's DynamicSourceUtils does: the
// key must be one of them and the column's type one it casts to.
func checkMetadataColumn(t *catalog.Table, c *ast.ColumnDef) error {
	var col catalog.Column
	for _, tc := range t.Columns {
		if tc.Name == c.Name.Name {
			col = tc
		}
	}
	conn := t.Connector()
	keys := jobgraph.ReadableMetadata(conn)
	if keys == nil {
		what := "a managed table"
		if conn != "" {
			what = "the '" + conn + "' connector"
		}
		return errorf(c.Pos, "table '%s' declares metadata column %s, but %s has no metadata to read (the kafka connector has)", qualified(t), c.Name.Name, what)
	}
	k, ok := jobgraph.LookupMetadata(conn, col.Metadata)
	if !ok {
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = k.Name
		}
		return errorf(c.Pos, "Invalid metadata key '%s' in column '%s' of table '%s'. The %s connector supports the following metadata keys for reading: %s",
			col.Metadata, col.Name, qualified(t), conn, strings.Join(names, ", "))
	}
	if !expr.CanCast(k.Type, col.Type) {
		return errorf(c.Pos, "Invalid data type for metadata column '%s' of table '%s'. The column cannot be declared as '%s' because the type must be castable from metadata type '%s'.",
			col.Name, qualified(t), col.Type, k.Type)
	}
	return nil
}

// PlanCreateTableAs plans CREATE TABLE ... AS SELECT (Flink's CTAS): it
// returns the table, in database, with the query's column names and types
// and the statement's options, and the job that writes the query's rows
// into it. Nothing is created: the caller creates the table, then submits
// the job, so a query that fails to plan leaves no table behind.
func (p *Planner) PlanCreateTableAs(ctx context.Context, s *ast.CreateTableStmt, database string, createdUnixMs int64, sql string) (*catalog.Table, *Plan, error) {
	plan, tables, err := p.PlanStatementSet(ctx, []SetStatement{{CreateAs: s, Database: database, CreatedUnixMs: createdUnixMs}}, sql)
	if err != nil {
		return nil, nil, err
	}
	return tables[0], plan, nil
}

// planCreateTableAs adds the pipeline of CTAS s to ph's graph and returns
// its sink's stream and the table it would create.
func (p *Planner) planCreateTableAs(ctx context.Context, ph *physical, s *ast.CreateTableStmt, database string, createdUnixMs int64) (*stream, *catalog.Table, error) {
	switch {
	case s.Temporary:
		return nil, nil, errorf(s.Pos, "CREATE TABLE AS SELECT syntax does not support to create temporary table yet.")
	case len(s.Columns) > 0:
		return nil, nil, unsupported(s.Columns[0].Pos, "column definitions in CREATE TABLE ... AS SELECT")
	case len(s.Watermarks) > 0:
		return nil, nil, unsupported(s.Watermarks[0].Pos, "a WATERMARK in CREATE TABLE ... AS SELECT")
	case s.PrimaryKey != nil:
		return nil, nil, unsupported(s.PrimaryKey.Pos, "a PRIMARY KEY in CREATE TABLE ... AS SELECT")
	case len(s.PartitionedBy) > 0:
		return nil, nil, unsupported(s.PartitionedBy[0].Pos, "PARTITIONED BY")
	case s.Like != nil:
		return nil, nil, unsupported(s.Like.Pos, "CREATE TABLE ... LIKE")
	}
	b := p.binder(ctx)
	n, err := b.bindQuery(s.AsQuery)
	if err != nil {
		return nil, nil, err
	}
	t := &catalog.Table{
		Database:      database,
		Name:          s.Name.Object(),
		Comment:       s.Comment,
		CreatedUnixMs: createdUnixMs,
		Options:       map[string]string{},
	}
	for _, f := range n.schema() {
		if f.Type.Kind == types.KindNull {
			return nil, nil, errorf(s.AsQuery.Pos, "column %s of the query has type NULL: CAST it to the type the table's column should have", f.Name)
		}
		t.Columns = append(t.Columns, catalog.Column{Name: f.Name, Type: f.Type})
	}
	for _, o := range s.Options {
		if _, dup := t.Options[o.Key]; dup {
			return nil, nil, errorf(o.Pos, "option '%s' is given twice", o.Key)
		}
		t.Options[o.Key] = o.Value
	}
	ins := &ast.InsertStmt{StmtBase: s.StmtBase, Table: s.Name, Query: s.AsQuery}
	if n, err = fitToSink(n, t, ins); err != nil {
		return nil, nil, err
	}
	st, err := p.sinkInto(ph, n, t, s.Name.Pos)
	if err != nil {
		return nil, nil, err
	}
	return st, t, nil
}

// DescribeTable renders a table's columns as SHOW CREATE TABLE would.
func DescribeTable(t *catalog.Table) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "CREATE TABLE `%s`.`%s`.`%s` (\n", catalog.DefaultCatalog, t.Database, t.Name)
	for i, c := range t.Columns {
		switch {
		case c.Computed():
			fmt.Fprintf(&sb, "  `%s` AS %s", c.Name, c.Expr)
		case c.Metadata != "":
			fmt.Fprintf(&sb, "  `%s` %s METADATA", c.Name, c.Type)
			if c.Metadata != c.Name {
				fmt.Fprintf(&sb, " FROM '%s'", c.Metadata)
			}
			if c.Virtual {
				sb.WriteString(" VIRTUAL")
			}
		default:
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
