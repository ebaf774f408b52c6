package expr

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/braidflow/braid/types"
)

// An Expr has two JSON forms, and UnmarshalJSON reads both.
//
// The nested form is one object per node, its arguments nested in "args":
//
//	{"op":"call","type":{...},"func":"+","args":[{"op":"col","type":{...}},{"op":"lit","type":{...},"value":"1"}]}
//
// The flat form lists the nodes in post-order, children before their
// parent and the root last, and "args" holds indexes into that list (null
// for a nil argument); every node but the root is an argument of exactly
// one later node:
//
//	{"nodes":[{"op":"col","type":{...}},{"op":"lit","type":{...},"value":"1"},{"op":"call","type":{...},"func":"+","args":[0,1]}]}
//
// Fields appear in the order op, type, col, value, func, args, and col,
// value, func and args only when set. A literal's value is encoded by its
// type so that it decodes to the same Go form: integers, floats and
// DECIMALs as strings (int64 stays exact, NaN survives), binaries as
// base64.
//
// NB: operator uids are hashed from spec JSON, expressions included, so
// the nested form is kept byte for byte as braid always wrote it (the test
// holds a copy of the old encoder). It is used up to maxNestedDepth.

// maxNestedDepth is the deepest expression, in nodes from the root to a
// leaf, that MarshalJSON writes in the nested form; deeper ones are written
// flat.
//
// NB: encoding/json refuses documents nested more than 10,000 levels, and
// the nested form takes two levels per node (the object and its args), so
// a 5,000-deep chain such as 1+1+...+1 could not be decoded. 4,096 leaves
// a spec ~1,800 levels around an expression. Trees from 4,097 to ~4,990
// levels, which the previous encoder wrote in 20 s to a minute (it was
// quadratic), now encode flat, so such plans get new operator uids.
const maxNestedDepth = 4096

// MarshalJSON encodes e in the nested form, or in the flat form when e is
// deeper than maxNestedDepth. It takes time and memory linear in the size
// of the tree (a subtree shared by two parents is written twice), and fails
// only on a literal whose value does not fit its type.
func (e *Expr) MarshalJSON() ([]byte, error) {
	if e == nil {
		return []byte("null"), nil
	}
	w := exprWriter{dataTypes: map[types.DataType][]byte{}}
	var err error
	if deeperThan(e, maxNestedDepth) {
		err = w.flat(e)
	} else {
		err = w.nested(e)
	}
	if err != nil {
		return nil, err
	}
	return w.buf, nil
}

// deeperThan reports whether a path from e to a leaf has more than limit
// nodes.
func deeperThan(e *Expr, limit int) bool {
	type item struct {
		e     *Expr
		depth int
	}
	stack := []item{{e, 1}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.depth > limit {
			return true
		}
		for _, a := range it.e.Args {
			if a != nil {
				stack = append(stack, item{a, it.depth + 1})
			}
		}
	}
	return false
}

// exprWriter appends the JSON of expressions to buf without recursion.
type exprWriter struct {
	buf []byte
	// dataTypes caches the encoding of each type met: a tree has few.
	dataTypes map[types.DataType][]byte
}

// nested writes root in the nested form.
func (w *exprWriter) nested(root *Expr) error {
	type frame struct {
		e    *Expr
		next int // the next argument to write
	}
	if err := w.fields(root); err != nil {
		return err
	}
	stack := []frame{{e: root}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next == len(f.e.Args) {
			if len(f.e.Args) > 0 {
				w.buf = append(w.buf, ']')
			}
			w.buf = append(w.buf, '}')
			stack = stack[:len(stack)-1]
			continue
		}
		if f.next == 0 {
			w.buf = append(w.buf, `,"args":[`...)
		} else {
			w.buf = append(w.buf, ',')
		}
		a := f.e.Args[f.next]
		f.next++
		if a == nil {
			w.buf = append(w.buf, "null"...)
			continue
		}
		if err := w.fields(a); err != nil {
			return err
		}
		stack = append(stack, frame{e: a})
	}
	return nil
}

