package expr

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/braidflow/braid/types"
)

// column builds an Arrow column of type t from values in Literal's Go form
// (nil for NULL).
func column(t types.DataType, vals []any) arrow.Array {
	v := newVec(classOf(t), len(vals))
	v.valid = make([]bool, len(vals))
	for i, x := range vals {
		if x == nil {
			continue
		}
		nx, err := normalizeValue(x, t)
		if err != nil {
			panic(err)
		}
		one := literalVec(nx, t)
		v.valid[i] = true
		switch {
		case v.b != nil:
			v.b[i] = one.b[0]
		case v.i64 != nil:
			v.i64[i] = one.i64[0]
		case v.f64 != nil:
			v.f64[i] = one.f64[0]
		case v.dec != nil:
			v.dec[i] = one.dec[0]
		case v.str != nil:
			v.str[i] = one.str[0]
		case v.bin != nil:
			v.bin[i] = one.bin[0]
		}
	}
	a, err := v.toArrow(t)
	if err != nil {
		panic(err)
	}
	return a
}

func batchOf(schema types.Schema, cols ...arrow.Array) types.Batch {
	n := 0
	if len(cols) > 0 {
		n = cols[0].Len()
	}
	b := types.NewInsertBatch(schema.ArrowSchema(), cols, n)
	for _, c := range cols {
		c.Release()
	}
	return b
}

func mustResolve(t testing.TB, name string, args ...*Expr) *Expr {
	t.Helper()
	e, err := ResolveCall(name, args)
	if err != nil {
		t.Fatalf("ResolveCall(%s): %v", name, err)
	}
	return e
}

func lit(v any, t types.DataType) *Expr { return Literal(v, t.WithNullable(false)) }
func i32(v int64) *Expr                 { return lit(v, types.Int) }
func i64(v int64) *Expr                 { return lit(v, types.BigInt) }
func str(s string) *Expr                { return StringLiteral(s) }
func dec(s string) *Expr {
	e, err := ParseNumericLiteral(s)
	if err != nil {
		panic(err)
	}
	return e
}

var utcEnv = &Env{Location: time.UTC, Now: func() time.Time { return time.Date(2024, 2, 29, 12, 34, 56, 789_000_000, time.UTC) }}

// evalConst evaluates a column-free expression on a one-row batch and
// formats the result.
func evalConst(t testing.TB, e *Expr, env *Env) string {
	t.Helper()
	schema := types.Schema{{Name: "x", Type: types.Int}}
	b := batchOf(schema, column(types.Int, []any{int64(1)}))
	defer b.Release()
	ev, err := Compile(e, env)
	if err != nil {
		t.Fatalf("Compile(%v): %v", e, err)
	}
	out, err := ev.Eval(b)
	if err != nil {
		t.Fatalf("Eval(%v): %v", e, err)
	}
	defer out.Release()
	s, isNull := types.FormatValue(out, 0, ev.Type(), env.loc())
	if isNull {
		return "NULL"
	}
	return s
}

func TestConformanceTimestampDiff(t *testing.T) {
	a := mustResolve(t, "TO_TIMESTAMP", mustResolve(t, "FROM_UNIXTIME", i32(1692812175)))
	b := mustResolve(t, "TO_TIMESTAMP", mustResolve(t, "FROM_UNIXTIME", i32(1692815775)))
	diff := mustResolve(t, "TIMESTAMPDIFF", str("HOUR"), a, b)
	if got := evalConst(t, diff, utcEnv); got != "1" {
		t.Errorf("TIMESTAMPDIFF = %s, want 1", got)
	}
	if diff.Type.Kind != types.KindInt {
		t.Errorf("TIMESTAMPDIFF type %v", diff.Type)
	}
	if got := evalConst(t, mustResolve(t, "FROM_UNIXTIME", i32(1692812175)), utcEnv); got != "2023-08-23 17:36:15" {
		t.Errorf("FROM_UNIXTIME = %s", got)
	}
	plus := mustResolve(t, "+", a, lit(int64(7*86400000), types.IntervalDayTime()))
	if plus.Type.Kind != types.KindTimestamp || plus.Type.Precision != 3 {
		t.Errorf("ts + interval type %v", plus.Type)
	}
	if got := evalConst(t, plus, utcEnv); got != "2023-08-30 17:36:15.000" {
		t.Errorf("ts + 7 days = %s", got)
	}
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err == nil {
		if got := evalConst(t, mustResolve(t, "FROM_UNIXTIME", i32(44)), &Env{Location: tokyo}); got != "1970-01-01 09:00:44" {
			t.Errorf("FROM_UNIXTIME(44) in Tokyo = %s", got)
		}
	}
}

