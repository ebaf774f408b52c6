package expr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/braidflow/braid/types"
)

// The SQL/JSON functions. A document is parsed into jnode values that keep
// the order of object members and the text of numbers, so that JSON_QUERY
// returns members in document order and numbers as written.

type jkind uint8

const (
	jNull jkind = iota
	jBool
	jNumber
	jString
	jArray
	jObject
)

type jnode struct {
	kind  jkind
	text  string // a number's text, a string's value, "true" or "false"
	elems []jnode
	keys  []string // object member names, parallel to elems
}

var errJSONTrailing = errors.New("data after the JSON value")

// parseJSON reads one JSON document.
func parseJSON(s string) (jnode, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	n, err := readJSON(d)
	if err != nil {
		return jnode{}, err
	}
	if _, err := d.Token(); err != io.EOF {
		return jnode{}, errJSONTrailing
	}
	return n, nil
}

func readJSON(d *json.Decoder) (jnode, error) {
	t, err := d.Token()
	if err != nil {
		return jnode{}, err
	}
	switch v := t.(type) {
	case nil:
		return jnode{kind: jNull}, nil
	case bool:
		return jnode{kind: jBool, text: strconv.FormatBool(v)}, nil
	case json.Number:
		return jnode{kind: jNumber, text: v.String()}, nil
	case string:
		return jnode{kind: jString, text: v}, nil
	case json.Delim:
		n := jnode{kind: jArray}
		if v == '{' {
			n.kind = jObject
		}
		for d.More() {
			if n.kind == jObject {
				k, err := d.Token()
				if err != nil {
					return jnode{}, err
				}
				n.keys = append(n.keys, k.(string))
			}
			e, err := readJSON(d)
			if err != nil {
				return jnode{}, err
			}
			n.elems = append(n.elems, e)
		}
		if _, err := d.Token(); err != nil {
			return jnode{}, err
		}
		return n, nil
	}
	return jnode{}, fmt.Errorf("unexpected JSON token %v", t)
}

func (n jnode) scalar() bool { return n.kind != jArray && n.kind != jObject }

// appendJSON writes n compactly, as Jackson writes a tree.
func (n jnode) appendJSON(b []byte) []byte {
	switch n.kind {
	case jNull:
		return append(b, "null"...)
	case jBool, jNumber:
		return append(b, n.text...)
	case jString:
		return appendJSONQuoted(b, n.text)
	case jArray:
		b = append(b, '[')
		for i, e := range n.elems {
			if i > 0 {
				b = append(b, ',')
			}
			b = e.appendJSON(b)
		}
		return append(b, ']')
	}
	b = append(b, '{')
	for i, e := range n.elems {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONQuoted(b, n.keys[i])
		b = append(b, ':')
		b = e.appendJSON(b)
	}
	return append(b, '}')
}

