package expr

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/braidflow/braid/types"
)

// jsonCase is one call of JSON_EXISTS, JSON_VALUE or JSON_QUERY on a
// constant document, with its clauses as the binder passes them.
type jsonCase struct {
	fn, doc, path string
	clauses       []*Expr
	want          string // the result, or a part of the error with err
	err           bool
}

const nullDoc = "<NULL>"

func runJSONCases(t *testing.T, cases []jsonCase) {
	t.Helper()
	for _, c := range cases {
		name := fmt.Sprintf("%s(%s, %s %v)", c.fn, c.doc, c.path, c.clauses)
		docArg := str(c.doc)
		if c.doc == nullDoc {
			docArg = NullLiteral(types.String)
		}
		// The document is a column, so that nothing folds at compile time.
		schema := types.Schema{{Name: "doc", Type: types.String}}
		e, err := ResolveCall(c.fn, append([]*Expr{col(0, types.String), str(c.path)}, c.clauses...))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var v any = c.doc
		if docArg.Value == nil {
			v = nil
		}
		b := batchOf(schema, column(types.String, []any{v}))
		ev, err := Compile(e, utcEnv)
		if err != nil {
			b.Release()
			t.Errorf("%s: compile: %v", name, err)
			continue
		}
		out, err := ev.Eval(b)
		b.Release()
		switch {
		case c.err && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", name, err, c.want)
		case c.err:
		case err != nil:
			t.Errorf("%s: %v", name, err)
		default:
			got, isNull := types.FormatValue(out, 0, ev.Type(), utcEnv.loc())
			if isNull {
				got = "NULL"
			}
			if got != c.want {
				t.Errorf("%s = %s, want %s", name, got, c.want)
			}
		}
		if out != nil {
			out.Release()
		}
	}
}

// existsOn, valueOn and queryOn build each function's clause arguments.
func existsOn(onError string) []*Expr { return []*Expr{str(onError)} }

func valueOn(ret types.DataType, onEmpty string, defEmpty *Expr, onError string, defError *Expr) []*Expr {
	if defEmpty == nil {
		defEmpty = NullLiteral(ret)
	}
	if defError == nil {
		defError = NullLiteral(ret)
	}
	return []*Expr{NullLiteral(ret), str(onEmpty), defEmpty, str(onError), defError}
}

func queryOn(wrapper, onEmpty, onError string) []*Expr {
	return []*Expr{str(wrapper), str(onEmpty), str(onError)}
}

