package connectors

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/brianvoe/gofakeit/v7"
)

// Faker expressions, as flink-faker evaluates them with Data Faker's
// expression(): literal text around #{...} parts. A part is a directive
// (Provider.method, or a method of the faker itself such as regexify)
// followed by quoted arguments: #{number.numberBetween '1','5'}. A quote
// inside an argument is written twice. Text outside the quotes of a part
// (commas, spaces) is ignored, and a '}' inside quotes does not end the
// part. Provider and method names are matched ignoring case and
// underscores, so #{Name.full_name}, #{name.fullName} and
// #{NAME.FULLNAME} are one method. An expression without any '}' is all
// literal text.
//
// Each expression is compiled once into a fakerExpr; an unknown provider,
// method or bad arguments is an error then, never while rows are made.

// fakerCtx is what a generator draws from: rng and f share one PCG, which
// the source reseeds for every value so that a row depends on its number
// only; now is the batch's clock reading.
type fakerCtx struct {
	rng *rand.Rand
	f   *gofakeit.Faker
	now time.Time
}

// fakerOut is one generated value: text, or for date expressions an
// instant in milliseconds since the epoch (isTime), which converts to a
// TIMESTAMP without the round trip through text.
type fakerOut struct {
	s      string
	ms     int64
	isTime bool
}

// text is the value as the expression's result string: an instant as
// java.sql.Timestamp#toString writes it, in UTC.
func (o fakerOut) text() string {
	if !o.isTime {
		return o.s
	}
	return javaTimestampString(o.ms)
}

// fakerGen makes one value of one #{...} part.
type fakerGen func(c *fakerCtx) fakerOut

type fakerPart struct {
	lit string
	gen fakerGen // nil for literal text
}

// fakerExpr is a compiled expression.
type fakerExpr struct {
	src   string
	parts []fakerPart
}

// eval makes one value of e.
func (e *fakerExpr) eval(c *fakerCtx) fakerOut {
	if len(e.parts) == 1 {
		if p := e.parts[0]; p.gen != nil {
			return p.gen(c)
		}
		return fakerOut{s: e.parts[0].lit}
	}
	var b strings.Builder
	for _, p := range e.parts {
		if p.gen == nil {
			b.WriteString(p.lit)
		} else {
			b.WriteString(p.gen(c).text())
		}
	}
	return fakerOut{s: b.String()}
}

// fakerExprError is a compile error at a 1-based column of the expression.
type fakerExprError struct {
	col int
	msg string
}

func (e *fakerExprError) Error() string {
	return fmt.Sprintf("%s at column %d", e.msg, e.col)
}

// compileFakerExpr compiles src.
func compileFakerExpr(src string) (*fakerExpr, error) {
	e := &fakerExpr{src: src}
	if !strings.Contains(src, "}") {
		e.parts = []fakerPart{{lit: src}}
		return e, nil
	}
	addLit := func(s string) {
		if s != "" {
			e.parts = append(e.parts, fakerPart{lit: s})
		}
	}
	start, n := 0, len(src)
	for i := 0; i < n; i++ {
		// NB: as Data Faker: "#{" opens a part only with a character after it.
		if !(i < n-2 && src[i] == '#' && src[i+1] == '{') {
			continue
		}
		addLit(src[start:i])
		open := i
		quotes, end := 0, -1
		for j := i + 2; j < n; j++ {
			if src[j] == '\'' {
				quotes++
			} else if src[j] == '}' && quotes%2 == 0 {
				end = j
				break
			}
		}
		if end < 0 {
			return nil, &fakerExprError{col: open + 1, msg: "'#{' is never closed by '}'"}
		}
		gen, err := compileFakerPart(src[open+2:end], open+3)
		if err != nil {
			return nil, err
		}
		if gen != nil {
			e.parts = append(e.parts, fakerPart{gen: gen})
		}
		start, i = end+1, end
	}
	addLit(src[start:])
	if len(e.parts) == 0 {
		e.parts = []fakerPart{{lit: ""}}
	}
	return e, nil
}

// compileFakerPart compiles the inside of one #{...}; col is the column of
// its first character. An empty part makes nothing (nil, nil).
func compileFakerPart(body string, col int) (fakerGen, error) {
	j := 0
	for j < len(body) && !isJavaSpace(body[j]) {
		j++
	}
	directive := body[:j]
	if directive == "" {
		return nil, nil
	}
	args, err := splitFakerArgs(body[j:], col+j)
	if err != nil {
		return nil, err
	}
	provider, method, hasDot := strings.Cut(directive, ".")
	if !hasDot {
		provider, method = "", directive
	}
	p, ok := fakerProviders[fakerNorm(provider)]
	if !ok {
		return nil, &fakerExprError{col: col, msg: fmt.Sprintf("unknown provider '%s'%s", provider, didYouMean(provider, fakerProviderNames()))}
	}
	m, ok := p.methods[fakerNorm(method)]
	if !ok {
		what := fmt.Sprintf("unknown method '%s' of provider '%s'", method, p.name)
		if !hasDot {
			what = fmt.Sprintf("unknown directive '%s' (a provider's method is written Provider.method)", method)
		}
		return nil, &fakerExprError{col: col + len(provider) + 1, msg: what + didYouMean(method, p.methodNames())}
	}
	gen, err := m.build(args)
	if err != nil {
		name := p.name + "." + m.name
		if p.name == "" {
			name = m.name
		}
		return nil, &fakerExprError{col: col, msg: fmt.Sprintf("%s: %v (usage: #{%s})", name, err, m.usage)}
	}
	return gen, nil
}

func isJavaSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// splitFakerArgs reads the quoted arguments of a part: the text of each
// pair of single quotes, a doubled quote standing for one. Text between
// arguments is ignored, as Data Faker ignores it.
func splitFakerArgs(s string, col int) ([]string, error) {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] != '\'' {
			continue
		}
		open := i
		var b strings.Builder
		closed := false
		for i++; i < len(s); i++ {
			if s[i] != '\'' {
				b.WriteByte(s[i])
				continue
			}
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			closed = true
			break
		}
		if !closed {
			return nil, &fakerExprError{col: col + open, msg: "argument quote is never closed"}
		}
		out = append(out, b.String())
	}
	return out, nil
}

// fakerNorm is a name as Data Faker matches it: lower case, without
// underscores.
func fakerNorm(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "_", ""))
}

// didYouMean suggests up to three known names close to name.
func didYouMean(name string, known []string) string {
	type cand struct {
		s string
		d int
	}
	var cs []cand
	n := fakerNorm(name)
	for _, k := range known {
		kn := fakerNorm(k)
		d := editDistance(n, kn)
		if d <= max(2, len(n)/3) || (len(n) >= 3 && strings.Contains(kn, n)) {
			cs = append(cs, cand{k, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	if len(cs) == 0 {
		return ""
	}
	var names []string
	for i := 0; i < len(cs) && i < 3; i++ {
		names = append(names, cs[i].s)
	}
	return " (did you mean " + strings.Join(names, ", ") + "?)"
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// javaTimestampString writes ms since the epoch as java.sql.Timestamp's
// toString does, in UTC: "2020-01-02 03:04:05.6" (at least one fraction
// digit, trailing zeros dropped).
func javaTimestampString(ms int64) string {
	t := time.UnixMilli(ms).UTC()
	s := t.Format("2006-01-02 15:04:05")
	frac := ms % 1000
	if frac < 0 {
		frac += 1000
	}
	if frac == 0 {
		return s + ".0"
	}
	f := strings.TrimRight(fmt.Sprintf("%03d", frac), "0")
	return s + "." + f
}
