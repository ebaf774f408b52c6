package expr

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/braidflow/braid/types"
)

// wallToInstant reads a wall-clock reading (ns, as if UTC) in loc.
func wallToInstant(ns int64, loc *time.Location) int64 {
	if loc == time.UTC {
		return ns
	}
	t := time.Unix(0, ns).UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc).UnixNano()
}

// instantToWall gives the wall-clock reading of an instant in loc.
func instantToWall(ns int64, loc *time.Location) int64 {
	if loc == time.UTC {
		return ns
	}
	_, off := time.Unix(0, ns).In(loc).Zone()
	return ns + int64(off)*nsPerSec
}

func wallTime(ns int64) time.Time { return time.Unix(0, ns).UTC() }

// digits reads 1..maxN decimal digits at s[i:].
func digits(s string, i, maxN int) (v, next int, ok bool) {
	j := i
	for j < len(s) && j-i < maxN && s[j] >= '0' && s[j] <= '9' {
		v = v*10 + int(s[j]-'0')
		j++
	}
	return v, j, j > i
}

func validYMD(y, m, d int) bool {
	if m < 1 || m > 12 || d < 1 {
		return false
	}
	return d <= daysIn(y, time.Month(m))
}

func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func parseYMD(s string) (y, m, d, next int, ok bool) {
	i := 0
	neg := false
	if i < len(s) && s[i] == '-' {
		neg, i = true, 1
	}
	y, i, ok = digits(s, i, 9)
	if !ok || i >= len(s) || s[i] != '-' {
		return 0, 0, 0, 0, false
	}
	if neg {
		y = -y
	}
	if m, i, ok = digits(s, i+1, 2); !ok || i >= len(s) || s[i] != '-' {
		return 0, 0, 0, 0, false
	}
	if d, i, ok = digits(s, i+1, 2); !ok || !validYMD(y, m, d) {
		return 0, 0, 0, 0, false
	}
	return y, m, d, i, true
}

// parseDate reads yyyy-[M]M-[d]d as days since the epoch.
func parseDate(s string) (int32, bool) {
	y, m, d, i, ok := parseYMD(s)
	if !ok || i != len(s) {
		return 0, false
	}
	return int32(floorDiv(time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Unix(), 86400)), true
}

// parseHMS reads [H]H:[m]m[:[s]s[.f{0,9}]] as nanoseconds of the day.
func parseHMS(s string, needSeconds bool) (int64, bool) {
	h, i, ok := digits(s, 0, 2)
	if !ok || i >= len(s) || s[i] != ':' || h > 23 {
		return 0, false
	}
	m, i, ok := digits(s, i+1, 2)
	if !ok || m > 59 {
		return 0, false
	}
	sec, frac := 0, int64(0)
	if i < len(s) && s[i] == ':' {
		if sec, i, ok = digits(s, i+1, 2); !ok || sec > 59 {
			return 0, false
		}
		if i < len(s) && s[i] == '.' {
			start := i + 1
			var f int
			f, i, _ = digits(s, start, 9)
			frac = int64(f) * int64(math.Pow10(9-(i-start)))
		}
	} else if needSeconds {
		return 0, false
	}
	if i != len(s) {
		return 0, false
	}
	return int64(h)*3600*nsPerSec + int64(m)*60*nsPerSec + int64(sec)*nsPerSec + frac, true
}

func parseTimeOfDay(s string) (int32, bool) {
	ns, ok := parseHMS(s, false)
	return int32(ns / nsPerMs), ok
}

// parseTimestampLenient reads yyyy-[M]M-[d]d[ [H]H:[m]m:[s]s[.f{0,9}]] as
// a wall-clock reading in ns. A date alone is midnight; no 'T', no zone.
func parseTimestampLenient(s string) (int64, bool) {
	y, m, d, i, ok := parseYMD(s)
	if !ok {
		return 0, false
	}
	day := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).UnixNano()
	if i == len(s) {
		return day, true
	}
	if s[i] != ' ' {
		return 0, false
	}
	tod, ok := parseHMS(strings.TrimLeft(s[i:], " "), true)
	if !ok {
		return 0, false
	}
	return day + tod, true
}