// TestJSONExistsClauses checks JSON_EXISTS in both modes with every ON
// ERROR behaviour.
func TestJSONExistsClauses(t *testing.T) {
	doc := `{"a": [1, {"b": null}], "c": null, "d": {"e": 1}}`
	ex := func(path, onError, want string) jsonCase {
		return jsonCase{fn: "JSON_EXISTS", doc: doc, path: path, clauses: existsOn(onError), want: want}
	}
	fail := func(d, path, want string) jsonCase {
		return jsonCase{fn: "JSON_EXISTS", doc: d, path: path, clauses: existsOn("ERROR"), want: want, err: true}
	}
	cases := []jsonCase{
		ex("$.a", "FALSE", "TRUE"),
		ex("$.d.e", "FALSE", "TRUE"),
		ex("$.x", "FALSE", "FALSE"),
		ex("$.x", "TRUE", "TRUE"),
		ex("$.x", "UNKNOWN", "NULL"),
		fail(doc, "$.x", "expr: JSON_EXISTS: No results for path: $['x']"),
		ex("lax $.x", "ERROR", "FALSE"),
		ex("lax $.x.y", "ERROR", "FALSE"),
		// A path selecting JSON null: an error in strict mode, empty in lax.
		ex("$.c", "TRUE", "TRUE"),
		ex("$.c", "FALSE", "FALSE"),
		fail(doc, "strict $.c", "Strict jsonpath mode requires a non empty returned value, but is null"),
		ex("lax $.c", "TRUE", "FALSE"),
		// An indefinite path gives a list, non-null even when empty.
		ex("$.a[*].zz", "FALSE", "TRUE"),
		ex("lax $.x[*]", "FALSE", "TRUE"),
		ex("$.d.*", "FALSE", "TRUE"),
		ex("$.a[0,9]", "FALSE", "TRUE"),
		// Invalid documents: an error in strict mode, nothing in lax.
		{fn: "JSON_EXISTS", doc: "{", path: "$", clauses: existsOn("UNKNOWN"), want: "NULL"},
		{fn: "JSON_EXISTS", doc: "{", path: "lax $", clauses: existsOn("ERROR"), want: "FALSE"},
		{fn: "JSON_EXISTS", doc: "{", path: "lax $.a[x", clauses: existsOn("ERROR"), want: "FALSE"},
		fail("{", "$", "expr: JSON_EXISTS: invalid JSON document"),
		// A document that is JSON null fails in both modes.
		{fn: "JSON_EXISTS", doc: "null", path: "lax $", clauses: existsOn("TRUE"), want: "TRUE"},
		fail("null", "lax $", "json object can not be null"),
		// An invalid path is an error, in lax mode too.
		{fn: "JSON_EXISTS", doc: doc, path: "lax $.a[x", clauses: existsOn("UNKNOWN"), want: "NULL"},
		fail(doc, "$.a[x", "Illegal jsonpath spec ''$.a[x'', format of the spec should be: ''<lax|strict> $'{'expr'}'''"),
		fail(doc, "", "path can not be null or empty"),
		// Strict-mode structural errors, with Jayway's messages.
		fail(doc, "$.d[0]", "Filter: [0] can only be applied to arrays. Current context is: {e=1}"),
		fail(doc, "$.a.b", "Expected to find an object with property ['b'] in path $['a'] but found 'java.util.ArrayList'. "+
			"This is not a json object according to the JsonProvider: '"+jsonProviderName+"'."),
		fail(doc, "$.x.y", "Missing property in path $['x']"),
		fail(doc, "$.c[0]", "The path $['c'] is null"),
		ex("lax $.d[0]", "TRUE", "FALSE"),
		ex("lax $.a.b", "TRUE", "FALSE"),
		// Indexes: out of range selects nothing; negative counts from the end.
		ex("$.a[5]", "TRUE", "TRUE"),
		ex("$.a[5]", "FALSE", "FALSE"),
		ex("$.a[-1].b", "TRUE", "TRUE"),
		ex("$.a[-2]", "FALSE", "TRUE"),
		ex("$.a[-3]", "FALSE", "FALSE"),
		{fn: "JSON_EXISTS", doc: nullDoc, path: "$", clauses: existsOn("TRUE"), want: "NULL"},
	}
	runJSONCases(t, cases)
}

