package expr

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/braidflow/braid/types"
)

// The SQL/JSON functions. A document is parsed into jnode values as
// Flink's Jackson reads it: object members in document order (a repeated
// key keeps its first place and takes the last value), numbers as Java
// writes the Integer, Long, BigInteger or BigDecimal they become.

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
	float bool   // a number with a fraction or exponent (a BigDecimal)
	text  string // a number's Java text, a string's value, "true" or "false"
	elems []jnode
	keys  []string // object member names, parallel to elems
}

func (n jnode) scalar() bool { return n.kind != jArray && n.kind != jObject }

// appendJSON writes n compactly, as Flink's Jackson mapper writes the
// Java value: object members sorted by key (ORDER_MAP_ENTRIES_BY_KEYS).
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
	order := make([]int, len(n.keys))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return javaLess(n.keys[order[x]], n.keys[order[y]]) })
	b = append(b, '{')
	for j, i := range order {
		if j > 0 {
			b = append(b, ',')
		}
		b = appendJSONQuoted(b, n.keys[i])
		b = append(b, ':')
		b = n.elems[i].appendJSON(b)
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

// jsonPaths compiles each distinct path of one kernel once.
type jsonPaths map[string]*jsonPath

func (c *jsonPaths) get(s string) *jsonPath {
	if *c == nil {
		*c = jsonPaths{}
	}
	p, ok := (*c)[s]
	if !ok {
		if len(*c) > 1024 {
			clear(*c)
		}
		p = compileJSONPath(s)
		(*c)[s] = p
	}
	return p
}

// jsonFail is a failure of a SQL/JSON function that fails the job (ERROR
// ON EMPTY, ERROR ON ERROR), named as Braid's other runtime errors are.
func jsonFail(fn string, err error) error {
	return fmt.Errorf("expr: %s: %s", fn, err.Error())
}

// jsonApply parses row i's document and applies its path. A path Braid
// does not run fails the row.
func jsonApply(fn string, paths *jsonPaths, doc, path string) (jsonPathResult, error) {
	p := paths.get(path)
	if p.unsupported != nil {
		return jsonPathResult{}, jsonFail(fn, p.unsupported)
	}
	d, err := parseJSON(doc)
	if err != nil {
		err = fmt.Errorf("invalid JSON document: %v", err)
	}
	return jsonEvalPath(&d, err, p), nil
}

// jsonCheckPath refuses, at planning, a literal path that uses what Braid
// does not run.
func jsonCheckPath(fn string, path *Expr) error {
	if err := CheckJSONPath(path); err != nil {
		return userErrorf("%s: %s", fn, err.Error())
	}
	return nil
}

// CheckJSONPath returns the error that refuses the path of a SQL/JSON
// function when it is a literal using what Braid does not run (a deep
// scan, a filter, a function), and nil otherwise.
func CheckJSONPath(path *Expr) error {
	if path.Op != OpLiteral || path.Value == nil {
		return nil
	}
	if p := compileJSONPath(strArg(path)); p.unsupported != nil {
		return userErrorf("%s", p.unsupported.Error())
	}
	return nil
}

// jsonBehavior reads the literal behaviour argument i of e, def when the
// call has fewer arguments.
func jsonBehavior(e *Expr, i int, def string) string {
	if i >= len(e.Args) {
		return def
	}
	return strArg(e.Args[i])
}

// The behaviours of the ON EMPTY and ON ERROR clauses, as the typed calls
// carry them.
var (
	jsonExistsBehaviors = map[string]bool{"FALSE": true, "TRUE": true, "UNKNOWN": true, "ERROR": true}
	jsonValueBehaviors  = map[string]bool{"NULL": true, "ERROR": true, "DEFAULT": true}
	jsonQueryBehaviors  = map[string]bool{"NULL": true, "ERROR": true, "EMPTY ARRAY": true, "EMPTY OBJECT": true}
	jsonWrappers        = map[string]bool{"WITHOUT ARRAY": true, "WITH CONDITIONAL ARRAY": true, "WITH UNCONDITIONAL ARRAY": true}
)

func behaviorArg(fn string, a *Expr, valid map[string]bool) error {
	if a.Op != OpLiteral || !a.Type.IsString() || !valid[strArg(a)] {
		return userErrorf("function %s: bad clause argument %v", fn, a)
	}
	return nil
}

// resolveJSONExists types JSON_EXISTS(doc, path[, onError]): BOOLEAN, NULL
// when doc or path is, or on an error with UNKNOWN ON ERROR; nullable
// always, as Calcite's FORCE_NULLABLE makes it.
func resolveJSONExists(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 2, 3); err != nil {
		return nil, err
	}
	e, err := sig(types.Boolean, argStr, argStr).resolve(name, args[:2])
	if err != nil {
		return nil, err
	}
	if err := jsonCheckPath(name, e.Args[1]); err != nil {
		return nil, err
	}
	if len(args) == 3 {
		if err := behaviorArg(name, args[2], jsonExistsBehaviors); err != nil {
			return nil, err
		}
		e.Args = append(e.Args, args[2])
	}
	e.Type = e.Type.WithNullable(true)
	return e, nil
}