// flat writes root in the flat form.
func (w *exprWriter) flat(root *Expr) error {
	type frame struct {
		e    *Expr
		next int // the next argument to visit
		base int // where this node's children's indexes start in done
	}
	// done holds the indexes of the written nodes whose parent is not
	// written yet, -1 for a nil argument.
	var done []int
	n := 0
	w.buf = append(w.buf, `{"nodes":[`...)
	stack := []frame{{e: root}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next < len(f.e.Args) {
			a := f.e.Args[f.next]
			f.next++
			if a == nil {
				done = append(done, -1)
			} else {
				stack = append(stack, frame{e: a, base: len(done)})
			}
			continue
		}
		if n > 0 {
			w.buf = append(w.buf, ',')
		}
		if err := w.fields(f.e); err != nil {
			return err
		}
		if len(f.e.Args) > 0 {
			w.buf = append(w.buf, `,"args":[`...)
			for i, c := range done[f.base:] {
				if i > 0 {
					w.buf = append(w.buf, ',')
				}
				if c < 0 {
					w.buf = append(w.buf, "null"...)
				} else {
					w.buf = strconv.AppendInt(w.buf, int64(c), 10)
				}
			}
			w.buf = append(w.buf, ']')
		}
		w.buf = append(w.buf, '}')
		done = append(done[:f.base], n)
		n++
		stack = stack[:len(stack)-1]
	}
	w.buf = append(w.buf, "]}"...)
	return nil
}

// fields opens e's object and writes its fields up to, not including,
// args.
func (w *exprWriter) fields(e *Expr) error {
	w.buf = append(w.buf, `{"op":`...)
	w.buf = appendJSONString(w.buf, string(e.Op))
	w.buf = append(w.buf, `,"type":`...)
	t, ok := w.dataTypes[e.Type]
	if !ok {
		var err error
		if t, err = json.Marshal(e.Type); err != nil {
			return err
		}
		w.dataTypes[e.Type] = t
	}
	w.buf = append(w.buf, t...)
	if e.Col != 0 {
		w.buf = append(w.buf, `,"col":`...)
		w.buf = strconv.AppendInt(w.buf, int64(e.Col), 10)
	}
	if e.Op == OpLiteral && e.Value != nil {
		raw, err := encodeValue(e.Value, e.Type)
		if err != nil {
			return err
		}
		w.buf = append(w.buf, `,"value":`...)
		w.buf = append(w.buf, raw...)
	}
	if e.Func != "" {
		w.buf = append(w.buf, `,"func":`...)
		w.buf = appendJSONString(w.buf, e.Func)
	}
	return nil
}

// appendJSONString appends s as json.Marshal writes it: HTML characters
// escaped, invalid UTF-8 replaced by U+FFFD.
func appendJSONString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always encodes
			return append(buf, b...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}

// UnmarshalJSON decodes either form MarshalJSON writes (see above), to
// any depth, in time linear in len(data); "null" decodes to the zero
// Expr. Keys are matched exactly, unknown keys are skipped, and for a key
// given twice the last wins. It does not retain data.
func (e *Expr) UnmarshalJSON(data []byte) error {
	r := exprReader{data: data, dataTypes: map[string]types.DataType{}}
	if r.literal("null") {
		if err := r.end(); err != nil {
			return err
		}
		*e = Expr{}
		return nil
	}
	start := r.pos
	var root *Expr
	var err error
	if r.expect('{') == nil && r.peek() == '"' {
		if k, kerr := r.key(); kerr == nil && k == "nodes" {
			root, err = r.flat()
		}
	}
	if root == nil && err == nil {
		r.pos = start
		root, err = r.nested()
	}
	if err != nil {
		return err
	}
	if err := r.end(); err != nil {
		return err
	}
	*e = *root
	return nil
}

// exprReader parses the JSON of an Expr from data, from pos on. It checks
// the syntax of the structure itself and leaves the values of "type",
// "value" and unknown keys to encoding/json.
type exprReader struct {
	data []byte
	pos  int
	// dataTypes caches the decoded "type" objects by their bytes.
	dataTypes map[string]types.DataType
}

func (r *exprReader) errorf(format string, args ...any) error {
	return fmt.Errorf("expr: bad expression JSON at offset %d: %s", r.pos, fmt.Sprintf(format, args...))
}