// TestJSONValueClauses checks JSON_VALUE's modes, its ON EMPTY and ON
// ERROR behaviours and its RETURNING conversions.
func TestJSONValueClauses(t *testing.T) {
	S := types.String
	doc := `{"a": [1, 2.50, "x"], "b": {"c": true}, "n": null, "s": "12", "f": 1e2, "big": 123456789012, "neg": -0.7, "t": "yes", "huge": 1e40}`
	v := func(path string, clauses []*Expr, want string) jsonCase {
		return jsonCase{fn: "JSON_VALUE", doc: doc, path: path, clauses: clauses, want: want}
	}
	fail := func(path string, clauses []*Expr, want string) jsonCase {
		return jsonCase{fn: "JSON_VALUE", doc: doc, path: path, clauses: clauses, want: want, err: true}
	}
	both := func() []*Expr { return valueOn(S, "DEFAULT", str("empty"), "DEFAULT", str("error")) }
	cases := []jsonCase{
		v("$.a[0]", nil, "1"),
		v("$.a[1]", nil, "2.50"),
		v("$.f", nil, "1E+2"),
		v("$.a[2]", nil, "x"),
		v("$.b.c", nil, "true"),
		v("$.a[-1]", nil, "x"),
		v("$['b']['c']", nil, "true"),
		v(`$["a"][1]`, nil, "2.50"),
		v("LAX $.a[0]", nil, "1"),
		// ON EMPTY: nothing selected, JSON null, or (lax) not a scalar.
		v("lax $.x", both(), "empty"),
		v("lax $.n", both(), "empty"),
		v("lax $.b", both(), "empty"),
		v("lax $.a[*]", both(), "empty"),
		v("lax $.a[9]", both(), "empty"),
		fail("lax $.x", valueOn(S, "ERROR", nil, "NULL", nil), "expr: JSON_VALUE: Empty result of JSON_VALUE function is not allowed"),
		// In strict mode a miss or a JSON null is an error, and so is an
		// array or object.
		v("$.x", both(), "error"),
		v("$.n", both(), "error"),
		v("$.b", both(), "error"),
		v("$.a[9]", both(), "error"),
		v("$.x", valueOn(S, "ERROR", nil, "NULL", nil), "NULL"),
		fail("$.b", valueOn(S, "NULL", nil, "ERROR", nil), "Strict jsonpath mode requires scalar value, and the actual value is: ''{c=true}''"),
		fail("$.a[*]", valueOn(S, "NULL", nil, "ERROR", nil), "Strict jsonpath mode requires scalar value, and the actual value is: ''[1, 2.50, x]''"),
		fail("$.x", valueOn(S, "NULL", nil, "ERROR", nil), "expr: JSON_VALUE: No results for path: $['x']"),
		// Invalid documents.
		{fn: "JSON_VALUE", doc: "[1,", path: "lax $[0]", clauses: both(), want: "empty"},
		{fn: "JSON_VALUE", doc: "[1,", path: "$[0]", clauses: both(), want: "error"},
		{fn: "JSON_VALUE", doc: nullDoc, path: "$", clauses: both(), want: "NULL"},
		// A DEFAULT that is NULL makes the call NULL, as in Flink's
		// generated code.
		v("$.a[0]", valueOn(S, "DEFAULT", NullLiteral(S), "NULL", nil), "NULL"),
		// RETURNING.
		v("$.a[0]", valueOn(types.Int, "NULL", nil, "NULL", nil), "1"),
		v("$.s", valueOn(types.Int, "NULL", nil, "NULL", nil), "12"),
		v("$.a[1]", valueOn(types.Int, "NULL", nil, "NULL", nil), "2"),
		v("$.neg", valueOn(types.BigInt, "NULL", nil, "NULL", nil), "0"),
		v("$.big", valueOn(types.BigInt, "NULL", nil, "NULL", nil), "123456789012"),
		v("$.big", valueOn(types.Int, "NULL", nil, "DEFAULT", i32(-1)), "-1"),
		fail("$.big", valueOn(types.Int, "NULL", nil, "ERROR", nil), "expr: JSON_VALUE: Cannot cast java.lang.Long to INTEGER"),
		v("$.f", valueOn(types.TinyInt, "NULL", nil, "NULL", nil), "100"),
		v("$.big", valueOn(types.SmallInt, "NULL", nil, "NULL", nil), "NULL"),
		v("$.a[2]", valueOn(types.Int, "NULL", nil, "NULL", nil), "NULL"),
		fail("$.a[2]", valueOn(types.Int, "NULL", nil, "ERROR", nil), "Cannot cast java.lang.String to INTEGER"),
		v("$.a[1]", valueOn(types.Double, "NULL", nil, "NULL", nil), "2.5"),
		v("$.s", valueOn(types.Float, "NULL", nil, "NULL", nil), "12.0"),
		v("$.a[1]", valueOn(types.Decimal(5, 1), "NULL", nil, "NULL", nil), "2.5"),
		v("$.neg", valueOn(types.Decimal(3, 0), "NULL", nil, "NULL", nil), "-1"),
		v("$.big", valueOn(types.Decimal(5, 0), "NULL", nil, "NULL", nil), "NULL"),
		v("$.b.c", valueOn(types.Boolean, "NULL", nil, "NULL", nil), "TRUE"),
		v("$.t", valueOn(types.Boolean, "NULL", nil, "NULL", nil), "TRUE"),
		v("$.s", valueOn(types.Boolean, "NULL", nil, "NULL", nil), "NULL"),
		fail("$.a[0]", valueOn(types.Boolean, "NULL", nil, "ERROR", nil), "Cannot cast java.lang.Integer to BOOLEAN"),
		v("$.a[1]", valueOn(types.TinyInt, "NULL", nil, "ERROR", nil), "2"),
		fail("$.huge", valueOn(types.BigInt, "NULL", nil, "ERROR", nil), "Cannot cast java.math.BigDecimal to BIGINT"),
		v("$.huge", valueOn(types.Double, "NULL", nil, "ERROR", nil), "1.0E40"),
		v("$.b.c", valueOn(types.Int, "NULL", nil, "NULL", nil), "NULL"),
		v("lax $.x", valueOn(types.Int, "DEFAULT", i32(7), "NULL", nil), "7"),
		// The default is cast to the result type.
		v("lax $.x", valueOn(types.Int, "DEFAULT", str("42"), "NULL", nil), "42"),
		v("$.b", valueOn(types.Double, "NULL", nil, "DEFAULT", i32(3)), "3.0"),
	}
	runJSONCases(t, cases)
	if _, err := ResolveCall("JSON_VALUE", append([]*Expr{str("{}"), str("$")},
		valueOn(types.Int, "DEFAULT", Column(0, types.Date), "NULL", nil)...)); err == nil || !strings.HasPrefix(err.Error(), "cannot cast DATE") {
		t.Errorf("DEFAULT date RETURNING INT: %v", err)
	}
	if _, err := ResolveCall("JSON_VALUE", append([]*Expr{str("{}"), str("$")},
		valueOn(types.Date, "NULL", nil, "NULL", nil)...)); err == nil || !strings.HasSuffix(err.Error(), "is not supported yet") {
		t.Errorf("RETURNING DATE: %v", err)
	}
}

