package connectors

import (
	"errors"
	"fmt"
	"math"
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// The providers and methods faker expressions may call. Semantics (ranges,
// which bounds are inclusive, argument forms, result text) are Data Faker
// 1.9's, the version flink-faker 0.5 bundles; the words come from
// gofakeit or from Braid's own short lists (faker_data.go), not Data
// Faker's.

type fakerProvider struct {
	name    string // as documented, e.g. "PhoneNumber"; "" for the faker's own methods
	methods map[string]*fakerMethod
}

type fakerMethod struct {
	name  string // as documented, e.g. "numberBetween"
	usage string // e.g. "number.numberBetween 'min','max'"
	build func(args []string) (fakerGen, error)
}

func (p *fakerProvider) methodNames() []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range p.methods {
		if !seen[m.name] {
			seen[m.name] = true
			out = append(out, m.name)
		}
	}
	sort.Strings(out)
	return out
}

func fakerProviderNames() []string {
	var out []string
	for _, p := range fakerProviders {
		if p.name != "" {
			out = append(out, p.name)
		}
	}
	sort.Strings(out)
	return out
}

// fakerProviders maps a normalized provider name (fakerNorm) to it.
var fakerProviders = map[string]*fakerProvider{}

// fakerMethodSpec declares one method: name, aliases (other names Data
// Faker resolves to the same values, such as YAML keys), usage, builder.
type fakerMethodSpec struct {
	names []string
	usage string
	build func(args []string) (fakerGen, error)
}

func addFakerProvider(name string, ms ...fakerMethodSpec) {
	p := &fakerProvider{name: name, methods: map[string]*fakerMethod{}}
	for _, s := range ms {
		usage := s.names[0]
		if name != "" {
			usage = name + "." + usage
		}
		if s.usage != "" {
			usage += " " + s.usage
		}
		m := &fakerMethod{name: s.names[0], usage: usage, build: s.build}
		for _, n := range s.names {
			p.methods[fakerNorm(n)] = m
		}
	}
	fakerProviders[fakerNorm(name)] = p
}

// text declares a method of no arguments that makes text.
func text(fn func(c *fakerCtx) string, names ...string) fakerMethodSpec {
	return fakerMethodSpec{names: names, build: func(args []string) (fakerGen, error) {
		if len(args) != 0 {
			return nil, fmt.Errorf("takes no arguments, got %d", len(args))
		}
		return func(c *fakerCtx) fakerOut { return fakerOut{s: fn(c)} }, nil
	}}
}

// pick declares a method of no arguments that picks one of list.
func pick(list []string, names ...string) fakerMethodSpec {
	return text(func(c *fakerCtx) string { return list[c.rng.IntN(len(list))] }, names...)
}

// javaInt parses a Java int argument.
func javaInt(s, what string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%s must be a whole number in the range of a Java int, got '%s'", what, s)
	}
	return v, nil
}

// javaLong parses a Java long argument.
func javaLong(s, what string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s must be a whole number, got '%s'", what, s)
	}
	return v, nil
}

func wantArgs(args []string, n ...int) error {
	for _, k := range n {
		if len(args) == k {
			return nil
		}
	}
	ns := make([]string, len(n))
	for i, k := range n {
		ns[i] = strconv.Itoa(k)
	}
	return fmt.Errorf("takes %s arguments, got %d", strings.Join(ns, " or "), len(args))
}

// between returns a uniform integer in [lo, hi) (hi > lo).
func between(c *fakerCtx, lo, hi int64) int64 {
	return lo + int64(c.rng.Uint64N(uint64(hi-lo)))
}

// javaTimeUnits are java.util.concurrent.TimeUnit's constants in
// milliseconds; TimeUnit.toMillis truncates, so NANOSECONDS and
// MICROSECONDS are handled by the divisor.
var javaTimeUnits = map[string]struct{ num, div int64 }{
	"NANOSECONDS": {1, 1_000_000}, "MICROSECONDS": {1, 1000}, "MILLISECONDS": {1, 1},
	"SECONDS": {1000, 1}, "MINUTES": {60_000, 1}, "HOURS": {3_600_000, 1}, "DAYS": {86_400_000, 1},
}