func TestDecimalTyping(t *testing.T) {
	d102 := Column(0, types.Decimal(10, 2))
	d3810 := Column(1, types.Decimal(38, 10))
	cases := []struct {
		op   string
		a, b *Expr
		want string
	}{
		{"+", d102, d102, "DECIMAL(11, 2)"},
		{"-", d102, d102, "DECIMAL(11, 2)"},
		{"*", d102, d102, "DECIMAL(21, 4)"},
		{"/", d102, d102, "DECIMAL(23, 13)"},
		{"*", d3810, d3810, "DECIMAL(38, 6)"},
		{"+", Column(2, types.Int), d102, "DECIMAL(13, 2)"},
		{"*", Column(2, types.BigInt), d102, "DECIMAL(30, 2)"},
		{"+", d102, Column(3, types.Double), "DOUBLE"},
		{"%", d102, Column(3, types.Decimal(5, 0)), "DECIMAL(7, 2)"},
		{"%", Column(4, types.Decimal(12, 0)), Column(3, types.Decimal(5, 0)), "DECIMAL(5, 0)"},
		{"/", Column(2, types.Int), Column(2, types.Int), "INT"},
		{"/", Column(2, types.Int), Column(2, types.BigInt), "BIGINT"},
		{"%", Column(2, types.BigInt), Column(2, types.Int), "INT"},
		{"+", Column(2, types.TinyInt), Column(2, types.SmallInt), "SMALLINT"},
		{"+", Column(2, types.Float), Column(2, types.Int), "FLOAT"},
		{"+", Column(2, types.Float), d102, "DOUBLE"},
		{"+", dec("1.5"), dec("1.50"), "DECIMAL(4, 2) NOT NULL"},
	}
	for _, c := range cases {
		e, err := ResolveCall(c.op, []*Expr{c.a, c.b})
		if err != nil {
			t.Errorf("%v %s %v: %v", c.a.Type, c.op, c.b.Type, err)
			continue
		}
		if got := e.Type.String(); got != c.want {
			t.Errorf("%v %s %v = %s, want %s", c.a.Type, c.op, c.b.Type, got, c.want)
		}
	}
}

func TestParseNumericLiteral(t *testing.T) {
	cases := map[string]string{
		"42":                   "INT NOT NULL",
		"2147483647":           "INT NOT NULL",
		"2147483648":           "BIGINT NOT NULL",
		"-2147483648":          "INT NOT NULL",
		"1.5":                  "DECIMAL(2, 1) NOT NULL",
		"1.50":                 "DECIMAL(3, 2) NOT NULL",
		"0.5":                  "DECIMAL(2, 1) NOT NULL",
		".5":                   "DECIMAL(1, 1) NOT NULL",
		"1.5e0":                "DOUBLE NOT NULL",
		"99999999999999999999": "DECIMAL(20, 0) NOT NULL",
	}
	for in, want := range cases {
		e, err := ParseNumericLiteral(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if e.Type.String() != want {
			t.Errorf("%s: %v, want %s", in, e.Type, want)
		}
	}
	if _, err := ParseNumericLiteral("1.2.3"); err == nil {
		t.Error("1.2.3 parsed")
	}
	if e := StringLiteral("abc"); e.Type.String() != "CHAR(3) NOT NULL" {
		t.Errorf("'abc' is %v", e.Type)
	}
	if got := evalConst(t, dec("1.50"), utcEnv); got != "1.50" {
		t.Errorf("1.50 prints %s", got)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	lits := []*Expr{
		Literal(true, types.Boolean),
		Literal(int64(-7), types.TinyInt),
		Literal(int64(300), types.SmallInt),
		Literal(int64(math.MaxInt32), types.Int),
		Literal(int64(math.MinInt64), types.BigInt),
		Literal(float64(1.5), types.Float),
		Literal(math.NaN(), types.Double),
		Literal(math.Inf(-1), types.Double),
		Literal(0.1, types.Double),
		Literal(decimal128.FromBigInt(decimal128.MaxDecimal128.BigInt()), types.Decimal(38, 4)),
		Literal(decimal128.FromI64(-12345), types.Decimal(10, 2)),
		StringLiteral("héllo 'x'"),
		Literal("", types.String),
		Literal([]byte{0, 1, 0xff}, types.Bytes),
		Literal(int32(19000), types.Date),
		Literal(int32(3600000), types.Time(3)),
		Literal(int64(1692812175123000000), types.Timestamp(3)),
		Literal(int64(-1), types.TimestampLTZ(9)),
		Literal(int64(86400000), types.IntervalDayTime()),
		Literal(int32(14), types.IntervalYearMonth()),
		NullLiteral(types.Int),
		NullLiteral(types.Null),
	}
	for _, l := range lits {
		e := mustResolve(t, "IS NULL", l)
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("marshal %v: %v", l, err)
		}
		var back Expr
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("unmarshal %s: %v", data, err)
		}
		got := back.Args[0]
		if got.Type != l.Type || reflect.TypeOf(got.Value) != reflect.TypeOf(l.Value) {
			t.Errorf("%s: got %#v (%v), want %#v (%v)", data, got.Value, got.Type, l.Value, l.Type)
			continue
		}
		if f, ok := l.Value.(float64); ok && math.IsNaN(f) {
			if !math.IsNaN(got.Value.(float64)) {
				t.Errorf("NaN lost: %s", data)
			}
			continue
		}
		if !reflect.DeepEqual(got.Value, l.Value) {
			t.Errorf("%s: got %#v, want %#v", data, got.Value, l.Value)
		}
	}
	// A whole tree survives too.
	tree := mustResolve(t, "CASE", mustResolve(t, ">", Column(0, types.BigInt), i32(3)), str("big"), str("small"))
	data, _ := json.Marshal(tree)
	var back Expr
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, tree) {
		t.Errorf("tree round trip: %s", data)
	}
}

