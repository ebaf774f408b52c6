package types

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is the logical kind of a SQL type.
type Kind uint8

const (
	KindNull Kind = iota
	KindBoolean
	KindTinyInt
	KindSmallInt
	KindInt
	KindBigInt
	KindFloat
	KindDouble
	KindDecimal
	KindChar
	KindVarChar
	KindBinary
	KindVarBinary
	KindDate
	KindTime
	KindTimestamp
	KindTimestampLTZ
	// KindIntervalDayTime is INTERVAL DAY TO SECOND, held as milliseconds.
	KindIntervalDayTime
	// KindIntervalYearMonth is INTERVAL YEAR TO MONTH, held as months.
	KindIntervalYearMonth
	// The composite kinds (composite.go): ARRAY<t>, MAP<k, v>,
	// MULTISET<t> and ROW<name t, ...>.
	KindArray
	KindMap
	KindMultiset
	KindRow
)

// MaxLength is the length of STRING (VARCHAR(MaxLength)) and BYTES.
const MaxLength = 2147483647

// DataType is a SQL type. Length applies to CHAR, VARCHAR, BINARY and
// VARBINARY; Precision and Scale to DECIMAL; Precision to TIME, TIMESTAMP and
// TIMESTAMP_LTZ (fractional second digits). A composite type's element,
// key, value or field types are held in an interned node (composite.go), so
// DataType stays comparable with == and usable as a map key.
type DataType struct {
	Kind      Kind
	Length    int
	Precision int
	Scale     int
	NotNull   bool
	nested    *nested
}

// Convenience constructors for the common types (all nullable).
var (
	Null     = DataType{Kind: KindNull}
	Boolean  = DataType{Kind: KindBoolean}
	TinyInt  = DataType{Kind: KindTinyInt}
	SmallInt = DataType{Kind: KindSmallInt}
	Int      = DataType{Kind: KindInt}
	BigInt   = DataType{Kind: KindBigInt}
	Float    = DataType{Kind: KindFloat}
	Double   = DataType{Kind: KindDouble}
	String   = DataType{Kind: KindVarChar, Length: MaxLength}
	Bytes    = DataType{Kind: KindVarBinary, Length: MaxLength}
	Date     = DataType{Kind: KindDate}
)

func Decimal(p, s int) DataType   { return DataType{Kind: KindDecimal, Precision: p, Scale: s} }
func Char(n int) DataType         { return DataType{Kind: KindChar, Length: n} }
func VarChar(n int) DataType      { return DataType{Kind: KindVarChar, Length: n} }
func Time(p int) DataType         { return DataType{Kind: KindTime, Precision: p} }
func Timestamp(p int) DataType    { return DataType{Kind: KindTimestamp, Precision: p} }
func TimestampLTZ(p int) DataType { return DataType{Kind: KindTimestampLTZ, Precision: p} }
func IntervalDayTime() DataType   { return DataType{Kind: KindIntervalDayTime, Precision: 3} }
func IntervalYearMonth() DataType { return DataType{Kind: KindIntervalYearMonth} }

// WithNullable returns t with its nullability set.
func (t DataType) WithNullable(nullable bool) DataType { t.NotNull = !nullable; return t }

// Nullable reports whether t admits NULL.
func (t DataType) Nullable() bool { return !t.NotNull }

// IsNumeric reports whether t is an exact or approximate number.
func (t DataType) IsNumeric() bool {
	switch t.Kind {
	case KindTinyInt, KindSmallInt, KindInt, KindBigInt, KindFloat, KindDouble, KindDecimal:
		return true
	}
	return false
}

// IsInteger reports whether t is TINYINT, SMALLINT, INT or BIGINT.
func (t DataType) IsInteger() bool {
	switch t.Kind {
	case KindTinyInt, KindSmallInt, KindInt, KindBigInt:
		return true
	}
	return false
}

// IsString reports whether t is CHAR or VARCHAR.
func (t DataType) IsString() bool { return t.Kind == KindChar || t.Kind == KindVarChar }

// IsBinary reports whether t is BINARY or VARBINARY.
func (t DataType) IsBinary() bool { return t.Kind == KindBinary || t.Kind == KindVarBinary }

// IsTimestamp reports whether t is TIMESTAMP or TIMESTAMP_LTZ.
func (t DataType) IsTimestamp() bool { return t.Kind == KindTimestamp || t.Kind == KindTimestampLTZ }

// IsTemporal reports whether t is DATE, TIME, TIMESTAMP or TIMESTAMP_LTZ.
func (t DataType) IsTemporal() bool {
	return t.Kind == KindDate || t.Kind == KindTime || t.IsTimestamp()
}

// IsInterval reports whether t is an interval type.
func (t DataType) IsInterval() bool {
	return t.Kind == KindIntervalDayTime || t.Kind == KindIntervalYearMonth
}

// Equal reports whether two types are the same, nullability included.
func (t DataType) Equal(o DataType) bool { return t == o }