// timeUnitMillis converts n of a TimeUnit argument to milliseconds. Enum
// names are case-sensitive, as Java's valueOf; "TimeUnit.SECONDS" is read
// as SECONDS, as Data Faker does.
func timeUnitMillis(n int64, unit string) (int64, error) {
	name := unit[strings.IndexByte(unit, '.')+1:]
	u, ok := javaTimeUnits[name]
	if !ok {
		var names []string
		for k := range javaTimeUnits {
			names = append(names, k)
		}
		sort.Strings(names)
		hint := ""
		if _, ok := javaTimeUnits[strings.ToUpper(name)]; ok {
			hint = fmt.Sprintf(" (did you mean %s? TimeUnit names are upper case)", strings.ToUpper(name))
		}
		return 0, fmt.Errorf("unknown TimeUnit '%s'%s; one of %s", unit, hint, strings.Join(names, ", "))
	}
	return n * u.num / u.div, nil
}

// dateRange reads (atMost, unit) or (atMost, minimum, unit) of date.past
// and date.future: the reference offset from now in ms and the bound of
// the random part.
func dateRange(args []string) (ref, bound int64, err error) {
	if err := wantArgs(args, 2, 3); err != nil {
		return 0, 0, err
	}
	atMost, err := javaInt(args[0], "atMost")
	if err != nil {
		return 0, 0, err
	}
	var minimum int64
	if len(args) == 3 {
		if minimum, err = javaInt(args[1], "minimum"); err != nil {
			return 0, 0, err
		}
		if ref, err = timeUnitMillis(minimum, args[2]); err != nil {
			return 0, 0, err
		}
	} else {
		// The two-argument forms start a millisecond from now.
		ref = 1
	}
	unit := args[len(args)-1]
	bound, err = timeUnitMillis(atMost-minimum, unit)
	if err != nil {
		return 0, 0, err
	}
	if bound-1 <= 0 {
		// Data Faker draws nextLong(bound - 1), which must be positive.
		return 0, 0, fmt.Errorf("the range (atMost - minimum = %d %s) must be more than 1 ms", atMost-minimum, unit)
	}
	return ref, bound, nil
}

// datePattern is the last argument of the date.past/date.future forms
// that format their result: (atMost, unit, pattern) and (atMost,
// minimum, unit, pattern). It returns the arguments without it, and the
// Go layout of the pattern ("" when there is none).
func datePattern(args []string) ([]string, string, error) {
	n := len(args)
	if n == 4 || (n == 3 && isTimeUnit(args[1])) {
		layout, err := javaDateLayout(args[n-1])
		return args[:n-1], layout, err
	}
	return args, "", nil
}

func isTimeUnit(s string) bool {
	_, ok := javaTimeUnits[s[strings.IndexByte(s, '.')+1:]]
	return ok
}

// javaDateLayout translates a SimpleDateFormat pattern into a Go time
// layout: the letters y, M, d, H, h, m, s, S (after a '.' or ','), a, E
// and quoted text; other letters are refused.
func javaDateLayout(p string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(p); {
		c := p[i]
		j := i
		for j < len(p) && p[j] == c {
			j++
		}
		n := j - i
		switch {
		case c == '\'':
			end := strings.IndexByte(p[i+1:], '\'')
			if end < 0 {
				return "", fmt.Errorf("date pattern '%s' has an unclosed quote", p)
			}
			if end == 0 {
				b.WriteByte('\'')
			}
			b.WriteString(p[i+1 : i+1+end])
			j = i + end + 2
		case c == 'y' && n == 2:
			b.WriteString("06")
		case c == 'y':
			b.WriteString("2006")
		case c == 'M' && n >= 4:
			b.WriteString("January")
		case c == 'M' && n == 3:
			b.WriteString("Jan")
		case c == 'M':
			b.WriteString([]string{"1", "01"}[min(n, 2)-1])
		case c == 'd':
			b.WriteString([]string{"2", "02"}[min(n, 2)-1])
		case c == 'H':
			b.WriteString("15")
		case c == 'h':
			b.WriteString([]string{"3", "03"}[min(n, 2)-1])
		case c == 'm':
			b.WriteString([]string{"4", "04"}[min(n, 2)-1])
		case c == 's':
			b.WriteString([]string{"5", "05"}[min(n, 2)-1])
		case c == 'S' && i > 0 && (p[i-1] == '.' || p[i-1] == ','):
			b.WriteString(strings.Repeat("0", min(n, 9)))
		case c == 'a':
			b.WriteString("PM")
		case c == 'E' && n >= 4:
			b.WriteString("Monday")
		case c == 'E':
			b.WriteString("Mon")
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			return "", fmt.Errorf("date pattern letter '%c' in '%s' is not supported yet (supported: y M d H h m s S a E)", c, p)
		default:
			b.WriteString(p[i:j])
		}
		i = j
	}
	return b.String(), nil
}

