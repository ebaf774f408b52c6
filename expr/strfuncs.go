package expr

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/braidflow/braid/types"
)

// The string functions beyond the SQL standard's, as Flink's
// SqlFunctionUtils defines them. Lengths and positions count characters
// (runes); Flink counts UTF-16 units, which differs only outside the BMP.

// strResult is a string kernel body: the value of row i, false for NULL.
type strResult func(ec *evalCtx, lim *strLimit, args []*vec, i int) (string, bool, error)

func strKernel(fn string, f strResult) func(*Expr, []types.DataType) (kernel, error) {
	return func(*Expr, []types.DataType) (kernel, error) {
		return func(ec *evalCtx, args []*vec) (*vec, error) {
			lim := newStrLimit(ec, fn, false)
			return strictRows(ec, clsStr, args, func(i int, out *vec) (bool, error) {
				s, ok, err := f(ec, lim, args, i)
				out.str[i] = s
				return ok, err
			})
		}, nil
	}
}

// admitted builds a value of n bytes with build, if the limits allow it.
func admitted(lim *strLimit, i int, n int64, build func() string) (string, bool, error) {
	ok, err := lim.admit(i, n)
	if err != nil || !ok {
		return "", false, err
	}
	return build(), true, nil
}

// cyclicBytes is the length in bytes of the first k runes of the cyclic
// repetition of p.
func cyclicBytes(p []rune, k int64) int64 {
	if len(p) == 0 || k <= 0 {
		return 0
	}
	full, rem := k/int64(len(p)), k%int64(len(p))
	return full*int64(len(string(p))) + int64(len(string(p[:rem])))
}

func cyclic(p []rune, k int64) string {
	var b strings.Builder
	for j := int64(0); j < k; j++ {
		b.WriteRune(p[j%int64(len(p))])
	}
	return b.String()
}

// padKernel is LPAD/RPAD(s, n, pad): s padded with pad to n characters, or
// cut to n. A negative n or an empty pad gives NULL, n = 0 the empty
// string (SqlFunctionUtils#lpad).
func padKernel(left bool) strResult {
	return func(_ *evalCtx, lim *strLimit, args []*vec, i int) (string, bool, error) {
		s, n, pad := args[0].str[i], args[1].i64[i], args[2].str[i]
		if n < 0 || pad == "" {
			return "", false, nil
		}
		sr, pr := []rune(s), []rune(pad)
		keep := min(n, int64(len(sr)))
		fill := n - keep
		size := int64(len(string(sr[:keep]))) + cyclicBytes(pr, fill)
		return admitted(lim, i, size, func() string {
			if left {
				return cyclic(pr, fill) + string(sr[:keep])
			}
			return string(sr[:keep]) + cyclic(pr, fill)
		})
	}
}

// repeatKernel is REPEAT(s, n); n <= 0 gives the empty string.
func repeatKernel(_ *evalCtx, lim *strLimit, args []*vec, i int) (string, bool, error) {
	s, n := args[0].str[i], args[1].i64[i]
	if n <= 0 || s == "" {
		return "", true, nil
	}
	size := int64(len(s)) * n
	if n > 1<<40 || size/n != int64(len(s)) {
		size = 1 << 62
	}
	return admitted(lim, i, size, func() string { return strings.Repeat(s, int(n)) })
}

func reverseKernel(_ *evalCtx, _ *strLimit, args []*vec, i int) (string, bool, error) {
	r := []rune(args[0].str[i])
	for a, b := 0, len(r)-1; a < b; a, b = a+1, b-1 {
		r[a], r[b] = r[b], r[a]
	}
	return string(r), true, nil
}

// sideKernel is LEFT/RIGHT(s, n): the first or last n characters; a
// negative n gives the empty string.
func sideKernel(left bool) strResult {
	return func(_ *evalCtx, _ *strLimit, args []*vec, i int) (string, bool, error) {
		s, n := args[0].str[i], args[1].i64[i]
		if n <= 0 {
			return "", true, nil
		}
		total := int64(utf8.RuneCountInString(s))
		if n >= total {
			return s, true, nil
		}
		if left {
			return s[:runeOffset(s, n)], true, nil
		}
		return s[runeOffset(s, total-n):], true, nil
	}
}