func TestResolveErrors(t *testing.T) {
	cases := []struct {
		name string
		args []*Expr
		want string
	}{
		{"+", []*Expr{Column(0, types.VarChar(10)), Column(1, types.Int)}, "cannot apply '+' to arguments of type VARCHAR(10) and INT"},
		{"FOO", nil, "unknown function 'FOO'"},
		{"FROM_UNIXTIME", []*Expr{Column(0, types.Double)}, "function FROM_UNIXTIME expects an integer argument, got DOUBLE"},
		{"=", []*Expr{Column(0, types.Boolean), Column(1, types.Int)}, "cannot apply '=' to arguments of type BOOLEAN and INT"},
		{"TIMESTAMPDIFF", []*Expr{str("HOUR"), Column(0, types.TimestampLTZ(3)), Column(1, types.Timestamp(3))}, "TIMESTAMP_LTZ only supports diff between the same type."},
		{"AND", []*Expr{Column(0, types.Int), Column(1, types.Boolean)}, "cannot apply 'AND' to arguments of type INT and BOOLEAN"},
	}
	for _, c := range cases {
		_, err := ResolveCall(c.name, c.args)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
		if _, ok := err.(*UserError); err != nil && !ok {
			t.Errorf("%s: %T is not a UserError", c.name, err)
		}
	}
}

func TestCommonType(t *testing.T) {
	cases := []struct {
		in   []types.DataType
		want string
	}{
		{[]types.DataType{types.Char(4), types.Char(9)}, "VARCHAR(9)"},
		{[]types.DataType{types.Char(3).WithNullable(false), types.Char(3).WithNullable(false)}, "CHAR(3) NOT NULL"},
		{[]types.DataType{types.Int, types.BigInt}, "BIGINT"},
		{[]types.DataType{types.Int, types.Decimal(10, 2)}, "DECIMAL(12, 2)"},
		{[]types.DataType{types.Decimal(10, 2), types.Double}, "DOUBLE"},
		{[]types.DataType{types.Date, types.Timestamp(3)}, "TIMESTAMP(3)"},
		{[]types.DataType{types.Null, types.Int.WithNullable(false)}, "INT"},
	}
	for _, c := range cases {
		got, ok := CommonType(c.in...)
		if !ok || got.String() != c.want {
			t.Errorf("CommonType(%v) = %v %v, want %s", c.in, got, ok, c.want)
		}
	}
	if _, ok := CommonType(types.Int, types.String); ok {
		t.Error("INT and STRING have a common type")
	}
	// CASE with ragged CHAR branches is VARCHAR and unpadded.
	e := mustResolve(t, "CASE", mustResolve(t, "=", i32(1), i32(1)), str("a"), str("bcd"))
	if e.Type.String() != "VARCHAR(3) NOT NULL" {
		t.Errorf("CASE type %v", e.Type)
	}
	if got := evalConst(t, e, utcEnv); got != "a" {
		t.Errorf("CASE = %q", got)
	}
}

// fnCase evaluates name(args) where column args take val on live rows and
// NULL on every third row.
type fnCase struct {
	name   string
	args   []*Expr // OpColumn args index into cols
	cols   []types.DataType
	vals   []any
	want   string
	onNull string // result on the NULL rows; "NULL" by default
}

func runFnCases(t *testing.T, env *Env, cases []fnCase) {
	for _, size := range []int{1, 7, 4096} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%d/%s", c.name, size, c.want), func(t *testing.T) {
				if len(c.cols) == 0 {
					c.cols, c.vals = []types.DataType{types.Int}, []any{int64(0)}
					c.onNull = c.want
				}
				schema := make(types.Schema, len(c.cols))
				arrs := make([]arrow.Array, len(c.cols))
				for j, ct := range c.cols {
					schema[j] = types.Field{Name: fmt.Sprintf("c%d", j), Type: ct}
					vals := make([]any, size)
					for i := range vals {
						if i%3 != 2 {
							vals[i] = c.vals[j]
						}
					}
					arrs[j] = column(ct, vals)
				}
				b := batchOf(schema, arrs...)
				defer b.Release()
				e, err := ResolveCall(c.name, c.args)
				if err != nil {
					t.Fatal(err)
				}
				ev, err := Compile(e, env)
				if err != nil {
					t.Fatal(err)
				}
				out, err := ev.Eval(b)
				if err != nil {
					t.Fatal(err)
				}
				defer out.Release()
				if out.Len() != size {
					t.Fatalf("len %d, want %d", out.Len(), size)
				}
				onNull := c.onNull
				if onNull == "" {
					onNull = "NULL"
				}
				for i := 0; i < size; i++ {
					s, isNull := types.FormatValue(out, i, ev.Type(), env.loc())
					if isNull {
						s = "NULL"
					}
					want := c.want
					if i%3 == 2 {
						want = onNull
					}
					if s != want {
						t.Fatalf("row %d: %s(%v) = %s, want %s (type %v)", i, c.name, c.vals, s, want, ev.Type())
					}
				}
			})
		}
	}
}

func col(i int, t types.DataType) *Expr { return Column(i, t) }