// appendJSONQuoted quotes s as Jackson does: quote, backslash and control
// characters escaped, everything else (non-ASCII, '/') as it is.
func appendJSONQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\r':
			b = append(b, `\r`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c == '\b':
			b = append(b, `\b`...)
		case c == '\f':
			b = append(b, `\f`...)
		case c < 0x20:
			b = append(b, fmt.Sprintf(`\u%04X`, c)...)
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// A jsonPath is a parsed SQL/JSON path: [lax|strict] $ followed by member
// (.name, .*, ['name']) and element ([n], [*]) steps.
type jsonPath struct {
	strict bool
	steps  []jstep
}

type jstep struct {
	member bool   // .name or .*
	name   string // member name
	index  int    // element index
	all    bool   // .* or [*]
}

var errPathMode = errors.New("strict mode: structural error")

func parseJSONPath(p string) (jsonPath, error) {
	var jp jsonPath
	s := strings.TrimSpace(p)
	switch {
	case strings.HasPrefix(s, "strict "):
		jp.strict, s = true, strings.TrimSpace(s[len("strict "):])
	case strings.HasPrefix(s, "lax "):
		s = strings.TrimSpace(s[len("lax "):])
	}
	if !strings.HasPrefix(s, "$") {
		return jp, fmt.Errorf("JSON path %q must start with $", p)
	}
	s = s[1:]
	for s != "" {
		switch {
		case strings.HasPrefix(s, ".*"):
			jp.steps, s = append(jp.steps, jstep{member: true, all: true}), s[2:]
		case strings.HasPrefix(s, ".") && len(s) > 1 && s[1] != '[':
			j := 1
			for j < len(s) && s[j] != '.' && s[j] != '[' {
				j++
			}
			jp.steps, s = append(jp.steps, jstep{member: true, name: s[1:j]}), s[j:]
		case strings.HasPrefix(s, ".["), strings.HasPrefix(s, "["):
			s = strings.TrimPrefix(s, ".")
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return jp, fmt.Errorf("JSON path %q has an unclosed [", p)
			}
			in := strings.TrimSpace(s[1:end])
			switch {
			case in == "*":
				jp.steps = append(jp.steps, jstep{all: true})
			case len(in) >= 2 && (in[0] == '\'' || in[0] == '"') && in[len(in)-1] == in[0]:
				jp.steps = append(jp.steps, jstep{member: true, name: in[1 : len(in)-1]})
			default:
				n, err := strconv.Atoi(in)
				if err != nil || n < 0 {
					return jp, fmt.Errorf("JSON path %q has a bad subscript [%s]", p, in)
				}
				jp.steps = append(jp.steps, jstep{index: n})
			}
			s = s[end+1:]
		default:
			return jp, fmt.Errorf("JSON path %q is not valid at %q", p, s)
		}
	}
	return jp, nil
}

// eval applies the path to a document and returns the items it selects.
// In lax mode a missing member or index selects nothing, a member step
// looks into the objects of an array, and an element step treats a
// non-array as an array of one; strict mode fails on each of these.
func (jp jsonPath) eval(doc jnode) ([]jnode, error) {
	items := []jnode{doc}
	for _, st := range jp.steps {
		var next []jnode
		for _, it := range items {
			got, err := jp.step(st, it)
			if err != nil {
				return nil, err
			}
			next = append(next, got...)
		}
		items = next
	}
	return items, nil
}

func (jp jsonPath) step(st jstep, it jnode) ([]jnode, error) {
	if st.member {
		switch {
		case it.kind == jObject && st.all:
			return it.elems, nil
		case it.kind == jObject:
			for i, k := range it.keys {
				if k == st.name {
					return []jnode{it.elems[i]}, nil
				}
			}
		case it.kind == jArray && !jp.strict:
			var out []jnode
			for _, e := range it.elems {
				got, err := jp.step(st, e)
				if err != nil {
					return nil, err
				}
				out = append(out, got...)
			}
			return out, nil
		}
		if jp.strict {
			return nil, errPathMode
		}
		return nil, nil
	}
	elems := it.elems
	if it.kind != jArray {
		if jp.strict {
			return nil, errPathMode
		}
		elems = []jnode{it}
	}
	if st.all {
		return elems, nil
	}
	if st.index < len(elems) {
		return []jnode{elems[st.index]}, nil
	}
	if jp.strict {
		return nil, errPathMode
	}
	return nil, nil
}

// pathCache parses each distinct path of one evaluator once.
type pathCache map[string]*pathOrErr

type pathOrErr struct {
	p   jsonPath
	err error
}

func (c *pathCache) get(s string) (jsonPath, error) {
	if *c == nil {
		*c = pathCache{}
	}
	if e, ok := (*c)[s]; ok {
		return e.p, e.err
	}
	p, err := parseJSONPath(s)
	(*c)[s] = &pathOrErr{p, err}
	return p, err
}

// jsonSelect parses doc and applies path to it.
func jsonSelect(paths *pathCache, doc, path string) ([]jnode, error) {
	p, err := paths.get(path)
	if err != nil {
		return nil, err
	}
	d, err := parseJSON(doc)
	if err != nil {
		return nil, err
	}
	return p.eval(d)
}

// jsonExistsKernel is JSON_EXISTS(doc, path): whether the path selects
// something; FALSE on an error (invalid JSON, a strict-mode miss), Flink's
// default FALSE ON ERROR.
func jsonExistsKernel(*Expr, []types.DataType) (kernel, error) {
	var paths pathCache
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		return strictRows(ec, clsBool, args, func(i int, out *vec) (bool, error) {
			items, err := jsonSelect(&paths, args[0].str[i], args[1].str[i])
			out.b[i] = err == nil && len(items) > 0
			return true, nil
		})
	}, nil
}

