package expr

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/braidflow/braid/types"
)

// castKernel converts from one type to another. A value that cannot be
// converted (a bad string) fails the evaluation, or gives NULL for
// TRY_CAST; numeric overflow into DECIMAL gives NULL as in Flink.
func castKernel(from, to types.DataType, try bool) (kernel, error) {
	if !CanCast(from, to) {
		return nil, userErrorf("cannot cast %v to %v", from, to)
	}
	if from.IsComposite() && to.IsComposite() {
		return compositeCastKernel(from, to, try)
	}
	conv, err := castRow(from, to)
	if err != nil {
		return nil, err
	}
	name := "CAST"
	if try {
		name = "TRY_CAST"
	}
	tc := classOf(to)
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a := args[0]
		out := newVec(tc, ec.n)
		out.valid = make([]bool, ec.n)
		lim := newStrLimit(ec, name, tc == clsBin)
		for i := 0; i < ec.n; i++ {
			if a.isNull(i) {
				continue
			}
			ok, err := conv(ec, a, i, out)
			if err != nil {
				// NB: a value over a limit is no bad input TRY_CAST hides.
				if (try && !errors.Is(err, errStringLimit)) || !ec.isActive(i) {
					continue
				}
				return nil, err
			}
			if ok && (tc == clsStr || tc == clsBin) {
				var n int
				if tc == clsStr {
					n = len(out.str[i])
				} else {
					n = len(out.bin[i])
				}
				if ok, err = lim.admit(i, int64(n)); err != nil {
					return nil, err
				}
			}
			out.valid[i] = ok
		}
		return out, nil
	}, nil
}

// rowConv converts row i of a into row i of out; ok false means NULL. One
// that builds a string or binary checks its length with ec.checkLength
// first; castKernel admits the result into the column's total.
type rowConv func(ec *evalCtx, a *vec, i int, out *vec) (ok bool, err error)

func castFail(v any, to types.DataType) error {
	return fmt.Errorf("expr: CAST of '%v' to %v failed", v, to)
}

func castRow(from, to types.DataType) (rowConv, error) {
	fc, tc := classOf(from), classOf(to)
	if from.Kind == types.KindNull {
		return func(*evalCtx, *vec, int, *vec) (bool, error) { return false, nil }, nil
	}
	if tc == clsStr {
		return toStringConv(from, to), nil
	}
	if from.IsComposite() {
		return nil, fmt.Errorf("expr: composite CAST is built by compositeCastKernel")
	}
	if fc == clsStr {
		return fromStringConv(to), nil
	}
	switch {
	case tc == clsBool:
		return func(ec *evalCtx, a *vec, i int, out *vec) (bool, error) {
			switch fc {
			case clsBool:
				out.b[i] = a.b[i]
			case clsInt:
				out.b[i] = a.i64[i] != 0
			case clsFloat:
				out.b[i] = a.f64[i] != 0
			case clsDec:
				out.b[i] = a.dec[i].Sign() != 0
			}
			return true, nil
		}, nil
	case fc == clsBool:
		return func(ec *evalCtx, a *vec, i int, out *vec) (bool, error) {
			v := int64(b2i(a.b[i]))
			switch tc {
			case clsInt:
				out.i64[i] = v
			case clsFloat:
				out.f64[i] = float64(v)
			case clsDec:
				return setDec(out, i, big.NewInt(v), 0, to), nil
			}
			return true, nil
		}, nil
	case from.IsNumeric() && to.IsNumeric():
		return numericConv(from, to), nil
	case fc == clsBin && tc == clsBin:
		return func(ec *evalCtx, a *vec, i int, out *vec) (bool, error) {
			out.bin[i] = a.bin[i]
			return true, nil
		}, nil
	}
	return temporalConv(from, to)
}

func setDec(out *vec, i int, x *big.Int, scale int32, to types.DataType) bool {
	z := rescaleBig(x, scale, int32(to.Scale))
	if !fitsDecimal(z, to.Precision) {
		return false
	}
	out.dec[i] = decimal128.FromBigInt(z)
	return true
}

