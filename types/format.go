package types

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// FormatValue prints row `row` of col, whose SQL type is t, the way Flink's
// CAST(x AS STRING) prints it, which is what the SQL client shows. isNull
// reports a NULL (s is then empty). TIMESTAMP_LTZ values are shown in loc
// (nil means UTC). col must have t's Arrow layout (see ArrowType); a column
// of another layout prints as "?".
func FormatValue(col arrow.Array, row int, t DataType, loc *time.Location) (s string, isNull bool) {
	if col.IsNull(row) {
		return "", true
	}
	switch a := col.(type) {
	case *array.Boolean:
		if a.Value(row) {
			return "TRUE", false
		}
		return "FALSE", false
	case *array.Int8:
		return strconv.FormatInt(int64(a.Value(row)), 10), false
	case *array.Int16:
		return strconv.FormatInt(int64(a.Value(row)), 10), false
	case *array.Int32:
		if t.Kind == KindIntervalYearMonth {
			return FormatIntervalYearMonth(a.Value(row)), false
		}
		return strconv.FormatInt(int64(a.Value(row)), 10), false
	case *array.Int64:
		return strconv.FormatInt(a.Value(row), 10), false
	case *array.Float32:
		return FormatJavaFloat(a.Value(row)), false
	case *array.Float64:
		return FormatJavaDouble(a.Value(row)), false
	case *array.Decimal128:
		scale := a.DataType().(*arrow.Decimal128Type).Scale
		return a.Value(row).ToString(scale), false
	case *array.String:
		return a.Value(row), false
	case *array.Binary:
		if t.IsComposite() {
			return FormatComposite(t, a.Value(row), loc), false
		}
		return FormatBytes(a.Value(row)), false
	case *array.Date32:
		return FormatDate(int32(a.Value(row))), false
	case *array.Time32:
		return FormatTime(int32(a.Value(row)), t.Precision), false
	case *array.Timestamp:
		ns := int64(a.Value(row))
		if t.Kind == KindTimestampLTZ {
			return FormatTimestampLTZ(ns, t.Precision, loc), false
		}
		return FormatTimestamp(ns, t.Precision), false
	case *array.Duration:
		return FormatIntervalDayTime(int64(a.Value(row))), false
	case *array.Null:
		return "", true
	}
	return "?", false
}

// FormatBytes prints BINARY/VARBINARY as the SQL client does: x'0a0b'.
func FormatBytes(b []byte) string { return "x'" + hex.EncodeToString(b) + "'" }

// FormatDate prints days since the epoch as yyyy-MM-dd.
func FormatDate(days int32) string {
	return time.Unix(int64(days)*86400, 0).UTC().Format("2006-01-02")
}

// FormatTime prints milliseconds of the day as HH:mm:ss with precision
// fractional digits (digits below milliseconds are zero).
func FormatTime(ms int32, precision int) string {
	var buf [32]byte
	out := buf[:0]
	m := int64(ms)
	out = append2(out, int(m/3600000))
	out = append(out, ':')
	out = append2(out, int(m/60000%60))
	out = append(out, ':')
	out = append2(out, int(m/1000%60))
	return string(appendFraction(out, (m%1000)*1_000_000, precision))
}

// FormatTimestamp prints a wall-clock reading (nanoseconds since the epoch,
// no zone) as yyyy-MM-dd HH:mm:ss with exactly precision fractional digits.
func FormatTimestamp(ns int64, precision int) string {
	return formatWallClock(time.Unix(0, ns).UTC(), precision)
}

// FormatTimestampLTZ prints an instant in loc (nil: UTC) as FormatTimestamp
// prints a wall-clock reading.
func FormatTimestampLTZ(ns int64, precision int, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	return formatWallClock(time.Unix(0, ns).In(loc), precision)
}

func formatWallClock(tm time.Time, precision int) string {
	var buf [48]byte
	out := tm.AppendFormat(buf[:0], "2006-01-02 15:04:05")
	return string(appendFraction(out, int64(tm.Nanosecond()), precision))
}