// jsonValueKernel is JSON_VALUE(doc, path): the one scalar the path
// selects, as a string; NULL when it selects nothing or JSON null (NULL ON
// EMPTY), and NULL on an error: invalid JSON, several items, an array or
// object (NULL ON ERROR).
func jsonValueKernel(*Expr, []types.DataType) (kernel, error) {
	var paths pathCache
	return strKernel("JSON_VALUE", func(_ *evalCtx, _ *strLimit, args []*vec, i int) (string, bool, error) {
		items, err := jsonSelect(&paths, args[0].str[i], args[1].str[i])
		if err != nil || len(items) != 1 || !items[0].scalar() || items[0].kind == jNull {
			return "", false, nil
		}
		return items[0].text, true, nil
	})(nil, nil)
}

// jsonQueryKernel is JSON_QUERY(doc, path) WITHOUT ARRAY WRAPPER: the one
// array or object the path selects, as JSON text; NULL when it selects
// nothing, and NULL on an error (a scalar, several items, invalid JSON).
func jsonQueryKernel(*Expr, []types.DataType) (kernel, error) {
	var paths pathCache
	return strKernel("JSON_QUERY", func(_ *evalCtx, lim *strLimit, args []*vec, i int) (string, bool, error) {
		items, err := jsonSelect(&paths, args[0].str[i], args[1].str[i])
		if err != nil || len(items) != 1 || items[0].scalar() {
			return "", false, nil
		}
		b := items[0].appendJSON(nil)
		return admitted(lim, i, int64(len(b)), func() string { return string(b) })
	})(nil, nil)
}

// resolveIsJSON types x IS [NOT] JSON [VALUE|SCALAR|ARRAY|OBJECT]: never
// NULL (NULL IS JSON is FALSE).
func resolveIsJSON(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 1, 1); err != nil {
		return nil, err
	}
	if !stringish(args[0].Type) {
		return nil, userErrorf("cannot apply '%s' to arguments of type %v", name, args[0].Type)
	}
	if name == "IS JSON" || name == "IS NOT JSON" {
		name += " VALUE"
	}
	return call(name, types.Boolean.WithNullable(false), fillNull(args[0], types.String)), nil
}

func isJSONKernel(e *Expr, _ []types.DataType) (kernel, error) {
	name := e.Func
	not := strings.HasPrefix(name, "IS NOT ")
	want := name[strings.LastIndexByte(name, ' ')+1:]
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		a := args[0]
		out := &vec{n: ec.n, b: make([]bool, ec.n)}
		for i := range out.b {
			ok := false
			if !a.isNull(i) {
				if n, err := parseJSON(a.str[i]); err == nil {
					switch want {
					case "VALUE":
						ok = true
					case "SCALAR":
						ok = n.scalar()
					case "ARRAY":
						ok = n.kind == jArray
					case "OBJECT":
						ok = n.kind == jObject
					}
				}
			}
			out.b[i] = ok != not
		}
		return out, nil
	}, nil
}

// jsonArg prepares a value for JSON_STRING, JSON_ARRAY and JSON_OBJECT:
// strings, numbers and booleans are written as JSON strings, numbers and
// booleans; every other type as the JSON string of its CAST to STRING.
func jsonArg(a *Expr) *Expr {
	t := a.Type
	switch {
	case t.Kind == types.KindNull:
		return fillNull(a, types.String)
	case t.IsString(), t.Kind == types.KindBoolean:
		return a
	}
	return Cast(a, types.String.WithNullable(t.Nullable()))
}

// jsonRaw reports whether the typed argument a goes into JSON as it is:
// a number (cast to its SQL text) or the result of another JSON
// constructor, which Flink inserts as JSON rather than as a string.
func jsonRaw(a *Expr) bool {
	if a.Op == OpCall && (a.Func == "JSON_OBJECT" || a.Func == "JSON_ARRAY") {
		return true
	}
	return a.Op == OpCall && a.Func == "CAST" && len(a.Args) == 1 && a.Args[0].Type.IsNumeric()
}