// jsonExistsKernel is JSON_EXISTS: TRUE when the path selects a value that
// is not null (an indefinite path's list, even empty, is a value); on an
// error its ON ERROR behaviour, FALSE by default.
func jsonExistsKernel(e *Expr, _ []types.DataType) (kernel, error) {
	var paths jsonPaths
	onError := jsonBehavior(e, 2, "FALSE")
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		return strictRows(ec, clsBool, args[:2], func(i int, out *vec) (bool, error) {
			r, err := jsonApply("JSON_EXISTS", &paths, args[0].str[i], args[1].str[i])
			if err != nil {
				return false, err
			}
			if r.err == nil {
				out.b[i] = r.val != nil
				return true, nil
			}
			switch onError {
			case "TRUE":
				out.b[i] = true
			case "UNKNOWN":
				return false, nil
			case "ERROR":
				return false, jsonFail("JSON_EXISTS", r.err)
			}
			return true, nil
		})
	}, nil
}

// jsonValueTypes are the result types of JSON_VALUE ... RETURNING.
func jsonValueType(t types.DataType) bool {
	switch t.Kind {
	case types.KindVarChar, types.KindBoolean, types.KindTinyInt, types.KindSmallInt, types.KindInt,
		types.KindBigInt, types.KindFloat, types.KindDouble, types.KindDecimal:
		return true
	}
	return false
}

// resolveJSONValue types JSON_VALUE(doc, path[, returning, onEmpty,
// defaultOnEmpty, onError, defaultOnError]): returning is a NULL literal of
// the result type (STRING by default); a default is the DEFAULT clause's
// expression, cast to the result type as Calcite casts it, and a NULL
// literal for the other behaviours. The result is nullable.
func resolveJSONValue(name string, args []*Expr) (*Expr, error) {
	if len(args) != 2 && len(args) != 7 {
		return nil, userErrorf("function %s expects 2 or 7 arguments, got %d", name, len(args))
	}
	base, err := sig(types.String, argStr, argStr).resolve(name, args[:2])
	if err != nil {
		return nil, err
	}
	if err := jsonCheckPath(name, base.Args[1]); err != nil {
		return nil, err
	}
	if len(args) == 2 {
		return call(name, types.String.WithNullable(true), base.Args...), nil
	}
	t := args[2].Type.WithNullable(true)
	if !jsonValueType(t) {
		return nil, userErrorf("JSON_VALUE with RETURNING %v is not supported yet", t)
	}
	out := append([]*Expr{}, base.Args...)
	out = append(out, NullLiteral(t))
	for _, j := range []int{3, 5} {
		if err := behaviorArg(name, args[j], jsonValueBehaviors); err != nil {
			return nil, err
		}
		d := NullLiteral(t)
		if strArg(args[j]) == "DEFAULT" {
			d = args[j+1]
			if d.Type.Kind == types.KindNull {
				d = NullLiteral(t)
			} else if want := t.WithNullable(d.Type.Nullable()); d.Type != want {
				if !CanCast(d.Type, t) {
					return nil, userErrorf("cannot cast %v to %v", d.Type, t)
				}
				d = Cast(d, want)
			}
		}
		out = append(out, args[j], d)
	}
	return call(name, t, out...), nil
}