// TestJSONQueryClauses checks JSON_QUERY's wrappers and its ON EMPTY and ON
// ERROR behaviours in both modes, and how it writes JSON.
func TestJSONQueryClauses(t *testing.T) {
	doc := `{"b": {"y": [1, 2e0], "x": "q\"\n\u0001é/"}, "a": [3, {"k": null}], "s": "str", "n": null, "k": {"b": 1, "a": 2, "a": 3}}`
	const b = `{"x":"q\"\n\u0001é/","y":[1,2]}`
	q := func(path string, clauses []*Expr, want string) jsonCase {
		return jsonCase{fn: "JSON_QUERY", doc: doc, path: path, clauses: clauses, want: want}
	}
	fail := func(path string, clauses []*Expr, want string) jsonCase {
		return jsonCase{fn: "JSON_QUERY", doc: doc, path: path, clauses: clauses, want: want, err: true}
	}
	cases := []jsonCase{
		// Keys sorted, a repeated key once with its last value.
		q("$", nil, `{"a":[3,{"k":null}],"b":`+b+`,"k":{"a":3,"b":1},"n":null,"s":"str"}`),
		q("$.a", nil, `[3,{"k":null}]`),
		q("$.a[*]", nil, `[3,{"k":null}]`),
		q("$.a[0,1]", nil, `[3,{"k":null}]`),
		q("$.a[0:1]", nil, `[3]`),
		q("$.a[-1:]", nil, `[{"k":null}]`),
		q("$.a[:-1]", nil, `[3]`),
		q("$.b.*", nil, `[[1,2],"q\"\n\u0001é/"]`), // document order
		q("$['b','s']", nil, `{"b":`+b+`,"s":"str"}`),
		q("lax $.zz[*]", nil, `[]`),
		q("$.zz[*]", nil, "NULL"), // Missing property in path $['zz']
		q("$.a[*].k", nil, `[null]`),
		// Scalars.
		q("lax $.s", nil, "NULL"),
		q("lax $.s", queryOn("WITHOUT ARRAY", "EMPTY ARRAY", "NULL"), "[]"),
		q("lax $.s", queryOn("WITHOUT ARRAY", "EMPTY OBJECT", "NULL"), "{}"),
		q("$.s", queryOn("WITHOUT ARRAY", "EMPTY ARRAY", "EMPTY OBJECT"), "{}"),
		fail("$.s", queryOn("WITHOUT ARRAY", "NULL", "ERROR"), "expr: JSON_QUERY: Strict jsonpath mode requires array or object value, and the actual value is: ''str''"),
		q("$.s", queryOn("WITH UNCONDITIONAL ARRAY", "NULL", "NULL"), `["str"]`),
		q("$.s", queryOn("WITH CONDITIONAL ARRAY", "NULL", "NULL"), `["str"]`),
		q("$.a", queryOn("WITH CONDITIONAL ARRAY", "NULL", "NULL"), `[3,{"k":null}]`),
		q("$.a", queryOn("WITH UNCONDITIONAL ARRAY", "NULL", "NULL"), `[[3,{"k":null}]]`),
		q("$.b", queryOn("WITH CONDITIONAL ARRAY", "NULL", "NULL"), `[`+b+`]`),
		q("$.a[*]", queryOn("WITH CONDITIONAL ARRAY", "NULL", "NULL"), `[3,{"k":null}]`),
		q("lax $.a[0]", queryOn("WITH CONDITIONAL ARRAY", "NULL", "NULL"), `[3]`),
		// Nothing selected, and JSON null.
		q("lax $.zz", queryOn("WITHOUT ARRAY", "EMPTY OBJECT", "NULL"), "{}"),
		fail("lax $.zz", queryOn("WITHOUT ARRAY", "ERROR", "NULL"), "expr: JSON_QUERY: Empty result of JSON_QUERY function is not allowed"),
		q("$.zz", queryOn("WITHOUT ARRAY", "ERROR", "EMPTY ARRAY"), "[]"),
		q("$.n", queryOn("WITH UNCONDITIONAL ARRAY", "NULL", "EMPTY OBJECT"), "{}"),
		q("lax $.n", queryOn("WITH UNCONDITIONAL ARRAY", "EMPTY ARRAY", "NULL"), "[]"),
		// Invalid documents.
		{fn: "JSON_QUERY", doc: "nope", path: "lax $", clauses: queryOn("WITHOUT ARRAY", "EMPTY OBJECT", "EMPTY ARRAY"), want: "{}"},
		{fn: "JSON_QUERY", doc: "nope", path: "$", clauses: queryOn("WITHOUT ARRAY", "EMPTY OBJECT", "EMPTY ARRAY"), want: "[]"},
		{fn: "JSON_QUERY", doc: "1x", path: "$", clauses: queryOn("WITHOUT ARRAY", "NULL", "EMPTY ARRAY"), want: "[]"},
		{fn: "JSON_QUERY", doc: nullDoc, path: "$", clauses: queryOn("WITHOUT ARRAY", "EMPTY OBJECT", "EMPTY ARRAY"), want: "NULL"},
	}
	runJSONCases(t, cases)
	for _, p := range []string{"$..a", "$.a[?(@.b)]", "$.a.length()"} {
		if _, err := ResolveCall("JSON_QUERY", []*Expr{str("{}"), str(p)}); err == nil || !strings.HasSuffix(err.Error(), "is not supported yet") {
			t.Errorf("JSON_QUERY(%s): %v", p, err)
		}
	}
}