func TestFunctions(t *testing.T) {
	ts := func(s string) int64 {
		tm, err := time.Parse("2006-01-02 15:04:05.999999999", s)
		if err != nil {
			panic(err)
		}
		return tm.UnixNano()
	}
	D := types.Decimal
	cases := []fnCase{
		{name: "+", args: []*Expr{col(0, types.Int), i32(1)}, cols: []types.DataType{types.Int}, vals: []any{int64(41)}, want: "42"},
		{name: "+", args: []*Expr{col(0, types.Int), i32(1)}, cols: []types.DataType{types.Int}, vals: []any{int64(math.MaxInt32)}, want: "-2147483648"},
		{name: "-", args: []*Expr{col(0, types.BigInt), col(1, types.BigInt)}, cols: []types.DataType{types.BigInt, types.BigInt}, vals: []any{int64(5), int64(7)}, want: "-2"},
		{name: "*", args: []*Expr{col(0, types.Double), i32(2)}, cols: []types.DataType{types.Double}, vals: []any{1.25}, want: "2.5"},
		{name: "/", args: []*Expr{col(0, types.Int), i32(2)}, cols: []types.DataType{types.Int}, vals: []any{int64(-7)}, want: "-3"},
		{name: "%", args: []*Expr{col(0, types.Int), i32(3)}, cols: []types.DataType{types.Int}, vals: []any{int64(-7)}, want: "-1"},
		{name: "/", args: []*Expr{col(0, types.Double), lit(0.0, types.Double)}, cols: []types.DataType{types.Double}, vals: []any{1.0}, want: "Infinity"},
		{name: "+", args: []*Expr{col(0, D(10, 2)), col(0, D(10, 2))}, cols: []types.DataType{D(10, 2)}, vals: []any{int64(150)}, want: "3.00"},
		{name: "*", args: []*Expr{col(0, D(10, 2)), col(0, D(10, 2))}, cols: []types.DataType{D(10, 2)}, vals: []any{int64(150)}, want: "2.2500"},
		{name: "/", args: []*Expr{col(0, D(10, 2)), dec("3")}, cols: []types.DataType{D(10, 2)}, vals: []any{int64(100)}, want: "0.3333333333333"},
		{name: "/", args: []*Expr{col(0, D(10, 2)), dec("3.00")}, cols: []types.DataType{D(10, 2)}, vals: []any{int64(200)}, want: "0.666667"},
		{name: "+", args: []*Expr{col(0, types.Int), dec("0.5")}, cols: []types.DataType{types.Int}, vals: []any{int64(2)}, want: "2.5"},
		{name: "NEG", args: []*Expr{col(0, types.BigInt)}, cols: []types.DataType{types.BigInt}, vals: []any{int64(3)}, want: "-3"},
		{name: "ABS", args: []*Expr{col(0, D(5, 1))}, cols: []types.DataType{D(5, 1)}, vals: []any{int64(-15)}, want: "1.5"},
		{name: "=", args: []*Expr{col(0, types.Int), col(1, types.BigInt)}, cols: []types.DataType{types.Int, types.BigInt}, vals: []any{int64(3), int64(3)}, want: "TRUE"},
		{name: "<", args: []*Expr{col(0, types.Int), dec("3.5")}, cols: []types.DataType{types.Int}, vals: []any{int64(3)}, want: "TRUE"},
		{name: "<>", args: []*Expr{col(0, types.Char(3)), col(1, types.VarChar(5))}, cols: []types.DataType{types.Char(3), types.VarChar(5)}, vals: []any{"abc", "abc"}, want: "FALSE"},
		{name: ">=", args: []*Expr{col(0, types.Date), col(1, types.Timestamp(3))}, cols: []types.DataType{types.Date, types.Timestamp(3)}, vals: []any{int32(1), int64(86400_000_000_000)}, want: "TRUE"},
		{name: "AND", args: []*Expr{col(0, types.Boolean), lit(false, types.Boolean)}, cols: []types.DataType{types.Boolean}, vals: []any{true}, want: "FALSE", onNull: "FALSE"},
		{name: "OR", args: []*Expr{col(0, types.Boolean), lit(true, types.Boolean)}, cols: []types.DataType{types.Boolean}, vals: []any{false}, want: "TRUE", onNull: "TRUE"},
		{name: "NOT", args: []*Expr{col(0, types.Boolean)}, cols: []types.DataType{types.Boolean}, vals: []any{false}, want: "TRUE"},
		{name: "IS NULL", args: []*Expr{col(0, types.String)}, cols: []types.DataType{types.String}, vals: []any{"x"}, want: "FALSE", onNull: "TRUE"},
		{name: "IS NOT TRUE", args: []*Expr{col(0, types.Boolean)}, cols: []types.DataType{types.Boolean}, vals: []any{true}, want: "FALSE", onNull: "TRUE"},
		{name: "BETWEEN", args: []*Expr{col(0, types.Int), i32(1), i32(10)}, cols: []types.DataType{types.Int}, vals: []any{int64(10)}, want: "TRUE"},
		{name: "NOT BETWEEN", args: []*Expr{col(0, types.Int), i32(1), i32(10)}, cols: []types.DataType{types.Int}, vals: []any{int64(0)}, want: "TRUE"},
		{name: "IN", args: []*Expr{col(0, types.String), str("a"), str("bb")}, cols: []types.DataType{types.String}, vals: []any{"bb"}, want: "TRUE"},
		{name: "NOT IN", args: []*Expr{col(0, types.Int), i32(1), i32(2)}, cols: []types.DataType{types.Int}, vals: []any{int64(3)}, want: "TRUE"},
		{name: "IN", args: []*Expr{col(0, types.Int), i32(1), NullLiteral(types.Int)}, cols: []types.DataType{types.Int}, vals: []any{int64(3)}, want: "NULL"},
		{name: "CASE", args: []*Expr{mustResolve(t, ">", col(0, types.Int), i32(0)), str("pos"), str("neg")}, cols: []types.DataType{types.Int}, vals: []any{int64(5)}, want: "pos", onNull: "neg"},
		{name: "CASE", args: []*Expr{mustResolve(t, "=", col(0, types.Int), i32(0)), NullLiteral(types.Int), mustResolve(t, "/", i32(10), col(0, types.Int))}, cols: []types.DataType{types.Int}, vals: []any{int64(0)}, want: "NULL"},
		{name: "COALESCE", args: []*Expr{col(0, types.Int), i32(7)}, cols: []types.DataType{types.Int}, vals: []any{int64(1)}, want: "1", onNull: "7"},
		{name: "IF", args: []*Expr{col(0, types.Boolean), i32(1), i32(2)}, cols: []types.DataType{types.Boolean}, vals: []any{true}, want: "1", onNull: "2"},
		{name: "NULLIF", args: []*Expr{col(0, types.Int), i32(1)}, cols: []types.DataType{types.Int}, vals: []any{int64(1)}, want: "NULL"},
		{name: "LIKE", args: []*Expr{col(0, types.String), str("a%c")}, cols: []types.DataType{types.String}, vals: []any{"abbc"}, want: "TRUE"},
		{name: "LIKE", args: []*Expr{col(0, types.String), str("a_")}, cols: []types.DataType{types.String}, vals: []any{"abc"}, want: "FALSE"},
		{name: "LIKE", args: []*Expr{col(0, types.String), str("ab%")}, cols: []types.DataType{types.String}, vals: []any{"abc"}, want: "TRUE"},
		{name: "||", args: []*Expr{col(0, types.String), str("!")}, cols: []types.DataType{types.String}, vals: []any{"hi"}, want: "hi!"},
		{name: "CONCAT", args: []*Expr{str("a"), col(0, types.String), str("c")}, cols: []types.DataType{types.String}, vals: []any{"b"}, want: "abc"},
		{name: "CONCAT_WS", args: []*Expr{str("-"), str("a"), col(0, types.String), str("c")}, cols: []types.DataType{types.String}, vals: []any{"b"}, want: "a-b-c", onNull: "a-c"},
		{name: "UPPER", args: []*Expr{col(0, types.String)}, cols: []types.DataType{types.String}, vals: []any{"abé"}, want: "ABÉ"},
		{name: "LOWER", args: []*Expr{col(0, types.String)}, cols: []types.DataType{types.String}, vals: []any{"ABC"}, want: "abc"},
		{name: "CHAR_LENGTH", args: []*Expr{col(0, types.String)}, cols: []types.DataType{types.String}, vals: []any{"héllo"}, want: "5"},
		{name: "SUBSTRING", args: []*Expr{col(0, types.String), i32(2), i32(3)}, cols: []types.DataType{types.String}, vals: []any{"abcdef"}, want: "bcd"},
		{name: "SUBSTRING", args: []*Expr{col(0, types.String), i32(3)}, cols: []types.DataType{types.String}, vals: []any{"abcdef"}, want: "cdef"},
		{name: "TRIM", args: []*Expr{col(0, types.String)}, cols: []types.DataType{types.String}, vals: []any{"  x y  "}, want: "x y"},
		{name: "LTRIM", args: []*Expr{col(0, types.String)}, cols: []types.DataType{types.String}, vals: []any{"  x "}, want: "x "},
		{name: "REPLACE", args: []*Expr{col(0, types.String), str("a"), str("xy")}, cols: []types.DataType{types.String}, vals: []any{"banana"}, want: "bxynxynxy"},
		{name: "SPLIT_INDEX", args: []*Expr{col(0, types.String), str(","), i32(2)}, cols: []types.DataType{types.String}, vals: []any{"a,,b"}, want: "b"},
		{name: "SPLIT_INDEX", args: []*Expr{col(0, types.String), str(","), i32(5)}, cols: []types.DataType{types.String}, vals: []any{"a,,b"}, want: "NULL"},
		{name: "REGEXP_EXTRACT", args: []*Expr{col(0, types.String), str("(\\d+)-(\\d+)")}, cols: []types.DataType{types.String}, vals: []any{"x 10-20 y"}, want: "10-20"},
		{name: "REGEXP_EXTRACT", args: []*Expr{col(0, types.String), str("(\\d+)-(\\d+)"), i32(2)}, cols: []types.DataType{types.String}, vals: []any{"x 10-20 y"}, want: "20"},
		{name: "FROM_UNIXTIME", args: []*Expr{col(0, types.BigInt)}, cols: []types.DataType{types.BigInt}, vals: []any{int64(1692812175)}, want: "2023-08-23 17:36:15"},
		{name: "FROM_UNIXTIME", args: []*Expr{col(0, types.BigInt), str("yyyy/MM/dd HH-mm")}, cols: []types.DataType{types.BigInt}, vals: []any{int64(1692812175)}, want: "2023/08/23 17-36"},
		{name: "TO_TIMESTAMP", args: []*Expr{col(0, types.String)}, cols: []types.DataType{types.String}, vals: []any{"2023-8-3 1:02:03.123456"}, want: "2023-08-03 01:02:03.123"},
		{name: "TO_TIMESTAMP", args: []*Expr{col(0, types.String)}, cols: []types.DataType{types.String}, vals: []any{"2023-08-03"}, want: "2023-08-03 00:00:00.000"},
		{name: "TO_TIMESTAMP", args: []*Expr{col(0, types.String)}, cols: []types.DataType{types.String}, vals: []any{"2023-08-03T01:02:03"}, want: "NULL"},
		{name: "TO_TIMESTAMP", args: []*Expr{col(0, types.String), str("dd/MM/yyyy HH:mm")}, cols: []types.DataType{types.String}, vals: []any{"03/08/2023 10:11"}, want: "2023-08-03 10:11:00.000"},
		{name: "TO_DATE", args: []*Expr{col(0, types.String)}, cols: []types.DataType{types.String}, vals: []any{"2023-08-03"}, want: "2023-08-03"},
		{name: "TIMESTAMPDIFF", args: []*Expr{str("MINUTE"), col(0, types.Time(3)), col(1, types.Time(0))}, cols: []types.DataType{types.Time(3), types.Time(0)}, vals: []any{int32(3723123), int32(0)}, want: "-62"},
		{name: "TIMESTAMPDIFF", args: []*Expr{str("MONTH"), col(0, types.Date), col(1, types.Date)}, cols: []types.DataType{types.Date, types.Date}, vals: []any{int32(18140), int32(17014)}, want: "-37"},
		{name: "TIMESTAMPDIFF", args: []*Expr{str("DAY"), col(0, types.Timestamp(3)), col(1, types.Timestamp(3))}, cols: []types.DataType{types.Timestamp(3), types.Timestamp(3)}, vals: []any{ts("2024-01-01 12:00:00"), ts("2024-01-03 11:59:59")}, want: "1"},
		{name: "TIMESTAMPADD", args: []*Expr{str("HOUR"), i32(8), col(0, types.Timestamp(3))}, cols: []types.DataType{types.Timestamp(3)}, vals: []any{ts("2017-11-29 10:58:58.998")}, want: "2017-11-29 18:58:58.998"},
		{name: "TIMESTAMPADD", args: []*Expr{str("MONTH"), i32(1), col(0, types.Date)}, cols: []types.DataType{types.Date}, vals: []any{int32(19752)}, want: "2024-02-29"},
		{name: "+", args: []*Expr{col(0, types.Date), lit(int32(13), types.IntervalYearMonth())}, cols: []types.DataType{types.Date}, vals: []any{int32(19752)}, want: "2025-02-28"},
		{name: "-", args: []*Expr{col(0, types.Timestamp(3)), lit(int64(5000), types.IntervalDayTime())}, cols: []types.DataType{types.Timestamp(3)}, vals: []any{ts("2024-01-01 00:00:00")}, want: "2023-12-31 23:59:55.000"},
		{name: "UNIX_TIMESTAMP", args: []*Expr{col(0, types.String)}, cols: []types.DataType{types.String}, vals: []any{"2023-08-23 17:36:15"}, want: "1692812175"},
		{name: "UNIX_TIMESTAMP", args: []*Expr{col(0, types.String)}, cols: []types.DataType{types.String}, vals: []any{"garbage"}, want: "-9223372036854775808"},
		{name: "UNIX_TIMESTAMP", want: "1709210096"},
		{name: "CURRENT_TIMESTAMP", want: "2024-02-29 12:34:56.789"},
		{name: "LOCALTIMESTAMP", want: "2024-02-29 12:34:56.789"},
		{name: "CURRENT_DATE", want: "2024-02-29"},
		{name: "DATE_FORMAT", args: []*Expr{col(0, types.Timestamp(9)), str("yyyy-MM-dd'T'HH:mm:ss.SSSSSSSSS")}, cols: []types.DataType{types.Timestamp(9)}, vals: []any{ts("2024-03-01 02:03:04.123456789")}, want: "2024-03-01T02:03:04.123456789"},
		{name: "DATE_FORMAT", args: []*Expr{col(0, types.String), str("MMM d, yyyy h:mm a")}, cols: []types.DataType{types.String}, vals: []any{"2024-03-01 14:03:04"}, want: "Mar 1, 2024 2:03 PM"},
		{name: "EXTRACT", args: []*Expr{str("YEAR"), col(0, types.Timestamp(3))}, cols: []types.DataType{types.Timestamp(3)}, vals: []any{ts("2024-03-01 02:03:04")}, want: "2024"},
		{name: "HOUR", args: []*Expr{col(0, types.Timestamp(3))}, cols: []types.DataType{types.Timestamp(3)}, vals: []any{ts("2024-03-01 02:03:04")}, want: "2"},
		{name: "DAYOFWEEK", args: []*Expr{col(0, types.Date)}, cols: []types.DataType{types.Date}, vals: []any{int32(19783)}, want: "6"},
		{name: "FLOOR", args: []*Expr{str("HOUR"), col(0, types.Timestamp(3))}, cols: []types.DataType{types.Timestamp(3)}, vals: []any{ts("2024-03-01 02:03:04")}, want: "2024-03-01 02:00:00.000"},
		{name: "CEIL", args: []*Expr{str("MONTH"), col(0, types.Timestamp(3))}, cols: []types.DataType{types.Timestamp(3)}, vals: []any{ts("2024-03-01 02:03:04")}, want: "2024-04-01 00:00:00.000"},
		{name: "FLOOR", args: []*Expr{col(0, types.Double)}, cols: []types.DataType{types.Double}, vals: []any{-1.5}, want: "-2.0"},
		{name: "CEIL", args: []*Expr{col(0, D(5, 2))}, cols: []types.DataType{D(5, 2)}, vals: []any{int64(101)}, want: "2"},
		{name: "ROUND", args: []*Expr{col(0, D(5, 3)), i32(1)}, cols: []types.DataType{D(5, 3)}, vals: []any{int64(1250)}, want: "1.3"},
		{name: "ROUND", args: []*Expr{col(0, types.Double), i32(2)}, cols: []types.DataType{types.Double}, vals: []any{2.675}, want: "2.68"},
		{name: "ROUND", args: []*Expr{col(0, types.Int), i32(-1)}, cols: []types.DataType{types.Int}, vals: []any{int64(15)}, want: "20"},
		{name: "POWER", args: []*Expr{col(0, types.Int), i32(10)}, cols: []types.DataType{types.Int}, vals: []any{int64(2)}, want: "1024.0"},
		{name: "SQRT", args: []*Expr{col(0, types.Double)}, cols: []types.DataType{types.Double}, vals: []any{2.25}, want: "1.5"},
		{name: "MOD", args: []*Expr{col(0, types.BigInt), i32(4)}, cols: []types.DataType{types.BigInt}, vals: []any{int64(10)}, want: "2"},
	}
	runFnCases(t, utcEnv, cases)
}