// saturate converts a float to an integer as Java's (long)/(int) casts do.
func saturate(f float64, k types.Kind) int64 {
	if math.IsNaN(f) {
		return 0
	}
	lo, hi := float64(math.MinInt64), float64(math.MaxInt64)
	if k != types.KindBigInt {
		lo, hi = math.MinInt32, math.MaxInt32
	}
	switch {
	case f <= lo:
		return int64(lo)
	case f >= hi:
		if k == types.KindBigInt {
			return math.MaxInt64
		}
		return math.MaxInt32
	}
	return int64(f)
}

func wrapOne(v int64, k types.Kind) int64 {
	switch k {
	case types.KindTinyInt:
		return int64(int8(v))
	case types.KindSmallInt:
		return int64(int16(v))
	case types.KindInt:
		return int64(int32(v))
	}
	return v
}

func numericConv(from, to types.DataType) rowConv {
	fc, tc := classOf(from), classOf(to)
	fs := int32(from.Scale)
	return func(ec *evalCtx, a *vec, i int, out *vec) (bool, error) {
		switch fc {
		case clsInt:
			x := a.i64[i]
			switch tc {
			case clsInt:
				out.i64[i] = wrapOne(x, to.Kind)
			case clsFloat:
				out.f64[i] = roundFloat(float64(x), to.Kind)
			case clsDec:
				return setDec(out, i, big.NewInt(x), 0, to), nil
			}
		case clsFloat:
			x := a.f64[i]
			switch tc {
			case clsInt:
				out.i64[i] = wrapOne(saturate(x, to.Kind), to.Kind)
			case clsFloat:
				out.f64[i] = roundFloat(x, to.Kind)
			case clsDec:
				if math.IsNaN(x) || math.IsInf(x, 0) {
					return false, nil
				}
				return decFromString(strconv.FormatFloat(x, 'f', -1, 64), to, out, i), nil
			}
		case clsDec:
			x := a.dec[i]
			switch tc {
			case clsInt:
				q := new(big.Int).Quo(x.BigInt(), pow10(fs))
				out.i64[i] = wrapOne(q.Int64(), to.Kind)
			case clsFloat:
				out.f64[i] = roundFloat(decimalToFloat(x, fs), to.Kind)
			case clsDec:
				return setDec(out, i, x.BigInt(), fs, to), nil
			}
		}
		return true, nil
	}
}

// exactPow10 holds the powers of ten a float64 represents exactly.
var exactPow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// decimalToFloat converts an unscaled decimal to the nearest double, as
// Java's BigDecimal.doubleValue does: 333.84 becomes 333.84, not the
// 333.84000000000003 a multiplication by 0.01 gives.
func decimalToFloat(x decimal128.Num, scale int32) float64 {
	if x.HighBits() == 0 || x.HighBits() == -1 {
		v := int64(x.LowBits())
		if (x.HighBits() == 0) == (v >= 0) && v < 1<<53 && v > -(1<<53) && scale >= 0 && int(scale) < len(exactPow10) {
			// Both operands are exact, so the quotient is correctly rounded.
			return float64(v) / exactPow10[scale]
		}
	}
	f, err := strconv.ParseFloat(x.ToString(scale), 64)
	if err != nil {
		return x.ToFloat64(scale)
	}
	return f
}

func roundFloat(f float64, k types.Kind) float64 {
	if k == types.KindFloat {
		return float64(float32(f))
	}
	return f
}

// decFromString parses a plain or scientific decimal into out[i] at to's
// scale, rounding half up; false when it does not parse or overflows.
func decFromString(s string, to types.DataType, out *vec, i int) bool {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return false
	}
	num := new(big.Int).Mul(r.Num(), pow10(int32(to.Scale)))
	z := divRoundHalfUp(num, r.Denom())
	if !fitsDecimal(z, to.Precision) {
		return false
	}
	out.dec[i] = decimal128.FromBigInt(z)
	return true
}

