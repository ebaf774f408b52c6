package ast

// Nullability is the [NOT] NULL suffix of a type.
type Nullability uint8

const (
	NullUnspecified Nullability = iota
	NotNull
	Null
)

// Type is a SQL type as written. Name is the upper-cased type name
// ("INT", "INTEGER", "VARCHAR", "DOUBLE PRECISION", "TIMESTAMP_LTZ",
// "ARRAY", "MAP", "MULTISET", "ROW", "INTERVAL", ...). Args holds the
// numbers in parentheses exactly as written, nil when none were given
// (so VARCHAR has nil Args and the binder can map it to STRING).
type Type struct {
	Pos
	Name string
	// Quoted records a back-quoted name, which Name holds as written.
	Quoted bool
	Args   []int
	// TimeZone is "", "WITHOUT TIME ZONE" or "WITH LOCAL TIME ZONE" for
	// TIME and TIMESTAMP.
	TimeZone string
	// Elem is the element type of ARRAY and MULTISET; Postfix records the
	// "T ARRAY" spelling rather than "ARRAY<T>".
	Elem    *Type
	Postfix bool
	// Key and Value are MAP's types.
	Key, Value *Type
	// Fields are ROW's fields; Parens records ROW(...) rather than ROW<...>.
	Fields []*RowField
	Parens bool
	// Interval is the qualifier of an INTERVAL type.
	Interval *IntervalQualifier
	Null     Nullability
}

// Length returns the first argument (CHAR(n), VARCHAR(n), BINARY(n),
// the precision of DECIMAL(p, s), TIME(p), TIMESTAMP(p)) and whether it
// was given.
func (t *Type) Length() (int, bool) {
	if len(t.Args) == 0 {
		return 0, false
	}
	return t.Args[0], true
}

// Scale returns the second argument (DECIMAL's scale) and whether it was
// given.
func (t *Type) Scale() (int, bool) {
	if len(t.Args) < 2 {
		return 0, false
	}
	return t.Args[1], true
}

// RowField is one field of a ROW type: name type ['comment'].
type RowField struct {
	Pos
	Name    *Ident
	Type    *Type
	Comment string
}