// withLayout makes gen's instants text in layout (UTC) when layout is set.
func withLayout(gen fakerGen, layout string) fakerGen {
	if layout == "" {
		return gen
	}
	return func(c *fakerCtx) fakerOut {
		return fakerOut{s: time.UnixMilli(gen(c).ms).UTC().Format(layout)}
	}
}

// datePast is date.past: (atMost, unit) is in [now - atMost, now - 2 ms];
// (atMost, minimum, unit) in [now - atMost + 1 ms, now - minimum - 1 ms]
// (Data Faker's DateAndTime.past).
func datePast(args []string) (fakerGen, error) {
	args, layout, err := datePattern(args)
	if err != nil {
		return nil, err
	}
	ref, bound, err := dateRange(args)
	if err != nil {
		return nil, err
	}
	return withLayout(func(c *fakerCtx) fakerOut {
		ms := c.now.UnixMilli() - ref - 1 - int64(c.rng.Uint64N(uint64(bound-1)))
		return fakerOut{ms: ms, isTime: true}
	}, layout), nil
}

// dateFuture is date.future, the mirror image of date.past.
func dateFuture(args []string) (fakerGen, error) {
	args, layout, err := datePattern(args)
	if err != nil {
		return nil, err
	}
	ref, bound, err := dateRange(args)
	if err != nil {
		return nil, err
	}
	return withLayout(func(c *fakerCtx) fakerOut {
		ms := c.now.UnixMilli() + ref + 1 + int64(c.rng.Uint64N(uint64(bound-1)))
		return fakerOut{ms: ms, isTime: true}
	}, layout), nil
}

// parseFakerDate reads a date.between bound: 'yyyy-MM-dd HH:mm:ss[.SSS]'
// or 'yyyy-MM-dd', in UTC.
func parseFakerDate(s string) (int64, error) {
	if ns, err := parseFakerTimestamp(s); err == nil {
		return ns / int64(time.Millisecond), nil
	}
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return 0, fmt.Errorf("'%s' is not a date 'yyyy-MM-dd' or timestamp 'yyyy-MM-dd HH:mm:ss[.SSS]'", s)
	}
	return t.UnixMilli(), nil
}

// dateBetween is date.between 'from','to': uniform in [from, to), from
// itself when they are equal.
func dateBetween(args []string) (fakerGen, error) {
	if err := wantArgs(args, 2); err != nil {
		return nil, err
	}
	from, err := parseFakerDate(args[0])
	if err != nil {
		return nil, err
	}
	to, err := parseFakerDate(args[1])
	if err != nil {
		return nil, err
	}
	if to < from {
		//lint:ignore ST1005 Data Faker's message, verbatim
		return nil, errors.New("Invalid date range, the upper bound date is before the lower bound.")
	}
	return func(c *fakerCtx) fakerOut {
		if to == from {
			return fakerOut{ms: from, isTime: true}
		}
		return fakerOut{ms: between(c, from, to), isTime: true}
	}, nil
}

