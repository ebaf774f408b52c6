package expr

import (
	"fmt"
	"strings"

	"github.com/braidflow/braid/types"
)

// UserError is a type or argument error a user caused. It carries no
// position; the planner adds one.
type UserError struct{ Msg string }

func (e *UserError) Error() string { return e.Msg }

func userErrorf(format string, args ...any) error {
	return &UserError{Msg: fmt.Sprintf(format, args...)}
}

// integerDecimal is the DECIMAL an integer type counts as in arithmetic.
func integerDecimal(t types.DataType) types.DataType {
	p := 19
	switch t.Kind {
	case types.KindTinyInt:
		p = 3
	case types.KindSmallInt:
		p = 5
	case types.KindInt:
		p = 10
	}
	return types.Decimal(p, 0).WithNullable(t.Nullable())
}

func asDecimal(t types.DataType) types.DataType {
	if t.IsInteger() {
		return integerDecimal(t)
	}
	return t
}

// adjustDecimal caps precision at 38 as Flink's adjustPrecisionScale does.
func adjustDecimal(p, s int) types.DataType {
	if p > 38 {
		s = max(38-(p-s), min(s, 6))
		p = 38
	}
	return types.Decimal(p, s)
}

func intRank(k types.Kind) int {
	switch k {
	case types.KindTinyInt:
		return 1
	case types.KindSmallInt:
		return 2
	case types.KindInt:
		return 3
	case types.KindBigInt:
		return 4
	}
	return 0
}

func anyNullable(ts ...types.DataType) bool {
	for _, t := range ts {
		if t.Nullable() {
			return true
		}
	}
	return false
}

// CommonType returns the type every one of ts can be implicitly cast to, as
// Flink finds it for UNION, CASE, COALESCE, IN and VALUES: numeric widening
// (DECIMAL with FLOAT/DOUBLE is DOUBLE), CHARs of one length stay CHAR(n)
// while ragged CHARs become VARCHAR(max), DATE with TIMESTAMP is TIMESTAMP.
// The result is nullable if any input is. NULL-typed inputs only add
// nullability. ok is false when the types have no common type.
func CommonType(ts ...types.DataType) (types.DataType, bool) {
	nullable := false
	var rest []types.DataType
	for _, t := range ts {
		nullable = nullable || t.Nullable()
		if t.Kind != types.KindNull {
			rest = append(rest, t)
		}
	}
	if len(rest) == 0 {
		if len(ts) == 0 {
			return types.DataType{}, false
		}
		return types.Null, true
	}
	r := rest[0]
	for _, t := range rest[1:] {
		var ok bool
		if r, ok = common2(r, t); !ok {
			return types.DataType{}, false
		}
	}
	return r.WithNullable(nullable), true
}

func common2(a, b types.DataType) (types.DataType, bool) {
	switch {
	case a.IsNumeric() && b.IsNumeric():
		switch {
		case a.Kind == types.KindDouble || b.Kind == types.KindDouble:
			return types.Double, true
		case a.Kind == types.KindFloat || b.Kind == types.KindFloat:
			if a.Kind == types.KindDecimal || b.Kind == types.KindDecimal {
				return types.Double, true
			}
			return types.Float, true
		case a.Kind == types.KindDecimal || b.Kind == types.KindDecimal:
			da, db := asDecimal(a), asDecimal(b)
			s := max(da.Scale, db.Scale)
			whole := max(da.Precision-da.Scale, db.Precision-db.Scale)
			return types.Decimal(min(38, whole+s), s), true
		}
		if intRank(a.Kind) >= intRank(b.Kind) {
			return a.WithNullable(true), true
		}
		return b.WithNullable(true), true
	case a.IsString() && b.IsString():
		if a.Kind == types.KindChar && b.Kind == types.KindChar && a.Length == b.Length {
			return types.Char(a.Length), true
		}
		return types.VarChar(max(a.Length, b.Length)), true
	case a.IsBinary() && b.IsBinary():
		if a.Kind == types.KindBinary && b.Kind == types.KindBinary && a.Length == b.Length {
			return types.DataType{Kind: types.KindBinary, Length: a.Length}, true
		}
		return types.DataType{Kind: types.KindVarBinary, Length: max(a.Length, b.Length)}, true
	case a.IsComposite() || b.IsComposite():
		return commonComposite(a, b)
	case a.Kind == b.Kind:
		switch a.Kind {
		case types.KindTime, types.KindTimestamp, types.KindTimestampLTZ:
			return types.DataType{Kind: a.Kind, Precision: max(a.Precision, b.Precision)}, true
		}
		return a.WithNullable(true), true
	case a.Kind == types.KindDate && b.IsTimestamp():
		return b.WithNullable(true), true
	case b.Kind == types.KindDate && a.IsTimestamp():
		return a.WithNullable(true), true
	case a.IsTimestamp() && b.IsTimestamp():
		return types.TimestampLTZ(max(a.Precision, b.Precision)), true
	}
	return types.DataType{}, false
}

