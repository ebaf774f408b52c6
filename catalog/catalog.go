package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/braidflow/braid/types"
)

// DefaultCatalog and DefaultDatabase are where a new session starts.
const (
	DefaultCatalog  = "default_catalog"
	DefaultDatabase = "default_database"
)

// Column is one column of a table. A computed column has Expr set (its SQL
// text, re-bound by the planner when the table is read) and is not stored.
type Column struct {
	Name string         `json:"name"`
	Type types.DataType `json:"type"`
	// Expr is the SQL text of a computed column's expression; empty for a
	// physical column.
	Expr string `json:"expr,omitempty"`
	// Metadata names a connector metadata key for METADATA columns.
	Metadata string `json:"metadata,omitempty"`
	Virtual  bool   `json:"virtual,omitempty"`
	Comment  string `json:"comment,omitempty"`
}

// Computed reports whether the column is computed from others.
func (c Column) Computed() bool { return c.Expr != "" }

// Proctime reports whether the column is a processing-time attribute:
// computed as PROCTIME(), as Flink declares one.
func (c Column) Proctime() bool {
	e := strings.Join(strings.Fields(c.Expr), "")
	return strings.EqualFold(e, "PROCTIME()")
}

// Watermark is a table's WATERMARK FOR declaration.
type Watermark struct {
	Column string `json:"column"`
	// Expr is the SQL text of the watermark expression.
	Expr string `json:"expr"`
}

// Table is a table or view definition as stored in the catalog. Tables and
// views share one namespace per database, as in Flink; a view has View set
// and Columns lists its result columns (names and types when it was
// created), with no options, keys or watermark.
type Table struct {
	Database   string            `json:"database"`
	Name       string            `json:"name"`
	Columns    []Column          `json:"columns"`
	PrimaryKey []string          `json:"primary_key,omitempty"`
	Watermark  *Watermark        `json:"watermark,omitempty"`
	Options    map[string]string `json:"options,omitempty"`
	Comment    string            `json:"comment,omitempty"`
	// Temporary tables live only in the session that created them.
	Temporary bool `json:"temporary,omitempty"`
	// View is set for a view: its query, expanded where the view is read.
	View *View `json:"view,omitempty"`
	// CreatedUnixMs orders definitions; a managed table's topic name includes it
	// so a dropped and re-created table starts empty.
	CreatedUnixMs int64 `json:"created_unix_ms"`
}

// View is what a view stores: the SQL text of its query, planned again
// wherever the view is read (Flink's expanded query). The view's column
// names, which a column list may have given, are the Table's Columns.
type View struct {
	Query string `json:"query"`
}

// IsView reports whether t is a view.
func (t *Table) IsView() bool { return t.View != nil }

// Connector returns the table's connector option, or "" for a managed table.
func (t *Table) Connector() string { return t.Options["connector"] }

// Managed reports whether the table is stored in the cluster's default log.
// A view is not: it stores nothing.
func (t *Table) Managed() bool { return t.View == nil && t.Connector() == "" }

// PhysicalSchema returns the stored (non-computed) columns.
func (t *Table) PhysicalSchema() types.Schema {
	var s types.Schema
	for _, c := range t.Columns {
		if !c.Computed() && c.Metadata == "" {
			s = append(s, types.Field{Name: c.Name, Type: c.Type})
		}
	}
	return s
}

// SourceSchema returns what a source of t reads: its physical and METADATA
// columns in declaration order, a METADATA column in the type metadata
// gives its key (the connector's), and, when t has METADATA columns, each
// column's key ("" for a physical column).
func (t *Table) SourceSchema(metadata func(key string) (types.DataType, bool)) (types.Schema, []string, error) {
	var s types.Schema
	var keys []string
	meta := false
	for _, c := range t.Columns {
		switch {
		case c.Computed():
			continue
		case c.Metadata != "":
			mt, ok := metadata(c.Metadata)
			if !ok {
				return nil, nil, fmt.Errorf("table %s.%s: METADATA column %s reads '%s', which its connector does not offer", t.Database, t.Name, c.Name, c.Metadata)
			}
			s, keys, meta = append(s, types.Field{Name: c.Name, Type: mt}), append(keys, c.Metadata), true
		default:
			s, keys = append(s, types.Field{Name: c.Name, Type: c.Type}), append(keys, "")
		}
	}
	if !meta {
		keys = nil
	}
	return s, keys, nil
}

// Errors a Store returns; callers match them with errors.Is.
var (
	ErrNotFound = errors.New("not found")
	ErrExists   = errors.New("already exists")
)

// Store persists databases and tables. metastore implements it over etcd;
// NewMemStore is the in-memory one used for temporary objects and tests.
// Names are matched exactly (the planner normalizes case).
type Store interface {
	CreateDatabase(ctx context.Context, name string) error
	DropDatabase(ctx context.Context, name string) error
	ListDatabases(ctx context.Context) ([]string, error)
	DatabaseExists(ctx context.Context, name string) (bool, error)
	// CreateTable fails with ErrExists when the table exists.
	CreateTable(ctx context.Context, t *Table) error
	// GetTable fails with ErrNotFound when the table does not exist.
	GetTable(ctx context.Context, database, name string) (*Table, error)
	DropTable(ctx context.Context, database, name string) error
	// AlterTable replaces the table of t's database and name with t (ALTER
	// TABLE); it fails with ErrNotFound when the table does not exist.
	AlterTable(ctx context.Context, t *Table) error
	// RenameTable moves a table to a new name in its database, in one
	// step; it fails with ErrNotFound when the table does not exist and
	// with ErrExists when the new name is taken.
	RenameTable(ctx context.Context, database, name, newName string) error
	ListTables(ctx context.Context, database string) ([]string, error)
}
