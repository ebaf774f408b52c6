package expr

import (
	"math"
	"strings"
	"testing"

	"github.com/braidflow/braid/types"
)

// TestMoreFunctions covers the functions of Flink's library added beside
// the first ones: typical values, edge cases and (every third row) NULLs.
func TestMoreFunctions(t *testing.T) {
	S, I, B, D := types.String, types.Int, types.BigInt, types.Double
	s1 := []types.DataType{S}
	one := func(name, v, want string, extra ...*Expr) fnCase {
		return fnCase{name: name, args: append([]*Expr{col(0, S)}, extra...), cols: s1, vals: []any{v}, want: want}
	}
	cases := []fnCase{
		one("LPAD", "hi", "??hi", i32(4), str("??")),
		one("LPAD", "hi", "h", i32(1), str("??")),
		one("LPAD", "hi", "abahi", i32(5), str("ab")),
		one("LPAD", "hi", "", i32(0), str("?")),
		one("LPAD", "hi", "NULL", i32(-1), str("?")),
		one("LPAD", "hi", "NULL", i32(4), str("")),
		one("LPAD", "héllo", "ééhéllo", i32(7), str("é")),
		one("RPAD", "hi", "hi??", i32(4), str("??")),
		one("RPAD", "hi", "h", i32(1), str("??")),
		one("RPAD", "", "xyx", i32(3), str("xy")),
		one("REPEAT", "ab", "ababab", i32(3)),
		one("REPEAT", "ab", "", i32(0)),
		one("REPEAT", "ab", "", i32(-2)),
		one("REVERSE", "héllo", "olléh"),
		one("REVERSE", "", ""),
		one("LEFT", "héllo", "hé", i32(2)),
		one("LEFT", "héllo", "", i32(-1)),
		one("LEFT", "héllo", "héllo", i32(10)),
		one("RIGHT", "héllo", "llo", i32(3)),
		one("RIGHT", "héllo", "", i32(-3)),
		one("RIGHT", "héllo", "héllo", i32(99)),
		{name: "LOCATE", args: []*Expr{str("l"), col(0, S)}, cols: s1, vals: []any{"héllo"}, want: "3"},
		{name: "LOCATE", args: []*Expr{str("l"), col(0, S), i32(4)}, cols: s1, vals: []any{"héllo"}, want: "4"},
		{name: "LOCATE", args: []*Expr{str("l"), col(0, S), i32(6)}, cols: s1, vals: []any{"héllo"}, want: "0"},
		{name: "LOCATE", args: []*Expr{str("z"), col(0, S)}, cols: s1, vals: []any{"héllo"}, want: "0"},
		{name: "LOCATE", args: []*Expr{str(""), col(0, S)}, cols: s1, vals: []any{"abc"}, want: "1"},
		one("INSTR", "héllo", "3", str("ll")),
		one("INSTR", "héllo", "0", str("x")),
		one("ASCII", "abc", "97"),
		one("ASCII", "", "0"),
		{name: "CHR", args: []*Expr{col(0, I)}, cols: []types.DataType{I}, vals: []any{int64(97)}, want: "a"},
		{name: "CHR", args: []*Expr{col(0, I)}, cols: []types.DataType{I}, vals: []any{int64(353)}, want: "a"},
		{name: "CHR", args: []*Expr{col(0, I)}, cols: []types.DataType{I}, vals: []any{int64(-1)}, want: ""},
		one("REGEXP_REPLACE", "foobar", "fb", str("oo|ar"), str("")),
		one("REGEXP_REPLACE", "a1b22", "a$1b$1", str("[0-9]+"), str("$1")),
		one("REGEXP_REPLACE", "abc", "NULL", str("("), str("x")),
		one("REGEXP", "foobar", "TRUE", str("o+b")),
		one("REGEXP", "foobar", "FALSE", str("^b")),
		one("REGEXP", "foobar", "FALSE", str("")),
		one("REGEXP", "foobar", "FALSE", str("(")),
		one("TRANSLATE", "hello", "hippo", str("el"), str("ip")),
		one("TRANSLATE", "hello", "ho", str("el"), str("")),
		one("OVERLAY", "xxxxxtest", "xxxxxxxxx", str("xxxx"), i32(6)),
		one("OVERLAY", "xxxxxtest", "xxxxxxxxxst", str("xxxx"), i32(6), i32(2)),
		one("OVERLAY", "héllo", "hXllo", str("X"), i32(2)),
		one("OVERLAY", "abc", "abc", str("X"), i32(0)),
		one("OVERLAY", "abc", "abc", str("X"), i32(4)),
		one("OVERLAY", "abcdef", "aX", str("X"), i32(2), i32(0)),
		one("TO_BASE64", "hello world", "aGVsbG8gd29ybGQ="),
		one("TO_BASE64", "", ""),
		one("FROM_BASE64", "aGVsbG8gd29ybGQ=", "hello world"),
		one("HEX", "hello world", "68656C6C6F20776F726C64"),
		{name: "HEX", args: []*Expr{col(0, B)}, cols: []types.DataType{B}, vals: []any{int64(100)}, want: "64"},
		{name: "HEX", args: []*Expr{col(0, B)}, cols: []types.DataType{B}, vals: []any{int64(-1)}, want: "FFFFFFFFFFFFFFFF"},
		{name: "BIN", args: []*Expr{col(0, I)}, cols: []types.DataType{I}, vals: []any{int64(12)}, want: "1100"},
		{name: "BIN", args: []*Expr{col(0, I)}, cols: []types.DataType{I}, vals: []any{int64(0)}, want: "0"},
		{name: "BIN", args: []*Expr{col(0, I)}, cols: []types.DataType{I}, vals: []any{int64(-1)}, want: strings.Repeat("1", 64)},

		one("MD5", "", "d41d8cd98f00b204e9800998ecf8427e"),
		one("MD5", "abc", "900150983cd24fb0d6963f7d28e17f72"),
		one("SHA1", "abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
		one("SHA224", "abc", "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7"),
		one("SHA256", "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
		one("SHA384", "abc", "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"),
		one("SHA512", "abc", "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"),
		one("SHA2", "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", i32(256)),
		one("SHA2", "abc", "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7", i32(224)),
		one("SHA2", "abc", "NULL", i32(100)),

		{name: "SIGN", args: []*Expr{col(0, I)}, cols: []types.DataType{I}, vals: []any{int64(-7)}, want: "-1"},
		{name: "SIGN", args: []*Expr{col(0, D)}, cols: []types.DataType{D}, vals: []any{2.5}, want: "1.0"},
		{name: "SIGN", args: []*Expr{col(0, types.Decimal(5, 2))}, cols: []types.DataType{types.Decimal(5, 2)}, vals: []any{int64(-150)}, want: "-1.00"},
		{name: "SIGN", args: []*Expr{col(0, types.Decimal(5, 2))}, cols: []types.DataType{types.Decimal(5, 2)}, vals: []any{int64(0)}, want: "0.00"},
		{name: "PI", want: "3.141592653589793"},
		{name: "E", want: "2.718281828459045"},
		{name: "SIN", args: []*Expr{col(0, D)}, cols: []types.DataType{D}, vals: []any{0.0}, want: "0.0"},
		{name: "COS", args: []*Expr{col(0, I)}, cols: []types.DataType{I}, vals: []any{int64(0)}, want: "1.0"},
		{name: "TAN", args: []*Expr{col(0, D)}, cols: []types.DataType{D}, vals: []any{0.0}, want: "0.0"},
		{name: "COT", args: []*Expr{col(0, D)}, cols: []types.DataType{D}, vals: []any{0.0}, want: "Infinity"},
		{name: "ASIN", args: []*Expr{col(0, D)}, cols: []types.DataType{D}, vals: []any{1.0}, want: "1.5707963267948966"},
		{name: "ACOS", args: []*Expr{col(0, D)}, cols: []types.DataType{D}, vals: []any{2.0}, want: "NaN"},
		{name: "ATAN", args: []*Expr{col(0, D)}, cols: []types.DataType{D}, vals: []any{1.0}, want: "0.7853981633974483"},
		{name: "ATAN2", args: []*Expr{col(0, D), lit(-1.0, D)}, cols: []types.DataType{D}, vals: []any{0.0}, want: "3.141592653589793"},
		{name: "DEGREES", args: []*Expr{col(0, D)}, cols: []types.DataType{D}, vals: []any{math.Pi}, want: "180.0"},
		{name: "RADIANS", args: []*Expr{col(0, I)}, cols: []types.DataType{I}, vals: []any{int64(180)}, want: "3.141592653589793"},
		{name: "LOG", args: []*Expr{col(0, D)}, cols: []types.DataType{D}, vals: []any{math.E}, want: "1.0"},
		{name: "LOG", args: []*Expr{i32(2), col(0, I)}, cols: []types.DataType{I}, vals: []any{int64(8)}, want: "3.0"},
		{name: "LOG", args: []*Expr{col(0, D)}, cols: []types.DataType{D}, vals: []any{0.0}, want: "-Infinity"},
		{name: "RAND_INTEGER", args: []*Expr{i32(1), col(0, I)}, cols: []types.DataType{I}, vals: []any{int64(1)}, want: "0"},

		{name: "GREATEST", args: []*Expr{col(0, I), i32(5), lit(int64(3), B)}, cols: []types.DataType{I}, vals: []any{int64(7)}, want: "7"},
		{name: "GREATEST", args: []*Expr{col(0, I), i32(5), dec("5.5")}, cols: []types.DataType{I}, vals: []any{int64(1)}, want: "5.5"},
		{name: "LEAST", args: []*Expr{col(0, S), str("b")}, cols: s1, vals: []any{"abc"}, want: "abc"},
		{name: "LEAST", args: []*Expr{col(0, I), NullLiteral(I)}, cols: []types.DataType{I}, vals: []any{int64(1)}, want: "NULL"},
		{name: "IFNULL", args: []*Expr{col(0, I), i32(5)}, cols: []types.DataType{I}, vals: []any{int64(1)}, want: "1", onNull: "5"},
		{name: "IS DISTINCT FROM", args: []*Expr{col(0, I), i32(1)}, cols: []types.DataType{I}, vals: []any{int64(1)}, want: "FALSE", onNull: "TRUE"},
		{name: "IS NOT DISTINCT FROM", args: []*Expr{col(0, I), NullLiteral(I)}, cols: []types.DataType{I}, vals: []any{int64(1)}, want: "FALSE", onNull: "TRUE"},
		{name: "IS DISTINCT FROM", args: []*Expr{col(0, S), str("a")}, cols: s1, vals: []any{"b"}, want: "TRUE", onNull: "TRUE"},

		{name: "TO_TIMESTAMP_LTZ", args: []*Expr{col(0, B), i32(3)}, cols: []types.DataType{B}, vals: []any{int64(1700000000123)}, want: "2023-11-14 22:13:20.123"},
		{name: "TO_TIMESTAMP_LTZ", args: []*Expr{col(0, I), i32(0)}, cols: []types.DataType{I}, vals: []any{int64(-1)}, want: "1969-12-31 23:59:59.000"},
		{name: "TO_TIMESTAMP_LTZ", args: []*Expr{col(0, D), i32(0)}, cols: []types.DataType{D}, vals: []any{1.5}, want: "1970-01-01 00:00:01.500"},
		one("CONVERT_TZ", "1970-01-01 00:00:00", "1969-12-31 16:00:00", str("UTC"), str("America/Los_Angeles")),
		one("CONVERT_TZ", "2024-07-01 12:00:00", "2024-07-01 21:00:00", str("UTC"), str("Asia/Tokyo")),
		one("CONVERT_TZ", "2024-07-01 12:00:00", "2024-07-01 11:00:00", str("GMT+01:00"), str("No/Such_Zone")),
		one("CONVERT_TZ", "garbage", "NULL", str("UTC"), str("UTC")),
	}
	runFnCases(t, utcEnv, cases)
}

// TestMoreFunctionTypes checks result types and nullability.
func TestMoreFunctionTypes(t *testing.T) {
	S, I := types.String, types.Int
	nn := func(t types.DataType) types.DataType { return t.WithNullable(false) }
	cases := []struct {
		name string
		args []*Expr
		want types.DataType
	}{
		{"LPAD", []*Expr{str("a"), i32(3), str("b")}, S},
		{"REPEAT", []*Expr{str("a"), i32(3)}, nn(S)},
		{"REVERSE", []*Expr{Column(0, types.VarChar(7))}, types.VarChar(7)},
		{"LEFT", []*Expr{str("abc"), i32(1)}, nn(types.VarChar(3))},
		{"LOCATE", []*Expr{str("a"), Column(0, S)}, I},
		{"INSTR", []*Expr{str("a"), str("b")}, nn(I)},
		{"ASCII", []*Expr{Column(0, S)}, I},
		{"CHR", []*Expr{i32(97)}, nn(types.VarChar(1))},
		{"REGEXP_REPLACE", []*Expr{str("a"), str("b"), str("c")}, S},
		{"REGEXP", []*Expr{str("a"), str("b")}, nn(types.Boolean)},
		{"MD5", []*Expr{Column(0, S)}, S},
		{"SHA2", []*Expr{str("a"), i32(256)}, S},
		{"HEX", []*Expr{i32(1)}, nn(S)},
		{"UUID", nil, nn(S)},
		{"SIGN", []*Expr{Column(0, types.Decimal(5, 2))}, types.Decimal(5, 2)},
		{"PI", nil, nn(types.Double)},
		{"SIN", []*Expr{i32(1)}, nn(types.Double)},
		{"LOG", []*Expr{i32(2), Column(0, I)}, types.Double},
		{"RAND", nil, nn(types.Double)},
		{"RAND", []*Expr{i32(7)}, nn(types.Double)},
		{"RAND_INTEGER", []*Expr{i32(10)}, nn(I)},
		{"GREATEST", []*Expr{i32(1), Column(0, types.BigInt)}, types.BigInt},
		{"LEAST", []*Expr{str("a"), str("bcd")}, nn(types.VarChar(3))},
		{"IFNULL", []*Expr{Column(0, I), i32(0)}, nn(I)},
		{"IFNULL", []*Expr{Column(0, I), Column(1, types.BigInt)}, types.BigInt},
		{"IS DISTINCT FROM", []*Expr{Column(0, I), Column(1, I)}, nn(types.Boolean)},
		{"TO_TIMESTAMP_LTZ", []*Expr{Column(0, types.BigInt), i32(3)}, types.TimestampLTZ(3)},
		{"CONVERT_TZ", []*Expr{str("a"), str("b"), str("c")}, S},
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
}

func TestMoreFunctionErrors(t *testing.T) {
	cases := []struct {
		name string
		args []*Expr
		want string
	}{
		{"TO_TIMESTAMP_LTZ", []*Expr{i32(1), i32(6)}, "The precision value '6' for function TO_TIMESTAMP_LTZ(numeric, precision) is unsupported, the supported value is '0', '3'."},
		{"TO_TIMESTAMP_LTZ", []*Expr{i32(1), Column(0, types.Int)}, "function TO_TIMESTAMP_LTZ expects the precision as an integer literal"},
		{"RAND", []*Expr{Column(0, types.Int)}, "function RAND expects an integer literal as its seed"},
		{"LPAD", []*Expr{str("a"), str("b"), str("c")}, "function LPAD expects an integer argument, got CHAR(1) NOT NULL"},
		{"SIN", []*Expr{str("a")}, "function SIN expects a number as argument 1, got CHAR(1) NOT NULL"},
		{"REPEAT", []*Expr{str("a")}, "invalid number of arguments to function 'REPEAT': 1"},
		{"GREATEST", []*Expr{str("a"), i32(1)}, "cannot apply 'GREATEST' to arguments of type CHAR(1) NOT NULL and INT NOT NULL"},
		{"HEX", []*Expr{lit(1.5, types.Double)}, "function HEX expects an integer or a string, got DOUBLE NOT NULL"},
	}
	for _, c := range cases {
		_, err := ResolveCall(c.name, c.args)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

// TestJavaRandom holds RAND(seed) to java.util.Random's sequence for seed
// 42 (new Random(42).nextDouble() and nextInt(10)).
func TestJavaRandom(t *testing.T) {
	r := newJavaRandom(42)
	if got := r.float64(); got != 0.7275636800328681 {
		t.Errorf("nextDouble = %v, want 0.7275636800328681", got)
	}
	r = newJavaRandom(42)
	var got []int32
	for range 5 {
		got = append(got, r.intN(10))
	}
	want := []int32{0, 3, 8, 4, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("nextInt(10) x5 = %v, want %v", got, want)
		}
	}
}

// TestVolatileNotFolded checks that RAND and UUID are drawn per row, not
// folded into one constant.
func TestVolatileNotFolded(t *testing.T) {
	for _, name := range []string{"RAND", "UUID"} {
		e := mustResolve(t, name)
		ev, err := Compile(e, utcEnv)
		if err != nil {
			t.Fatal(err)
		}
		schema := types.Schema{{Name: "x", Type: types.Int}}
		b := batchOf(schema, column(types.Int, []any{int64(1), int64(2), int64(3)}))
		out, err := ev.Eval(b)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := types.FormatValue(out, 0, ev.Type(), nil)
		c, _ := types.FormatValue(out, 2, ev.Type(), nil)
		if a == c {
			t.Errorf("%s gave %s twice", name, a)
		}
		out.Release()
		b.Release()
	}
}

func TestTrimForms(t *testing.T) {
	cases := []fnCase{
		{name: "TRIM", args: []*Expr{str("LEADING"), str("x"), col(0, types.String)}, cols: []types.DataType{types.String}, vals: []any{"xxaxx"}, want: "axx"},
		{name: "TRIM", args: []*Expr{str("TRAILING"), str("x"), col(0, types.String)}, cols: []types.DataType{types.String}, vals: []any{"xxaxx"}, want: "xxa"},
		{name: "TRIM", args: []*Expr{str("BOTH"), str(" "), col(0, types.String)}, cols: []types.DataType{types.String}, vals: []any{"  a  "}, want: "a"},
	}
	runFnCases(t, utcEnv, cases)
}

func TestFloorCeilUnits(t *testing.T) {
	for _, u := range []string{"WEEK", "DECADE", "CENTURY", "MILLENNIUM"} {
		_, err := ResolveCall("FLOOR", []*Expr{str(u), Column(0, types.Timestamp(3))})
		if want := "FLOOR to " + u + " is not supported yet"; err == nil || err.Error() != want {
			t.Errorf("FLOOR TO %s: %v, want %q", u, err, want)
		}
	}
	cases := []fnCase{
		{name: "FLOOR", args: []*Expr{str("DAY"), col(0, types.Date)}, cols: []types.DataType{types.Date}, vals: []any{int32(19783)}, want: "2024-03-01"},
		{name: "CEIL", args: []*Expr{str("YEAR"), col(0, types.Date)}, cols: []types.DataType{types.Date}, vals: []any{int32(19783)}, want: "2025-01-01"},
		{name: "FLOOR", args: []*Expr{str("QUARTER"), col(0, types.Date)}, cols: []types.DataType{types.Date}, vals: []any{int32(19783)}, want: "2024-01-01"},
	}
	runFnCases(t, utcEnv, cases)
}