// CanCast reports whether CAST(x AS to) is legal for x of type from, per
// Flink's cast rules: every type to and from strings, numerics and BOOLEAN
// among themselves, the temporal types among themselves (TIME only with
// TIMESTAMP), integers to and from TIMESTAMP_LTZ (epoch seconds), strings
// and binaries, and NULL to anything.
func CanCast(from, to types.DataType) bool {
	f, t := from, to
	switch {
	case f.Kind == types.KindNull:
		return true
	case f.IsComposite() || t.IsComposite():
		// A composite value casts to a string, and to a composite type of
		// its kind whose parts it casts to.
		return canCastComposite(f, t) || (f.IsComposite() && t.IsString())
	case f.Kind == t.Kind:
		return true
	case f.IsString() || t.IsString():
		return true
	case (f.IsNumeric() || f.Kind == types.KindBoolean) && (t.IsNumeric() || t.Kind == types.KindBoolean):
		return true
	case f.IsBinary() && t.IsBinary():
		return true
	case f.Kind == types.KindDate && t.IsTimestamp(), f.IsTimestamp() && t.Kind == types.KindDate:
		return true
	case f.Kind == types.KindTime && t.IsTimestamp(), f.IsTimestamp() && t.Kind == types.KindTime:
		return true
	case f.IsTimestamp() && t.IsTimestamp():
		return true
	case f.IsInteger() && t.Kind == types.KindTimestampLTZ, f.Kind == types.KindTimestampLTZ && t.IsInteger():
		return true
	case f.IsInterval() && t.IsInteger() && f.Kind != types.KindNull:
		return true
	}
	return false
}

// Cast returns the explicit CAST(e AS t) node. It does not check CanCast;
// the planner does, to word the error with a position. Casting to the exact
// type e already has returns e.
func Cast(e *Expr, t types.DataType) *Expr {
	if e.Type == t {
		return e
	}
	return &Expr{Op: OpCall, Func: "CAST", Type: t, Args: []*Expr{e}}
}

// TryCast returns TRY_CAST(e AS t), which yields NULL where CAST would fail.
func TryCast(e *Expr, t types.DataType) *Expr {
	return &Expr{Op: OpCall, Func: "TRY_CAST", Type: t.WithNullable(true), Args: []*Expr{e}}
}

// implicit casts e to t's kind and size, keeping e's nullability; it adds
// nothing when e already has that type.
func implicit(e *Expr, t types.DataType) *Expr {
	t = t.WithNullable(e.Type.Nullable())
	if e.Type == t {
		return e
	}
	return &Expr{Op: OpCall, Func: "CAST", Type: t, Args: []*Expr{e}}
}

func call(name string, t types.DataType, args ...*Expr) *Expr {
	return &Expr{Op: OpCall, Func: name, Type: t, Args: args}
}

func typeNames(args []*Expr) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.Type.String()
	}
	if len(parts) == 2 {
		return parts[0] + " and " + parts[1]
	}
	return strings.Join(parts, ", ")
}

func cannotApply(name string, args []*Expr) error {
	return userErrorf("cannot apply '%s' to arguments of type %s", name, typeNames(args))
}
