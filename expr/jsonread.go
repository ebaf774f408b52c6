package expr

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonMaxDepth is the deepest nesting a document may have: Jackson's
// StreamReadConstraints default (maxNestingDepth), which Flink's mapper
// keeps.
const jsonMaxDepth = 1000

// jsonMaxNumberLen is Jackson's default maxNumberLength.
const jsonMaxNumberLen = 1000

// parseJSON reads one JSON document as Flink's Jackson ObjectReader does:
// what follows the first value is not read (FAIL_ON_TRAILING_TOKENS is
// off), except that a number or a literal at the top must end there.
func parseJSON(s string) (jnode, error) {
	r := jsonReader{s: s}
	r.space()
	n, err := r.value(0)
	if err != nil {
		return jnode{}, err
	}
	if r.i < len(s) {
		switch n.kind {
		case jNumber:
			if c := s[r.i]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				return jnode{}, r.errorf("expected space separating root-level values")
			}
		case jBool, jNull:
			if c, _ := utf8.DecodeRuneInString(s[r.i:]); c == '_' || c == '$' || unicode.IsLetter(c) || unicode.IsDigit(c) {
				return jnode{}, r.errorf("unrecognized token")
			}
		}
	}
	return n, nil
}

// jsonReader is a recursive-descent reader of one JSON document.
type jsonReader struct {
	s string
	i int
}

func (r *jsonReader) errorf(format string, args ...any) error {
	return fmt.Errorf("%s at offset %d", fmt.Sprintf(format, args...), r.i)
}