// TestJSONFlinkDocExamples runs the examples of Flink's documentation of
// the SQL/JSON functions.
func TestJSONFlinkDocExamples(t *testing.T) {
	S := types.String
	cases := []jsonCase{
		{fn: "JSON_EXISTS", doc: `{"a": true}`, path: "$.a", want: "TRUE"},
		{fn: "JSON_EXISTS", doc: `{"a": true}`, path: "$.b", want: "FALSE"},
		{fn: "JSON_EXISTS", doc: `{"a": [{ "b": 1 }]}`, path: "$.a[0].b", want: "TRUE"},
		{fn: "JSON_EXISTS", doc: `{"a": true}`, path: "strict $.b", clauses: existsOn("TRUE"), want: "TRUE"},
		{fn: "JSON_EXISTS", doc: `{"a": true}`, path: "strict $.b", clauses: existsOn("FALSE"), want: "FALSE"},
		{fn: "JSON_VALUE", doc: `{"a": true}`, path: "$.a", want: "true"},
		{fn: "JSON_VALUE", doc: `{"a": true}`, path: "lax $.b", clauses: valueOn(S, "DEFAULT", str("FALSE"), "NULL", nil), want: "FALSE"},
		{fn: "JSON_VALUE", doc: `{"a": true}`, path: "strict $.b", clauses: valueOn(S, "NULL", nil, "DEFAULT", str("FALSE")), want: "FALSE"},
		{fn: "JSON_VALUE", doc: `{"a.b": [0.998,0.996]}`, path: `$.["a.b"][1]`, want: "0.996"},
		{fn: "JSON_VALUE", doc: `{"a": true}`, path: "$.a", clauses: valueOn(types.Boolean, "NULL", nil, "NULL", nil), want: "TRUE"},
		{fn: "JSON_QUERY", doc: `{ "a": { "b": 1 } }`, path: "$.a", want: `{"b":1}`},
		{fn: "JSON_QUERY", doc: `[1, 2]`, path: "$", want: `[1,2]`},
		{fn: "JSON_QUERY", doc: nullDoc, path: "$", want: "NULL"},
		{fn: "JSON_QUERY", doc: `{}`, path: "$", clauses: queryOn("WITH CONDITIONAL ARRAY", "NULL", "NULL"), want: `[{}]`},
		{fn: "JSON_QUERY", doc: `[1, 2]`, path: "$", clauses: queryOn("WITH CONDITIONAL ARRAY", "NULL", "NULL"), want: `[1,2]`},
		{fn: "JSON_QUERY", doc: `[1, 2]`, path: "$", clauses: queryOn("WITH UNCONDITIONAL ARRAY", "NULL", "NULL"), want: `[[1,2]]`},
		{fn: "JSON_QUERY", doc: `1`, path: "$", want: "NULL"},
		{fn: "JSON_QUERY", doc: `1`, path: "$", clauses: queryOn("WITH CONDITIONAL ARRAY", "NULL", "NULL"), want: `[1]`},
		{fn: "JSON_QUERY", doc: `{}`, path: "lax $.invalid", clauses: queryOn("WITHOUT ARRAY", "EMPTY OBJECT", "NULL"), want: `{}`},
		{fn: "JSON_QUERY", doc: `{}`, path: "strict $.invalid", clauses: queryOn("WITHOUT ARRAY", "NULL", "EMPTY ARRAY"), want: `[]`},
	}
	runJSONCases(t, cases)
}

