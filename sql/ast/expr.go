package ast

// LitKind is the kind of a *Literal.
type LitKind uint8

const (
	// LitNumber is a numeric literal; Value keeps its exact text ("42",
	// "1.50", "1.5e0") so the binder can type it as Flink does.
	LitNumber LitKind = iota
	// LitString is a character string literal; Value is unescaped.
	LitString
	// LitBinary is X'..'; Value holds the hex digits.
	LitBinary
	// LitBool is TRUE or FALSE; Value is "TRUE" or "FALSE".
	LitBool
	// LitNull is NULL.
	LitNull
	// LitUnknown is UNKNOWN (the boolean NULL).
	LitUnknown
	// LitDate, LitTime and LitTimestamp are DATE '..', TIME '..' and
	// TIMESTAMP '..'; Value is the unescaped string.
	LitDate
	LitTime
	LitTimestamp
)

// Literal is a constant.
type Literal struct {
	Pos
	Kind  LitKind
	Value string
}

// TimeUnit is a time unit keyword as written, upper case: YEAR, QUARTER,
// MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND,
// NANOSECOND, DOW, DOY, EPOCH, ... and the SQL_TSI_* synonyms. Canonical maps
// a synonym to its plain unit.
type TimeUnit string

// Canonical returns u without a SQL_TSI_ prefix (SQL_TSI_FRAC_SECOND becomes
// MICROSECOND, as in Calcite).
func (u TimeUnit) Canonical() TimeUnit {
	s := string(u)
	if len(s) > 8 && s[:8] == "SQL_TSI_" {
		s = s[8:]
		if s == "FRAC_SECOND" {
			return "MICROSECOND"
		}
	}
	return TimeUnit(s)
}

// IntervalQualifier is the unit part of an interval literal or type:
// Start [(args)] [TO End [(args)]]. Args hold the optional precisions as
// written, e.g. SECOND(3) has EndArgs nil and StartArgs [3].
type IntervalQualifier struct {
	Pos
	Start     TimeUnit
	StartArgs []int
	End       TimeUnit // "" when there is no TO part
	EndArgs   []int
}

// IntervalLit is INTERVAL [-]'value' qualifier. Value is the unescaped
// string (or the number's text when Numeric, for INTERVAL 5 SECOND).
type IntervalLit struct {
	Pos
	Negative  bool
	Value     string
	Numeric   bool
	Qualifier *IntervalQualifier
}

// ColumnRef is a possibly dotted name used as an expression: a, t.a,
// db.t.a, or row.field. The binder decides which parts name a table and
// which a field.
type ColumnRef struct {
	Pos
	Parts []*Ident
}

// Star is * or t.* in a select list.
type Star struct {
	Pos
	Qualifier []*Ident
}

// UnaryOp is a prefix operator.
type UnaryOp string

const (
	OpNeg  UnaryOp = "-"
	OpPlus UnaryOp = "+"
	OpNot  UnaryOp = "NOT"
)

// Unary is a prefix operator applied to X.
type Unary struct {
	Pos
	Op UnaryOp
	X  Expr
}

// BinaryOp is an infix operator. != is parsed as <>.
type BinaryOp string

const (
	OpOr          BinaryOp = "OR"
	OpAnd         BinaryOp = "AND"
	OpEq          BinaryOp = "="
	OpNe          BinaryOp = "<>"
	OpLt          BinaryOp = "<"
	OpLe          BinaryOp = "<="
	OpGt          BinaryOp = ">"
	OpGe          BinaryOp = ">="
	OpDistinct    BinaryOp = "IS DISTINCT FROM"
	OpNotDistinct BinaryOp = "IS NOT DISTINCT FROM"
	OpConcat      BinaryOp = "||"
	OpAdd         BinaryOp = "+"
	OpSub         BinaryOp = "-"
	OpMul         BinaryOp = "*"
	OpDiv         BinaryOp = "/"
	OpMod         BinaryOp = "%"
)

// Binary is L Op R.
type Binary struct {
	Pos
	Op   BinaryOp
	L, R Expr
}

// IsExpr is X IS [NOT] What, What being NULL, TRUE, FALSE, UNKNOWN, JSON,
// JSON VALUE, JSON SCALAR, JSON ARRAY or JSON OBJECT.
type IsExpr struct {
	Pos
	X    Expr
	Not  bool
	What string
}