// dateBirthday is date.birthday ['minAge','maxAge'] (default 18 and 65):
// a whole second in [today's date maxAge years ago, today's date minAge
// years ago), midnights in UTC.
func dateBirthday(args []string) (fakerGen, error) {
	if err := wantArgs(args, 0, 2); err != nil {
		return nil, err
	}
	minAge, maxAge := int64(18), int64(65)
	if len(args) == 2 {
		var err error
		if minAge, err = javaInt(args[0], "minAge"); err != nil {
			return nil, err
		}
		if maxAge, err = javaInt(args[1], "maxAge"); err != nil {
			return nil, err
		}
	}
	return func(c *fakerCtx) fakerOut {
		now := c.now.UTC()
		from := time.Date(now.Year()-int(maxAge), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).Unix()
		to := time.Date(now.Year()-int(minAge), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).Unix()
		if to <= from {
			return fakerOut{ms: from * 1000, isTime: true}
		}
		return fakerOut{ms: between(c, from, to) * 1000, isTime: true}
	}, nil
}

// javaChronoUnits are the java.time.temporal.ChronoUnit constants time.*
// accepts, in nanoseconds.
var javaChronoUnits = map[string]int64{
	"NANOS": 1, "MICROS": 1000, "MILLIS": 1_000_000, "SECONDS": 1_000_000_000,
	"MINUTES": 60_000_000_000, "HOURS": 3_600_000_000_000, "HALF_DAYS": 43_200_000_000_000,
}

const nanosPerDay = 86_400_000_000_000

// timeOfDay is time.future and time.past (sign 1 and -1): a nanosecond of
// the day between now + sign*minimum and now + sign*atMost, wrapping at
// midnight as LocalTime does, the lower bound inclusive. The result is the
// nanosecond of the day as text, which a TIME column reads.
func timeOfDay(sign int64) func(args []string) (fakerGen, error) {
	return func(args []string) (fakerGen, error) {
		if err := wantArgs(args, 2, 3); err != nil {
			return nil, err
		}
		atMost, err := javaInt(args[0], "atMost")
		if err != nil {
			return nil, err
		}
		var minimum int64
		if len(args) == 3 {
			if minimum, err = javaInt(args[1], "minimum"); err != nil {
				return nil, err
			}
		}
		unit := args[len(args)-1]
		u, ok := javaChronoUnits[unit[strings.IndexByte(unit, '.')+1:]]
		if !ok {
			return nil, fmt.Errorf("unknown ChronoUnit '%s'; one of NANOS, MICROS, MILLIS, SECONDS, MINUTES, HOURS, HALF_DAYS", unit)
		}
		wrap := func(n int64) int64 { return ((n % nanosPerDay) + nanosPerDay) % nanosPerDay }
		return func(c *fakerCtx) fakerOut {
			now := c.now.UTC()
			nod := int64(now.Hour())*3_600_000_000_000 + int64(now.Minute())*60_000_000_000 + int64(now.Second())*1_000_000_000 + int64(now.Nanosecond())
			a, b := wrap(nod+sign*minimum*u), wrap(nod+sign*atMost*u)
			lo, hi := min(a, b), max(a, b)
			v := lo
			if hi > lo {
				v = between(c, lo, hi)
			}
			return fakerOut{s: strconv.FormatInt(v, 10)}
		}, nil
	}
}

// numberBetween is number.numberBetween 'min','max': uniform in [min, max)
// (the bounds swapped when min > max), min when they are equal.
func numberBetween(args []string) (fakerGen, error) {
	if err := wantArgs(args, 2); err != nil {
		return nil, err
	}
	lo, err := javaLong(args[0], "min")
	if err != nil {
		return nil, err
	}
	hi, err := javaLong(args[1], "max")
	if err != nil {
		return nil, err
	}
	lo, hi = min(lo, hi), max(lo, hi)
	return func(c *fakerCtx) fakerOut {
		if lo == hi {
			return fakerOut{s: strconv.FormatInt(lo, 10)}
		}
		return fakerOut{s: strconv.FormatInt(between(c, lo, hi), 10)}
	}, nil
}

// randomDouble is number.randomDouble 'maxNumberOfDecimals','min','max':
// uniform in [min, max) (whole-number bounds), rounded half down to
// maxNumberOfDecimals places, written as Java's Double.toString.
func randomDouble(args []string) (fakerGen, error) {
	if err := wantArgs(args, 3); err != nil {
		return nil, err
	}
	dec, err := javaInt(args[0], "maxNumberOfDecimals")
	if err != nil {
		return nil, err
	}
	lo, err := javaLong(args[1], "min")
	if err != nil {
		return nil, err
	}
	hi, err := javaLong(args[2], "max")
	if err != nil {
		return nil, err
	}
	scale := math.Pow10(int(dec))
	return func(c *fakerCtx) fakerOut {
		v := float64(lo)
		if lo != hi {
			v += (float64(hi) - float64(lo)) * c.rng.Float64()
		}
		return fakerOut{s: javaDoubleString(roundHalfDown(v*scale) / scale)}
	}, nil
}