func toStringConv(from, to types.DataType) rowConv {
	fit := func(ec *evalCtx, s string) (string, error) {
		if to.Length <= 0 || to.Length >= types.MaxLength {
			return s, nil
		}
		if utf8.RuneCountInString(s) > to.Length {
			r := []rune(s)
			s = string(r[:to.Length])
		}
		if to.Kind == types.KindChar && from.Kind != types.KindChar {
			if n := utf8.RuneCountInString(s); n < to.Length {
				// NB: CHAR(2147483646) is a valid type.
				if err := ec.checkLength("CAST", false, int64(len(s))+int64(to.Length-n)); err != nil {
					return "", err
				}
				s += strings.Repeat(" ", to.Length-n)
			}
		}
		return s, nil
	}
	return func(ec *evalCtx, a *vec, i int, out *vec) (bool, error) {
		var s string
		switch from.Kind {
		case types.KindChar, types.KindVarChar:
			s = a.str[i]
		case types.KindBoolean:
			s = "FALSE"
			if a.b[i] {
				s = "TRUE"
			}
		case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
			s = strconv.FormatInt(a.i64[i], 10)
		case types.KindFloat:
			s = types.FormatJavaFloat(float32(a.f64[i]))
		case types.KindDouble:
			s = types.FormatJavaDouble(a.f64[i])
		case types.KindDecimal:
			s = a.dec[i].ToString(int32(from.Scale))
		case types.KindBinary, types.KindVarBinary:
			if err := ec.checkLength("CAST", false, int64(len(a.bin[i]))); err != nil {
				return false, err
			}
			s = string(a.bin[i])
		case types.KindDate:
			s = types.FormatDate(int32(a.i64[i]))
		case types.KindTime:
			s = types.FormatTime(int32(a.i64[i]), from.Precision)
		case types.KindTimestamp:
			s = types.FormatTimestamp(a.i64[i], from.Precision)
		case types.KindTimestampLTZ:
			s = types.FormatTimestampLTZ(a.i64[i], from.Precision, ec.loc)
		case types.KindIntervalDayTime:
			s = types.FormatIntervalDayTime(a.i64[i])
		case types.KindIntervalYearMonth:
			s = types.FormatIntervalYearMonth(int32(a.i64[i]))
		case types.KindArray, types.KindMap, types.KindMultiset, types.KindRow:
			s = types.FormatComposite(from, a.bin[i], ec.loc)
			if err := ec.checkLength("CAST", false, int64(len(s))); err != nil {
				return false, err
			}
		}
		s, err := fit(ec, s)
		out.str[i] = s
		return err == nil, err
	}
}

// parseJavaInt parses an integer string as Flink's string-to-integer cast
// does: surrounding whitespace ignored, a fractional part truncated.
func parseJavaInt(s string, k types.Kind) (int64, bool) {
	s = strings.TrimSpace(s)
	if ip, frac, ok := strings.Cut(s, "."); ok {
		for _, c := range frac {
			if c < '0' || c > '9' {
				return 0, false
			}
		}
		if ip == "" || ip == "-" || ip == "+" {
			ip += "0"
		}
		s = ip
	}
	bits := 64
	switch k {
	case types.KindTinyInt:
		bits = 8
	case types.KindSmallInt:
		bits = 16
	case types.KindInt:
		bits = 32
	}
	v, err := strconv.ParseInt(s, 10, bits)
	return v, err == nil
}

func fromStringConv(to types.DataType) rowConv {
	return func(ec *evalCtx, a *vec, i int, out *vec) (bool, error) {
		s := a.str[i]
		switch to.Kind {
		case types.KindBoolean:
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "true", "t", "yes", "y", "1":
				out.b[i] = true
			case "false", "f", "no", "n", "0":
				out.b[i] = false
			default:
				return false, castFail(s, to)
			}
		case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
			v, ok := parseJavaInt(s, to.Kind)
			if !ok {
				return false, castFail(s, to)
			}
			out.i64[i] = v
		case types.KindFloat, types.KindDouble:
			t := strings.TrimSpace(s)
			switch t {
			case "NaN":
				out.f64[i] = math.NaN()
				return true, nil
			case "Infinity", "+Infinity":
				out.f64[i] = math.Inf(1)
				return true, nil
			case "-Infinity":
				out.f64[i] = math.Inf(-1)
				return true, nil
			}
			f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSuffix(t, "d"), "f"), 64)
			if err != nil && !isRangeErr(err) {
				return false, castFail(s, to)
			}
			out.f64[i] = roundFloat(f, to.Kind)
		case types.KindDecimal:
			t := strings.TrimSpace(s)
			if _, ok := new(big.Rat).SetString(t); !ok || strings.ContainsAny(t, "/") {
				return false, castFail(s, to)
			}
			return decFromString(t, to, out, i), nil
		case types.KindBinary, types.KindVarBinary:
			if err := ec.checkLength("CAST", true, int64(len(s))); err != nil {
				return false, err
			}
			out.bin[i] = []byte(s)
		case types.KindDate:
			d, ok := parseDate(strings.TrimSpace(s))
			if !ok {
				return false, castFail(s, to)
			}
			out.i64[i] = int64(d)
		case types.KindTime:
			ms, ok := parseTimeOfDay(strings.TrimSpace(s))
			if !ok {
				return false, castFail(s, to)
			}
			out.i64[i] = int64(ms)
		case types.KindTimestamp, types.KindTimestampLTZ:
			ns, ok := parseTimestampLenient(strings.TrimSpace(s))
			if !ok {
				return false, castFail(s, to)
			}
			ns = truncNanos(ns, to.Precision)
			if to.Kind == types.KindTimestampLTZ {
				ns = wallToInstant(ns, ec.loc)
			}
			out.i64[i] = ns
		default:
			return false, castFail(s, to)
		}
		return true, nil
	}
}