// Between is X [NOT] BETWEEN [ASYMMETRIC|SYMMETRIC] Low AND High.
// Mode is "", "ASYMMETRIC" or "SYMMETRIC".
type Between struct {
	Pos
	X         Expr
	Not       bool
	Mode      string
	Low, High Expr
}

// InExpr is X [NOT] IN (List...) or X [NOT] IN (Query).
type InExpr struct {
	Pos
	X     Expr
	Not   bool
	List  []Expr
	Query *Query
}

// LikeExpr is X [NOT] LIKE Pattern [ESCAPE Escape], or SIMILAR TO when
// Similar is set.
type LikeExpr struct {
	Pos
	X       Expr
	Not     bool
	Similar bool
	Pattern Expr
	Escape  Expr
}

// FuncCall is a function call. Name is as written ([db.]name). Star is
// COUNT(*). NoParens marks the niladic forms written without parentheses
// (CURRENT_TIMESTAMP, LOCALTIME, ...). POSITION(a IN b) and
// SUBSTRING(x FROM a FOR b) are parsed into plain calls (POSITION(a, b),
// SUBSTRING(x, a, b)).
type FuncCall struct {
	Pos
	Name     *ObjectName
	Distinct bool
	Star     bool
	Args     []Expr
	NoParens bool
	// Filter is FILTER (WHERE cond) of an aggregate call.
	Filter Expr
	// Over is the window of OVER (...); OverName is OVER w.
	Over     *WindowSpec
	OverName *Ident
	// JSON holds the clauses written inside the parentheses of JSON_VALUE,
	// JSON_QUERY, JSON_EXISTS, JSON_OBJECT and JSON_ARRAY; nil when there
	// are none.
	JSON *JSONClauses
}

// JSONClauses are the clauses of a SQL/JSON function call, as written:
//
//	JSON_VALUE(doc, path [RETURNING type] [b ON EMPTY] [b ON ERROR])
//	JSON_QUERY(doc, path [RETURNING type] [wrapper] [b ON EMPTY] [b ON ERROR])
//	JSON_EXISTS(doc, path [b ON ERROR])
//	JSON_OBJECT(... [NULL|ABSENT ON NULL]), JSON_ARRAY(... [NULL|ABSENT ON NULL])
type JSONClauses struct {
	Returning *Type
	// Wrapper is WITHOUT ARRAY, WITH CONDITIONAL ARRAY or WITH
	// UNCONDITIONAL ARRAY (WITHOUT WRAPPER and WITH WRAPPER are read as
	// WITHOUT ARRAY and WITH UNCONDITIONAL ARRAY), "" when not written.
	Wrapper string
	OnEmpty *JSONBehavior
	OnError *JSONBehavior
	// OnNull is NULL or ABSENT, "" when not written.
	OnNull string
}

// JSONBehavior is one ON EMPTY or ON ERROR clause: Kind is NULL, ERROR,
// DEFAULT (with Default), EMPTY ARRAY, EMPTY OBJECT, TRUE, FALSE or
// UNKNOWN.
type JSONBehavior struct {
	Pos
	Kind    string
	Default Expr
}

// FuncName returns the last part of the function's name.
func (f *FuncCall) FuncName() string { return f.Name.Object() }

// NamedArg is name => value in a call to a table-valued function.
type NamedArg struct {
	Pos
	Name  *Ident
	Value Expr
}

// TableArg is TABLE name [PARTITION BY cols], or (query) PARTITION BY
// cols, an argument of a table-valued function (SESSION windows partition
// their input). Exactly one of Name and Query is set.
type TableArg struct {
	Pos
	Name        *ObjectName
	Query       *Query
	PartitionBy []Expr
}

// Descriptor is DESCRIPTOR(col, ...), an argument of a window function.
type Descriptor struct {
	Pos
	Columns []*Ident
}

// Cast is CAST(X AS Type), or TRY_CAST when Try is set.
type Cast struct {
	Pos
	X    Expr
	Type *Type
	Try  bool
}

// Extract is EXTRACT(Unit FROM X).
type Extract struct {
	Pos
	Unit TimeUnit
	X    Expr
}

// FloorCeil is FLOOR(X TO Unit) or CEIL(X TO Unit): a temporal value
// rounded down or up to a unit.
type FloorCeil struct {
	Pos
	Ceil bool
	X    Expr
	Unit TimeUnit
}

// TimestampDiff is TIMESTAMPDIFF(Unit, A, B): B - A in whole units.
type TimestampDiff struct {
	Pos
	Unit TimeUnit
	A, B Expr
}