// locate returns the 1-based position of sub in s at or after the 1-based
// character from, 0 if absent (SqlFunctionUtils#position: indexOf(sub,
// from - 1) + 1, where a start before the string counts from its start).
func locate(sub, s string, from int64) int64 {
	if from < 1 {
		from = 1
	}
	total := int64(utf8.RuneCountInString(s))
	if from-1 > total {
		return 0
	}
	off := runeOffset(s, from-1)
	j := strings.Index(s[off:], sub)
	if j < 0 {
		return 0
	}
	return from + int64(utf8.RuneCountInString(s[off:off+j]))
}

// locateKernel is LOCATE(sub, s[, from]) and, with its arguments the other
// way round, INSTR(s, sub).
func locateKernel(e *Expr, _ []types.DataType) (kernel, error) {
	instr := e.Func == "INSTR"
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		return strictRows(ec, clsInt, args, func(i int, out *vec) (bool, error) {
			sub, s := args[0].str[i], args[1].str[i]
			if instr {
				sub, s = s, sub
			}
			from := int64(1)
			if len(args) == 3 {
				from = args[2].i64[i]
			}
			out.i64[i] = locate(sub, s, from)
			return true, nil
		})
	}, nil
}

// asciiKernel is ASCII(s): the code of the first character, 0 for the
// empty string.
func asciiKernel(*Expr, []types.DataType) (kernel, error) {
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		return strictRows(ec, clsInt, args, func(i int, out *vec) (bool, error) {
			if r, _ := utf8.DecodeRuneInString(args[0].str[i]); args[0].str[i] != "" {
				out.i64[i] = int64(r)
			}
			return true, nil
		})
	}, nil
}

// chrKernel is CHR(n): the character of code n & 0xFF, the empty string for
// a negative n (SqlFunctionUtils#chr; so CHR(353) is 'a').
func chrKernel(_ *evalCtx, _ *strLimit, args []*vec, i int) (string, bool, error) {
	n := args[0].i64[i]
	if n < 0 {
		return "", true, nil
	}
	return string(rune(n & 0xFF)), true, nil
}

// regexCache compiles each distinct pattern of one evaluator once; a
// pattern that does not compile is cached as nil.
type regexCache map[string]*regexp.Regexp

func (c *regexCache) get(p string) *regexp.Regexp {
	if re, ok := (*c)[p]; ok {
		return re
	}
	if *c == nil {
		*c = regexCache{}
	}
	re, _ := regexp.Compile(p)
	(*c)[p] = re
	return re
}

// regexpReplaceKernel is REGEXP_REPLACE(s, re, r): every match of re
// replaced by r taken literally (Matcher.quoteReplacement); a pattern that
// does not compile gives NULL.
func regexpReplaceKernel(*Expr, []types.DataType) (kernel, error) {
	var cache regexCache
	return strKernel("REGEXP_REPLACE", func(_ *evalCtx, lim *strLimit, args []*vec, i int) (string, bool, error) {
		re := cache.get(args[1].str[i])
		if re == nil {
			return "", false, nil
		}
		s, r := args[0].str[i], args[2].str[i]
		n := int64(len(s))
		for _, m := range re.FindAllStringIndex(s, -1) {
			n += int64(len(r)) - int64(m[1]-m[0])
		}
		return admitted(lim, i, n, func() string { return re.ReplaceAllLiteralString(s, r) })
	})(nil, nil)
}

// regexpKernel is REGEXP(s, re): whether some substring of s matches; an
// empty or broken pattern gives FALSE (SqlFunctionUtils#regExp).
func regexpKernel(*Expr, []types.DataType) (kernel, error) {
	var cache regexCache
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		return strictRows(ec, clsBool, args, func(i int, out *vec) (bool, error) {
			if p := args[1].str[i]; p != "" {
				if re := cache.get(p); re != nil {
					out.b[i] = re.MatchString(args[0].str[i])
				}
			}
			return true, nil
		})
	}, nil
}