func addMonthsWall(ns int64, months int64) int64 {
	t := wallTime(ns)
	total := int64(t.Year())*12 + int64(t.Month()-1) + months
	y, m := int(floorDiv(total, 12)), time.Month(floorMod(total, 12)+1)
	d := min(t.Day(), daysIn(y, m))
	return time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC).UnixNano()
}

// temporalPlusInterval adds (op "+") or subtracts an interval.
func temporalPlusInterval(op string, ta, tb types.DataType) kernel {
	sign := int64(1)
	if op == "-" {
		sign = -1
	}
	months := tb.Kind == types.KindIntervalYearMonth
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a, b := args[0].i64, args[1].i64
		out := &vec{n: ec.n, valid: andValid(ec.n, args...), i64: make([]int64, ec.n)}
		for i := range out.i64 {
			x, d := a[i], sign*b[i]
			if out.isNull(i) {
				continue
			}
			var r int64
			switch {
			case months:
				switch ta.Kind {
				case types.KindTimestamp:
					r = addMonthsWall(x, d)
				case types.KindTimestampLTZ:
					r = wallToInstant(addMonthsWall(instantToWall(x, ec.loc), d), ec.loc)
				case types.KindDate:
					r = floorDiv(addMonthsWall(x*nsPerDay, d), nsPerDay)
				default:
					r = x
				}
			default:
				switch ta.Kind {
				case types.KindTimestamp, types.KindTimestampLTZ:
					r = x + d*nsPerMs
				case types.KindDate:
					r = floorDiv(x*msPerDay+d, msPerDay)
				case types.KindTime:
					r = floorMod(x+d, msPerDay)
				}
			}
			out.i64[i] = r
		}
		return out, nil
	}
}

func intervalScale(op string) kernel {
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a, b := args[0].i64, args[1].f64
		out := &vec{n: ec.n, valid: andValid(ec.n, args...), i64: make([]int64, ec.n)}
		for i := range out.i64 {
			if op == "*" {
				out.i64[i] = int64(float64(a[i]) * b[i])
			} else if b[i] != 0 {
				out.i64[i] = int64(float64(a[i]) / b[i])
			} else if !out.isNull(i) && ec.isActive(i) {
				return nil, types.WithClass(fmt.Errorf("expr: division by zero in '/' (interval / 0)"), types.ClassUser)
			}
		}
		return out, nil
	}
}

// toWallNanos converts a temporal value to a wall-clock reading in ns
// (LTZ is read in the session zone).
func toWallNanos(t types.DataType, x int64, loc *time.Location) int64 {
	switch t.Kind {
	case types.KindDate:
		return x * nsPerDay
	case types.KindTime:
		return x * nsPerMs
	case types.KindTimestampLTZ:
		return instantToWall(x, loc)
	}
	return x
}

var unitNanos = map[string]int64{
	"NANOSECOND": 1, "MICROSECOND": 1000, "MILLISECOND": nsPerMs, "SECOND": nsPerSec,
	"MINUTE": 60 * nsPerSec, "HOUR": 3600 * nsPerSec, "DAY": nsPerDay, "WEEK": 7 * nsPerDay,
}

var unitMonths = map[string]int64{"MONTH": 1, "QUARTER": 3, "YEAR": 12}

func monthsBetween(a, b int64) int64 {
	ta, tb := wallTime(a), wallTime(b)
	m := int64(tb.Year()-ta.Year())*12 + int64(tb.Month()-ta.Month())
	// Compare the rest (day and time of day) to complete whole months only.
	ra := a - time.Date(ta.Year(), ta.Month(), 1, 0, 0, 0, 0, time.UTC).UnixNano()
	rb := b - time.Date(tb.Year(), tb.Month(), 1, 0, 0, 0, 0, time.UTC).UnixNano()
	if m > 0 && rb < ra {
		m--
	} else if m < 0 && rb > ra {
		m++
	}
	return m
}

