package expr

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/braidflow/braid/types"
)

// strMap applies the function fn, f, to every non-NULL row of a string
// vec.
//
// NB: the case mappings grow a string by half at most (U+0250 has two
// bytes in UTF-8, its upper case U+2C6F three), so their results are
// admitted once built.
func strMap(ec *evalCtx, fn string, a *vec, f func(string) string) (*vec, error) {
	lim := newStrLimit(ec, fn, false)
	out := &vec{n: ec.n, valid: a.valid, str: make([]string, ec.n)}
	for i, s := range a.str[:ec.n] {
		if a.isNull(i) {
			continue
		}
		r := f(s)
		if ok, err := lim.admit(i, int64(len(r))); err != nil {
			return nil, err
		} else if ok {
			out.str[i] = r
		}
	}
	return out, nil
}

func upperKernel(e *Expr, at []types.DataType) (kernel, error) {
	return func(ec *evalCtx, args []*vec) (*vec, error) { return strMap(ec, e.Func, args[0], strings.ToUpper) }, nil
}

func lowerKernel(e *Expr, at []types.DataType) (kernel, error) {
	return func(ec *evalCtx, args []*vec) (*vec, error) { return strMap(ec, e.Func, args[0], strings.ToLower) }, nil
}

func initCapKernel(e *Expr, at []types.DataType) (kernel, error) {
	return func(ec *evalCtx, args []*vec) (*vec, error) { return strMap(ec, e.Func, args[0], initCap) }, nil
}

func charLengthKernel(e *Expr, at []types.DataType) (kernel, error) {
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a := args[0]
		out := &vec{n: ec.n, valid: a.valid, i64: make([]int64, ec.n)}
		for i, s := range a.str[:ec.n] {
			out.i64[i] = int64(utf8.RuneCountInString(s))
		}
		return out, nil
	}, nil
}

func concatOpKernel(e *Expr, at []types.DataType) (kernel, error) {
	if at[0].IsBinary() {
		return func(ec *evalCtx, args []*vec) (*vec, error) {
			lim := newStrLimit(ec, "||", true)
			out := &vec{n: ec.n, valid: andValid(ec.n, args...), bin: make([][]byte, ec.n)}
			for i := range out.bin {
				if out.isNull(i) {
					continue
				}
				a, b := args[0].bin[i], args[1].bin[i]
				if ok, err := lim.admit(i, int64(len(a))+int64(len(b))); err != nil {
					return nil, err
				} else if ok {
					out.bin[i] = append(append(make([]byte, 0, len(a)+len(b)), a...), b...)
				}
			}
			return out, nil
		}, nil
	}
	return concatKernel(e.Func, false), nil
}

func concatFnKernel(e *Expr, at []types.DataType) (kernel, error) {
	return concatKernel(e.Func, false), nil
}

func concatWSKernel(e *Expr, at []types.DataType) (kernel, error) {
	return concatKernel(e.Func, true), nil
}

func likeFnKernel(e *Expr, at []types.DataType) (kernel, error) {
	return likeKernel(e.Func == "NOT LIKE", len(at) == 3), nil
}

func substringFnKernel(e *Expr, at []types.DataType) (kernel, error) {
	return substringKernel, nil
}

func trimKernel(e *Expr, at []types.DataType) (kernel, error) {
	mode := strArg(e.Args[0])
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		chars, a := args[1], args[2]
		out := &vec{n: ec.n, valid: andValid(ec.n, chars, a), str: make([]string, ec.n)}
		for i := range out.str {
			if out.isNull(i) {
				continue
			}
			s, cs := a.str[i], chars.str[i]
			if mode != "TRAILING" {
				s = strings.TrimLeft(s, cs)
			}
			if mode != "LEADING" {
				s = strings.TrimRight(s, cs)
			}
			out.str[i] = s
		}
		return out, nil
	}, nil
}