func (r *jsonReader) space() {
	for r.i < len(r.s) {
		switch r.s[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *jsonReader) value(depth int) (jnode, error) {
	if r.i >= len(r.s) {
		return jnode{}, r.errorf("unexpected end of input")
	}
	switch c := r.s[r.i]; {
	case c == '{' || c == '[':
		if depth >= jsonMaxDepth {
			return jnode{}, r.errorf("document nesting depth exceeds the maximum allowed (%d)", jsonMaxDepth)
		}
		return r.container(depth + 1)
	case c == '"':
		s, err := r.str()
		return jnode{kind: jString, text: s}, err
	case c == '-' || c >= '0' && c <= '9':
		return r.number()
	}
	for _, lit := range []struct {
		word string
		n    jnode
	}{{"true", jnode{kind: jBool, text: "true"}}, {"false", jnode{kind: jBool, text: "false"}}, {"null", jnode{kind: jNull}}} {
		if strings.HasPrefix(r.s[r.i:], lit.word) {
			r.i += len(lit.word)
			return lit.n, nil
		}
	}
	return jnode{}, r.errorf("unexpected character %q", r.s[r.i])
}

func (r *jsonReader) container(depth int) (jnode, error) {
	n := jnode{kind: jArray}
	closing := byte(']')
	if r.s[r.i] == '{' {
		n.kind, closing = jObject, '}'
	}
	r.i++
	r.space()
	if r.i < len(r.s) && r.s[r.i] == closing {
		r.i++
		return n, nil
	}
	for {
		var key string
		if n.kind == jObject {
			if r.i >= len(r.s) || r.s[r.i] != '"' {
				return jnode{}, r.errorf("expected a field name")
			}
			k, err := r.str()
			if err != nil {
				return jnode{}, err
			}
			key = k
			r.space()
			if r.i >= len(r.s) || r.s[r.i] != ':' {
				return jnode{}, r.errorf("expected ':'")
			}
			r.i++
			r.space()
		}
		v, err := r.value(depth)
		if err != nil {
			return jnode{}, err
		}
		if n.kind == jObject {
			n.set(key, v)
		} else {
			n.elems = append(n.elems, v)
		}
		r.space()
		if r.i >= len(r.s) {
			return jnode{}, r.errorf("unexpected end of input")
		}
		switch r.s[r.i] {
		case ',':
			r.i++
			r.space()
			continue
		case closing:
			r.i++
			return n, nil
		}
		return jnode{}, r.errorf("expected ',' or '%c'", closing)
	}
}

// str reads a string at r.i (a quote). Invalid UTF-8 and lone surrogates
// become U+FFFD.
func (r *jsonReader) str() (string, error) {
	r.i++
	start := r.i
	for r.i < len(r.s) {
		c := r.s[r.i]
		if c == '"' {
			s := r.s[start:r.i]
			r.i++
			return strings.ToValidUTF8(s, "\uFFFD"), nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		r.i++
	}
	var b strings.Builder
	b.WriteString(r.s[start:r.i])
	for r.i < len(r.s) {
		c := r.s[r.i]
		switch {
		case c == '"':
			r.i++
			return strings.ToValidUTF8(b.String(), "\uFFFD"), nil
		case c < 0x20:
			return "", r.errorf("illegal unquoted character in a string")
		case c != '\\':
			b.WriteByte(c)
			r.i++
			continue
		}
		if r.i+1 >= len(r.s) {
			break
		}
		r.i += 2
		switch e := r.s[r.i-1]; e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			u, ok := r.hex4()
			if !ok {
				return "", r.errorf("bad \\u escape")
			}
			if utf16.IsSurrogate(rune(u)) && strings.HasPrefix(r.s[r.i:], `\u`) {
				save := r.i
				r.i += 2
				if lo, ok := r.hex4(); ok && utf16.DecodeRune(rune(u), rune(lo)) != unicode.ReplacementChar {
					b.WriteRune(utf16.DecodeRune(rune(u), rune(lo)))
					continue
				}
				r.i = save
			}
			b.WriteRune(rune(u)) // a lone surrogate writes U+FFFD
		default:
			return "", r.errorf("unrecognized character escape %q", e)
		}
	}
	return "", r.errorf("unexpected end of input in a string")
}

func (r *jsonReader) hex4() (uint16, bool) {
	if r.i+4 > len(r.s) {
		return 0, false
	}
	var u uint16
	for _, c := range []byte(r.s[r.i : r.i+4]) {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		u = u<<4 | uint16(d)
	}
	r.i += 4
	return u, true
}

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? and gives it
// Java's text (javaNumber).
func (r *jsonReader) number() (jnode, error) {
	start := r.i
	digits := func() int {
		n := 0
		for r.i < len(r.s) && r.s[r.i] >= '0' && r.s[r.i] <= '9' {
			r.i++
			n++
		}
		return n
	}
	if r.s[r.i] == '-' {
		r.i++
	}
	intStart := r.i
	if digits() == 0 {
		return jnode{}, r.errorf("expected a digit")
	}
	if r.s[intStart] == '0' && r.i-intStart > 1 {
		return jnode{}, r.errorf("leading zeroes not allowed")
	}
	intPart := r.s[start:r.i]
	float := false
	if r.i < len(r.s) && r.s[r.i] == '.' {
		r.i++
		float = true
		if digits() == 0 {
			return jnode{}, r.errorf("expected a digit after the decimal point")
		}
	}
	exp := false
	if r.i < len(r.s) && (r.s[r.i] == 'e' || r.s[r.i] == 'E') {
		r.i++
		float, exp = true, true
		if r.i < len(r.s) && (r.s[r.i] == '+' || r.s[r.i] == '-') {
			r.i++
		}
		if digits() == 0 {
			return jnode{}, r.errorf("expected a digit in the exponent")
		}
	}
	text := r.s[start:r.i]
	if len(text) > jsonMaxNumberLen {
		return jnode{}, r.errorf("number length exceeds the maximum allowed (%d)", jsonMaxNumberLen)
	}
	switch {
	case !float && text == "-0":
		text = "0"
	case float && (exp || intPart == "0" || intPart == "-0"):
		s, err := bigDecimalString(text)
		if err != nil {
			return jnode{}, r.errorf("%v", err)
		}
		text = s
	}
	// NB: a plain decimal with a nonzero integer part prints as written.
	return jnode{kind: jNumber, text: text, float: float}, nil
}