// peek skips white space and returns the next byte, 0 at the end.
func (r *exprReader) peek() byte {
	for r.pos < len(r.data) {
		switch c := r.data[r.pos]; c {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return c
		}
	}
	return 0
}

func (r *exprReader) expect(c byte) error {
	if r.peek() != c {
		return r.errorf("expected '%c'", c)
	}
	r.pos++
	return nil
}

// end checks that nothing but white space follows.
func (r *exprReader) end() error {
	if r.peek() != 0 || r.pos != len(r.data) {
		return r.errorf("unexpected data after the expression")
	}
	return nil
}

// literal consumes word (null, true, false) if it comes next.
func (r *exprReader) literal(word string) bool {
	r.peek()
	if len(r.data)-r.pos >= len(word) && string(r.data[r.pos:r.pos+len(word)]) == word {
		r.pos += len(word)
		return true
	}
	return false
}

// stringToken consumes a JSON string and returns it with its quotes, and
// whether it holds an escape (checked by encoding/json when decoded).
func (r *exprReader) stringToken() (raw []byte, escaped bool, err error) {
	if r.peek() != '"' {
		return nil, false, r.errorf("expected a string")
	}
	start := r.pos
	r.pos++
	for r.pos < len(r.data) {
		switch c := r.data[r.pos]; {
		case c == '"':
			r.pos++
			return r.data[start:r.pos], escaped, nil
		case c == '\\':
			escaped = true
			r.pos += 2
		case c < 0x20:
			return nil, false, r.errorf("control character in a string")
		default:
			r.pos++
		}
	}
	return nil, false, r.errorf("unterminated string")
}

func (r *exprReader) readString() (string, error) {
	raw, escaped, err := r.stringToken()
	if err != nil {
		return "", err
	}
	if body := raw[1 : len(raw)-1]; !escaped && utf8.Valid(body) {
		return string(body), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", r.errorf("%v", err)
	}
	return s, nil
}

// key reads an object key and its colon.
func (r *exprReader) key() (string, error) {
	k, err := r.readString()
	if err != nil {
		return "", err
	}
	return k, r.expect(':')
}

// readInt reads a JSON number that is an integer, as encoding/json reads
// one into an int.
func (r *exprReader) readInt() (int, error) {
	r.peek()
	start := r.pos
	if r.pos < len(r.data) && r.data[r.pos] == '-' {
		r.pos++
	}
	digits := r.pos
	for r.pos < len(r.data) && r.data[r.pos] >= '0' && r.data[r.pos] <= '9' {
		r.pos++
		if r.data[digits] == '0' {
			break // JSON has no leading zeros; what follows fails to parse
		}
	}
	if r.pos == digits {
		return 0, r.errorf("expected an integer")
	}
	if r.pos < len(r.data) {
		if c := r.data[r.pos]; c == '.' || c == 'e' || c == 'E' {
			return 0, r.errorf("expected an integer, got a fraction or exponent")
		}
	}
	v, err := strconv.Atoi(string(r.data[start:r.pos]))
	if err != nil {
		return 0, r.errorf("integer %s out of range", r.data[start:r.pos])
	}
	return v, nil
}

// skipValue consumes one JSON value and returns its bytes, which it checks
// only enough to find the value's end.
func (r *exprReader) skipValue() ([]byte, error) {
	c := r.peek()
	start := r.pos
	switch c {
	case 0:
		return nil, r.errorf("unexpected end of input")
	case '"':
		raw, _, err := r.stringToken()
		return raw, err
	case '{', '[':
		depth := 0
		for r.pos < len(r.data) {
			switch r.data[r.pos] {
			case '"':
				if _, _, err := r.stringToken(); err != nil {
					return nil, err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			r.pos++
			if depth == 0 {
				return r.data[start:r.pos], nil
			}
		}
		return nil, r.errorf("unterminated %c", c)
	}
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ',', '}', ']', ':', ' ', '\t', '\n', '\r':
			return r.data[start:r.pos], nil
		}
		r.pos++
	}
	return r.data[start:r.pos], nil
}