func strArg(e *Expr) string {
	s, _ := e.Value.(string)
	return s
}

func fromUnixtimeKernel(e *Expr, at []types.DataType) (kernel, error) {
	return fromUnixtime(len(at) == 2), nil
}

func parseTemporalKernel(e *Expr, at []types.DataType) (kernel, error) {
	if e.Func == "UNIX_TIMESTAMP" && len(at) == 0 {
		return func(ec *evalCtx, _ []*vec) (*vec, error) {
			return &vec{n: ec.n, i64: fill(make([]int64, ec.n), ec.now.Unix())}, nil
		}, nil
	}
	return parseTemporal(e.Func, len(at) == 2), nil
}

func timestampDiffKernel(e *Expr, at []types.DataType) (kernel, error) {
	unit := strArg(e.Args[0])
	ta, tb := at[1], at[2]
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a, b := args[1], args[2]
		out := &vec{n: ec.n, valid: andValid(ec.n, a, b), i64: make([]int64, ec.n)}
		for i := range out.i64 {
			if out.isNull(i) {
				continue
			}
			x, y := toWallNanos(ta, a.i64[i], ec.loc), toWallNanos(tb, b.i64[i], ec.loc)
			if ta.Kind == types.KindTimestampLTZ && unitMonths[unit] == 0 {
				x, y = a.i64[i], b.i64[i]
			}
			var r int64
			if u, ok := unitNanos[unit]; ok {
				r = (y - x) / u
			} else if u, ok := unitMonths[unit]; ok {
				r = monthsBetween(x, y) / u
			}
			out.i64[i] = int64(int32(r))
		}
		return out, nil
	}, nil
}

func timestampAddKernel(e *Expr, at []types.DataType) (kernel, error) {
	unit := strArg(e.Args[0])
	tt := at[2]
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		n, ts := args[1], args[2]
		out := &vec{n: ec.n, valid: andValid(ec.n, n, ts), i64: make([]int64, ec.n)}
		for i := range out.i64 {
			if out.isNull(i) {
				continue
			}
			out.i64[i] = timestampAdd(unit, n.i64[i], tt, ts.i64[i], ec.loc)
		}
		return out, nil
	}, nil
}

func nowKernel(e *Expr, at []types.DataType) (kernel, error) {
	name := e.Func
	return func(ec *evalCtx, _ []*vec) (*vec, error) {
		now := truncNanos(ec.now.UnixNano(), 3)
		var v int64
		switch name {
		case "CURRENT_TIMESTAMP", "NOW", "PROCTIME":
			v = now
		case "LOCALTIMESTAMP":
			v = instantToWall(now, ec.loc)
		case "CURRENT_DATE":
			v = floorDiv(instantToWall(now, ec.loc), nsPerDay)
		default:
			v = floorMod(instantToWall(now, ec.loc), nsPerDay) / nsPerSec * 1000
		}
		return &vec{n: ec.n, i64: fill(make([]int64, ec.n), v)}, nil
	}, nil
}

func dateFormatKernel(e *Expr, at []types.DataType) (kernel, error) {
	return dateFormat(at[0]), nil
}

func extractFnKernel(e *Expr, at []types.DataType) (kernel, error) {
	return extractKernel(strArg(e.Args[0]), at[1]), nil
}

// floorCeilKernel is FLOOR/CEIL of a number, or of a temporal value TO a
// unit when the unit leads.
func floorCeilKernel(e *Expr, at []types.DataType) (kernel, error) {
	if len(at) == 2 {
		return floorCeilTime(e.Func == "CEIL", strArg(e.Args[0]), e.Type), nil
	}
	return floorCeilNumKernel(e, at)
}

