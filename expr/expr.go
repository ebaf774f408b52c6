package expr

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/braidflow/braid/types"
)

// Op is the kind of an expression node.
type Op string

const (
	// OpColumn reads input column Col.
	OpColumn Op = "col"
	// OpLiteral is a constant; Value holds it (see Literal for the Go types).
	OpLiteral Op = "lit"
	// OpCall applies the function or operator Func to Args.
	OpCall Op = "call"
)

// Expr is a bound, typed expression over the columns of an input batch. It is
// plain data: the planner builds it, it travels inside operator configs as
// JSON (json.go describes the encoding, linear in size at any depth), and
// Compile turns it into an evaluator on the task manager.
//
// Function and operator names in Func are upper case: "+", "-", "*", "/",
// "%", "=", "<>", "<", "<=", ">", ">=", "AND", "OR", "NOT", "IS NULL",
// "IS NOT NULL", "BETWEEN", "NOT BETWEEN", "IN", "NOT IN", "CASE", "CAST",
// "TRY_CAST", "NEG", "FROM_UNIXTIME", "TO_TIMESTAMP", "TIMESTAMPDIFF",
// "UNIX_TIMESTAMP", "CURRENT_TIMESTAMP", and the rest of the library
// (Functions lists every name ResolveCall accepts).
type Expr struct {
	Op   Op             `json:"op"`
	Type types.DataType `json:"type"`
	// Col is the input column index for OpColumn.
	Col int `json:"col,omitempty"`
	// Value is the constant of an OpLiteral, in the Go form Literal documents.
	Value any `json:"value,omitempty"`
	// Func names the function of an OpCall.
	Func string  `json:"func,omitempty"`
	Args []*Expr `json:"args,omitempty"`
}

// Column returns a reference to input column i of type t.
func Column(i int, t types.DataType) *Expr { return &Expr{Op: OpColumn, Col: i, Type: t} }

// Literal returns a constant of type t. v is nil for NULL, otherwise, by
// t's kind: BOOLEAN bool; TINYINT..BIGINT int64; FLOAT/DOUBLE float64;
// DECIMAL decimal128.Num (unscaled, scale from t); CHAR/VARCHAR string;
// BINARY/VARBINARY []byte; DATE int32 days; TIME int32 ms of the day;
// TIMESTAMP/TIMESTAMP_LTZ int64 nanoseconds; INTERVAL DAY TO SECOND int64
// ms; INTERVAL YEAR TO MONTH int32 months. Other Go integer and float types
// are converted to these forms; a value of the wrong kind panics, since it
// is a planner bug.
func Literal(v any, t types.DataType) *Expr {
	nv, err := normalizeValue(v, t)
	if err != nil {
		panic("expr: " + err.Error())
	}
	return &Expr{Op: OpLiteral, Type: t, Value: nv}
}

// StringLiteral returns the SQL literal 's', typed CHAR(len) NOT NULL as
// Flink types it (length in characters).
func StringLiteral(s string) *Expr {
	return Literal(s, types.Char(len([]rune(s))).WithNullable(false))
}

// NullLiteral returns a NULL of type t (nullable).
func NullLiteral(t types.DataType) *Expr { return Literal(nil, t.WithNullable(true)) }

func normalizeValue(v any, t types.DataType) (any, error) {
	if v == nil {
		return nil, nil
	}
	bad := func() (any, error) { return nil, fmt.Errorf("literal %v (%T) does not fit type %v", v, v, t) }
	asInt := func() (int64, bool) {
		switch x := v.(type) {
		case int64:
			return x, true
		case int:
			return int64(x), true
		case int32:
			return int64(x), true
		case int16:
			return int64(x), true
		case int8:
			return int64(x), true
		case uint32:
			return int64(x), true
		}
		return 0, false
	}
	switch t.Kind {
	case types.KindNull:
		return nil, nil
	case types.KindBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt,
		types.KindTimestamp, types.KindTimestampLTZ, types.KindIntervalDayTime:
		if i, ok := asInt(); ok {
			return i, nil
		}
	case types.KindDate, types.KindTime, types.KindIntervalYearMonth:
		if i, ok := asInt(); ok {
			return int32(i), nil
		}
	case types.KindFloat, types.KindDouble:
		switch x := v.(type) {
		case float64:
			return x, nil
		case float32:
			return float64(x), nil
		}
		if i, ok := asInt(); ok {
			return float64(i), nil
		}
	case types.KindDecimal:
		if d, ok := v.(decimal128.Num); ok {
			return d, nil
		}
		if i, ok := asInt(); ok {
			return decimal128.FromI64(i), nil
		}
	case types.KindChar, types.KindVarChar:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case types.KindBinary, types.KindVarBinary, types.KindArray, types.KindMap, types.KindMultiset, types.KindRow:
		if b, ok := v.([]byte); ok {
			return b, nil
		}
	}
	return bad()
}

