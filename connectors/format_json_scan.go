package connectors

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/braidflow/braid/types"
)

// The json format's record reader: it walks the members of one JSON object
// in place, handing each value's bytes to the column's converter, so that
// decoding a record allocates nothing but the strings it keeps. Members
// that name no column are still checked to be valid JSON, so a record is
// refused exactly when encoding/json would refuse it.

var errJSONEnd = errors.New("unexpected end of JSON input")

// jsonSpace reports whether c is JSON whitespace.
func jsonSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipJSONSpace(v []byte, i int) int {
	for i < len(v) && jsonSpace(v[i]) {
		i++
	}
	return i
}

// scanJSONObject calls member for each member of the JSON object v, with
// its key (unescaped) and the bytes of its value, in order.
func scanJSONObject(v []byte, member func(key []byte, raw []byte) error) error {
	i := skipJSONSpace(v, 0)
	if i == len(v) {
		return errJSONEnd
	}
	if v[i] != '{' {
		return errors.New("not a JSON object")
	}
	i = skipJSONSpace(v, i+1)
	if i < len(v) && v[i] == '}' {
		return jsonTrailing(v, i+1)
	}
	for {
		if i >= len(v) {
			return errJSONEnd
		}
		if v[i] != '"' {
			return fmt.Errorf("invalid character %q looking for the beginning of an object key", v[i])
		}
		end, escaped, err := scanJSONString(v, i)
		if err != nil {
			return err
		}
		key := v[i+1 : end-1]
		if escaped {
			var s string
			if err := json.Unmarshal(v[i:end], &s); err != nil {
				return err
			}
			key = []byte(s)
		}
		i = skipJSONSpace(v, end)
		if i >= len(v) {
			return errJSONEnd
		}
		if v[i] != ':' {
			return fmt.Errorf("invalid character %q after object key", v[i])
		}
		i = skipJSONSpace(v, i+1)
		start := i
		if i, err = skipJSONValue(v, i); err != nil {
			return err
		}
		if err := member(key, v[start:i]); err != nil {
			return err
		}
		i = skipJSONSpace(v, i)
		if i >= len(v) {
			return errJSONEnd
		}
		switch v[i] {
		case ',':
			i = skipJSONSpace(v, i+1)
		case '}':
			return jsonTrailing(v, i+1)
		default:
			return fmt.Errorf("invalid character %q after object key:value pair", v[i])
		}
	}
}

func jsonTrailing(v []byte, i int) error {
	if i = skipJSONSpace(v, i); i < len(v) {
		return fmt.Errorf("invalid character %q after top-level value", v[i])
	}
	return nil
}

// scanJSONString returns the index just past the JSON string starting at
// v[i] (a quote), and whether it holds escapes, control characters or
// bytes that are not UTF-8 (which plainJSONString cannot take as they are).
func scanJSONString(v []byte, i int) (end int, escaped bool, err error) {
	ascii := true
	for j := i + 1; j < len(v); j++ {
		switch c := v[j]; {
		case c == '"':
			if !ascii && !utf8.Valid(v[i+1:j]) {
				escaped = true
			}
			return j + 1, escaped, nil
		case c == '\\':
			escaped = true
			j++
		case c < 0x20:
			escaped = true // encoding/json refuses it when the string is decoded
		case c >= 0x80:
			ascii = false
		}
	}
	return 0, false, errJSONEnd
}

// skipJSONValue returns the index just past the JSON value starting at
// v[i]. Strings, objects and arrays are only matched up here; literals and
// numbers, and the values inside objects and arrays, are checked by
// json.Valid when the value is not one a converter checks itself.
func skipJSONValue(v []byte, i int) (int, error) {
	if i >= len(v) {
		return 0, errJSONEnd
	}
	switch v[i] {
	case '"':
		end, _, err := scanJSONString(v, i)
		return end, err
	case '{', '[':
		depth := 0
		for j := i; j < len(v); j++ {
			switch v[j] {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			case '"':
				end, _, err := scanJSONString(v, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			}
		}
		return 0, errJSONEnd
	}
	j := i
	for j < len(v) && !jsonSpace(v[j]) && v[j] != ',' && v[j] != '}' && v[j] != ']' {
		j++
	}
	if j == i {
		return 0, fmt.Errorf("invalid character %q looking for beginning of value", v[i])
	}
	return j, nil
}

// plainJSONString returns the text of a JSON string without escapes (one
// scanJSONString found clean), or ok false.
func plainJSONString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	end, escaped, err := scanJSONString(raw, 0)
	if err != nil || escaped || end != len(raw) {
		return "", false
	}
	return string(raw[1 : len(raw)-1]), true
}

// validJSONValue checks the bytes of one value skipJSONValue matched: a
// clean string as it is, everything else against the JSON grammar.
func validJSONValue(raw []byte) error {
	switch raw[0] {
	case '"':
		if _, escaped, _ := scanJSONString(raw, 0); !escaped {
			return nil
		}
	case 't':
		if string(raw) == "true" {
			return nil
		}
	case 'f':
		if string(raw) == "false" {
			return nil
		}
	case 'n':
		if string(raw) == "null" {
			return nil
		}
	default:
		if validJSONNumber(raw) {
			return nil
		}
	}
	if json.Valid(raw) {
		return nil
	}
	var x any
	if err := json.Unmarshal(raw, &x); err != nil {
		return err
	}
	return fmt.Errorf("invalid value %s", truncate(raw))
}

// validJSONNumber reports whether s is a JSON number:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validJSONNumber(s []byte) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

func isIntKind(k types.Kind) bool {
	switch k {
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		return true
	}
	return false
}

// plainJSONInt reads a JSON integer of at most 18 digits without
// allocating; ok is false for anything else, which the general path reads.
func plainJSONInt(raw []byte) (n int64, ok bool) {
	s := raw
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 18 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// fitsIntKind reports whether n is in the range of the integer kind k.
func fitsIntKind(n int64, k types.Kind) bool {
	switch k {
	case types.KindTinyInt:
		return n >= math.MinInt8 && n <= math.MaxInt8
	case types.KindSmallInt:
		return n >= math.MinInt16 && n <= math.MaxInt16
	case types.KindInt:
		return n >= math.MinInt32 && n <= math.MaxInt32
	}
	return true
}