// jsonValueKernel is JSON_VALUE: the scalar the path selects, converted
// to the result type as SqlJsonUtils.convertJsonScalar does; the ON EMPTY
// behaviour when it selects nothing, JSON null, or (lax) an array or
// object; the ON ERROR behaviour on an error, (strict) an array or object,
// or a value that does not convert. Every behaviour defaults to NULL.
//
// NB: as Flink's generated code does, the call is NULL when an argument
// it evaluates (doc, path, a DEFAULT expression) is NULL.
func jsonValueKernel(e *Expr, _ []types.DataType) (kernel, error) {
	var paths jsonPaths
	t := e.Type
	onEmpty, onError := jsonBehavior(e, 3, "NULL"), jsonBehavior(e, 5, "NULL")
	strict := []int{0, 1}
	if onEmpty == "DEFAULT" {
		strict = append(strict, 4)
	}
	if onError == "DEFAULT" {
		strict = append(strict, 6)
	}
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		checked := make([]*vec, len(strict))
		for j, a := range strict {
			checked[j] = args[a]
		}
		lim := newStrLimit(ec, "JSON_VALUE", false)
		return strictRows(ec, classOf(t), checked, func(i int, out *vec) (bool, error) {
			r, err := jsonApply("JSON_VALUE", &paths, args[0].str[i], args[1].str[i])
			if err != nil {
				return false, err
			}
			fail := r.err
			if fail == nil {
				switch {
				case r.val == nil || !r.strict && !r.val.scalar():
					switch onEmpty {
					case "ERROR":
						//lint:ignore ST1005 Flink's message, verbatim
						return false, jsonFail("JSON_VALUE", errors.New("Empty result of JSON_VALUE function is not allowed"))
					case "DEFAULT":
						return copyRow(out, args[4], i), nil
					}
					return false, nil
				case !r.val.scalar():
					//lint:ignore ST1005 Flink's message, verbatim
					fail = fmt.Errorf("Strict jsonpath mode requires scalar value, and the actual value is: ''%s''", r.val.javaString())
				default:
					ok, cerr := jsonConvert(r.val, t, out, i, lim)
					if cerr == nil {
						return ok, nil
					}
					if onError == "ERROR" {
						return false, jsonFail("JSON_VALUE", cerr)
					}
					fail = cerr
				}
			}
			switch onError {
			case "ERROR":
				return false, jsonFail("JSON_VALUE", fail)
			case "DEFAULT":
				return copyRow(out, args[6], i), nil
			}
			return false, nil
		})
	}, nil
}

// copyRow sets out's row i to v's, and reports whether it is not NULL.
func copyRow(out, v *vec, i int) bool {
	if v.isNull(i) {
		return false
	}
	switch {
	case out.b != nil:
		out.b[i] = v.b[i]
	case out.i64 != nil:
		out.i64[i] = v.i64[i]
	case out.f64 != nil:
		out.f64[i] = v.f64[i]
	case out.dec != nil:
		out.dec[i] = v.dec[i]
	case out.str != nil:
		out.str[i] = v.str[i]
	}
	return true
}