// TimestampAdd is TIMESTAMPADD(Unit, N, T).
type TimestampAdd struct {
	Pos
	Unit TimeUnit
	N, T Expr
}

// Trim is TRIM([Mode] [Chars] FROM X) or TRIM(X). Mode is "", "BOTH",
// "LEADING" or "TRAILING"; Chars may be nil.
type Trim struct {
	Pos
	Mode  string
	Chars Expr
	X     Expr
}

// When is one WHEN Cond THEN Result arm of a CASE.
type When struct {
	Pos
	Cond   Expr
	Result Expr
}

// Case is CASE [Operand] WHEN ... [ELSE Else] END.
type Case struct {
	Pos
	Operand Expr
	Whens   []*When
	Else    Expr
}

// Subquery is a scalar subquery (query) used as an expression.
type Subquery struct {
	Pos
	Query *Query
}

// Exists is EXISTS (query).
type Exists struct {
	Pos
	Query *Query
}

// RowCtor is ROW(a, b, ...), or (a, b, ...) when Implicit. A VALUES row is
// a RowCtor too.
type RowCtor struct {
	Pos
	Items    []Expr
	Implicit bool
}

// ArrayCtor is ARRAY[a, b, ...].
type ArrayCtor struct {
	Pos
	Items []Expr
}

// MapCtor is MAP[k1, v1, k2, v2, ...]; Items alternate keys and values.
type MapCtor struct {
	Pos
	Items []Expr
}

// Index is X[Index]: array element (1-based) or map value access.
type Index struct {
	Pos
	X     Expr
	Index Expr
}

// FieldAccess is X.Field where X is not a plain name (those are
// *ColumnRef), e.g. f(x).a or arr[1].b.
type FieldAccess struct {
	Pos
	X     Expr
	Field *Ident
}

// GroupingSets is GROUPING SETS (...), ROLLUP (...) or CUBE (...) in a
// GROUP BY list. Kind is "GROUPING SETS", "ROLLUP" or "CUBE". Each set is
// a list of expressions; () is the empty set.
type GroupingSets struct {
	Pos
	Kind string
	Sets [][]Expr
}

// WindowSpec is the body of OVER (...) or of a WINDOW clause entry.
type WindowSpec struct {
	Pos
	// Ref names a window this one extends (OVER (w ORDER BY ...)).
	Ref         *Ident
	PartitionBy []Expr
	OrderBy     []*OrderItem
	Frame       *Frame
}

// Frame is ROWS|RANGE BETWEEN Start AND End, or ROWS|RANGE Start when End
// is nil.
type Frame struct {
	Pos
	Rows  bool // ROWS rather than RANGE
	Start *FrameBound
	End   *FrameBound
}

// FrameBound is UNBOUNDED PRECEDING|FOLLOWING, CURRENT ROW, or
// Offset PRECEDING|FOLLOWING. Kind is one of "UNBOUNDED PRECEDING",
// "UNBOUNDED FOLLOWING", "CURRENT ROW", "PRECEDING", "FOLLOWING".
type FrameBound struct {
	Pos
	Kind   string
	Offset Expr
}

func (*Literal) exprNode()       {}
func (*IntervalLit) exprNode()   {}
func (*ColumnRef) exprNode()     {}
func (*Star) exprNode()          {}
func (*Unary) exprNode()         {}
func (*Binary) exprNode()        {}
func (*IsExpr) exprNode()        {}
func (*Between) exprNode()       {}
func (*InExpr) exprNode()        {}
func (*LikeExpr) exprNode()      {}
func (*FuncCall) exprNode()      {}
func (*NamedArg) exprNode()      {}
func (*TableArg) exprNode()      {}
func (*Descriptor) exprNode()    {}
func (*Cast) exprNode()          {}
func (*Extract) exprNode()       {}
func (*FloorCeil) exprNode()     {}
func (*TimestampDiff) exprNode() {}
func (*TimestampAdd) exprNode()  {}
func (*Trim) exprNode()          {}
func (*Case) exprNode()          {}
func (*Subquery) exprNode()      {}
func (*Exists) exprNode()        {}
func (*RowCtor) exprNode()       {}
func (*ArrayCtor) exprNode()     {}
func (*MapCtor) exprNode()       {}
func (*Index) exprNode()         {}
func (*FieldAccess) exprNode()   {}
func (*GroupingSets) exprNode()  {}
