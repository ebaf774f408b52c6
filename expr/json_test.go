package expr

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/braidflow/braid/types"
)

// representativeExprs covers every literal type, columns, calls of every
// arity and the strings encoding/json escapes.
func representativeExprs(t testing.TB) []*Expr {
	col := Column
	out := []*Expr{
		Literal(true, types.Boolean),
		Literal(false, types.Boolean.WithNullable(false)),
		Literal(int64(-7), types.TinyInt),
		Literal(int64(300), types.SmallInt),
		Literal(int64(math.MaxInt32), types.Int),
		Literal(int64(math.MinInt64), types.BigInt),
		Literal(float64(1.5), types.Float),
		Literal(math.NaN(), types.Double),
		Literal(math.Inf(-1), types.Double),
		Literal(0.1, types.Double),
		Literal(math.Copysign(0, -1), types.Double),
		Literal(decimal128.FromBigInt(decimal128.MaxDecimal128.BigInt()), types.Decimal(38, 4)),
		Literal(decimal128.FromI64(-12345), types.Decimal(10, 2)),
		StringLiteral("héllo 'x'"),
		StringLiteral(`<script>&"\` + "\x00\x1f\u2028\u2029\U0001F600"),
		Literal("bad utf-8 \xff\xfe", types.String),
		Literal("", types.String),
		Literal([]byte{0, 1, 0xff}, types.Bytes),
		Literal([]byte{}, types.Bytes),
		Literal(int32(19000), types.Date),
		Literal(int32(3600000), types.Time(3)),
		Literal(int64(1692812175123000000), types.Timestamp(3)),
		Literal(int64(-1), types.TimestampLTZ(9)),
		Literal(int64(86400000), types.IntervalDayTime()),
		Literal(int32(14), types.IntervalYearMonth()),
		NullLiteral(types.Int),
		NullLiteral(types.Null),
		col(0, types.BigInt),
		col(7, types.VarChar(12).WithNullable(false)),
		col(-1, types.String),
		mustResolve(t, "CASE", mustResolve(t, ">", col(0, types.BigInt), i32(3)), str("big"), str("small")),
		mustResolve(t, "IN", col(1, types.String), str("a"), str("<b>"), str("c&d")),
		mustResolve(t, "IS NOT NULL", col(2, types.Double)),
		mustResolve(t, "CONCAT_WS", str("-"), col(0, types.String), str("x"), NullLiteral(types.String)),
		mustResolve(t, "CURRENT_TIMESTAMP"),
		mustResolve(t, "TIMESTAMPDIFF", str("MINUTE"), col(0, types.Timestamp(3)), col(1, types.Timestamp(3))),
		Cast(col(0, types.String), types.Decimal(10, 2)),
		TryCast(mustResolve(t, "||", col(0, types.String), str("!")), types.Int),
		// Hand-built shapes the planner does not produce but JSON carries.
		{Op: OpCall, Func: "F<>&", Type: types.Int, Args: []*Expr{nil, i32(1)}},
		{Op: OpCall, Func: "EMPTY", Type: types.Int, Args: []*Expr{}},
		{Op: OpColumn, Col: 3, Type: types.Int, Func: "ignored", Value: int64(5)},
		{Op: "weird", Type: types.DataType{Kind: 200, Length: -1, Precision: 5, Scale: 9}},
	}
	// Nesting, left-deep and right-deep.
	left, right := col(0, types.BigInt), col(0, types.BigInt)
	for i := 0; i < 200; i++ {
		left = mustResolve(t, "+", left, i64(int64(i)))
		right = mustResolve(t, "AND", mustResolve(t, ">", col(i, types.Int), i32(int64(i))), boolish(right))
	}
	return append(out, left, right)
}

// boolish makes e BOOLEAN for building AND chains in tests.
func boolish(e *Expr) *Expr {
	if e.Type.Kind == types.KindBoolean {
		return e
	}
	return &Expr{Op: OpCall, Func: "IS NULL", Type: types.Boolean.WithNullable(false), Args: []*Expr{e}}
}

// TestJSONMatchesLegacyEncoding checks that expressions encode to exactly
// the bytes the previous, recursive encoder wrote (operator uids are
// hashed from them), alone and inside a spec, and that both decoders read
// those bytes back to the same tree.
func TestJSONMatchesLegacyEncoding(t *testing.T) {
	for _, e := range representativeExprs(t) {
		got, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("marshal %v: %v", e, err)
		}
		want, err := json.Marshal(toLegacy(e))
		if err != nil {
			t.Fatalf("legacy marshal %v: %v", e, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("encoding of %.80s differs:\n got %.300s\nwant %.300s", e, got, want)
			continue
		}
		type spec struct {
			Filter *Expr   `json:"filter,omitempty"`
			Exprs  []*Expr `json:"exprs"`
		}
		type legacySpec struct {
			Filter *legacyExpr   `json:"filter,omitempty"`
			Exprs  []*legacyExpr `json:"exprs"`
		}
		gotSpec, err := json.Marshal(spec{Filter: e, Exprs: []*Expr{e, nil}})
		if err != nil {
			t.Fatal(err)
		}
		wantSpec, _ := json.Marshal(legacySpec{Filter: toLegacy(e), Exprs: []*legacyExpr{toLegacy(e), nil}})
		if !bytes.Equal(gotSpec, wantSpec) {
			t.Errorf("spec encoding differs:\n got %.300s\nwant %.300s", gotSpec, wantSpec)
		}

		var back Expr
		if err := json.Unmarshal(want, &back); err != nil {
			t.Fatalf("unmarshal %.300s: %v", want, err)
		}
		var legacy legacyExpr
		if err := json.Unmarshal(want, &legacy); err != nil {
			t.Fatalf("legacy unmarshal %.300s: %v", want, err)
		}
		if l := fromLegacy(&legacy); !sameExpr(&back, l) {
			t.Errorf("decoders disagree on %.300s:\n got %#v\nwant %#v", want, &back, l)
		}
	}
}

// sameExpr is reflect.DeepEqual that also equates NaN literals.
func sameExpr(a, b *Expr) bool {
	if a == nil || b == nil {
		return a == b
	}
	if fa, ok := a.Value.(float64); ok && math.IsNaN(fa) {
		fb, ok := b.Value.(float64)
		if !ok || !math.IsNaN(fb) {
			return false
		}
		a, b = shallowWithoutValue(a), shallowWithoutValue(b)
	}
	if a.Op != b.Op || a.Type != b.Type || a.Col != b.Col || a.Func != b.Func ||
		!reflect.DeepEqual(a.Value, b.Value) || len(a.Args) != len(b.Args) || (a.Args == nil) != (b.Args == nil) {
		return false
	}
	for i := range a.Args {
		if !sameExpr(a.Args[i], b.Args[i]) {
			return false
		}
	}
	return true
}

func shallowWithoutValue(e *Expr) *Expr {
	c := *e
	c.Value = nil
	return &c
}

// TestJSONSpecialValues checks the literal encodings that must not go
// through JSON numbers.
func TestJSONSpecialValues(t *testing.T) {
	for _, c := range []struct {
		e    *Expr
		want string
	}{
		{Literal(math.NaN(), types.Double), `"value":"NaN"`},
		{Literal(int64(math.MinInt64), types.BigInt), `"value":"-9223372036854775808"`},
		{StringLiteral("<&>"), `"value":"\u003c\u0026\u003e"`},
		{Literal([]byte{0xff}, types.Bytes), `"value":"/w=="`},
	} {
		data, err := json.Marshal(c.e)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), c.want) {
			t.Errorf("%v encodes as %s, want it to contain %s", c.e, data, c.want)
		}
	}
}

// plusChain returns the left-deep chain 1+1+...+1 of n terms (n-1 calls),
// n nodes deep, as the planner binds it.
func plusChain(n int) *Expr {
	e := i32(1)
	t := types.Int.WithNullable(false)
	for i := 1; i < n; i++ {
		e = &Expr{Op: OpCall, Func: "+", Type: t, Args: []*Expr{e, i32(1)}}
	}
	return e
}

// TestJSONDeepChains checks that long chains encode and decode inside a
// spec, in the nested form up to maxNestedDepth and flat beyond.
func TestJSONDeepChains(t *testing.T) {
	type spec struct {
		Rows [][]*Expr `json:"rows"`
	}
	rightDeep := func(n int) *Expr {
		e := Column(0, types.Boolean)
		for i := 1; i < n; i++ {
			e = &Expr{Op: OpCall, Func: "OR", Type: types.Boolean, Args: []*Expr{Column(i, types.Boolean), e}}
		}
		return e
	}
	for _, c := range []struct {
		name string
		e    *Expr
		flat bool
	}{
		{"left 4096", plusChain(maxNestedDepth), false},
		{"left 4097", plusChain(maxNestedDepth + 1), true},
		{"left 5000", plusChain(5000), true},
		{"left 100000", plusChain(100_000), true},
		{"right 20000", rightDeep(20_000), true},
		{"wide and deep", &Expr{Op: OpCall, Func: "COALESCE", Type: types.Int, Args: []*Expr{nil, plusChain(10_000), i32(1), plusChain(3)}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			data, err := json.Marshal(spec{Rows: [][]*Expr{{c.e}}})
			if err != nil {
				t.Fatal(err)
			}
			if flat := bytes.HasPrefix(data, []byte(`{"rows":[[{"nodes":`)); flat != c.flat {
				t.Errorf("flat form = %v, want %v: %.60s", flat, c.flat, data)
			}
			var back spec
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			if !sameExpr(back.Rows[0][0], c.e) {
				t.Error("the tree changed in a round trip")
			}
		})
	}
}

// TestJSONNestedDecodeAnyDepth checks that UnmarshalJSON, called
// directly, reads the nested form deeper than encoding/json allows.
func TestJSONNestedDecodeAnyDepth(t *testing.T) {
	e := plusChain(100_000)
	w := exprWriter{dataTypes: map[types.DataType][]byte{}}
	if err := w.nested(e); err != nil {
		t.Fatal(err)
	}
	var back Expr
	if err := back.UnmarshalJSON(w.buf); err != nil {
		t.Fatal(err)
	}
	if !sameExpr(&back, e) {
		t.Error("the tree changed in a round trip")
	}
}

// TestJSONFlatForm checks the flat form of a small tree, nil arguments
// included, and that it decodes to the tree.
func TestJSONFlatForm(t *testing.T) {
	e := &Expr{Op: OpCall, Func: "F", Type: types.Int, Args: []*Expr{
		&Expr{Op: OpCall, Func: "G", Type: types.Int, Args: []*Expr{Column(1, types.Int), nil}},
		i32(7),
	}}
	w := exprWriter{dataTypes: map[types.DataType][]byte{}}
	if err := w.flat(e); err != nil {
		t.Fatal(err)
	}
	ty := func(tp types.DataType) string { b, _ := json.Marshal(tp); return string(b) }
	want := `{"nodes":[{"op":"col","type":` + ty(types.Int) + `,"col":1},` +
		`{"op":"call","type":` + ty(types.Int) + `,"func":"G","args":[0,null]},` +
		`{"op":"lit","type":` + ty(types.Int.WithNullable(false)) + `,"value":"7"},` +
		`{"op":"call","type":` + ty(types.Int) + `,"func":"F","args":[1,2]}]}`
	if string(w.buf) != want {
		t.Errorf("flat form\n got %s\nwant %s", w.buf, want)
	}
	var back Expr
	if err := json.Unmarshal(w.buf, &back); err != nil {
		t.Fatal(err)
	}
	if !sameExpr(&back, e) {
		t.Errorf("decoded %v, want %v", &back, e)
	}
}

// TestJSONDecodeErrors checks that malformed input fails with a message
// saying where and what.
func TestJSONDecodeErrors(t *testing.T) {
	ty := `{"Kind":4,"Length":0,"Precision":0,"Scale":0,"NotNull":false}`
	node := func(extra string) string { return `{"op":"lit","type":` + ty + extra + `}` }
	for _, c := range []struct{ in, want string }{
		{``, "expected '{'"},
		{`{`, "expected a string"},
		{`{"op":"col"`, "expected ',' or '}'"},
		{`{"op":"col",}`, "expected a string"},
		{`{"op":"col"} x`, "unexpected data after the expression"},
		{`{"op":"col","col":1.5}`, "got a fraction or exponent"},
		{`{"op":"col","col":99999999999999999999}`, "out of range"},
		{`{"op":"col","col":01}`, "expected ',' or '}'"},
		{`{"op":5}`, "expected a string"},
		{`{"op":"a` + "\x01" + `"}`, "control character"},
		{`{"op":"\x"}`, "invalid character"},
		{`{"op":"col","type":{"Kind":"x"}}`, "type: json: cannot unmarshal"},
		{`{"op":"col","type":{"Kind":1]}`, "type: invalid character"},
		{`{"op":"call","args":[1]}`, "expected '{'"},
		{`{"op":"call","args":[{"op":"col"},]}`, "expected '{'"},
		{`{"op":"call","args":{}}`, "expected '['"},
		{`{"op":"lit","type":{"Kind":4},"value":"x"}`, "invalid syntax"},
		{`{"op":"col","value":[1}`, "bad value"},
		{`{"op":"col","other":nul}`, `bad value of "other"`},
		{`{"nodes":[]}`, "expected '{'"},
		{`{"nodes":[` + node(`,"args":[0]`) + `]}`, "node 0 refers to node 0, which does not precede it"},
		{`{"nodes":[` + node("") + `,` + node("") + `]}`, "node 0 is not an argument of any later node"},
		{`{"nodes":[` + node("") + `,` + node(`,"args":[0,0]`) + `]}`, "node 0 is an argument twice"},
		{`{"nodes":[` + node("") + `,` + node(`,"args":[0],"args":[]`) + `]}`, "node 1 has two args"},
		{`{"nodes":[` + node(`,"args":[-1]`) + `]}`, "does not precede it"},
		{`{"nodes":[` + node("") + `],"op":"x"}`, "expected '}'"},
	} {
		var e Expr
		err := e.UnmarshalJSON([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("UnmarshalJSON(%s) = %v, want an error containing %q", c.in, err, c.want)
		}
	}
	// What encoding/json accepts for the fields, this accepts too.
	var e Expr
	if err := e.UnmarshalJSON([]byte(" {\"op\" : \"col\" ,\n\"col\":-0, \"type\":null,\"func\":null, \"args\":null, \"x\":[{}]} ")); err != nil {
		t.Errorf("white space and nulls: %v", err)
	}
	if err := e.UnmarshalJSON([]byte(`null`)); err != nil || !reflect.DeepEqual(e, Expr{}) {
		t.Errorf("null = %#v, %v", e, err)
	}
}

// BenchmarkExprJSON encodes and decodes 1+1+...+1 chains: the time per
// term stays flat as the chain grows (it grew linearly, the total
// quadratically, with the previous encoder).
func BenchmarkExprJSON(b *testing.B) {
	for _, n := range []int{1000, 5000, 50_000} {
		e := plusChain(n)
		data, err := json.Marshal(e)
		if err != nil {
			b.Fatal(err)
		}
		name := strconv.Itoa(n/1000) + "K"
		b.Run("encode/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := json.Marshal(e); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("decode/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				var back Expr
				if err := json.Unmarshal(data, &back); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