// TestJSONPathCompile checks which paths compile, as Jayway's PathCompiler
// decides, and into which tokens.
func TestJSONPathCompile(t *testing.T) {
	cases := []struct {
		spec, want string // want: the path as Jayway prints it, or "invalid"
		strict     bool
	}{
		{"$", "$", true},
		{"lax $", "$", false},
		{"LAX   $.a", "$['a']", false},
		{"strict $.a", "$['a']", true},
		{"a.b", "$['a']['b']", true},
		{"lax a", "$['a']", false},
		{"laxa", "$['laxa']", true},
		{"$.a[0][-1][1,2]", "$['a'][0][-1][1,2]", true},
		{"$[ 'a' , 'b' ]", "$['a','b']", true},
		{`$["a.b"]`, `$["a.b"]`, true},
		{`$['it\'s']`, `$['it's']`, true},
		{"$.*", "$[*]", true},
		{"$[*].a", "$[*]['a']", true},
		{"$.*.a", "$[*]['a']", true},
		// NB: Jayway stops reading when one character is left after a token.
		{"$.*a", "$[*]", true},
		{"$.a[", "$['a']", true},
		{"$[0]x", "$[0]", true},
		{"$[1:2]", "$[1:2]", true},
		{"$[:2]", "$[:2]", true},
		{"$[-2:]", "$[-2:]", true},
		{"$[1:]", "$[1:]", true},
		{"@.a", "@['a']", true},
		{"$.a ", "$['a']", true},
		{" $.a", "invalid", true},
		{"$.", "invalid", true},
		{"$.a[x", "invalid", true},
		{"$a", "invalid", true},
		{"$.a b", "invalid", true},
		{"$[1,]", "invalid", true},
		{"$[:]", "invalid", true},
		{"$['a'", "invalid", true},
		{"$[a]", "invalid", true},
		{"$.a..", "invalid", true},
	}
	for _, c := range cases {
		p := compileJSONPath(c.spec)
		got := p.String()
		if p.err != nil {
			got = "invalid"
		}
		if got != c.want || p.err == nil && p.strict != c.strict {
			t.Errorf("compile %q = %s (strict %v, %v), want %s (strict %v)", c.spec, got, p.strict, p.err, c.want, c.strict)
		}
	}
	if p := compileJSONPath(""); p.err == nil || p.err.Error() != "path can not be null or empty" {
		t.Errorf("empty path: %v", p.err)
	}
}

