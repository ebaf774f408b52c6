package ast

// CreateTableStmt is CREATE [TEMPORARY] TABLE [IF NOT EXISTS] name
// (elements) [COMMENT] [PARTITIONED BY] [WITH (...)] [LIKE ...] [AS query].
// The printer emits columns, then watermarks, then the primary key.
type CreateTableStmt struct {
	StmtBase
	Temporary   bool
	IfNotExists bool
	Name        *ObjectName
	Columns     []*ColumnDef
	Watermarks  []*Watermark
	// PrimaryKey is the table-level constraint; a column-level
	// PRIMARY KEY is recorded on its ColumnDef instead.
	PrimaryKey    *PrimaryKey
	Comment       string
	PartitionedBy []*Ident
	Options       []*Option
	Like          *LikeClause
	AsQuery       *Query
}

// ColumnDef is one column of CREATE TABLE. A physical column has Type; a
// computed column has Expr (name AS expr); a metadata column has Type and
// Metadata (name TYPE METADATA [FROM 'key'] [VIRTUAL]).
type ColumnDef struct {
	Pos
	Name        *Ident
	Type        *Type
	Expr        Expr
	Metadata    bool
	MetadataKey string
	Virtual     bool
	// PrimaryKey is a column-level PRIMARY KEY; NotEnforced its NOT ENFORCED.
	PrimaryKey  bool
	NotEnforced bool
	Comment     string
}

// PrimaryKey is [CONSTRAINT name] PRIMARY KEY (cols) [NOT ENFORCED].
// Flink requires NOT ENFORCED; the parser accepts its absence so the
// binder can say so.
type PrimaryKey struct {
	Pos
	Name        *Ident
	Columns     []*Ident
	NotEnforced bool
}

// Watermark is WATERMARK FOR column AS expr.
type Watermark struct {
	Pos
	Column *Ident
	Expr   Expr
}

// LikeClause is LIKE source [(INCLUDING|EXCLUDING|OVERWRITING what ...)].
type LikeClause struct {
	Pos
	Source  *ObjectName
	Options []*LikeOption
}

// LikeOption is e.g. EXCLUDING ALL or OVERWRITING OPTIONS: Mode is
// INCLUDING, EXCLUDING or OVERWRITING; What is ALL, CONSTRAINTS, GENERATED,
// METADATA, OPTIONS, PARTITIONS or WATERMARKS.
type LikeOption struct {
	Pos
	Mode string
	What string
}

// DropTableStmt is DROP [TEMPORARY] TABLE [IF EXISTS] name.
type DropTableStmt struct {
	StmtBase
	Temporary bool
	IfExists  bool
	Name      *ObjectName
}

// CreateViewStmt is CREATE [TEMPORARY] VIEW [IF NOT EXISTS] name [(cols)]
// [COMMENT '..'] AS query.
type CreateViewStmt struct {
	StmtBase
	Temporary   bool
	IfNotExists bool
	Name        *ObjectName
	Columns     []*Ident
	Comment     string
	Query       *Query
}

// DropViewStmt is DROP [TEMPORARY] VIEW [IF EXISTS] name.
type DropViewStmt struct {
	StmtBase
	Temporary bool
	IfExists  bool
	Name      *ObjectName
}

// CreateDatabaseStmt is CREATE DATABASE [IF NOT EXISTS] [cat.]name
// [COMMENT '..'] [WITH (...)].
type CreateDatabaseStmt struct {
	StmtBase
	IfNotExists bool
	Name        *ObjectName
	Comment     string
	Options     []*Option
}

// DropDatabaseStmt is DROP DATABASE [IF EXISTS] name [RESTRICT|CASCADE];
// Behavior is "", "RESTRICT" or "CASCADE".
type DropDatabaseStmt struct {
	StmtBase
	IfExists bool
	Name     *ObjectName
	Behavior string
}

// UseStmt is USE [cat.]db, or USE CATALOG cat when Catalog is set.
type UseStmt struct {
	StmtBase
	Catalog bool
	Name    *ObjectName
}

