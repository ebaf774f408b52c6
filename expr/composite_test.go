package expr

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/braidflow/braid/types"
)

// must returns e, panicking on a resolution error (a broken test).
func must(e *Expr, err error) *Expr {
	if err != nil {
		panic(err)
	}
	return e
}

func TestCompositeConstructorsAndAccess(t *testing.T) {
	arr := func(args ...*Expr) *Expr { return must(ArrayCtor(args)) }
	row := func(args ...*Expr) *Expr { return must(RowCtor(args)) }
	mp := func(args ...*Expr) *Expr { return must(MapCtor(args)) }
	item := func(x, i *Expr) *Expr { return must(Item(x, i)) }
	field := func(x *Expr, f string) *Expr {
		e, ok := FieldAccess(x, f)
		if !ok {
			t.Fatalf("no field %s in %v", f, x.Type)
		}
		return e
	}
	null := NullLiteral(types.Int)
	cases := []struct {
		e        *Expr
		want     string
		wantType string
	}{
		{row(i32(1), str("abc")), "(1, abc)", "ROW<`EXPR$0` INT NOT NULL, `EXPR$1` CHAR(3) NOT NULL> NOT NULL"},
		{arr(i32(1), i32(2)), "[1, 2]", "ARRAY<INT NOT NULL> NOT NULL"},
		{arr(i32(1), null, i64(3)), "[1, null, 3]", "ARRAY<BIGINT> NOT NULL"},
		{arr(str("a"), str("bcd")), "[a, bcd]", "ARRAY<VARCHAR(3) NOT NULL> NOT NULL"},
		{mp(str("a"), i32(1), str("b"), i32(2)), "{a=1, b=2}", "MAP<CHAR(1) NOT NULL, INT NOT NULL> NOT NULL"},
		// A repeated key keeps its first place and its last value.
		{mp(str("a"), i32(1), str("b"), i32(2), str("a"), i32(3)), "{a=3, b=2}", ""},
		{arr(arr(i32(1)), arr(i32(2), i32(3))), "[[1], [2, 3]]", "ARRAY<ARRAY<INT NOT NULL> NOT NULL> NOT NULL"},
		{arr(row(i32(1), dec("1.50")), row(i32(2), dec("2.25"))), "[(1, 1.50), (2, 2.25)]", ""},
		{field(row(i32(1), str("abc")), "EXPR$1"), "abc", "CHAR(3) NOT NULL"},
		{item(arr(i32(10), i32(20)), i32(2)), "20", "INT"},
		{item(arr(i32(10), i32(20)), i32(3)), "NULL", "INT"},
		{item(arr(i32(10), i32(20)), NullLiteral(types.Int)), "NULL", "INT"},
		{item(item(arr(arr(i32(1)), arr(i32(2), i32(3))), i32(2)), i32(1)), "2", "INT"},
		{item(mp(str("a"), i32(1), str("b"), i32(2)), str("b")), "2", "INT"},
		{item(mp(str("a"), i32(1)), str("zz")), "NULL", "INT"},
		{mustResolve(t, "CARDINALITY", arr(i32(1), null, i32(3))), "3", "INT NOT NULL"},
		{mustResolve(t, "CARDINALITY", mp(str("a"), i32(1))), "1", "INT NOT NULL"},
		{mustResolve(t, "ELEMENT", arr(i32(7))), "7", "INT"},
		{mustResolve(t, "ELEMENT", arr(null)), "NULL", "INT"},
		{mustResolve(t, "=", arr(i32(1), i32(2)), arr(i64(1), i64(2))), "TRUE", "BOOLEAN NOT NULL"},
		{mustResolve(t, "<>", arr(i32(1), i32(2)), arr(i32(2), i32(1))), "TRUE", ""},
		{mustResolve(t, "=", mp(str("a"), i32(1), str("b"), i32(2)), mp(str("b"), i32(2), str("a"), i32(1))), "TRUE", ""},
		{mustResolve(t, "=", row(i32(1), str("x")), row(i32(1), str("y"))), "FALSE", ""},
		{Cast(arr(i32(1), i32(2)), types.String), "[1, 2]", ""},
		{mustResolve(t, "SPLIT", str("abcdefg"), str("c")), "[ab, defg]", "ARRAY<STRING> NOT NULL"},
		{mustResolve(t, "SPLIT", str(",a,,b,"), str(",")), "[, a, , b, ]", ""},
		{mustResolve(t, "SPLIT", str("abc"), str("")), "[a, b, c]", ""},
		{mustResolve(t, "SPLIT", str("abc"), str("x")), "[abc]", ""},
		{mustResolve(t, "SPLIT", NullLiteral(types.String), str("x")), "NULL", "ARRAY<STRING>"},
		{mustResolve(t, "STR_TO_MAP", str("a=1,b=2")), "{a=1, b=2}", "MAP<STRING, STRING> NOT NULL"},
		// Java's split: trailing empty pieces go, an empty middle one is the
		// key '' with a NULL value, a key without '=' has a NULL value, the
		// value keeps any further '=', a repeated key its last value.
		{mustResolve(t, "STR_TO_MAP", str("a=1,,b,c=x=y,a=3,,")), "{a=3, =null, b=null, c=x=y}", ""},
		{mustResolve(t, "STR_TO_MAP", str("k1:v1;k2:v2"), str(";"), str(":")), "{k1=v1, k2=v2}", ""},
		{mustResolve(t, "STR_TO_MAP", str("k1 -> v1 | k2->v2"), str(`\s*\|\s*`), str(`\s*->\s*`)), "{k1=v1, k2=v2}", ""},
		{mustResolve(t, "STR_TO_MAP", str("")), "{}", ""},
		{mustResolve(t, "STR_TO_MAP", str(",,,")), "{}", ""},
		{mustResolve(t, "STR_TO_MAP", NullLiteral(types.String)), "NULL", "MAP<STRING, STRING>"},
		{mustResolve(t, "STR_TO_MAP", str("a=1"), NullLiteral(types.String), str("=")), "NULL", ""},
		{Cast(arr(i32(1), i32(2)), types.Array(types.Double)), "[1.0, 2.0]", "ARRAY<DOUBLE>"},
		{Cast(row(i32(1), str("2")), types.Row(types.Field{Name: "a", Type: types.BigInt}, types.Field{Name: "b", Type: types.Int})), "(1, 2)", ""},
		{Cast(mp(str("k"), arr(i32(1))), types.Map(types.String, types.Array(types.BigInt))), "{k=[1]}", ""},
	}
	for _, c := range cases {
		if got := evalConst(t, c.e, utcEnv); got != c.want {
			t.Errorf("%v = %s, want %s", c.e, got, c.want)
		}
		if c.wantType != "" && c.e.Type.String() != c.wantType {
			t.Errorf("%v has type %v, want %s", c.e, c.e.Type, c.wantType)
		}
		// The plan form round-trips through JSON, literals included.
		js, err := json.Marshal(c.e)
		if err != nil {
			t.Fatal(err)
		}
		var back Expr
		if err := json.Unmarshal(js, &back); err != nil || back.String() != c.e.String() {
			t.Errorf("JSON round trip of %v: %v (%v)", c.e, &back, err)
		}
	}
}