// member reads the value of key into e; "value" is only kept (in value),
// since it is decoded by the type once the object is read.
func (r *exprReader) member(e *Expr, key string, value *[]byte) error {
	var err error
	switch key {
	case "op", "func":
		if r.literal("null") {
			return nil
		}
		var s string
		if s, err = r.readString(); err != nil {
			return err
		}
		if key == "op" {
			e.Op = Op(s)
		} else {
			e.Func = s
		}
	case "col":
		if !r.literal("null") {
			e.Col, err = r.readInt()
		}
	case "type":
		start := r.pos
		raw, err := r.skipValue()
		if err != nil || string(raw) == "null" {
			return err
		}
		t, ok := r.dataTypes[string(raw)]
		if !ok {
			if err := json.Unmarshal(raw, &t); err != nil {
				r.pos = start
				return r.errorf("type: %v", err)
			}
			r.dataTypes[string(raw)] = t
		}
		e.Type = t
	case "value":
		start := r.pos
		raw, err := r.skipValue()
		if err == nil && !json.Valid(raw) {
			r.pos = start
			return r.errorf("bad value %.40s", raw)
		}
		*value = raw
		return err
	default:
		start := r.pos
		raw, err := r.skipValue()
		if err == nil && !json.Valid(raw) {
			r.pos = start
			return r.errorf("bad value of %q", key)
		}
		return err
	}
	return err
}

// finish decodes the value of a literal e once all its fields are read
// (the value's form depends on the type, which may come after it).
func (r *exprReader) finish(e *Expr, value []byte) error {
	if len(value) == 0 || string(value) == "null" {
		return nil
	}
	if e.Op != OpLiteral {
		return nil
	}
	v, err := decodeValue(value, e.Type)
	if err != nil {
		return r.errorf("%v", err)
	}
	e.Value = v
	return nil
}

// nested reads the nested form with an explicit stack.
func (r *exprReader) nested() (*Expr, error) {
	const (
		firstMember = iota // after '{'
		nextMember         // after a member
		firstArg           // after "args":[
		nextArg            // after an argument
	)
	type frame struct {
		e     *Expr
		value []byte
		state int
	}
	if err := r.expect('{'); err != nil {
		return nil, err
	}
	stack := []frame{{e: &Expr{}, state: firstMember}}
	for {
		f := &stack[len(stack)-1]
		c := r.peek()
		switch f.state {
		case firstMember, nextMember:
			if c == '}' {
				r.pos++
				if err := r.finish(f.e, f.value); err != nil {
					return nil, err
				}
				e := f.e
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return e, nil
				}
				p := &stack[len(stack)-1]
				p.e.Args = append(p.e.Args, e)
				p.state = nextArg
				continue
			}
			if f.state == nextMember {
				if c != ',' {
					return nil, r.errorf("expected ',' or '}'")
				}
				r.pos++
			}
			k, err := r.key()
			if err != nil {
				return nil, err
			}
			f.state = nextMember
			if k != "args" {
				if err := r.member(f.e, k, &f.value); err != nil {
					return nil, err
				}
				continue
			}
			if r.literal("null") {
				f.e.Args = nil
				continue
			}
			if err := r.expect('['); err != nil {
				return nil, err
			}
			f.e.Args = []*Expr{} // NB: as encoding/json decodes [], not nil
			f.state = firstArg
		case firstArg, nextArg:
			if c == ']' {
				r.pos++
				f.state = nextMember
				continue
			}
			if f.state == nextArg {
				if c != ',' {
					return nil, r.errorf("expected ',' or ']'")
				}
				r.pos++
			}
			if r.literal("null") {
				f.e.Args = append(f.e.Args, nil)
				f.state = nextArg
				continue
			}
			if err := r.expect('{'); err != nil {
				return nil, err
			}
			stack = append(stack, frame{e: &Expr{}, state: firstMember})
		}
	}
}

// flat reads the flat form after its "nodes" key.
func (r *exprReader) flat() (*Expr, error) {
	if err := r.expect('['); err != nil {
		return nil, err
	}
	var nodes []*Expr
	var used []bool // used[i]: node i is an argument already
	for {
		e, err := r.flatNode(nodes, used)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, e)
		used = append(used, false)
		if r.peek() == ']' {
			r.pos++
			break
		}
		if err := r.expect(','); err != nil {
			return nil, err
		}
	}
	if err := r.expect('}'); err != nil {
		return nil, err
	}
	for i, u := range used[:len(used)-1] {
		if !u {
			return nil, r.errorf("node %d is not an argument of any later node", i)
		}
	}
	return nodes[len(nodes)-1], nil
}