// jsonConvert writes the scalar v as type t into out's row i, as
// convertJsonScalar converts: a string to BOOLEAN by its word, to a number
// through new BigDecimal(s); a number truncated toward zero to an integer
// type, range-checked; a boolean only to BOOLEAN. An error is a value that
// does not convert, worded as Flink's ERROR ON ERROR message.
func jsonConvert(v *jnode, t types.DataType, out *vec, i int, lim *strLimit) (bool, error) {
	if t.Kind == types.KindVarChar {
		s, ok, err := admitted(lim, i, int64(len(v.text)), func() string { return v.text })
		out.str[i] = s
		return ok, err
	}
	cannot := jsonCannotCast{v, t}
	text := v.text
	switch {
	case v.kind == jBool && t.Kind == types.KindBoolean:
		out.b[i] = v.text == "true"
		return true, nil
	case v.kind == jBool:
		return false, cannot
	case v.kind == jString && t.Kind == types.KindBoolean:
		switch strings.ToLower(strings.TrimSpace(v.text)) {
		case "true", "t", "yes", "1":
			out.b[i] = true
			return true, nil
		case "false", "f", "no", "0":
			out.b[i] = false
			return true, nil
		}
		return false, cannot
	case t.Kind == types.KindBoolean:
		return false, cannot
	case v.kind == jString:
		s, err := bigDecimalString(v.text)
		if err != nil {
			return false, cannot
		}
		text = s
	}
	if v.kind == jNumber && !v.float && t.IsInteger() {
		// NB: the common case, without big numbers.
		if x, err := strconv.ParseInt(text, 10, 64); err == nil {
			if lo, hi := intRange(t.Kind); x < lo || x > hi {
				return false, cannot
			}
			out.i64[i] = x
			return true, nil
		}
	}
	u, scale, ok := parseBigDecimal(text)
	if !ok {
		return false, cannot
	}
	switch t.Kind {
	case types.KindFloat, types.KindDouble:
		bits := 64
		if t.Kind == types.KindFloat {
			bits = 32
		}
		f, err := strconv.ParseFloat(text, bits)
		if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsInf(f, 0) {
			return false, cannot
		}
		out.f64[i] = f
		return true, nil
	case types.KindDecimal:
		if scale < -40 && u.Sign() != 0 {
			return false, cannot
		}
		if scale > int64(t.Scale)+60 {
			u, scale = new(big.Int), int64(t.Scale)
		}
		z := rescaleBig(u, int32(scale), int32(t.Scale))
		if !fitsDecimal(z, t.Precision) {
			return false, cannot
		}
		out.dec[i] = decimal128.FromBigInt(z)
		return true, nil
	}
	// An integer type: the value truncated toward zero.
	var whole *big.Int
	switch {
	case scale <= 0 && u.Sign() != 0 && scale < -40:
		return false, cannot
	case scale <= 0:
		whole = new(big.Int).Mul(u, pow10(int32(-scale)))
	case scale > 60:
		whole = new(big.Int)
	default:
		whole = new(big.Int).Quo(u, pow10(int32(scale)))
	}
	lo, hi := intRange(t.Kind)
	if !whole.IsInt64() || whole.Int64() < lo || whole.Int64() > hi {
		return false, cannot
	}
	out.i64[i] = whole.Int64()
	return true, nil
}

// jsonCannotCast is the error of a JSON scalar that does not convert, its
// message built only when shown.
type jsonCannotCast struct {
	v *jnode
	t types.DataType
}

func (e jsonCannotCast) Error() string {
	return fmt.Sprintf("Cannot cast %s to %s", e.v.javaClass(), jsonTypeRoot(e.t))
}

