package planner

import (
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

func bindLiteral(l *ast.Literal) (*expr.Expr, error) {
	switch l.Kind {
	case ast.LitNumber:
		e, err := expr.ParseNumericLiteral(l.Value)
		if err != nil {
			return nil, errorf(l.Pos, "%s", err.Error())
		}
		return e, nil
	case ast.LitString:
		return expr.StringLiteral(l.Value), nil
	case ast.LitBinary:
		b, err := hex.DecodeString(l.Value)
		if err != nil {
			return nil, errorf(l.Pos, "invalid binary literal X'%s'", l.Value)
		}
		return expr.Literal(b, types.DataType{Kind: types.KindBinary, Length: len(b), NotNull: true}), nil
	case ast.LitBool:
		return expr.Literal(l.Value == "TRUE", types.Boolean.WithNullable(false)), nil
	case ast.LitNull:
		return expr.NullLiteral(types.Null), nil
	case ast.LitUnknown:
		return expr.NullLiteral(types.Boolean), nil
	case ast.LitDate:
		d, err := time.Parse("2006-01-02", strings.TrimSpace(l.Value))
		if err != nil {
			return nil, errorf(l.Pos, "invalid DATE literal '%s' (expected yyyy-MM-dd)", l.Value)
		}
		return expr.Literal(int32(d.Unix()/86400), types.Date.WithNullable(false)), nil
	case ast.LitTime:
		ms, p, ok := parseTimeOfDay(strings.TrimSpace(l.Value))
		if !ok {
			return nil, errorf(l.Pos, "invalid TIME literal '%s' (expected HH:mm:ss[.fff])", l.Value)
		}
		return expr.Literal(int32(ms), types.Time(p).WithNullable(false)), nil
	case ast.LitTimestamp:
		ns, p, ok := parseTimestamp(strings.TrimSpace(l.Value))
		if !ok {
			return nil, errorf(l.Pos, "invalid TIMESTAMP literal '%s' (expected yyyy-MM-dd HH:mm:ss[.fffffffff])", l.Value)
		}
		return expr.Literal(ns, types.Timestamp(p).WithNullable(false)), nil
	}
	return nil, unsupported(l.Pos, "literal "+l.String())
}

// parseTimestamp reads 'yyyy-MM-dd[ HH:mm:ss[.f...]]' as nanoseconds since
// the epoch of the wall-clock reading, and the literal's precision (the
// number of fractional digits written).
func parseTimestamp(s string) (int64, int, bool) {
	datePart, timePart, hasTime := strings.Cut(s, " ")
	d, err := time.Parse("2006-01-02", datePart)
	if err != nil {
		return 0, 0, false
	}
	ns := d.UnixNano()
	p := 0
	if hasTime {
		ms, prec, nanos, ok := parseClock(strings.TrimSpace(timePart))
		if !ok {
			return 0, 0, false
		}
		_ = ms
		ns += nanos
		p = prec
	}
	return ns, p, true
}

// parseTimeOfDay reads 'HH:mm:ss[.fff]' as milliseconds of the day.
func parseTimeOfDay(s string) (int64, int, bool) {
	ms, p, _, ok := parseClock(s)
	return ms, p, ok
}

// parseClock reads HH:mm[:ss[.f...]] returning milliseconds and nanoseconds
// of the day and the number of fractional digits.
func parseClock(s string) (ms int64, prec int, nanos int64, ok bool) {
	main, frac, hasFrac := strings.Cut(s, ".")
	parts := strings.Split(main, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, 0, 0, false
	}
	limits := []int64{23, 59, 59}
	var hms [3]int64
	for i, p := range parts {
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil || v < 0 || v > limits[i] || len(p) > 2 {
			return 0, 0, 0, false
		}
		hms[i] = v
	}
	nanos = (hms[0]*3600 + hms[1]*60 + hms[2]) * int64(time.Second)
	if hasFrac {
		if len(frac) == 0 || len(frac) > 9 {
			return 0, 0, 0, false
		}
		f, err := strconv.ParseInt(frac, 10, 64)
		if err != nil {
			return 0, 0, 0, false
		}
		for i := len(frac); i < 9; i++ {
			f *= 10
		}
		nanos += f
		prec = len(frac)
	}
	return nanos / int64(time.Millisecond), prec, nanos, true
}

// singularUnit maps the plural units Flink accepts (INTERVAL '10' MINUTES)
// to their singular.
func singularUnit(u ast.TimeUnit) ast.TimeUnit {
	switch u {
	case "YEARS", "MONTHS", "DAYS", "HOURS", "MINUTES", "SECONDS":
		return u[:len(u)-1]
	}
	return u
}

// bindInterval reads an interval literal: a single unit ('7' DAY, '10'
// MINUTE, '1' YEAR) or a range (DAY TO SECOND '1 02:03:04.5', YEAR TO MONTH
// '2-3').
func bindInterval(l *ast.IntervalLit) (*expr.Expr, error) {
	q := l.Qualifier
	start, end := singularUnit(q.Start.Canonical()), singularUnit(q.End.Canonical())
	bad := func() (*expr.Expr, error) {
		return nil, errorf(l.Pos, "invalid interval literal %s", l.String())
	}
	v := strings.TrimSpace(l.Value)
	neg := l.Negative
	if strings.HasPrefix(v, "-") {
		neg = !neg
		v = v[1:]
	} else if strings.HasPrefix(v, "+") {
		v = v[1:]
	}
	sign := int64(1)
	if neg {
		sign = -1
	}
	if start == "YEAR" || start == "MONTH" || start == "QUARTER" {
		var months int64
		switch {
		case end == "" && start == "YEAR":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return bad()
			}
			months = n * 12
		case end == "" && start == "QUARTER":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return bad()
			}
			months = n * 3
		case end == "" && start == "MONTH":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return bad()
			}
			months = n
		case start == "YEAR" && end == "MONTH":
			ys, ms, ok := strings.Cut(v, "-")
			y, err1 := strconv.ParseInt(ys, 10, 64)
			m, err2 := strconv.ParseInt(ms, 10, 64)
			if !ok || err1 != nil || err2 != nil || m > 11 {
				return bad()
			}
			months = y*12 + m
		default:
			return bad()
		}
		return expr.Literal(int32(sign*months), types.IntervalYearMonth().WithNullable(false)), nil
	}
	unitMs := map[ast.TimeUnit]int64{"WEEK": 7 * 86400000, "DAY": 86400000, "HOUR": 3600000, "MINUTE": 60000, "SECOND": 1000, "MILLISECOND": 1}
	var ms int64
	if end == "" {
		u, ok := unitMs[start]
		if !ok {
			return bad()
		}
		if start == "SECOND" {
			whole, frac, _ := strings.Cut(v, ".")
			n, err := strconv.ParseInt(whole, 10, 64)
			if err != nil {
				return bad()
			}
			ms = n * 1000
			if frac != "" {
				for len(frac) < 3 {
					frac += "0"
				}
				f, err := strconv.ParseInt(frac[:3], 10, 64)
				if err != nil {
					return bad()
				}
				ms += f
			}
		} else {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return bad()
			}
			ms = n * u
		}
	} else {
		// Ranges: DAY TO HOUR|MINUTE|SECOND, HOUR TO MINUTE|SECOND, MINUTE TO SECOND.
		var days int64
		rest := v
		if start == "DAY" {
			ds, r, ok := strings.Cut(v, " ")
			if !ok {
				return bad()
			}
			d, err := strconv.ParseInt(ds, 10, 64)
			if err != nil {
				return bad()
			}
			days, rest = d, r
		}
		fields := strings.Split(rest, ":")
		units := []int64{3600000, 60000, 1000}
		first := map[ast.TimeUnit]int{"DAY": 0, "HOUR": 0, "MINUTE": 1}[start]
		if start == "DAY" && end == "HOUR" && len(fields) != 1 {
			return bad()
		}
		ms = days * 86400000
		for i, f := range fields {
			ui := first + i
			if ui >= len(units) {
				return bad()
			}
			whole, frac, _ := strings.Cut(f, ".")
			n, err := strconv.ParseInt(whole, 10, 64)
			if err != nil {
				return bad()
			}
			ms += n * units[ui]
			if frac != "" && ui == 2 {
				for len(frac) < 3 {
					frac += "0"
				}
				fv, err := strconv.ParseInt(frac[:3], 10, 64)
				if err != nil {
					return bad()
				}
				ms += fv
			}
		}
	}
	return expr.Literal(sign*ms, types.IntervalDayTime().WithNullable(false)), nil
}