// TestJSONNumbers checks that documents read as Jackson reads them and
// numbers print as Java prints them.
func TestJSONNumbers(t *testing.T) {
	for in, want := range map[string]string{
		"0": "0", "-0": "0", "12": "12", "1.50": "1.50", "1e2": "1E+2", "1E-2": "0.01", "-0.0": "0.0",
		"1.0e10": "1.0E+10", "0.0000001": "1E-7", "0.000001": "0.000001", "123.456e1": "1234.56", "0e3": "0E+3",
		"-1.5E-9": "-1.5E-9",
	} {
		n, err := parseJSON(in)
		if err != nil || n.text != want {
			t.Errorf("parse %s = %q (%v), want %q", in, n.text, err, want)
		}
	}
	for _, bad := range []string{"1x", "1,", "truex", "", "  ", "[1,]", "01"} {
		if _, err := parseJSON(bad); err == nil {
			t.Errorf("parse %q: no error", bad)
		}
	}
	for _, ok := range []string{"[1] x", "1 x", "true]", `"a"x`, `{"a":1}}`} {
		if _, err := parseJSON(ok); err != nil {
			t.Errorf("parse %q: %v", ok, err)
		}
	}
}

// TestJSONConstructorsOnNull checks JSON_ARRAY and JSON_OBJECT with both ON
// NULL clauses, and JSON_OBJECT's key order.
func TestJSONConstructorsOnNull(t *testing.T) {
	null := NullLiteral(types.String)
	cases := []struct {
		name, onNull string
		args         []*Expr
		want         string
	}{
		{"JSON_ARRAY", "NULL ON NULL", []*Expr{i32(1), null, str("a")}, `[1,null,"a"]`},
		{"JSON_ARRAY", "ABSENT ON NULL", []*Expr{i32(1), null, str("a")}, `[1,"a"]`},
		{"JSON_OBJECT", "NULL ON NULL", []*Expr{str("b"), null, str("a"), i32(1)}, `{"a":1,"b":null}`},
		{"JSON_OBJECT", "ABSENT ON NULL", []*Expr{str("b"), null, str("a"), i32(1)}, `{"a":1}`},
		{"JSON_OBJECT", "NULL ON NULL", []*Expr{str("k"), i32(1), str("k"), i32(2)}, `{"k":2}`},
		{"JSON_OBJECT", "ABSENT ON NULL", []*Expr{str("k"), i32(1), str("k"), null}, `{"k":1}`},
		// UTF-16 order: a surrogate pair sorts before U+FFFF.
		{"JSON_OBJECT", "NULL ON NULL", []*Expr{str("\uffff"), i32(1), str("\U0001F600"), i32(2)}, "{\"\U0001F600\":2,\"\uffff\":1}"},
	}
	for _, c := range cases {
		e, err := ResolveJSONConstructor(c.name, c.onNull, c.args)
		if err != nil {
			t.Fatal(err)
		}
		if got := evalConst(t, e, utcEnv); got != c.want {
			t.Errorf("%s(%v %s) = %s, want %s", c.name, c.args, c.onNull, got, c.want)
		}
	}
}

// BenchmarkJSONValue evaluates JSON_VALUE(doc, '$.user.id' RETURNING
// BIGINT) over batches of 4096 small documents.
func BenchmarkJSONValue(b *testing.B) {
	const n = 4096
	vals := make([]any, n)
	for i := range vals {
		vals[i] = fmt.Sprintf(`{"user": {"id": %d, "name": "u%d"}, "tags": ["a", "b"], "score": %d.5}`, i, i, i)
	}
	schema := types.Schema{{Name: "doc", Type: types.String}}
	batch := batchOf(schema, column(types.String, vals))
	defer batch.Release()
	e, err := ResolveCall("JSON_VALUE", append([]*Expr{Column(0, types.String), str("$.user.id")},
		valueOn(types.BigInt, "NULL", nil, "NULL", nil)...))
	if err != nil {
		b.Fatal(err)
	}
	ev, err := Compile(e, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := ev.Eval(batch)
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
	b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "rows/s")
}