// ParseNumericLiteral types a numeric literal as Flink (Calcite) does: an
// integer is INT NOT NULL, or BIGINT NOT NULL beyond the int range (DECIMAL
// beyond BIGINT); a literal with a point is DECIMAL(p,s) with p the number
// of digits and s the digits after the point ("1.50" is DECIMAL(3,2)); one
// with an exponent is DOUBLE NOT NULL. A leading '-' is accepted.
func ParseNumericLiteral(text string) (*Expr, error) {
	s := strings.TrimSpace(text)
	bad := func() (*Expr, error) { return nil, fmt.Errorf("invalid numeric literal '%s'", text) }
	if s == "" {
		return bad()
	}
	if strings.ContainsAny(s, "eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !isRangeErr(err) {
			return bad()
		}
		return Literal(f, types.Double.WithNullable(false)), nil
	}
	neg := false
	body := s
	if body[0] == '-' || body[0] == '+' {
		neg = body[0] == '-'
		body = body[1:]
	}
	intPart, frac, hasPoint := strings.Cut(body, ".")
	if intPart == "" && frac == "" {
		return bad()
	}
	for _, r := range intPart + frac {
		if r < '0' || r > '9' {
			return bad()
		}
	}
	digits := intPart + frac
	if !hasPoint || frac == "" {
		bi, _ := new(big.Int).SetString(intPart, 10)
		if neg {
			bi.Neg(bi)
		}
		if bi.IsInt64() {
			v := bi.Int64()
			if v >= math.MinInt32 && v <= math.MaxInt32 {
				return Literal(v, types.Int.WithNullable(false)), nil
			}
			return Literal(v, types.BigInt.WithNullable(false)), nil
		}
		digits = intPart
		frac = ""
	}
	p, sc := len(digits), len(frac)
	if p > 38 {
		return nil, fmt.Errorf("numeric literal '%s' is out of range", text)
	}
	bi, _ := new(big.Int).SetString(digits, 10)
	if neg {
		bi.Neg(bi)
	}
	return Literal(decimal128.FromBigInt(bi), types.Decimal(p, sc).WithNullable(false)), nil
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// String renders e for plans and error messages: $0, 42, +($0, 1). It
// takes time linear in the size of e.
func (e *Expr) String() string {
	var sb strings.Builder
	e.format(&sb)
	return sb.String()
}

// format writes e to sb; a nil e is "<nil>".
func (e *Expr) format(sb *strings.Builder) {
	if e == nil {
		sb.WriteString("<nil>")
		return
	}
	switch e.Op {
	case OpColumn:
		sb.WriteByte('$')
		sb.WriteString(strconv.Itoa(e.Col))
		return
	case OpLiteral:
		switch v := e.Value.(type) {
		case nil:
			sb.WriteString("NULL")
		case string:
			sb.WriteByte('\'')
			sb.WriteString(strings.ReplaceAll(v, "'", "''"))
			sb.WriteByte('\'')
		case decimal128.Num:
			sb.WriteString(v.ToString(int32(e.Type.Scale)))
		default:
			fmt.Fprint(sb, e.Value)
		}
		return
	}
	sb.WriteString(e.Func)
	sb.WriteByte('(')
	for i, a := range e.Args {
		if i > 0 {
			sb.WriteString(", ")
		}
		a.format(sb)
	}
	if e.Func == "CAST" || e.Func == "TRY_CAST" {
		fmt.Fprintf(sb, " AS %v", e.Type)
	}
	sb.WriteByte(')')
}