// appendJSONArg writes the value of argument v at row i.
func appendJSONArg(b []byte, raw bool, v *vec, i int) []byte {
	switch {
	case v.b != nil:
		return strconv.AppendBool(b, v.b[i])
	case raw:
		return append(b, v.str[i]...)
	}
	return appendJSONQuoted(b, v.str[i])
}

func resolveJSONString(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 1, 1); err != nil {
		return nil, err
	}
	a := jsonArg(args[0])
	return call(name, types.String.WithNullable(a.Type.Nullable()), a), nil
}

func jsonStringKernel(e *Expr, _ []types.DataType) (kernel, error) {
	raw := jsonRaw(e.Args[0])
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		return strictRows(ec, clsStr, args, func(i int, out *vec) (bool, error) {
			out.str[i] = string(appendJSONArg(nil, raw, args[0], i))
			return true, nil
		})
	}, nil
}

// resolveJSONArray types JSON_ARRAY(v, ...): STRING NOT NULL, NULL values
// left out (Flink's default ABSENT ON NULL). The typed call's first
// argument is the ON NULL behaviour, so that the kernel can take the
// clause once the binder passes it.
func resolveJSONArray(name string, args []*Expr) (*Expr, error) {
	out := []*Expr{StringLiteral("ABSENT ON NULL")}
	for _, a := range args {
		out = append(out, jsonArg(a))
	}
	return call(name, types.String.WithNullable(false), out...), nil
}

// resolveJSONObject types JSON_OBJECT(k1, v1, k2, v2, ...) with string
// keys: STRING NOT NULL, NULL values written as null (Flink's default NULL
// ON NULL). The parser turns KEY k VALUE v into the pair k, v.
func resolveJSONObject(name string, args []*Expr) (*Expr, error) {
	if len(args)%2 != 0 {
		return nil, userErrorf("function %s expects key and value pairs", name)
	}
	out := []*Expr{StringLiteral("NULL ON NULL")}
	for i := 0; i < len(args); i += 2 {
		if !stringish(args[i].Type) {
			return nil, userErrorf("function %s expects string keys, got %v", name, args[i].Type)
		}
		out = append(out, fillNull(args[i], types.String), jsonArg(args[i+1]))
	}
	return call(name, types.String.WithNullable(false), out...), nil
}

// jsonBuildKernel is JSON_ARRAY and JSON_OBJECT; the first argument is the
// ON NULL behaviour.
func jsonBuildKernel(e *Expr, _ []types.DataType) (kernel, error) {
	object := e.Func == "JSON_OBJECT"
	absent := strArg(e.Args[0]) == "ABSENT ON NULL"
	raw := make([]bool, len(e.Args))
	for i, a := range e.Args {
		raw[i] = jsonRaw(a)
	}
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		lim := newStrLimit(ec, e.Func, false)
		out := &vec{n: ec.n, str: make([]string, ec.n)}
		var buf []byte
		for i := range out.str {
			buf = buf[:0]
			open, closing := byte('['), byte(']')
			step := 1
			if object {
				open, closing, step = '{', '}', 2
			}
			buf = append(buf, open)
			first := true
			for j := 1; j < len(args); j += step {
				v := args[j]
				if object {
					if args[j].isNull(i) {
						if ec.isActive(i) {
							return nil, fmt.Errorf("expr: JSON_OBJECT: a key is NULL")
						}
						continue
					}
					v = args[j+1]
				}
				if v.isNull(i) && absent {
					continue
				}
				if !first {
					buf = append(buf, ',')
				}
				first = false
				if object {
					buf = appendJSONQuoted(buf, args[j].str[i])
					buf = append(buf, ':')
				}
				if v.isNull(i) {
					buf = append(buf, "null"...)
				} else {
					buf = appendJSONArg(buf, raw[j+step-1], v, i)
				}
			}
			buf = append(buf, closing)
			if ok, err := lim.admit(i, int64(len(buf))); err != nil {
				return nil, err
			} else if ok {
				out.str[i] = string(buf)
			}
		}
		return out, nil
	}, nil
}
