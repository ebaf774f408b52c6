package ast

// Query is a complete query: [WITH ...] body [ORDER BY ...] [LIMIT n]
// [OFFSET m]. It is what statements, subqueries and CTEs hold.
type Query struct {
	Pos
	With    []*CTE
	Body    QueryExpr
	OrderBy []*OrderItem
	Limit   Expr
	Offset  Expr
}

// CTE is one name [(cols)] AS (query) of a WITH clause.
type CTE struct {
	Pos
	Name    *Ident
	Columns []*Ident
	Query   *Query
}

// Select is a SELECT block.
type Select struct {
	Pos
	Hints    []*Hint
	Distinct bool
	// All records an explicit SELECT ALL.
	All     bool
	Items   []*SelectItem
	From    TableExpr // nil without FROM
	Where   Expr
	GroupBy []Expr
	Having  Expr
	Windows []*NamedWindow
}

// SelectItem is expr [AS alias]; Expr is a *Star for * and t.*.
type SelectItem struct {
	Pos
	Expr  Expr
	Alias *Ident
}

// NamedWindow is name AS (spec) in a WINDOW clause.
type NamedWindow struct {
	Pos
	Name *Ident
	Spec *WindowSpec
}

// OrderItem is expr [ASC|DESC] [NULLS FIRST|LAST]. Nulls is "", "FIRST" or
// "LAST".
type OrderItem struct {
	Pos
	Expr  Expr
	Desc  bool
	Asc   bool // an explicit ASC
	Nulls string
}

// SetOpKind is UNION, INTERSECT or EXCEPT.
type SetOpKind string

const (
	Union     SetOpKind = "UNION"
	Intersect SetOpKind = "INTERSECT"
	Except    SetOpKind = "EXCEPT"
)

// SetOp is L op [ALL|DISTINCT] R. INTERSECT binds tighter than UNION and
// EXCEPT, which associate to the left.
type SetOp struct {
	Pos
	Op       SetOpKind
	All      bool
	Distinct bool // an explicit DISTINCT
	L, R     QueryExpr
}

// Values is VALUES row, row, ...; each row is an expression, usually a
// *RowCtor.
type Values struct {
	Pos
	Rows []Expr
}

// TableAlias is [AS] name [(col, ...)].
type TableAlias struct {
	Pos
	Name    *Ident
	Columns []*Ident
}

// TableName is a named table in FROM, with optional hints, a
// FOR SYSTEM_TIME AS OF time (temporal join) and an alias.
type TableName struct {
	Pos
	Name       *ObjectName
	Hints      []*Hint
	SystemTime Expr
	Alias      *TableAlias
}

// DerivedTable is [LATERAL] (query) [AS] alias.
type DerivedTable struct {
	Pos
	Lateral bool
	Query   *Query
	Alias   *TableAlias
}

// TableFunc is [LATERAL] TABLE(call) [AS] alias: a table function such as
// a user function or TUMBLE/HOP/CUMULATE/SESSION windowing.
type TableFunc struct {
	Pos
	Lateral bool
	Call    *FuncCall
	Alias   *TableAlias
}

// Unnest is UNNEST(expr, ...) [WITH ORDINALITY] [AS] alias.
type Unnest struct {
	Pos
	Args           []Expr
	WithOrdinality bool
	Alias          *TableAlias
}

// JoinKind is the kind of a *Join.
type JoinKind string

const (
	InnerJoin JoinKind = "JOIN"
	LeftJoin  JoinKind = "LEFT JOIN"
	RightJoin JoinKind = "RIGHT JOIN"
	FullJoin  JoinKind = "FULL JOIN"
	CrossJoin JoinKind = "CROSS JOIN"
	// CommaJoin is FROM a, b.
	CommaJoin JoinKind = ","
)

// Join is L [NATURAL] kind R [ON On | USING (Using)]. Joins associate to
// the left; a join on the right side was parenthesized. A NATURAL join has
// neither On nor Using: it joins on the columns both sides have.
type Join struct {
	Pos
	Kind    JoinKind
	Natural bool
	L, R    TableExpr
	On      Expr
	Using   []*Ident
}

// ParenTable is a parenthesized join: (a JOIN b ON ...).
type ParenTable struct {
	Pos
	Table TableExpr
}

func (*Select) queryNode() {}
func (*SetOp) queryNode()  {}
func (*Values) queryNode() {}
func (*Query) queryNode()  {}

func (*TableName) tableNode()    {}
func (*DerivedTable) tableNode() {}
func (*TableFunc) tableNode()    {}
func (*Unnest) tableNode()       {}
func (*Join) tableNode()         {}
func (*ParenTable) tableNode()   {}