func TestCompositeErrors(t *testing.T) {
	a := must(ArrayCtor([]*Expr{i32(1), i32(2)}))
	if _, err := Item(a, i32(0)); err == nil || err.Error() != "Array element access needs an index starting at 1 but was 0." {
		t.Errorf("arr[0]: %v", err)
	}
	if _, err := Item(i32(1), i32(1)); err == nil {
		t.Error("INT[1] resolved")
	}
	if _, err := ArrayCtor([]*Expr{i32(1), str("a")}); err == nil {
		t.Error("ARRAY[1, 'a'] resolved")
	}
	if _, err := MapCtor([]*Expr{i32(1)}); err == nil {
		t.Error("MAP[1] resolved")
	}
	if _, err := ResolveCall("<", []*Expr{a, a}); err == nil {
		t.Error("ARRAY < ARRAY resolved")
	}
	if CanCast(types.String, types.Array(types.Int)) || CanCast(types.Array(types.Int), types.Map(types.Int, types.Int)) {
		t.Error("a cast Flink refuses is allowed")
	}
	two := must(ArrayCtor([]*Expr{i32(1), i32(2)}))
	ev, err := Compile(mustResolve(t, "ELEMENT", two), utcEnv)
	if err != nil {
		t.Fatal(err)
	}
	b := batchOf(types.Schema{{Name: "x", Type: types.Int}}, column(types.Int, []any{int64(1)}))
	defer b.Release()
	if _, err := ev.Eval(b); err == nil || !strings.Contains(err.Error(), "Array has more than one element.") {
		t.Errorf("ELEMENT of two elements: %v", err)
	}
}