func replaceKernel(e *Expr, at []types.DataType) (kernel, error) {
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		lim := newStrLimit(ec, "REPLACE", false)
		out := &vec{n: ec.n, valid: andValid(ec.n, args...), str: make([]string, ec.n)}
		for i := range out.str {
			if out.isNull(i) {
				continue
			}
			s, from, to := args[0].str[i], args[1].str[i], args[2].str[i]
			// NB: Count and ReplaceAll agree that "" occurs before
			// every rune and at the end.
			n := int64(len(s)) + int64(strings.Count(s, from))*(int64(len(to))-int64(len(from)))
			if ok, err := lim.admit(i, n); err != nil {
				return nil, err
			} else if ok {
				out.str[i] = strings.ReplaceAll(s, from, to)
			}
		}
		return out, nil
	}, nil
}

func positionKernel(e *Expr, at []types.DataType) (kernel, error) {
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		out := &vec{n: ec.n, valid: andValid(ec.n, args...), i64: make([]int64, ec.n)}
		for i := range out.i64 {
			if out.isNull(i) {
				continue
			}
			s := args[1].str[i]
			if j := strings.Index(s, args[0].str[i]); j >= 0 {
				out.i64[i] = int64(utf8.RuneCountInString(s[:j])) + 1
			}
		}
		return out, nil
	}, nil
}

func splitIndexKernel(e *Expr, at []types.DataType) (kernel, error) {
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		out := &vec{n: ec.n, valid: make([]bool, ec.n), str: make([]string, ec.n)}
		for i := range out.str {
			if args[0].isNull(i) || args[1].isNull(i) || args[2].isNull(i) {
				continue
			}
			sep, idx := args[1].str[i], args[2].i64[i]
			if idx < 0 || sep == "" {
				continue
			}
			parts := strings.Split(args[0].str[i], sep)
			if idx < int64(len(parts)) {
				out.str[i], out.valid[i] = parts[idx], true
			}
		}
		return out, nil
	}, nil
}

func regexpExtractKernel(e *Expr, at []types.DataType) (kernel, error) {
	var cache map[string]*regexp.Regexp
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		out := &vec{n: ec.n, valid: make([]bool, ec.n), str: make([]string, ec.n)}
		for i := range out.str {
			if args[0].isNull(i) || args[1].isNull(i) || (len(args) == 3 && args[2].isNull(i)) {
				continue
			}
			pat := args[1].str[i]
			re, ok := cache[pat]
			if !ok {
				re, _ = regexp.Compile(pat)
				if cache == nil {
					cache = map[string]*regexp.Regexp{}
				}
				cache[pat] = re
			}
			if re == nil {
				continue
			}
			g := int64(0)
			if len(args) == 3 {
				g = args[2].i64[i]
			}
			m := re.FindStringSubmatchIndex(args[0].str[i])
			if m == nil || g < 0 || int(g) > re.NumSubexp() || m[2*g] < 0 {
				continue
			}
			out.str[i], out.valid[i] = args[0].str[i][m[2*g]:m[2*g+1]], true
		}
		return out, nil
	}, nil
}

func initCap(s string) string {
	r := []rune(s)
	start := true
	for i, c := range r {
		if unicode.IsLetter(c) || unicode.IsDigit(c) {
			if start {
				r[i] = unicode.ToUpper(c)
			} else {
				r[i] = unicode.ToLower(c)
			}
			start = false
		} else {
			start = true
		}
	}
	return string(r)
}

// concatKernel is the function fn, CONCAT/|| (NULL if any argument is
// NULL) or CONCAT_WS (NULL only if the separator is; NULL arguments are
// skipped).
func concatKernel(fn string, ws bool) kernel {
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		lim := newStrLimit(ec, fn, false)
		out := &vec{n: ec.n, str: make([]string, ec.n)}
		if ws {
			out.valid = args[0].valid
		} else {
			out.valid = andValid(ec.n, args...)
		}
		for i := range out.str {
			if out.isNull(i) {
				continue
			}
			var n int64
			if ws {
				parts := 0
				for _, a := range args[1:] {
					if !a.isNull(i) {
						n += int64(len(a.str[i]))
						parts++
					}
				}
				n += int64(max(parts-1, 0)) * int64(len(args[0].str[i]))
			} else {
				for _, a := range args {
					n += int64(len(a.str[i]))
				}
			}
			if ok, err := lim.admit(i, n); err != nil {
				return nil, err
			} else if !ok {
				continue
			}
			var sb strings.Builder
			sb.Grow(int(n))
			if ws {
				first := true
				for _, a := range args[1:] {
					if a.isNull(i) {
						continue
					}
					if !first {
						sb.WriteString(args[0].str[i])
					}
					sb.WriteString(a.str[i])
					first = false
				}
			} else {
				for _, a := range args {
					sb.WriteString(a.str[i])
				}
			}
			out.str[i] = sb.String()
		}
		return out, nil
	}
}