func TestCasts(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skip("no tzdata")
	}
	env := &Env{Location: tokyo}
	cases := []struct {
		e    *Expr
		to   types.DataType
		want string
	}{
		{str(" 42 "), types.Int, "42"},
		{str("1.9"), types.Int, "1"},
		{str("1.5"), types.Double, "1.5"},
		{str("3.14159"), types.Decimal(5, 2), "3.14"},
		{str("true"), types.Boolean, "TRUE"},
		{str("2024-02-29 10:11:12.5"), types.Timestamp(3), "2024-02-29 10:11:12.500"},
		{str("2024-02-29 10:11:12"), types.TimestampLTZ(3), "2024-02-29 10:11:12.000"},
		{str("2024-02-29"), types.Date, "2024-02-29"},
		{str("10:11:12"), types.Time(0), "10:11:12"},
		{i32(300), types.TinyInt, "44"},
		{lit(1e10, types.Double), types.Int, "2147483647"},
		{lit(1e10, types.Double), types.String, "1.0E10"},
		{lit(-2.7, types.Double), types.BigInt, "-2"},
		{dec("-2.75"), types.Int, "-2"},
		{dec("2.75"), types.Decimal(2, 1), "2.8"},
		{dec("123.4"), types.Decimal(3, 1), "NULL"},
		{dec("4.00"), types.String, "4.00"},
		{lit(true, types.Boolean), types.String, "TRUE"},
		{lit(true, types.Boolean), types.Int, "1"},
		{i32(7), types.Decimal(10, 2), "7.00"},
		{lit(int64(0), types.TimestampLTZ(3)), types.Timestamp(3), "1970-01-01 09:00:00.000"},
		{lit(int64(0), types.Timestamp(3)), types.TimestampLTZ(3), "1970-01-01 00:00:00.000"},
		{lit(int64(0), types.TimestampLTZ(3)), types.String, "1970-01-01 09:00:00.000"},
		{lit(int64(86400000), types.IntervalDayTime()), types.String, "+1 00:00:00.000"},
		{lit(int64(1_500_000_000), types.Timestamp(9)), types.Timestamp(0), "1970-01-01 00:00:01"},
		{str("abcdef"), types.VarChar(3), "abc"},
		{i64(5), types.TimestampLTZ(3), "1970-01-01 09:00:05.000"},
		{lit(int32(19000), types.Date), types.Timestamp(3), "2022-01-08 00:00:00.000"},
	}
	for _, c := range cases {
		if got := evalConst(t, Cast(c.e, c.to), env); got != c.want {
			t.Errorf("CAST(%v AS %v) = %s, want %s", c.e, c.to, got, c.want)
		}
	}
	// A bad string fails the job; TRY_CAST gives NULL.
	schema := types.Schema{{Name: "s", Type: types.String}}
	b := batchOf(schema, column(types.String, []any{"12", "abc"}))
	defer b.Release()
	ev, err := Compile(Cast(Column(0, types.String), types.Int), env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Eval(b); err == nil || !strings.Contains(err.Error(), "abc") {
		t.Errorf("CAST('abc' AS INT) error = %v", err)
	}
	ev, _ = Compile(TryCast(Column(0, types.String), types.Int), env)
	out, err := ev.Eval(b)
	if err != nil {
		t.Fatal(err)
	}
	if out.IsNull(0) || !out.IsNull(1) {
		t.Errorf("TRY_CAST nulls wrong: %v", out)
	}
	out.Release()
}

