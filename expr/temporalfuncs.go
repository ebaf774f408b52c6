package expr

import (
	"fmt"
	"math"
	"time"

	"github.com/braidflow/braid/types"
)

// resolveToTimestampLTZ types TO_TIMESTAMP_LTZ(n, precision): epoch
// seconds (precision 0) or milliseconds (3) as a TIMESTAMP_LTZ(3). The
// precision is a literal; Flink accepts only 0 and 3.
func resolveToTimestampLTZ(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 2, 2); err != nil {
		return nil, err
	}
	n, p := args[0], args[1]
	switch {
	case n.Type.Kind == types.KindNull:
		n = fillNull(n, types.BigInt)
	case n.Type.IsInteger():
	case n.Type.IsNumeric():
		n = implicit(n, types.Double)
	default:
		return nil, userErrorf("function %s expects a number of seconds or milliseconds, got %v", name, n.Type)
	}
	v, ok := p.Value.(int64)
	if p.Op != OpLiteral || !p.Type.IsInteger() || !ok {
		return nil, userErrorf("function %s expects the precision as an integer literal", name)
	}
	if v != 0 && v != 3 {
		return nil, userErrorf("The precision value '%d' for function %s(numeric, precision) is unsupported, the supported value is '0', '3'.", v, name)
	}
	return call(name, types.TimestampLTZ(3).WithNullable(n.Type.Nullable()), n, p), nil
}

func toTimestampLTZKernel(e *Expr, at []types.DataType) (kernel, error) {
	unit := nsPerSec
	if e.Args[1].Value.(int64) == 3 {
		unit = nsPerSec / 1000
	}
	// The engine holds instants in int64 ns: years 1677 to 2262.
	fail := func(x any) error {
		return fmt.Errorf("expr: TO_TIMESTAMP_LTZ: %v is outside the supported range of TIMESTAMP_LTZ", x)
	}
	isInt := at[0].IsInteger()
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a := args[0]
		return strictRows(ec, clsInt, args[:1], func(i int, out *vec) (bool, error) {
			if isInt {
				x := a.i64[i]
				if x > math.MaxInt64/unit || x < math.MinInt64/unit {
					return false, fail(x)
				}
				out.i64[i] = x * unit
				return true, nil
			}
			x := a.f64[i]
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return false, nil
			}
			ms := math.Floor(x * float64(unit/1_000_000))
			if ms >= math.MaxInt64/1_000_000 || ms <= math.MinInt64/1_000_000 {
				return false, fail(x)
			}
			out.i64[i] = int64(ms) * 1_000_000
			return true, nil
		})
	}, nil
}

// convertTzKernel is CONVERT_TZ(s, from, to): the wall-clock reading s
// ('yyyy-MM-dd HH:mm:ss', read leniently as TO_TIMESTAMP reads it) in zone
// from, shown in zone to. An unknown zone counts as UTC, as Java's
// TimeZone.getTimeZone counts it as GMT; an unreadable s gives NULL.
func convertTzKernel(*Expr, []types.DataType) (kernel, error) {
	zones := map[string]*time.Location{}
	zone := func(id string) *time.Location {
		if l, ok := zones[id]; ok {
			return l
		}
		l, err := types.LoadZone(javaShortZones[id])
		if javaShortZones[id] == "" {
			l, err = types.LoadZone(id)
		}
		if err != nil {
			l = time.UTC
		}
		zones[id] = l
		return l
	}
	return strKernel("CONVERT_TZ", func(_ *evalCtx, _ *strLimit, args []*vec, i int) (string, bool, error) {
		w, ok := parseTimestampLenient(args[0].str[i])
		if !ok {
			return "", false, nil
		}
		w = instantToWall(wallToInstant(w, zone(args[1].str[i])), zone(args[2].str[i]))
		return wallTime(w).Format("2006-01-02 15:04:05"), true, nil
	})(nil, nil)
}

// javaShortZones are the three-letter ids java.time.ZoneId.SHORT_IDS maps
// that users write most.
var javaShortZones = map[string]string{
	"PST": "America/Los_Angeles", "CST": "America/Chicago", "EST": "-05:00", "MST": "-07:00",
	"HST": "-10:00", "IST": "Asia/Kolkata", "JST": "Asia/Tokyo", "CTT": "Asia/Shanghai",
	"ECT": "Europe/Paris", "AET": "Australia/Sydney", "BST": "Asia/Dhaka",
}

// resolveCurrentWatermark types CURRENT_WATERMARK(rowtime) as Flink does:
// the argument's timestamp type at precision 3, nullable (NULL before the
// first watermark). That the argument is a rowtime attribute, not just a
// timestamp, is the binder's check: only it knows time attributes.
func resolveCurrentWatermark(name string, args []*Expr) (*Expr, error) {
	if len(args) != 1 || !args[0].Type.IsTimestamp() {
		t := "no argument"
		if len(args) > 0 {
			t = args[0].Type.String()
		}
		return nil, userErrorf("CURRENT_WATERMARK() must be called with a single rowtime attribute argument, but '%s' cannot be a time attribute.", t)
	}
	t := args[0].Type
	t.Precision = 3
	return call(name, t.WithNullable(true), args...), nil
}

// currentWatermarkKernel fills the batch with the environment's watermark
// (milliseconds, of the rowtime's wall clock or the epoch alike), or NULL.
func currentWatermarkKernel(e *Expr, at []types.DataType) (kernel, error) {
	return func(ec *evalCtx, _ []*vec) (*vec, error) {
		out := &vec{n: ec.n, i64: make([]int64, ec.n)}
		ms, ok := ec.env.watermark()
		if !ok {
			out.valid = make([]bool, ec.n)
			return out, nil
		}
		fill(out.i64, ms*nsPerMs)
		return out, nil
	}, nil
}