// translateKernel is TRANSLATE(s, from, to): each character of s found in
// from becomes the character at the same place in to, or is dropped when to
// is shorter; the first occurrence in from wins.
func translateKernel(_ *evalCtx, lim *strLimit, args []*vec, i int) (string, bool, error) {
	s, from, to := args[0].str[i], []rune(args[1].str[i]), []rune(args[2].str[i])
	m := make(map[rune]int, len(from))
	for j, r := range from {
		if _, ok := m[r]; !ok {
			m[r] = j
		}
	}
	var b strings.Builder
	for _, r := range s {
		j, ok := m[r]
		switch {
		case !ok:
			b.WriteRune(r)
		case j < len(to):
			b.WriteRune(to[j])
		}
	}
	return admitted(lim, i, int64(b.Len()), b.String)
}

func toBase64Kernel(_ *evalCtx, lim *strLimit, args []*vec, i int) (string, bool, error) {
	s := args[0].str[i]
	return admitted(lim, i, int64(base64.StdEncoding.EncodedLen(len(s))), func() string {
		return base64.StdEncoding.EncodeToString([]byte(s))
	})
}

// fromBase64Kernel decodes standard base64 (padding required, as Java's
// Base64.getDecoder); input that is not base64 fails the evaluation.
func fromBase64Kernel(_ *evalCtx, _ *strLimit, args []*vec, i int) (string, bool, error) {
	b, err := base64.StdEncoding.DecodeString(args[0].str[i])
	if err != nil {
		return "", false, fmt.Errorf("expr: FROM_BASE64: %q is not base64: %v", args[0].str[i], err)
	}
	return string(b), true, nil
}

// hexKernel is HEX(x): an integer in two's complement hexadecimal
// (Long.toHexString), a string's UTF-8 bytes, both in upper case.
func hexKernel(e *Expr, at []types.DataType) (kernel, error) {
	if at[0].IsString() {
		return strKernel("HEX", func(_ *evalCtx, lim *strLimit, args []*vec, i int) (string, bool, error) {
			s := args[0].str[i]
			return admitted(lim, i, 2*int64(len(s)), func() string { return strings.ToUpper(fmt.Sprintf("%x", s)) })
		})(e, at)
	}
	return strKernel("HEX", func(_ *evalCtx, _ *strLimit, args []*vec, i int) (string, bool, error) {
		return strings.ToUpper(strconv.FormatUint(uint64(args[0].i64[i]), 16)), true, nil
	})(e, at)
}

// binKernel is BIN(x): an integer in two's complement binary
// (Long.toBinaryString).
func binKernel(_ *evalCtx, _ *strLimit, args []*vec, i int) (string, bool, error) {
	return strconv.FormatUint(uint64(args[0].i64[i]), 2), true, nil
}

func resolveHex(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 1, 1); err != nil {
		return nil, err
	}
	a := args[0]
	switch {
	case a.Type.Kind == types.KindNull:
		a = fillNull(a, types.BigInt)
	case a.Type.IsInteger(), a.Type.IsString():
	default:
		return nil, userErrorf("function %s expects an integer or a string, got %v", name, a.Type)
	}
	return call(name, types.String.WithNullable(a.Type.Nullable()), a), nil
}

// sameStringType is the result of a function that keeps its first
// argument's length bound: VARCHAR(n) of a CHAR(n) or VARCHAR(n).
func sameStringType(args []*Expr) types.DataType { return types.VarChar(args[0].Type.Length) }

// overlayKernel is OVERLAY(s PLACING r FROM start [FOR n]): s with n
// characters (default: r's length) from start replaced by r. A start
// outside s gives s unchanged, and n <= 0 drops the rest of s after r, as
// Flink's SqlFunctionUtils#overlay does.
func overlayKernel(_ *evalCtx, lim *strLimit, args []*vec, i int) (string, bool, error) {
	s, r, start := args[0].str[i], args[1].str[i], args[2].i64[i]
	n := int64(utf8.RuneCountInString(r))
	if len(args) == 4 {
		n = args[3].i64[i]
	}
	total := int64(utf8.RuneCountInString(s))
	if start <= 0 || start > total {
		return s, true, nil
	}
	head := s[:runeOffset(s, start-1)]
	tail := ""
	if start+n <= total && n > 0 {
		tail = s[runeOffset(s, start-1+n):]
	}
	return admitted(lim, i, int64(len(head)+len(r)+len(tail)), func() string { return head + r + tail })
}
