package difftest

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// kind is a SQL type family of the reference evaluator. It is its own
// small type system, sharing nothing with types/ beyond what the
// comparison reads off the engine's result schema.
type kind uint8

const (
	kNull kind = iota // the type of a bare NULL literal
	kBool
	kInt
	kBigInt
	kDec
	kStr
	kTs
)

// typ is a reference type: a kind with DECIMAL's precision and scale.
type typ struct {
	k    kind
	p, s int
}

var (
	tBool   = typ{k: kBool}
	tInt    = typ{k: kInt}
	tBigInt = typ{k: kBigInt}
	tStr    = typ{k: kStr}
	tTs     = typ{k: kTs}
)

func tDec(p, s int) typ { return typ{k: kDec, p: p, s: s} }

func (t typ) isInteger() bool { return t.k == kInt || t.k == kBigInt }
func (t typ) isNumeric() bool { return t.isInteger() || t.k == kDec }

// sqlName is the type as CREATE TABLE spells it.
func (t typ) sqlName() string {
	switch t.k {
	case kBool:
		return "BOOLEAN"
	case kInt:
		return "INT"
	case kBigInt:
		return "BIGINT"
	case kDec:
		return fmt.Sprintf("DECIMAL(%d, %d)", t.p, t.s)
	case kStr:
		return "STRING"
	case kTs:
		return "TIMESTAMP(3)"
	}
	return "NULL"
}

// asDecimal is the DECIMAL an integer type counts as in arithmetic with a
// DECIMAL (FLINK-SEMANTICS.md section 1).
func (t typ) asDecimal() typ {
	switch t.k {
	case kInt:
		return tDec(10, 0)
	case kBigInt:
		return tDec(19, 0)
	}
	return t
}

// A value is nil (NULL), bool, int64 (INT and BIGINT), *big.Rat
// (DECIMAL, exact), string, or tsVal (TIMESTAMP(3)).
type value any

// tsVal is a TIMESTAMP(3) as milliseconds since the epoch, no zone.
type tsVal int64

// rat returns a numeric value as an exact rational.
func rat(v value) *big.Rat {
	switch v := v.(type) {
	case int64:
		return new(big.Rat).SetInt64(v)
	case *big.Rat:
		return v
	}
	panic(fmt.Sprintf("difftest: %T is not numeric", v))
}

// roundHalfUp rounds r to scale s, halves away from zero, as Java's
// RoundingMode.HALF_UP does.
func roundHalfUp(r *big.Rat, s int) *big.Rat {
	str := r.FloatString(s) // rounds half away from zero
	out, ok := new(big.Rat).SetString(str)
	if !ok {
		panic("difftest: bad decimal " + str)
	}
	return out
}

// format prints v of type t as the engine's TSV does: DECIMAL at its full
// scale, BOOLEAN as TRUE/FALSE, TIMESTAMP(3) with three fraction digits.
func format(v value, t typ) string {
	if v == nil {
		return "NULL"
	}
	switch t.k {
	case kDec:
		return rat(v).FloatString(t.s)
	case kBool:
		if v.(bool) {
			return "TRUE"
		}
		return "FALSE"
	case kTs:
		return time.UnixMilli(int64(v.(tsVal))).UTC().Format("2006-01-02 15:04:05.000")
	}
	switch v := v.(type) {
	case int64:
		return strconv.FormatInt(v, 10)
	case string:
		return v
	case *big.Rat:
		return v.FloatString(t.s)
	}
	return fmt.Sprint(v)
}

// literal prints v of type t as a SQL literal of that type.
func literal(v value, t typ) string {
	if v == nil {
		return "CAST(NULL AS " + t.sqlName() + ")"
	}
	switch t.k {
	case kStr:
		return "'" + strings.ReplaceAll(v.(string), "'", "''") + "'"
	case kTs:
		return "TIMESTAMP '" + format(v, t) + "'"
	}
	return format(v, t)
}

// compare orders two non-NULL values of comparable types: -1, 0 or 1.
func compare(a, b value) int {
	switch a := a.(type) {
	case bool:
		b := b.(bool)
		switch {
		case a == b:
			return 0
		case !a:
			return -1
		}
		return 1
	case string:
		return strings.Compare(a, b.(string))
	case tsVal:
		b := b.(tsVal)
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	case int64:
		if b, ok := b.(int64); ok {
			switch {
			case a < b:
				return -1
			case a > b:
				return 1
			}
			return 0
		}
	}
	return rat(a).Cmp(rat(b))
}

// commonType is the type CASE, COALESCE and set operations give values of
// types ts: INT with BIGINT is BIGINT; with a DECIMAL, integers count as
// DECIMALs and the result keeps the largest scale and integer part.
func commonType(ts ...typ) (typ, error) {
	var out typ
	for _, t := range ts {
		switch {
		case t.k == kNull:
		case out.k == kNull:
			out = t
		case out.k == t.k && t.k != kDec:
		case out.isNumeric() && t.isNumeric():
			if out.isInteger() && t.isInteger() {
				out = tBigInt
				continue
			}
			a, b := out.asDecimal(), t.asDecimal()
			s := max(a.s, b.s)
			p := min(38, max(a.p-a.s, b.p-b.s)+s)
			out = tDec(p, s)
		default:
			return typ{}, fmt.Errorf("no common type for %s and %s", out.sqlName(), t.sqlName())
		}
	}
	return out, nil
}

// adjust caps a derived DECIMAL at precision 38 as Flink's
// LogicalTypeMerging#adjustPrecisionScale does.
func adjust(p, s int) typ {
	if p <= 38 {
		return tDec(p, s)
	}
	intDigits := p - s
	s = max(38-intDigits, min(s, 6))
	return tDec(38, s)
}