func intRange(k types.Kind) (int64, int64) {
	switch k {
	case types.KindTinyInt:
		return math.MinInt8, math.MaxInt8
	case types.KindSmallInt:
		return math.MinInt16, math.MaxInt16
	case types.KindInt:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// jsonTypeRoot is Flink's LogicalTypeRoot name of t.
func jsonTypeRoot(t types.DataType) string {
	if t.Kind == types.KindInt {
		return "INTEGER"
	}
	s := t.String()
	if i := strings.IndexAny(s, "( "); i >= 0 {
		s = s[:i]
	}
	return s
}

// resolveJSONQuery types JSON_QUERY(doc, path[, wrapper, onEmpty,
// onError]): STRING, nullable.
func resolveJSONQuery(name string, args []*Expr) (*Expr, error) {
	if len(args) != 2 && len(args) != 5 {
		return nil, userErrorf("function %s expects 2 or 5 arguments, got %d", name, len(args))
	}
	base, err := sig(types.String, argStr, argStr).resolve(name, args[:2])
	if err != nil {
		return nil, err
	}
	if err := jsonCheckPath(name, base.Args[1]); err != nil {
		return nil, err
	}
	out := base.Args
	if len(args) == 5 {
		if err := behaviorArg(name, args[2], jsonWrappers); err != nil {
			return nil, err
		}
		for _, a := range args[3:] {
			if err := behaviorArg(name, a, jsonQueryBehaviors); err != nil {
				return nil, err
			}
		}
		out = append(out, args[2:]...)
	}
	return call(name, types.String.WithNullable(true), out...), nil
}

// jsonQueryKernel is JSON_QUERY: the array or object the path selects,
// wrapped first as the WRAPPER clause says (CONDITIONAL: unless it is an
// array already), as JSON text; the ON EMPTY behaviour when it selects
// nothing, JSON null or (lax) a scalar; the ON ERROR behaviour on an error
// or (strict) a scalar. Both default to NULL.
func jsonQueryKernel(e *Expr, _ []types.DataType) (kernel, error) {
	var paths jsonPaths
	wrapper := jsonBehavior(e, 2, "WITHOUT ARRAY")
	onEmpty, onError := jsonBehavior(e, 3, "NULL"), jsonBehavior(e, 4, "NULL")
	behave := func(b string, fail error) (string, bool, error) {
		switch b {
		case "ERROR":
			return "", false, jsonFail("JSON_QUERY", fail)
		case "EMPTY ARRAY":
			return "[]", true, nil
		case "EMPTY OBJECT":
			return "{}", true, nil
		}
		return "", false, nil
	}
	return strKernel("JSON_QUERY", func(_ *evalCtx, lim *strLimit, args []*vec, i int) (string, bool, error) {
		r, err := jsonApply("JSON_QUERY", &paths, args[0].str[i], args[1].str[i])
		if err != nil {
			return "", false, err
		}
		if r.err != nil {
			return behave(onError, r.err)
		}
		v := r.val
		if v != nil && (wrapper == "WITH UNCONDITIONAL ARRAY" || wrapper == "WITH CONDITIONAL ARRAY" && v.kind != jArray) {
			v = &jnode{kind: jArray, elems: []jnode{*v}}
		}
		switch {
		case v == nil || !r.strict && v.scalar():
			//lint:ignore ST1005 Flink's message, verbatim
			return behave(onEmpty, errors.New("Empty result of JSON_QUERY function is not allowed"))
		case v.scalar():
			//lint:ignore ST1005 Flink's message, verbatim
			return behave(onError, fmt.Errorf("Strict jsonpath mode requires array or object value, and the actual value is: ''%s''", v.javaString()))
		}
		b := v.appendJSON(nil)
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

// jsonArg prepares a value for JSON_STRING, JSON_ARRAY and JSON_OBJECT,
// which take the types Flink's JsonGenerateUtils.createNodeTerm makes a
// JSON node of: strings, booleans, numbers, timestamps and binaries.
func jsonArg(name string, a *Expr) (*Expr, error) {
	t := a.Type
	switch {
	case t.Kind == types.KindNull:
		return fillNull(a, types.String), nil
	case t.IsString(), t.Kind == types.KindBoolean, t.IsNumeric(),
		t.Kind == types.KindTimestamp, t.Kind == types.KindTimestampLTZ,
		t.Kind == types.KindBinary, t.Kind == types.KindVarBinary:
		return a, nil
	}
	return nil, userErrorf("function %s: Type '%v' is not scalar or cannot be converted into JSON.", name, t)
}

// jsonRaw reports whether the typed argument a goes into JSON as it is:
// the result of another JSON constructor, which Flink inserts as JSON
// rather than as a string.
func jsonRaw(a *Expr) bool {
	return a.Op == OpCall && (a.Func == "JSON_OBJECT" || a.Func == "JSON_ARRAY")
}

// appendJSONArg writes the value of argument v, of type t, at row i as
// Flink writes the JSON node it makes of it: through its mapper, which
// reads a floating-point or DECIMAL node back as a BigDecimal
// (USE_BIG_DECIMAL_FOR_FLOATS), so that a DOUBLE is written as
// BigDecimal.valueOf(d) (1.0E+20, 0.000010 for 1.0E-5) and a FLOAT as the
// double it widens to. A timestamp is ISO_LOCAL_DATE_TIME text (with Z for
// a TIMESTAMP_LTZ, in UTC), a binary its base64.
func appendJSONArg(b []byte, t types.DataType, raw bool, v *vec, i int) ([]byte, error) {
	switch {
	case raw:
		return append(b, v.str[i]...), nil
	case t.Kind == types.KindBoolean:
		return strconv.AppendBool(b, v.b[i]), nil
	case t.IsString():
		return appendJSONQuoted(b, v.str[i]), nil
	case t.IsInteger():
		return strconv.AppendInt(b, v.i64[i], 10), nil
	case t.Kind == types.KindFloat, t.Kind == types.KindDouble:
		f := v.f64[i]
		if math.IsNaN(f) || math.IsInf(f, 0) {
			s := types.FormatJavaDouble(f)
			//lint:ignore ST1005 Flink's message, verbatim
			return nil, fmt.Errorf("Character %c is neither a decimal digit number, decimal point, nor \"e\" notation exponential mark.", strings.TrimPrefix(s, "-")[0])
		}
		s, err := bigDecimalString(types.FormatJavaDouble(f))
		return append(b, s...), err
	case t.Kind == types.KindDecimal:
		return append(b, bigDecimalText(v.dec[i].BigInt(), int64(t.Scale))...), nil
	case t.Kind == types.KindTimestamp, t.Kind == types.KindTimestampLTZ:
		tm := time.Unix(0, v.i64[i]).UTC()
		b = append(b, '"')
		b = tm.AppendFormat(b, "2006-01-02T15:04:05")
		if ns := tm.Nanosecond(); ns != 0 {
			frac := strings.TrimRight(fmt.Sprintf("%09d", ns), "0")
			b = append(append(b, '.'), frac...)
		}
		if t.Kind == types.KindTimestampLTZ {
			b = append(b, 'Z')
		}
		return append(b, '"'), nil
	case t.Kind == types.KindBinary, t.Kind == types.KindVarBinary:
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, v.bin[i])
		return append(b, '"'), nil
	}
	return nil, fmt.Errorf("type %v cannot be written as JSON", t)
}

func resolveJSONString(name string, args []*Expr) (*Expr, error) {
	if err := argCount(name, args, 1, 1); err != nil {
		return nil, err
	}
	a, err := jsonArg(name, args[0])
	if err != nil {
		return nil, err
	}
	return call(name, types.String.WithNullable(a.Type.Nullable()), a), nil
}

func jsonStringKernel(e *Expr, _ []types.DataType) (kernel, error) {
	raw := jsonRaw(e.Args[0])
	t := e.Args[0].Type
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		return strictRows(ec, clsStr, args, func(i int, out *vec) (bool, error) {
			b, err := appendJSONArg(nil, t, raw, args[0], i)
			if err != nil {
				return false, jsonFail("JSON_STRING", err)
			}
			out.str[i] = string(b)
			return true, nil
		})
	}, nil
}

// resolveJSONArray types JSON_ARRAY(v, ...): STRING NOT NULL, NULL values
// left out (Flink's default ABSENT ON NULL). The typed call's first
// argument is the ON NULL behaviour.
func resolveJSONArray(name string, args []*Expr) (*Expr, error) {
	return ResolveJSONConstructor(name, "ABSENT ON NULL", args)
}

// resolveJSONObject types JSON_OBJECT(k1, v1, k2, v2, ...) with string
// keys: STRING NOT NULL, NULL values written as null (Flink's default NULL
// ON NULL). The parser turns KEY k VALUE v into the pair k, v.
func resolveJSONObject(name string, args []*Expr) (*Expr, error) {
	return ResolveJSONConstructor(name, "NULL ON NULL", args)
}

// ResolveJSONConstructor types JSON_ARRAY or JSON_OBJECT with its ON NULL
// clause, onNull being "NULL ON NULL" or "ABSENT ON NULL".
func ResolveJSONConstructor(name, onNull string, args []*Expr) (*Expr, error) {
	if onNull != "NULL ON NULL" && onNull != "ABSENT ON NULL" {
		return nil, userErrorf("function %s: bad ON NULL clause %q", name, onNull)
	}
	out := []*Expr{StringLiteral(onNull)}
	if name == "JSON_ARRAY" {
		for _, a := range args {
			v, err := jsonArg(name, a)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return call(name, types.String.WithNullable(false), out...), nil
	}
	if len(args)%2 != 0 {
		return nil, userErrorf("function %s expects key and value pairs", name)
	}
	for i := 0; i < len(args); i += 2 {
		if !stringish(args[i].Type) {
			return nil, userErrorf("function %s expects string keys, got %v", name, args[i].Type)
		}
		v, err := jsonArg(name, args[i+1])
		if err != nil {
			return nil, err
		}
		out = append(out, fillNull(args[i], types.String), v)
	}
	return call(name, types.String.WithNullable(false), out...), nil
}

// jsonBuildKernel is JSON_ARRAY and JSON_OBJECT; the first argument is the
// ON NULL behaviour. JSON_OBJECT writes its members sorted by key, a key
// given twice once with its last value, as Flink's ObjectNode.set and its
// ORDER_MAP_ENTRIES_BY_KEYS mapper do.
func jsonBuildKernel(e *Expr, _ []types.DataType) (kernel, error) {
	object := e.Func == "JSON_OBJECT"
	absent := strArg(e.Args[0]) == "ABSENT ON NULL"
	raw := make([]bool, len(e.Args))
	argTypes := make([]types.DataType, len(e.Args))
	for i, a := range e.Args {
		raw[i], argTypes[i] = jsonRaw(a), a.Type
	}
	return func(ec *evalCtx, args []*vec) (*vec, error) {
		lim := newStrLimit(ec, e.Func, false)
		out := &vec{n: ec.n, str: make([]string, ec.n)}
		var buf []byte
		var err error
		var members []int // the key argument of each member, in key order
		for i := range out.str {
			buf = buf[:0]
			if !object {
				buf = append(buf, '[')
				first := true
				for j := 1; j < len(args); j++ {
					v := args[j]
					if v.isNull(i) && absent {
						continue
					}
					if !first {
						buf = append(buf, ',')
					}
					first = false
					if v.isNull(i) {
						buf = append(buf, "null"...)
					} else if buf, err = appendJSONArg(buf, argTypes[j], raw[j], v, i); err != nil {
						return nil, jsonFail(e.Func, err)
					}
				}
				buf = append(buf, ']')
			} else {
				members = members[:0]
				for j := 1; j < len(args); j += 2 {
					if args[j].isNull(i) {
						if ec.isActive(i) {
							return nil, fmt.Errorf("expr: JSON_OBJECT: a key is NULL")
						}
						continue
					}
					if args[j+1].isNull(i) && absent {
						continue
					}
					k := args[j].str[i]
					dup := false
					for m, o := range members {
						if args[o].str[i] == k {
							members[m], dup = j, true
							break
						}
					}
					if !dup {
						members = append(members, j)
					}
				}
				sort.SliceStable(members, func(x, y int) bool {
					return javaLess(args[members[x]].str[i], args[members[y]].str[i])
				})
				buf = append(buf, '{')
				for m, j := range members {
					if m > 0 {
						buf = append(buf, ',')
					}
					buf = appendJSONQuoted(buf, args[j].str[i])
					buf = append(buf, ':')
					if v := args[j+1]; v.isNull(i) {
						buf = append(buf, "null"...)
					} else if buf, err = appendJSONArg(buf, argTypes[j+1], raw[j+1], v, i); err != nil {
						return nil, jsonFail(e.Func, err)
					}
				}
				buf = append(buf, '}')
			}
			if ok, err := lim.admit(i, int64(len(buf))); err != nil {
				return nil, err
			} else if ok {
				out.str[i] = string(buf)
			}
		}
		return out, nil
	}, nil
}