func timestampAdd(unit string, n int64, t types.DataType, x int64, loc *time.Location) int64 {
	w := toWallNanos(t, x, loc)
	if u, ok := unitNanos[unit]; ok {
		if t.Kind == types.KindTimestampLTZ {
			return x + n*u
		}
		w += n * u
	} else {
		w = addMonthsWall(w, n*unitMonths[unit])
	}
	switch t.Kind {
	case types.KindDate:
		return floorDiv(w, nsPerDay)
	case types.KindTime:
		return floorMod(w, nsPerDay) / nsPerMs
	case types.KindTimestampLTZ:
		return wallToInstant(w, loc)
	}
	return w
}

func fromUnixtime(withFormat bool) kernel {
	var cache patternCache
	def := cache.get("yyyy-MM-dd HH:mm:ss")
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a := args[0]
		lim := newStrLimit(ec, "FROM_UNIXTIME", false)
		out := &vec{n: ec.n, valid: andValid(ec.n, args...), str: make([]string, ec.n)}
		for i := range out.str {
			if out.isNull(i) {
				continue
			}
			p := def
			if withFormat {
				p = cache.get(args[1].str[i])
			}
			t := time.Unix(a.i64[i], 0).In(ec.loc)
			if s, ok, err := formatLimited(lim, i, p, t); err != nil {
				return nil, err
			} else if ok {
				out.str[i] = s
			}
		}
		return out, nil
	}
}

// parseTemporal is TO_TIMESTAMP, TO_DATE and UNIX_TIMESTAMP(str[, fmt]).
func parseTemporal(name string, withFormat bool) kernel {
	var cache patternCache
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a := args[0]
		out := &vec{n: ec.n, valid: andValid(ec.n, args...), i64: make([]int64, ec.n)}
		if out.valid == nil {
			out.valid = fill(make([]bool, ec.n), true)
		}
		for i := range out.i64 {
			if !out.valid[i] {
				continue
			}
			s := a.str[i]
			var ns int64
			var ok bool
			if withFormat {
				ns, ok = cache.get(args[1].str[i]).parse(s)
			}
			if !ok {
				if name == "UNIX_TIMESTAMP" && !withFormat {
					ns, ok = cache.get("yyyy-MM-dd HH:mm:ss").parse(s)
				} else {
					ns, ok = parseTimestampLenient(strings.TrimSpace(s))
				}
			}
			switch {
			case name == "UNIX_TIMESTAMP":
				if !ok {
					out.i64[i] = math.MinInt64
					continue
				}
				out.i64[i] = floorDiv(wallToInstant(ns, ec.loc), nsPerSec)
			case !ok:
				out.valid[i] = false
			case name == "TO_DATE":
				out.i64[i] = floorDiv(ns, nsPerDay)
			default:
				out.i64[i] = truncNanos(ns, 3)
			}
		}
		return out, nil
	}
}

func dateFormat(t types.DataType) kernel {
	var cache patternCache
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a := args[0]
		lim := newStrLimit(ec, "DATE_FORMAT", false)
		out := &vec{n: ec.n, valid: andValid(ec.n, args...), str: make([]string, ec.n)}
		if out.valid == nil {
			out.valid = fill(make([]bool, ec.n), true)
		}
		for i := range out.str {
			if !out.valid[i] {
				continue
			}
			var w int64
			if t.IsString() {
				var ok bool
				if w, ok = parseTimestampLenient(strings.TrimSpace(a.str[i])); !ok {
					out.valid[i] = false
					continue
				}
			} else {
				w = toWallNanos(t, a.i64[i], ec.loc)
			}
			if s, ok, err := formatLimited(lim, i, cache.get(args[1].str[i]), wallTime(w)); err != nil {
				return nil, err
			} else if ok {
				out.str[i] = s
			}
		}
		return out, nil
	}
}

// formatLimited formats t by p for row i within lim (see strLimit.admit).
func formatLimited(lim *strLimit, i int, p *datePattern, t time.Time) (string, bool, error) {
	s, n := p.format(t, lim.ec.env.maxStringBytes())
	ok, err := lim.admit(i, n)
	return s, ok, err
}