// String prints the type as Flink does: "INT", "VARCHAR(10)", "STRING",
// "DECIMAL(10, 2)", "TIMESTAMP(3)", with " NOT NULL" when it applies.
func (t DataType) String() string {
	s := t.baseString()
	if t.NotNull {
		s += " NOT NULL"
	}
	return s
}

func (t DataType) baseString() string {
	switch t.Kind {
	case KindArray, KindMap, KindMultiset, KindRow:
		return t.nestedString()
	case KindNull:
		return "NULL"
	case KindBoolean:
		return "BOOLEAN"
	case KindTinyInt:
		return "TINYINT"
	case KindSmallInt:
		return "SMALLINT"
	case KindInt:
		return "INT"
	case KindBigInt:
		return "BIGINT"
	case KindFloat:
		return "FLOAT"
	case KindDouble:
		return "DOUBLE"
	case KindDecimal:
		return fmt.Sprintf("DECIMAL(%d, %d)", t.Precision, t.Scale)
	case KindChar:
		return fmt.Sprintf("CHAR(%d)", t.Length)
	case KindVarChar:
		if t.Length == MaxLength {
			return "STRING"
		}
		return fmt.Sprintf("VARCHAR(%d)", t.Length)
	case KindBinary:
		return fmt.Sprintf("BINARY(%d)", t.Length)
	case KindVarBinary:
		if t.Length == MaxLength {
			return "BYTES"
		}
		return fmt.Sprintf("VARBINARY(%d)", t.Length)
	case KindDate:
		return "DATE"
	case KindTime:
		return fmt.Sprintf("TIME(%d)", t.Precision)
	case KindTimestamp:
		return fmt.Sprintf("TIMESTAMP(%d)", t.Precision)
	case KindTimestampLTZ:
		return fmt.Sprintf("TIMESTAMP_LTZ(%d)", t.Precision)
	case KindIntervalDayTime:
		return "INTERVAL SECOND(3)"
	case KindIntervalYearMonth:
		return "INTERVAL MONTH"
	}
	return fmt.Sprintf("UNKNOWN(%d)", t.Kind)
}

// ParseType reads a type as String prints it. It exists so types can cross
// the wire as text; the SQL parser has its own, positioned, type grammar.
func ParseType(s string) (DataType, error) {
	if isNestedTypeString(s) {
		return parseNestedType(s)
	}
	orig := s
	s = strings.TrimSpace(strings.ToUpper(s))
	var t DataType
	if strings.HasSuffix(s, " NOT NULL") {
		t.NotNull = true
		s = strings.TrimSpace(strings.TrimSuffix(s, " NOT NULL"))
	}
	name, args := s, []int(nil)
	if i := strings.IndexByte(s, '('); i >= 0 && strings.HasSuffix(s, ")") {
		name = strings.TrimSpace(s[:i])
		for _, a := range strings.Split(s[i+1:len(s)-1], ",") {
			n, err := strconv.Atoi(strings.TrimSpace(a))
			if err != nil {
				return DataType{}, fmt.Errorf("types: bad type %q", orig)
			}
			args = append(args, n)
		}
	}
	arg := func(i, def int) int {
		if i < len(args) {
			return args[i]
		}
		return def
	}
	switch name {
	case "NULL":
		t.Kind = KindNull
	case "BOOLEAN":
		t.Kind = KindBoolean
	case "TINYINT":
		t.Kind = KindTinyInt
	case "SMALLINT":
		t.Kind = KindSmallInt
	case "INT", "INTEGER":
		t.Kind = KindInt
	case "BIGINT":
		t.Kind = KindBigInt
	case "FLOAT":
		t.Kind = KindFloat
	case "DOUBLE":
		t.Kind = KindDouble
	case "DECIMAL":
		t.Kind, t.Precision, t.Scale = KindDecimal, arg(0, 10), arg(1, 0)
	case "CHAR":
		t.Kind, t.Length = KindChar, arg(0, 1)
	case "VARCHAR":
		t.Kind, t.Length = KindVarChar, arg(0, 1)
	case "STRING":
		t.Kind, t.Length = KindVarChar, MaxLength
	case "BINARY":
		t.Kind, t.Length = KindBinary, arg(0, 1)
	case "VARBINARY":
		t.Kind, t.Length = KindVarBinary, arg(0, 1)
	case "BYTES":
		t.Kind, t.Length = KindVarBinary, MaxLength
	case "DATE":
		t.Kind = KindDate
	case "TIME":
		t.Kind, t.Precision = KindTime, arg(0, 0)
	case "TIMESTAMP":
		t.Kind, t.Precision = KindTimestamp, arg(0, 6)
	case "TIMESTAMP_LTZ":
		t.Kind, t.Precision = KindTimestampLTZ, arg(0, 6)
	case "INTERVAL SECOND":
		t.Kind, t.Precision = KindIntervalDayTime, arg(0, 3)
	case "INTERVAL MONTH":
		t.Kind = KindIntervalYearMonth
	default:
		return DataType{}, fmt.Errorf("types: unknown type %q", orig)
	}
	return t, nil
}