// roundHalfDown rounds x to the nearest whole number, a tie toward zero.
func roundHalfDown(x float64) float64 {
	r := math.Round(x) // ties away from zero
	if math.Abs(r-x) == 0.5 {
		return math.Trunc(x)
	}
	return r
}

// javaDoubleString writes x as Java's Double.toString: "12.5", "100.0",
// "1.0E7", "1.5E-4".
func javaDoubleString(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "Infinity"
	case math.IsInf(x, -1):
		return "-Infinity"
	}
	a := math.Abs(x)
	if a == 0 || (a >= 1e-3 && a < 1e7) {
		s := strconv.FormatFloat(x, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(x, 'E', -1, 64) // 1.5E-04
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// digits is number.digits 'count': count random decimal digits (leading
// zeros kept).
func digits(args []string) (fakerGen, error) {
	if err := wantArgs(args, 1); err != nil {
		return nil, err
	}
	n, err := javaInt(args[0], "count")
	if err != nil {
		return nil, err
	}
	if n < 0 || n > DatagenMaxLength {
		return nil, fmt.Errorf("count must be from 0 to %d, got %d", DatagenMaxLength, n)
	}
	return func(c *fakerCtx) fakerOut {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + c.rng.IntN(10))
		}
		return fakerOut{s: string(b)}
	}, nil
}

// randomNumber is number.randomNumber: with no arguments a number of 1 to
// 10 digits (uniform in [0, 10^d) for a random d); with
// 'numberOfDigits','strict' uniform in [0, 10^n), or [10^(n-1), 10^n)
// when strict is true.
func randomNumber(args []string) (fakerGen, error) {
	if err := wantArgs(args, 0, 2); err != nil {
		return nil, err
	}
	if len(args) == 0 {
		return func(c *fakerCtx) fakerOut {
			d := 1 + c.rng.IntN(10)
			return fakerOut{s: strconv.FormatInt(c.rng.Int64N(int64(math.Pow10(d))), 10)}
		}, nil
	}
	n, err := javaInt(args[0], "numberOfDigits")
	if err != nil {
		return nil, err
	}
	if n < 1 || n > 18 {
		return nil, fmt.Errorf("numberOfDigits must be from 1 to 18, got %d", n)
	}
	strict := strings.EqualFold(args[1], "true")
	hi := int64(math.Pow10(int(n)))
	lo := int64(0)
	if strict {
		lo = int64(math.Pow10(int(n) - 1))
	}
	return func(c *fakerCtx) fakerOut { return fakerOut{s: strconv.FormatInt(between(c, lo, hi), 10)} }, nil
}

// intIn declares a method of no arguments making an int in [lo, hi].
func intIn(lo, hi int64, names ...string) fakerMethodSpec {
	return text(func(c *fakerCtx) string { return strconv.FormatInt(lo+c.rng.Int64N(hi-lo+1), 10) }, names...)
}

// option is options.option 'a','b',...: one of its arguments, uniformly.
// As Data Faker resolves a result again, an option may itself be an
// expression: #{options.option '#{Name.firstName}','nobody'}.
func option(args []string) (fakerGen, error) {
	if len(args) == 0 {
		return nil, errors.New("needs at least one option")
	}
	exprs := make([]*fakerExpr, len(args))
	for i, a := range args {
		e, err := compileFakerExpr(a)
		if err != nil {
			return nil, fmt.Errorf("option '%s': %v", a, err)
		}
		exprs[i] = e
	}
	return func(c *fakerCtx) fakerOut { return exprs[c.rng.IntN(len(exprs))].eval(c) }, nil
}