func TestRuntimeErrors(t *testing.T) {
	schema := types.Schema{{Name: "x", Type: types.Int}}
	b := batchOf(schema, column(types.Int, []any{int64(1), int64(0)}))
	defer b.Release()
	ev, err := Compile(mustResolve(t, "/", i32(10), Column(0, types.Int)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Eval(b); err == nil || !strings.Contains(err.Error(), "division by zero") || types.ClassOf(err) != types.ClassUser {
		t.Errorf("10/0 error = %v (class %v, want user)", err, types.ClassOf(err))
	}
	// Guarded by AND, the division is never evaluated for the zero row.
	guard := mustResolve(t, "AND", mustResolve(t, "<>", Column(0, types.Int), i32(0)),
		mustResolve(t, ">", mustResolve(t, "/", i32(10), Column(0, types.Int)), i32(1)))
	f, err := CompileFilter(guard, nil)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := f.Select(b, nil)
	if err != nil || len(sel) != 1 || sel[0] != 0 {
		t.Errorf("guarded filter = %v, %v", sel, err)
	}
}

func TestFilterSelect(t *testing.T) {
	schema := types.Schema{{Name: "x", Type: types.BigInt}}
	b := batchOf(schema, column(types.BigInt, []any{int64(5), nil, int64(20), int64(11)}))
	defer b.Release()
	f, err := CompileFilter(mustResolve(t, ">", Column(0, types.BigInt), i32(10)), nil)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := f.Select(b, make([]int32, 10))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sel, []int32{2, 3}) {
		t.Errorf("sel = %v", sel)
	}
	if _, err := CompileFilter(Column(0, types.BigInt), nil); err == nil {
		t.Error("non-boolean filter compiled")
	}
}

func TestConstantFolding(t *testing.T) {
	e := mustResolve(t, "+", i32(1), mustResolve(t, "*", i32(2), i32(3)))
	n, err := compileNode(e, &Env{})
	if err != nil {
		t.Fatal(err)
	}
	l, ok := n.(*litNode)
	if !ok || l.one.i64[0] != 7 {
		t.Errorf("not folded: %T", n)
	}
	// CURRENT_TIMESTAMP is not folded.
	n, _ = compileNode(mustResolve(t, "CURRENT_TIMESTAMP"), &Env{})
	if _, ok := n.(*litNode); ok {
		t.Error("CURRENT_TIMESTAMP folded")
	}
}

func TestEvalColumnPassThrough(t *testing.T) {
	schema := types.Schema{{Name: "x", Type: types.String}}
	b := batchOf(schema, column(types.String, []any{"a", nil}))
	defer b.Release()
	ev, _ := Compile(Column(0, types.String), nil)
	out, err := ev.Eval(b)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if out.Len() != 2 || !out.IsNull(1) {
		t.Errorf("pass-through wrong")
	}
}

func BenchmarkEvalAddBigInt(b *testing.B) {
	const n = 4096
	vals := make([]any, n)
	for i := range vals {
		vals[i] = int64(i)
	}
	schema := types.Schema{{Name: "a", Type: types.BigInt}, {Name: "b", Type: types.BigInt}}
	batch := batchOf(schema, column(types.BigInt, vals), column(types.BigInt, vals))
	defer batch.Release()
	e, _ := ResolveCall("+", []*Expr{Column(0, types.BigInt), Column(1, types.BigInt)})
	ev, _ := Compile(e, nil)
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

func BenchmarkFilterCompare(b *testing.B) {
	const n = 4096
	vals := make([]any, n)
	for i := range vals {
		vals[i] = int64(i)
	}
	schema := types.Schema{{Name: "a", Type: types.BigInt}}
	batch := batchOf(schema, column(types.BigInt, vals))
	defer batch.Release()
	e, _ := ResolveCall(">", []*Expr{Column(0, types.BigInt), Literal(int64(2000), types.Int.WithNullable(false))})
	f, _ := CompileFilter(e, nil)
	var sel []int32
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var err error
		if sel, err = f.Select(batch, sel); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "rows/s")
}

func TestDecimalToFloatIsNearest(t *testing.T) {
	for _, c := range []struct {
		unscaled int64
		scale    int32
		want     float64
	}{{33384, 2, 333.84}, {40489, 2, 404.89}, {-5, 1, -0.5}, {123456789012345678, 9, 123456789.012345678}} {
		if got := decimalToFloat(decimal128.FromI64(c.unscaled), c.scale); got != c.want {
			t.Errorf("decimalToFloat(%d, %d) = %v, want %v", c.unscaled, c.scale, got, c.want)
		}
	}
}

// TestStringMatchesLegacy checks that String writes what it wrote when it
// was recursive string joining, and renders a nil argument.
func TestStringMatchesLegacy(t *testing.T) {
	for _, e := range representativeExprs(t) {
		if hasNilArg(e) {
			continue // the old String panicked
		}
		if got, want := e.String(), legacyString(e); got != want {
			t.Errorf("String = %.200s, want %.200s", got, want)
		}
	}
	e := &Expr{Op: OpCall, Func: "F", Type: types.Int, Args: []*Expr{nil, i32(1)}}
	if got := e.String(); got != "F(<nil>, 1)" {
		t.Errorf("String = %s", got)
	}
}

func hasNilArg(e *Expr) bool {
	for _, a := range e.Args {
		if a == nil || hasNilArg(a) {
			return true
		}
	}
	return false
}

// BenchmarkExprString renders 1+1+...+1 chains; the time per term stays
// flat as the chain grows.
func BenchmarkExprString(b *testing.B) {
	for _, n := range []int{1000, 5000, 50_000} {
		e := plusChain(n)
		b.Run(strconv.Itoa(n/1000)+"K", func(b *testing.B) {
			for b.Loop() {
				_ = e.String()
			}
		})
	}
}

// TestCurrentWatermark: CURRENT_WATERMARK(ts) is the environment's
// watermark at the argument's type, precision 3, NULL before the first;
// it is never folded; a non-timestamp argument is refused with Flink's
// message.
func TestCurrentWatermark(t *testing.T) {
	ts := col(0, types.Timestamp(6).WithNullable(false))
	e := mustResolve(t, "CURRENT_WATERMARK", ts)
	if want := types.Timestamp(3); e.Type != want {
		t.Errorf("type %v, want %v", e.Type, want)
	}
	schema := types.Schema{{Name: "ts", Type: ts.Type}}
	b := batchOf(schema, column(ts.Type, []any{int64(0), int64(0)}))
	defer b.Release()
	wm, ok := int64(0), false
	ev, err := Compile(e, &Env{Watermark: func() (int64, bool) { return wm, ok }})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		wm   int64
		ok   bool
		want string
	}{
		{0, false, "NULL"},
		{1704067219000, true, "2024-01-01 00:00:19.000"},
	} {
		wm, ok = step.wm, step.ok
		out, err := ev.Eval(b)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			s, isNull := types.FormatValue(out, i, ev.Type(), time.UTC)
			if isNull {
				s = "NULL"
			}
			if s != step.want {
				t.Errorf("watermark %d/%v row %d: %s, want %s", step.wm, step.ok, i, s, step.want)
			}
		}
		out.Release()
	}
	if _, err := ResolveCall("CURRENT_WATERMARK", []*Expr{col(0, types.BigInt)}); err == nil ||
		err.Error() != "CURRENT_WATERMARK() must be called with a single rowtime attribute argument, but 'BIGINT' cannot be a time attribute." {
		t.Errorf("BIGINT argument: %v", err)
	}
}