// substringKernel is SUBSTRING(s, start[, len]) with SQL's 1-based start;
// a start <= 0 counts positions before the string, as Flink does. The
// result of a valid UTF-8 string shares its bytes.
func substringKernel(ec *evalCtx, args []*vec) (*vec, error) {
	lim := newStrLimit(ec, "SUBSTRING", false)
	out := &vec{n: ec.n, valid: andValid(ec.n, args...), str: make([]string, ec.n)}
	for i := range out.str {
		if out.isNull(i) {
			continue
		}
		s := args[0].str[i]
		runes := int64(utf8.RuneCountInString(s))
		start := args[1].i64[i]
		end := runes
		if start < 0 {
			start = runes + start + 1
		}
		if start == 0 {
			start = 1
		}
		if len(args) == 3 {
			l := args[2].i64[i]
			if l < 0 {
				out.valid, out.str[i] = ensureValid(out.valid, ec.n), ""
				out.valid[i] = false
				continue
			}
			end = min(end, start-1+l)
		}
		b := max(start-1, 0)
		if b >= end || b >= runes {
			continue
		}
		if utf8.ValidString(s) {
			out.str[i] = s[runeOffset(s, b):runeOffset(s, end)]
			continue
		}
		// Invalid bytes become U+FFFD, three bytes each in the result.
		r := string([]rune(s)[b:end])
		if ok, err := lim.admit(i, int64(len(r))); err != nil {
			return nil, err
		} else if ok {
			out.str[i] = r
		}
	}
	return out, nil
}

// runeOffset returns the byte offset of rune k of s, len(s) past the end.
func runeOffset(s string, k int64) int {
	for off := range s {
		if k == 0 {
			return off
		}
		k--
	}
	return len(s)
}

func ensureValid(v []bool, n int) []bool {
	if v == nil {
		return fill(make([]bool, n), true)
	}
	return v
}

// likeMatcher is a compiled LIKE pattern.
type likeMatcher struct {
	re      *regexp.Regexp
	prefix  string
	literal bool
}

func compileLike(p, esc string) *likeMatcher {
	var sb strings.Builder
	sb.WriteString("(?s)^")
	rs := []rune(p)
	var escR rune = -1
	if esc != "" {
		escR, _ = utf8.DecodeRuneInString(esc)
	}
	simple := true
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == escR && i+1 < len(rs):
			i++
			sb.WriteString(regexp.QuoteMeta(string(rs[i])))
			simple = false
		case c == '%':
			sb.WriteString(".*")
			if i != len(rs)-1 {
				simple = false
			}
		case c == '_':
			sb.WriteString(".")
			simple = false
		default:
			sb.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	sb.WriteString("$")
	m := &likeMatcher{re: regexp.MustCompile(sb.String())}
	if simple {
		if strings.HasSuffix(p, "%") {
			m.prefix = strings.TrimSuffix(p, "%")
		} else {
			m.prefix, m.literal = p, true
		}
		m.re = nil
	}
	return m
}

func (m *likeMatcher) match(s string) bool {
	switch {
	case m.re != nil:
		return m.re.MatchString(s)
	case m.literal:
		return s == m.prefix
	}
	return strings.HasPrefix(s, m.prefix)
}

func likeKernel(not, withEscape bool) kernel {
	cache := map[string]*likeMatcher{}
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		s, p := args[0], args[1]
		out := &vec{n: ec.n, valid: andValid(ec.n, s, p), b: make([]bool, ec.n)}
		for i := range out.b {
			if out.isNull(i) {
				continue
			}
			esc := ""
			if withEscape && !args[2].isNull(i) {
				esc = args[2].str[i]
			}
			key := p.str[i] + "\x00" + esc
			m, ok := cache[key]
			if !ok {
				m = compileLike(p.str[i], esc)
				if len(cache) < 256 {
					cache[key] = m
				}
			}
			out.b[i] = m.match(s.str[i]) != not
		}
		return out, nil
	}
}