// TestCompositeColumns evaluates field access, subscripts and CARDINALITY
// over columns with NULLs at several batch sizes.
func TestCompositeColumns(t *testing.T) {
	person := types.Row(types.Field{Name: "id", Type: types.BigInt}, types.Field{Name: "name", Type: types.String})
	pv := types.AppendComposite(nil, person, nil, []any{int64(7), nil})
	tags := types.Array(types.String)
	tv := types.AppendComposite(nil, tags, nil, []any{"a", nil, "c"})
	cases := []fnCase{
		{name: "CARDINALITY", args: []*Expr{col(0, tags)}, cols: []types.DataType{tags}, vals: []any{tv}, want: "3"},
		{name: "ELEMENT", args: []*Expr{col(0, types.Array(types.Int))}, cols: []types.DataType{types.Array(types.Int)},
			vals: []any{types.AppendComposite(nil, types.Array(types.Int), nil, []any{int64(5)})}, want: "5"},
		{name: "=", args: []*Expr{col(0, person), col(1, person)}, cols: []types.DataType{person, person}, vals: []any{pv, pv}, want: "TRUE"},
	}
	runFnCases(t, utcEnv, cases)
	for _, n := range []int{1, 7, 4096} {
		vals := make([]any, n)
		tvals := make([]any, n)
		for i := range vals {
			if i%3 != 2 {
				vals[i], tvals[i] = pv, tv
			}
		}
		b := batchOf(types.Schema{{Name: "p", Type: person}, {Name: "t", Type: tags}}, column(person, vals), column(tags, tvals))
		id, _ := FieldAccess(col(0, person), "id")
		name, _ := FieldAccess(col(0, person), "name")
		for _, c := range []struct {
			e    *Expr
			want string
		}{
			{id, "7"}, {name, "NULL"},
			{must(Item(col(1, tags), i32(1))), "a"},
			{must(Item(col(1, tags), i32(2))), "NULL"},
			{must(Item(col(1, tags), i32(4))), "NULL"},
			{Cast(col(0, person), types.String), "(7, null)"},
		} {
			ev, err := Compile(c.e, utcEnv)
			if err != nil {
				t.Fatal(err)
			}
			out, err := ev.Eval(b)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				s, isNull := types.FormatValue(out, i, ev.Type(), nil)
				want := c.want
				if i%3 == 2 {
					want = "NULL"
				}
				if isNull {
					s = "NULL"
				}
				if s != want {
					t.Fatalf("%v row %d = %s, want %s", c.e, i, s, want)
				}
			}
			out.Release()
		}
		b.Release()
	}
}

// BenchmarkCompositeFieldAccess reads one field of a 4-field ROW column
// and one element of an ARRAY column, 4096 rows a batch.
func BenchmarkCompositeFieldAccess(b *testing.B) {
	person := types.Row(types.Field{Name: "id", Type: types.BigInt}, types.Field{Name: "name", Type: types.String},
		types.Field{Name: "city", Type: types.String}, types.Field{Name: "ts", Type: types.Timestamp(3)})
	arr := types.Array(types.BigInt)
	const n = 4096
	pv, av := make([]any, n), make([]any, n)
	for i := range pv {
		pv[i] = types.AppendComposite(nil, person, nil, []any{int64(i), "somebody", "Portland", int64(i) * 1e6})
		av[i] = types.AppendComposite(nil, arr, nil, []any{int64(i), int64(i + 1), int64(i + 2)})
	}
	batch := batchOf(types.Schema{{Name: "p", Type: person}, {Name: "a", Type: arr}}, column(person, pv), column(arr, av))
	defer batch.Release()
	city, _ := FieldAccess(col(0, person), "city")
	for _, c := range []struct {
		name string
		e    *Expr
	}{{"row-field", city}, {"array-item", must(Item(col(1, arr), i32(2)))}} {
		b.Run(c.name, func(b *testing.B) {
			ev, err := Compile(c.e, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				out, err := ev.Eval(batch)
				if err != nil {
					b.Fatal(err)
				}
				out.Release()
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// TestStrToMapBadDelimiter: a delimiter that is not a pattern fails the
// query, naming it, as Java's PatternSyntaxException does.
func TestStrToMapBadDelimiter(t *testing.T) {
	e := mustResolve(t, "STR_TO_MAP", str("a=1"), str("("), str("="))
	ev, err := Compile(e, utcEnv)
	if err != nil {
		t.Fatal(err)
	}
	b := batchOf(types.Schema{{Name: "x", Type: types.Int}}, column(types.Int, []any{int64(1)}))
	defer b.Release()
	if out, err := ev.Eval(b); err == nil {
		out.Release()
		t.Fatal("STR_TO_MAP with delimiter '(' evaluated")
	} else if !strings.Contains(err.Error(), `the delimiter "(" is not a valid regular expression`) {
		t.Errorf("error %q", err)
	}
}