// javaRegexToRE2 rewrites the escapes of a Java (Generex) regular
// expression that RE2 refuses: a backslash before a character that is
// neither a letter, a digit nor ASCII punctuation (such as '\ ') stands
// for that character.
func javaRegexToRE2(re string) string {
	var b strings.Builder
	for i := 0; i < len(re); i++ {
		if re[i] == '\\' && i+1 < len(re) {
			c := re[i+1]
			if c < 0x80 && !unicode.IsLetter(rune(c)) && !unicode.IsDigit(rune(c)) && !unicode.IsPunct(rune(c)) && !unicode.IsSymbol(rune(c)) {
				b.WriteByte(c)
				i++
				continue
			}
			b.WriteByte(re[i])
			b.WriteByte(c)
			i++
			continue
		}
		b.WriteByte(re[i])
	}
	return b.String()
}

// regexify is regexify 'regex': a random string the regular expression
// matches. The expression is parsed once; each value walks its syntax
// tree.
func regexify(args []string) (fakerGen, error) {
	if err := wantArgs(args, 1); err != nil {
		return nil, err
	}
	re, err := syntax.Parse(javaRegexToRE2(args[0]), syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("bad regular expression '%s': %v", args[0], err)
	}
	re = re.Simplify()
	return func(c *fakerCtx) fakerOut {
		var b strings.Builder
		regexGen(c, &b, re)
		return fakerOut{s: b.String()}
	}, nil
}

// regexUnbounded is the most repetitions * and + make.
const regexUnbounded = 10

// regexMaxBytes bounds what one regexify makes: nested repetitions such
// as ((a)*)* would otherwise grow exponentially.
const regexMaxBytes = 64 << 10

// regexGen appends a random match of re to b, stopping at regexMaxBytes.
func regexGen(c *fakerCtx, b *strings.Builder, re *syntax.Regexp) {
	if b.Len() >= regexMaxBytes {
		return
	}
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 && c.rng.IntN(2) == 1 {
				r = unicode.SimpleFold(r)
			}
			b.WriteRune(r)
		}
	case syntax.OpCharClass:
		// Rune holds inclusive ranges lo0, hi0, lo1, hi1, ...
		var n int64
		for i := 0; i+1 < len(re.Rune); i += 2 {
			n += int64(re.Rune[i+1]-re.Rune[i]) + 1
		}
		if n == 0 {
			return
		}
		k := c.rng.Int64N(n)
		for i := 0; i+1 < len(re.Rune); i += 2 {
			size := int64(re.Rune[i+1]-re.Rune[i]) + 1
			if k < size {
				b.WriteRune(re.Rune[i] + rune(k))
				return
			}
			k -= size
		}
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		b.WriteRune(rune(' ' + c.rng.IntN(95))) // printable ASCII
	case syntax.OpCapture:
		regexGen(c, b, re.Sub[0])
	case syntax.OpConcat:
		for _, s := range re.Sub {
			regexGen(c, b, s)
		}
	case syntax.OpAlternate:
		regexGen(c, b, re.Sub[c.rng.IntN(len(re.Sub))])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, regexUnbounded
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
			if hi < 0 {
				hi = lo + regexUnbounded
			}
		}
		for range lo + c.rng.IntN(hi-lo+1) {
			regexGen(c, b, re.Sub[0])
		}
	}
	// Empty matches, anchors and word boundaries make nothing.
}

// numerify replaces each '#' of its argument with a random digit,
// letterify each '?' with a random lower-case letter, bothify both.
func templateMethod(digits, letters bool) func(args []string) (fakerGen, error) {
	return func(args []string) (fakerGen, error) {
		if err := wantArgs(args, 1, 2); err != nil {
			return nil, err
		}
		tmpl := args[0]
		upper := len(args) == 2 && strings.EqualFold(args[1], "true")
		return func(c *fakerCtx) fakerOut {
			b := []byte(tmpl)
			for i, ch := range b {
				switch {
				case digits && ch == '#':
					b[i] = byte('0' + c.rng.IntN(10))
				case letters && ch == '?':
					base := byte('a')
					if upper {
						base = 'A'
					}
					b[i] = base + byte(c.rng.IntN(26))
				}
			}
			return fakerOut{s: string(b)}
		}, nil
	}
}