// flatNode reads one node of the flat form; its arguments index nodes
// and are marked in used.
func (r *exprReader) flatNode(nodes []*Expr, used []bool) (*Expr, error) {
	if err := r.expect('{'); err != nil {
		return nil, err
	}
	e := &Expr{}
	var value []byte
	hasArgs := false
	for first := true; ; first = false {
		c := r.peek()
		if c == '}' {
			r.pos++
			break
		}
		if !first {
			if c != ',' {
				return nil, r.errorf("expected ',' or '}'")
			}
			r.pos++
		}
		k, err := r.key()
		if err != nil {
			return nil, err
		}
		if k != "args" {
			if err := r.member(e, k, &value); err != nil {
				return nil, err
			}
			continue
		}
		if hasArgs {
			return nil, r.errorf("node %d has two args", len(nodes))
		}
		hasArgs = true
		if e.Args, err = r.flatArgs(nodes, used); err != nil {
			return nil, err
		}
	}
	return e, r.finish(e, value)
}

// flatArgs reads the argument indexes of node len(nodes).
func (r *exprReader) flatArgs(nodes []*Expr, used []bool) ([]*Expr, error) {
	if r.literal("null") {
		return nil, nil
	}
	if err := r.expect('['); err != nil {
		return nil, err
	}
	args := []*Expr{}
	for first := true; ; first = false {
		c := r.peek()
		if c == ']' {
			r.pos++
			return args, nil
		}
		if !first {
			if c != ',' {
				return nil, r.errorf("expected ',' or ']'")
			}
			r.pos++
		}
		if r.literal("null") {
			args = append(args, nil)
			continue
		}
		i, err := r.readInt()
		if err != nil {
			return nil, err
		}
		if i < 0 || i >= len(nodes) {
			return nil, r.errorf("node %d refers to node %d, which does not precede it", len(nodes), i)
		}
		if used[i] {
			return nil, r.errorf("node %d is an argument twice", i)
		}
		used[i] = true
		args = append(args, nodes[i])
	}
}

func encodeValue(v any, t types.DataType) (json.RawMessage, error) {
	v, err := normalizeValue(v, t)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case float64:
		// Strings keep NaN, infinities and the exact bits.
		return json.Marshal(strconv.FormatFloat(x, 'g', -1, 64))
	case int64:
		return json.Marshal(strconv.FormatInt(x, 10))
	case decimal128.Num:
		return json.Marshal(x.BigInt().String())
	case []byte:
		return json.Marshal(base64.StdEncoding.EncodeToString(x))
	}
	return json.Marshal(v)
}

func decodeValue(raw json.RawMessage, t types.DataType) (any, error) {
	var s string
	switch t.Kind {
	case types.KindBoolean:
		var b bool
		err := json.Unmarshal(raw, &b)
		return b, err
	case types.KindDate, types.KindTime, types.KindIntervalYearMonth:
		var i int32
		err := json.Unmarshal(raw, &i)
		return i, err
	case types.KindChar, types.KindVarChar:
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("expr: bad %v literal %s: %w", t, raw, err)
	}
	switch t.Kind {
	case types.KindFloat, types.KindDouble:
		return strconv.ParseFloat(s, 64)
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt,
		types.KindTimestamp, types.KindTimestampLTZ, types.KindIntervalDayTime:
		return strconv.ParseInt(s, 10, 64)
	case types.KindDecimal:
		bi, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("expr: bad DECIMAL literal %q", s)
		}
		return decimal128.FromBigInt(bi), nil
	case types.KindBinary, types.KindVarBinary:
		return base64.StdEncoding.DecodeString(s)
	case types.KindArray, types.KindMap, types.KindMultiset, types.KindRow:
		b, err := base64.StdEncoding.DecodeString(s)
		if err == nil {
			err = types.ValidateComposite(t, b)
		}
		return b, err
	}
	return nil, fmt.Errorf("expr: cannot decode a literal of type %v", t)
}