// FuzzParseJSON checks the document reader against encoding/json: a
// valid document reads unless it breaks one of Jackson's limits (nesting,
// number length, an exponent beyond Java's int, which BigDecimal refuses),
// and what it reads writes back as valid JSON.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2.5e3, "x\u00e9\n"], "b": null}`, `[true, false]`, `"\ud83d\ude00"`, `-0.0`, `{"a":1} x`, `1x`, `[01]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseJSON(s)
		valid := json.Valid([]byte(s))
		if valid && err != nil && !strings.Contains(err.Error(), "exceeds the maximum") && !strings.Contains(err.Error(), "malformed numeric value") {
			t.Fatalf("parseJSON(%q): %v, but it is valid JSON", s, err)
		}
		if err == nil && !valid {
			// Only what follows the first value may make it invalid.
			var b []byte
			b = n.appendJSON(b)
			if !json.Valid(b) {
				t.Fatalf("parseJSON(%q) wrote invalid JSON %q", s, b)
			}
		}
	})
}

// FuzzJSONPath compiles any path and applies it in both modes: it must
// not panic, and an evaluation error is only ever a result.
func FuzzJSONPath(f *testing.F) {
	for _, s := range []string{"$", "lax $.a[0]", "$['a','b'].c", "$.*[1:3]", "$[-1:]", "strict $.a[*].b", `$["x\u0041"]`, "$..a", "$.a[?(@.b)]", "a.b", "$[0,-1]"} {
		f.Add(s)
	}
	doc, err := parseJSON(`{"a": [{"b": 1, "c": [1, 2]}, null, 3], "b": {"c": "x"}, "x": null}`)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		p := compileJSONPath(spec)
		if p.unsupported != nil {
			return
		}
		r := jsonEvalPath(&doc, nil, p)
		if r.err == nil && r.val != nil {
			r.val.appendJSON(nil)
			r.val.javaString()
		}
	})
}

// TestJSONConstructorValues checks how JSON_STRING, JSON_ARRAY and
// JSON_OBJECT write each type, as Flink's mapper writes the node it makes
// of it.
func TestJSONConstructorValues(t *testing.T) {
	ts := time.Date(2024, 1, 2, 3, 4, 5, 120_000_000, time.UTC).UnixNano()
	cases := []struct {
		arg  *Expr
		want string
	}{
		{i32(-7), "-7"},
		{lit(1e20, types.Double), "1.0E+20"},
		{lit(1e-5, types.Double), "0.000010"},
		{lit(100.0, types.Double), "100.0"},
		{lit(math.Copysign(0, -1), types.Double), "0.0"},
		{lit(float64(float32(1.1)), types.Float), "1.100000023841858"},
		{dec("0.0000001"), "1E-7"},
		{dec("1.50"), "1.50"},
		{lit(true, types.Boolean), "true"},
		{str("a\"b"), `"a\"b"`},
		{lit(ts, types.Timestamp(3)), `"2024-01-02T03:04:05.12"`},
		{lit(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano(), types.Timestamp(0)), `"2024-01-02T03:04:05"`},
		{lit(ts, types.TimestampLTZ(3)), `"2024-01-02T03:04:05.12Z"`},
		{lit([]byte("hi"), types.Bytes), `"aGk="`},
	}
	for _, c := range cases {
		if got := evalConst(t, mustResolve(t, "JSON_STRING", c.arg), utcEnv); got != c.want {
			t.Errorf("JSON_STRING(%v) = %s, want %s", c.arg, got, c.want)
		}
		arr := mustResolve(t, "JSON_ARRAY", c.arg)
		if got := evalConst(t, arr, utcEnv); got != "["+c.want+"]" {
			t.Errorf("JSON_ARRAY(%v) = %s, want [%s]", c.arg, got, c.want)
		}
	}
	if _, err := ResolveCall("JSON_OBJECT", []*Expr{str("d"), lit(int64(0), types.Date)}); err == nil ||
		!strings.Contains(err.Error(), "Type 'DATE NOT NULL' is not scalar or cannot be converted into JSON.") {
		t.Errorf("JSON_OBJECT with a DATE: %v", err)
	}
	e := mustResolve(t, "JSON_ARRAY", col(0, types.Double))
	schema := types.Schema{{Name: "d", Type: types.Double}}
	b := batchOf(schema, column(types.Double, []any{math.NaN()}))
	defer b.Release()
	ev, err := Compile(e, utcEnv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Eval(b); err == nil || !strings.Contains(err.Error(), "expr: JSON_ARRAY: Character N is neither a decimal digit number") {
		t.Errorf("JSON_ARRAY(NaN): %v", err)
	}
}
