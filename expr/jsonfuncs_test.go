package expr

import (
	"testing"

	"github.com/braidflow/braid/types"
)

func TestJSONFunctions(t *testing.T) {
	S := types.String
	s1 := []types.DataType{S}
	doc := func(name, json, path, want string) fnCase {
		return fnCase{name: name, args: []*Expr{col(0, S), str(path)}, cols: s1, vals: []any{json}, want: want}
	}
	exists := func(json, path, want string) fnCase {
		c := doc("JSON_EXISTS", json, path, want)
		return c
	}
	cases := []fnCase{
		exists(`{"a": true}`, "$.a", "TRUE"),
		exists(`{"a": true}`, "$.b", "FALSE"),
		exists(`{"a": [{"b": 1}]}`, "$.a[0].b", "TRUE"),
		exists(`{"a": true}`, "strict $.b", "FALSE"),
		exists(`not json`, "$", "FALSE"),
		exists(`{"a": 1}`, "a", "TRUE"), // Jayway reads a as $.a
		doc("JSON_VALUE", `{"a": true}`, "$.a", "true"),
		doc("JSON_VALUE", `{"a": "héllo"}`, "$.a", "héllo"),
		doc("JSON_VALUE", `{"a.b": [0.998, 0.996]}`, `$.["a.b"][0]`, "0.998"),
		doc("JSON_VALUE", `{"contains blank": "right"}`, `strict $.['contains blank']`, "right"),
		doc("JSON_VALUE", `{"a": {"b": 1}}`, "$.a", "NULL"),
		doc("JSON_VALUE", `{"a": null}`, "$.a", "NULL"),
		doc("JSON_VALUE", `{"a": 1}`, "$.b", "NULL"),
		doc("JSON_VALUE", `{"a": [1, 2]}`, "$.a[5]", "NULL"),
		doc("JSON_VALUE", `{"a": [1, 2]}`, "$.a[1]", "2"),
		doc("JSON_VALUE", `{"a": 7}`, "$.a[0]", "NULL"),
		doc("JSON_VALUE", `{"a": 7}`, "lax $.a[0]", "NULL"),
		doc("JSON_VALUE", `[{"x": 1}, {"x": 2}]`, "$.x", "NULL"),
		doc("JSON_VALUE", `{"a": 1} trailing`, "$.a", "1"),
		doc("JSON_VALUE", `{"a": 1}`, "$$", "NULL"),
		doc("JSON_QUERY", `{"a": {"b": [1, "x", null]}, "c": 2}`, "$.a", `{"b":[1,"x",null]}`),
		doc("JSON_QUERY", `{"z": 1, "a": 2}`, "$", `{"a":2,"z":1}`),
		doc("JSON_QUERY", `{"a": 1}`, "$.a", "NULL"),
		doc("JSON_QUERY", `{"a": 1}`, "$.b", "NULL"),
		doc("JSON_QUERY", `{"a": ["\"q\"\n"]}`, "$.a", `["\"q\"\n"]`),
		{name: "IS JSON", args: []*Expr{col(0, S)}, cols: s1, vals: []any{"1"}, want: "TRUE", onNull: "FALSE"},
		{name: "IS JSON", args: []*Expr{col(0, S)}, cols: s1, vals: []any{`"abc"`}, want: "TRUE", onNull: "FALSE"},
		{name: "IS JSON", args: []*Expr{col(0, S)}, cols: s1, vals: []any{"abc"}, want: "FALSE", onNull: "FALSE"},
		{name: "IS JSON", args: []*Expr{col(0, S)}, cols: s1, vals: []any{""}, want: "FALSE", onNull: "FALSE"},
		{name: "IS JSON SCALAR", args: []*Expr{col(0, S)}, cols: s1, vals: []any{"1"}, want: "TRUE", onNull: "FALSE"},
		{name: "IS JSON SCALAR", args: []*Expr{col(0, S)}, cols: s1, vals: []any{"{}"}, want: "FALSE", onNull: "FALSE"},
		{name: "IS JSON ARRAY", args: []*Expr{col(0, S)}, cols: s1, vals: []any{"[]"}, want: "TRUE", onNull: "FALSE"},
		{name: "IS JSON OBJECT", args: []*Expr{col(0, S)}, cols: s1, vals: []any{"{}"}, want: "TRUE", onNull: "FALSE"},
		{name: "IS JSON OBJECT", args: []*Expr{col(0, S)}, cols: s1, vals: []any{"[]"}, want: "FALSE", onNull: "FALSE"},
		{name: "IS NOT JSON", args: []*Expr{col(0, S)}, cols: s1, vals: []any{"abc"}, want: "TRUE", onNull: "TRUE"},
		{name: "JSON_STRING", args: []*Expr{col(0, types.Int)}, cols: []types.DataType{types.Int}, vals: []any{int64(1)}, want: "1"},
		{name: "JSON_STRING", args: []*Expr{col(0, types.Boolean)}, cols: []types.DataType{types.Boolean}, vals: []any{true}, want: "true"},
		{name: "JSON_STRING", args: []*Expr{col(0, S)}, cols: s1, vals: []any{"Hello, \"World\"!"}, want: `"Hello, \"World\"!"`},
		{name: "JSON_STRING", args: []*Expr{col(0, types.Decimal(5, 2))}, cols: []types.DataType{types.Decimal(5, 2)}, vals: []any{int64(150)}, want: "1.50"},
		{name: "JSON_ARRAY", args: []*Expr{i32(1), col(0, S), lit(true, types.Boolean)}, cols: s1, vals: []any{"a"}, want: `[1,"a",true]`, onNull: `[1,true]`},
		{name: "JSON_ARRAY", want: `[]`},
		{name: "JSON_OBJECT", args: []*Expr{str("k"), col(0, S)}, cols: s1, vals: []any{"v"}, want: `{"k":"v"}`, onNull: `{"k":null}`},
		{name: "JSON_OBJECT", args: []*Expr{str("o"), mustResolve(t, "JSON_ARRAY", i32(1), i32(2))}, want: `{"o":[1,2]}`},
		{name: "JSON_OBJECT", want: `{}`},
	}
	runFnCases(t, utcEnv, cases)
}

func TestJSONFunctionTypes(t *testing.T) {
	nn := func(t types.DataType) types.DataType { return t.WithNullable(false) }
	cases := []struct {
		name string
		args []*Expr
		want types.DataType
	}{
		{"JSON_VALUE", []*Expr{str("{}"), str("$")}, types.String},
		{"JSON_QUERY", []*Expr{str("{}"), str("$")}, types.String},
		{"JSON_EXISTS", []*Expr{str("{}"), str("$")}, types.Boolean}, // FORCE_NULLABLE
		{"JSON_EXISTS", []*Expr{Column(0, types.String), str("$")}, types.Boolean},
		{"IS JSON", []*Expr{Column(0, types.String)}, nn(types.Boolean)},
		{"JSON_STRING", []*Expr{Column(0, types.Int)}, types.String},
		{"JSON_ARRAY", []*Expr{Column(0, types.Int)}, nn(types.String)},
		{"JSON_OBJECT", []*Expr{str("a"), Column(0, types.Int)}, nn(types.String)},
	}
	for _, c := range cases {
		e, err := ResolveCall(c.name, c.args)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if e.Type != c.want {
			t.Errorf("%s: type %v, want %v", c.name, e.Type, c.want)
		}
	}
	if _, err := ResolveCall("JSON_OBJECT", []*Expr{str("a")}); err == nil || err.Error() != "function JSON_OBJECT expects key and value pairs" {
		t.Errorf("JSON_OBJECT('a'): %v", err)
	}
}