// truncNanos drops the digits below precision p (floor).
func truncNanos(ns int64, p int) int64 {
	if p >= 9 || p < 0 {
		return ns
	}
	unit := int64(math.Pow10(9 - p))
	return floorDiv(ns, unit) * unit
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

const (
	nsPerMs  = int64(1_000_000)
	nsPerSec = int64(1_000_000_000)
	nsPerDay = 86400 * nsPerSec
	msPerDay = int64(86_400_000)
)

func temporalConv(from, to types.DataType) (rowConv, error) {
	f, t := from.Kind, to.Kind
	var conv func(ec *evalCtx, x int64) int64
	switch {
	case f == t && (f == types.KindTimestamp || f == types.KindTimestampLTZ):
		conv = func(_ *evalCtx, x int64) int64 { return truncNanos(x, to.Precision) }
	case f == t:
		conv = func(_ *evalCtx, x int64) int64 { return x }
	case f == types.KindDate && t == types.KindTimestamp:
		conv = func(_ *evalCtx, x int64) int64 { return x * nsPerDay }
	case f == types.KindDate && t == types.KindTimestampLTZ:
		conv = func(ec *evalCtx, x int64) int64 { return wallToInstant(x*nsPerDay, ec.loc) }
	case f == types.KindTimestamp && t == types.KindDate:
		conv = func(_ *evalCtx, x int64) int64 { return floorDiv(x, nsPerDay) }
	case f == types.KindTimestampLTZ && t == types.KindDate:
		conv = func(ec *evalCtx, x int64) int64 { return floorDiv(instantToWall(x, ec.loc), nsPerDay) }
	case f == types.KindTimestamp && t == types.KindTime:
		conv = func(_ *evalCtx, x int64) int64 { return floorMod(x, nsPerDay) / nsPerMs }
	case f == types.KindTimestampLTZ && t == types.KindTime:
		conv = func(ec *evalCtx, x int64) int64 { return floorMod(instantToWall(x, ec.loc), nsPerDay) / nsPerMs }
	case f == types.KindTime && t == types.KindTimestamp:
		conv = func(_ *evalCtx, x int64) int64 { return x * nsPerMs }
	case f == types.KindTime && t == types.KindTimestampLTZ:
		conv = func(ec *evalCtx, x int64) int64 { return wallToInstant(x*nsPerMs, ec.loc) }
	case f == types.KindTimestamp && t == types.KindTimestampLTZ:
		conv = func(ec *evalCtx, x int64) int64 { return truncNanos(wallToInstant(x, ec.loc), to.Precision) }
	case f == types.KindTimestampLTZ && t == types.KindTimestamp:
		conv = func(ec *evalCtx, x int64) int64 { return truncNanos(instantToWall(x, ec.loc), to.Precision) }
	case from.IsInteger() && t == types.KindTimestampLTZ:
		conv = func(_ *evalCtx, x int64) int64 { return x * nsPerSec }
	case f == types.KindTimestampLTZ && to.IsInteger():
		conv = func(_ *evalCtx, x int64) int64 { return wrapOne(floorDiv(x, nsPerSec), t) }
	case from.IsInterval() && to.IsInteger():
		conv = func(_ *evalCtx, x int64) int64 { return wrapOne(x, t) }
	default:
		return nil, userErrorf("cannot cast %v to %v", from, to)
	}
	return func(ec *evalCtx, a *vec, i int, out *vec) (bool, error) {
		out.i64[i] = conv(ec, a.i64[i])
		return true, nil
	}, nil
}