func extractKernel(unit string, t types.DataType) kernel {
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a := args[1]
		out := &vec{n: ec.n, valid: a.valid, i64: make([]int64, ec.n)}
		for i := range out.i64 {
			if a.isNull(i) {
				continue
			}
			out.i64[i] = extractOne(unit, t, a.i64[i], ec.loc)
		}
		return out, nil
	}
}

func extractOne(unit string, t types.DataType, x int64, loc *time.Location) int64 {
	switch t.Kind {
	case types.KindIntervalYearMonth:
		switch unit {
		case "YEAR":
			return x / 12
		case "MONTH":
			return x % 12
		}
		return 0
	case types.KindIntervalDayTime:
		switch unit {
		case "DAY":
			return x / msPerDay
		case "HOUR":
			return x / 3600000 % 24
		case "MINUTE":
			return x / 60000 % 60
		case "SECOND":
			return x / 1000 % 60
		case "MILLISECOND":
			return x % 60000
		case "EPOCH":
			return x / 1000
		}
		return 0
	}
	w := toWallNanos(t, x, loc)
	tm := wallTime(w)
	switch unit {
	case "YEAR":
		return int64(tm.Year())
	case "QUARTER":
		return int64(tm.Month()-1)/3 + 1
	case "MONTH":
		return int64(tm.Month())
	case "WEEK":
		_, wk := tm.ISOWeek()
		return int64(wk)
	case "DAY":
		return int64(tm.Day())
	case "DOW":
		return int64(tm.Weekday()) + 1
	case "DOY":
		return int64(tm.YearDay())
	case "HOUR":
		return int64(tm.Hour())
	case "MINUTE":
		return int64(tm.Minute())
	case "SECOND":
		return int64(tm.Second())
	case "MILLISECOND":
		return int64(tm.Second())*1000 + int64(tm.Nanosecond())/nsPerMs
	case "MICROSECOND":
		return int64(tm.Second())*1_000_000 + int64(tm.Nanosecond())/1000
	case "NANOSECOND":
		return int64(tm.Second())*nsPerSec + int64(tm.Nanosecond())
	case "EPOCH":
		if t.Kind == types.KindTimestampLTZ {
			return floorDiv(x, nsPerSec)
		}
		return floorDiv(w, nsPerSec)
	case "DECADE":
		return int64(tm.Year()) / 10
	case "CENTURY":
		return (int64(tm.Year()) + 99) / 100
	case "MILLENNIUM":
		return (int64(tm.Year()) + 999) / 1000
	}
	return 0
}

func floorCeilTime(ceil bool, unit string, t types.DataType) kernel {
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a := args[1]
		out := &vec{n: ec.n, valid: a.valid, i64: make([]int64, ec.n)}
		for i := range out.i64 {
			if a.isNull(i) {
				continue
			}
			w := toWallNanos(t, a.i64[i], ec.loc)
			var f int64
			if u, ok := unitNanos[unit]; ok && unit != "WEEK" {
				f = floorDiv(w, u) * u
				if ceil && f != w {
					f += u
				}
			} else {
				tm := wallTime(w)
				m := int64(tm.Month() - 1)
				if step := unitMonths[unit]; step > 0 {
					m = m / step * step
				}
				f = time.Date(tm.Year(), time.Month(m+1), 1, 0, 0, 0, 0, time.UTC).UnixNano()
				if ceil && f != w {
					f = addMonthsWall(f, max(unitMonths[unit], 1))
				}
			}
			switch t.Kind {
			case types.KindDate:
				f = floorDiv(f, nsPerDay)
			case types.KindTime:
				f = floorMod(f, nsPerDay) / nsPerMs
			case types.KindTimestampLTZ:
				f = wallToInstant(f, ec.loc)
			}
			out.i64[i] = f
		}
		return out, nil
	}
}