// ShowStmt is SHOW What [name]. What is one of "DATABASES", "TABLES",
// "VIEWS", "CATALOGS", "FUNCTIONS", "JOBS", "CURRENT DATABASE",
// "CURRENT CATALOG", "CREATE TABLE", "CREATE VIEW"; Name is set for the
// SHOW CREATE forms.
type ShowStmt struct {
	StmtBase
	What string
	Name *ObjectName
}

// DescribeStmt is DESCRIBE name (DESC is the same statement).
type DescribeStmt struct {
	StmtBase
	Name *ObjectName
}

// SetStmt is SET 'key' = 'value', or bare SET (list the settings) when
// Option is nil.
type SetStmt struct {
	StmtBase
	Option *Option
}

// StopJobStmt is the SQL client's STOP JOB 'id' [WITH SAVEPOINT]
// [WITH DRAIN].
type StopJobStmt struct {
	StmtBase
	JobID         string
	WithSavepoint bool
	WithDrain     bool
}

// ResetStmt is RESET 'key', or bare RESET (all keys) when Key is "".
type ResetStmt struct {
	StmtBase
	Key string
}

// InsertStmt is INSERT INTO|OVERWRITE table [hints] [(cols)] query.
type InsertStmt struct {
	StmtBase
	Overwrite bool
	Table     *ObjectName
	Hints     []*Hint
	Columns   []*Ident
	Query     *Query
}

// QueryStmt is a query run as a statement.
type QueryStmt struct {
	StmtBase
	Query *Query
}

// ExplainStmt is EXPLAIN [details] [PLAN FOR] stmt. Details are upper-cased
// keywords such as ESTIMATED_COST, CHANGELOG_MODE, JSON_EXECUTION_PLAN,
// PLAN_ADVICE.
type ExplainStmt struct {
	StmtBase
	Details []string
	PlanFor bool
	Stmt    Statement
}

// BeginStatementSetStmt is the SQL client's BEGIN STATEMENT SET: the
// following INSERTs are collected until END.
type BeginStatementSetStmt struct {
	StmtBase
}

// EndStmt is END, closing a client statement set.
type EndStmt struct {
	StmtBase
}

// StatementSetStmt is EXECUTE STATEMENT SET BEGIN insert; ...; END.
type StatementSetStmt struct {
	StmtBase
	Inserts []*InsertStmt
}

// AlterTableStmt is ALTER TABLE [IF EXISTS] name followed by one of
// SET ('k' = 'v', ...), RESET ('k', ...) or RENAME TO new_name.
type AlterTableStmt struct {
	StmtBase
	IfExists bool
	Name     *ObjectName
	// Set holds the options of SET; Reset the keys of RESET (their Value
	// is empty); RenameTo the new name. Exactly one of them is non-empty.
	Set      []*Option
	Reset    []*Option
	RenameTo *ObjectName
}

// ExecuteStmt is EXECUTE insert-or-query.
type ExecuteStmt struct {
	StmtBase
	Stmt Statement
}

func (*CreateTableStmt) stmtNode()       {}
func (*DropTableStmt) stmtNode()         {}
func (*CreateViewStmt) stmtNode()        {}
func (*DropViewStmt) stmtNode()          {}
func (*CreateDatabaseStmt) stmtNode()    {}
func (*DropDatabaseStmt) stmtNode()      {}
func (*UseStmt) stmtNode()               {}
func (*ShowStmt) stmtNode()              {}
func (*DescribeStmt) stmtNode()          {}
func (*SetStmt) stmtNode()               {}
func (*StopJobStmt) stmtNode()           {}
func (*ResetStmt) stmtNode()             {}
func (*InsertStmt) stmtNode()            {}
func (*QueryStmt) stmtNode()             {}
func (*ExplainStmt) stmtNode()           {}
func (*BeginStatementSetStmt) stmtNode() {}
func (*EndStmt) stmtNode()               {}
func (*StatementSetStmt) stmtNode()      {}
func (*ExecuteStmt) stmtNode()           {}
func (*AlterTableStmt) stmtNode()        {}