// appendFraction appends "." and the first precision digits of nanos.
func appendFraction(out []byte, nanos int64, precision int) []byte {
	if precision <= 0 {
		return out
	}
	if precision > 9 {
		precision = 9
	}
	var digits [9]byte
	for i := 8; i >= 0; i-- {
		digits[i] = byte('0' + nanos%10)
		nanos /= 10
	}
	out = append(out, '.')
	return append(out, digits[:precision]...)
}

func append2(out []byte, v int) []byte {
	if v < 10 {
		out = append(out, '0')
	}
	return strconv.AppendInt(out, int64(v), 10)
}

// FormatIntervalDayTime prints milliseconds as Flink prints INTERVAL DAY TO
// SECOND(3): "+1 00:00:00.000", "-0 01:30:00.000".
func FormatIntervalDayTime(ms int64) string {
	sign := byte('+')
	u := uint64(ms)
	if ms < 0 {
		sign = '-'
		u = uint64(-ms)
	}
	out := []byte{sign}
	out = strconv.AppendUint(out, u/86400000, 10)
	out = append(out, ' ')
	out = append2(out, int(u/3600000%24))
	out = append(out, ':')
	out = append2(out, int(u/60000%60))
	out = append(out, ':')
	out = append2(out, int(u/1000%60))
	return string(appendFraction(out, int64(u%1000)*1_000_000, 3))
}

// FormatIntervalYearMonth prints months as Flink prints INTERVAL YEAR TO
// MONTH: "+1-00", "-2-06".
func FormatIntervalYearMonth(months int32) string {
	sign := byte('+')
	m := int64(months)
	if m < 0 {
		sign = '-'
		m = -m
	}
	out := []byte{sign}
	out = strconv.AppendInt(out, m/12, 10)
	out = append(out, '-')
	out = append2(out, int(m%12))
	return string(out)
}

// FormatJavaDouble prints f exactly as Java's Double.toString does (JDK 19
// and later, which prints the shortest decimal that reads back as f): plain
// notation with at least one fractional digit for 1e-3 <= |f| < 1e7
// ("100.0", "0.001"), otherwise "d.dddE±n" ("1.0E10", "1.0E-5").
func FormatJavaDouble(f float64) string { return formatJava(f, 64) }

// FormatJavaFloat prints f as Java's Float.toString does; see
// FormatJavaDouble.
func FormatJavaFloat(f float32) string { return formatJava(float64(f), 32) }

func formatJava(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	// Shortest digits that round-trip, as d.ddddde±XX.
	e := strconv.FormatFloat(f, 'e', -1, bits)
	neg := e[0] == '-'
	if neg {
		e = e[1:]
	}
	mant, exps, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	if len(digits) == 1 {
		// NB: Java always shows two significant digits at least; where the
		// shortest has one, it picks the closest two-digit decimal (which
		// differs from padding a zero for subnormals such as 4.9E-324).
		e2 := strconv.FormatFloat(math.Abs(f), 'e', 1, bits)
		mant, exps, _ = strings.Cut(e2, "e")
		digits = strings.Replace(mant, ".", "", 1)
		if digits[1] == '0' {
			digits = digits[:1]
		}
	}
	exp, _ := strconv.Atoi(exps)
	var out []byte
	if neg {
		out = append(out, '-')
	}
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		if exp >= 0 {
			if len(digits) <= exp+1 {
				out = append(out, digits...)
				out = append(out, strings.Repeat("0", exp+1-len(digits))...)
				out = append(out, ".0"...)
			} else {
				out = append(out, digits[:exp+1]...)
				out = append(out, '.')
				out = append(out, digits[exp+1:]...)
			}
		} else {
			out = append(out, "0."...)
			out = append(out, strings.Repeat("0", -exp-1)...)
			out = append(out, digits...)
		}
		return string(out)
	}
	out = append(out, digits[0], '.')
	if len(digits) > 1 {
		out = append(out, digits[1:]...)
	} else {
		out = append(out, '0')
	}
	out = append(out, 'E')
	out = strconv.AppendInt(out, int64(exp), 10)
	return string(out)
}
