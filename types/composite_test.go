package types

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

func TestCompositeTypeString(t *testing.T) {
	person := Row(Field{Name: "id", Type: BigInt}, Field{Name: "name", Type: String})
	cases := []struct {
		t    DataType
		want string
	}{
		{Array(Int), "ARRAY<INT>"},
		{Array(Int.WithNullable(false)).WithNullable(false), "ARRAY<INT NOT NULL> NOT NULL"},
		{Map(String, Int), "MAP<STRING, INT>"},
		{Multiset(VarChar(10)), "MULTISET<VARCHAR(10)>"},
		{person, "ROW<`id` BIGINT, `name` STRING>"},
		{Row(Field{Name: "a`b", Type: Decimal(10, 2)}), "ROW<`a``b` DECIMAL(10, 2)>"},
		{Array(person), "ARRAY<ROW<`id` BIGINT, `name` STRING>>"},
		{Map(String, Array(Map(Int, TimestampLTZ(3)))), "MAP<STRING, ARRAY<MAP<INT, TIMESTAMP_LTZ(3)>>>"},
		{Row(), "ROW<>"},
	}
	for _, c := range cases {
		if got := c.t.String(); got != c.want {
			t.Errorf("String = %q, want %q", got, c.want)
		}
		back, err := ParseType(c.want)
		if err != nil {
			t.Errorf("ParseType(%q): %v", c.want, err)
			continue
		}
		if back != c.t {
			t.Errorf("ParseType(%q) = %v, not the same type", c.want, back)
		}
		js, err := json.Marshal(c.t)
		if err != nil {
			t.Fatal(err)
		}
		var dt DataType
		if err := json.Unmarshal(js, &dt); err != nil || dt != c.t {
			t.Errorf("JSON round trip of %v: %v, %v (%s)", c.t, dt, err, js)
		}
	}
	if Array(Int) == Array(BigInt) || Array(Int) == Multiset(Int) || Array(Int) == Array(Int.WithNullable(false)) {
		t.Error("distinct composite types compare equal")
	}
	if person.FieldIndex("name") != 1 || person.FieldIndex("Name") != -1 {
		t.Error("FieldIndex is wrong")
	}
}

func TestParseTypeRefusesBadComposite(t *testing.T) {
	for _, s := range []string{
		"ARRAY<INT", "ARRAY<>", "MAP<INT>", "ROW<id INT>", "ROW<`id` INT,>", "ARRAY<INT>>",
		"MAP<INT, BOGUS>", "ROW<`a` INT `b` INT>",
		strings.Repeat("ARRAY<", MaxTypeDepth+5) + "INT" + strings.Repeat(">", MaxTypeDepth+5),
	} {
		if _, err := ParseType(s); err == nil {
			t.Errorf("ParseType(%q) succeeded", s)
		}
	}
}

func TestCompositeValueRoundTrip(t *testing.T) {
	person := Row(Field{Name: "id", Type: BigInt}, Field{Name: "name", Type: String}, Field{Name: "d", Type: Decimal(5, 2)})
	pv := AppendComposite(nil, person, nil, []any{int64(7), "abc", decimal128.FromI64(123)})
	arr := Array(person)
	av := AppendComposite(nil, arr, nil, []any{pv, nil, pv})
	m := Map(String, Array(Int))
	iv := AppendComposite(nil, Array(Int), nil, []any{int64(1), nil, int64(-3)})
	mv := AppendComposite(nil, m, []any{"a", "b"}, []any{iv, nil})
	ms := Multiset(String)
	msv := AppendComposite(nil, ms, []any{"x"}, []any{int64(2)})
	cases := []struct {
		t    DataType
		enc  []byte
		want string
	}{
		{person, pv, "(7, abc, 1.23)"},
		{arr, av, "[(7, abc, 1.23), null, (7, abc, 1.23)]"},
		{m, mv, "{a=[1, null, -3], b=null}"},
		{ms, msv, "{x=2}"},
		{Array(Double), AppendComposite(nil, Array(Double), nil, []any{1.5, 100.0}), "[1.5, 100.0]"},
		{Array(Boolean), AppendComposite(nil, Array(Boolean), nil, []any{true, false}), "[TRUE, FALSE]"},
		{Array(Date), AppendComposite(nil, Array(Date), nil, []any{int64(1)}), "[1970-01-02]"},
		{Array(Int), AppendComposite(nil, Array(Int), nil, []any{}), "[]"},
	}
	for _, c := range cases {
		if err := ValidateComposite(c.t, c.enc); err != nil {
			t.Errorf("%v: %v", c.t, err)
		}
		if got := FormatComposite(c.t, c.enc, nil); got != c.want {
			t.Errorf("%v prints %q, want %q", c.t, got, c.want)
		}
		// Every strict prefix and every extension is refused, never a panic.
		for i := 0; i < len(c.enc); i++ {
			if ValidateComposite(c.t, c.enc[:i]) == nil && i != len(c.enc) {
				// A shorter prefix can be a value itself only for a ROW of
				// all-NULL-able tails; none of these cases has one.
				t.Errorf("%v: prefix of %d bytes accepted", c.t, i)
			}
		}
		if ValidateComposite(c.t, append(append([]byte(nil), c.enc...), 0)) == nil {
			t.Errorf("%v: trailing byte accepted", c.t)
		}
	}
	_, vals, err := DecodeComposite(person, pv)
	if err != nil || vals[0] != int64(7) || vals[1] != "abc" {
		t.Errorf("DecodeComposite = %v, %v", vals, err)
	}
	for i, want := range []any{int64(7), "abc", decimal128.FromI64(123)} {
		if v, ok, err := CompositeElem(person, pv, i); err != nil || !ok || v != want {
			t.Errorf("CompositeElem(person, %d) = %v, %v, %v", i, v, ok, err)
		}
	}
	if v, ok, err := CompositeElem(arr, av, 1); err != nil || !ok || v != nil {
		t.Errorf("CompositeElem(arr, 1) = %v, %v, %v; want a NULL element", v, ok, err)
	}
	if _, ok, err := CompositeElem(arr, av, 3); err != nil || ok {
		t.Errorf("CompositeElem(arr, 3) = %v, %v; want no element", ok, err)
	}
	if n, err := CompositeLen(arr, av); err != nil || n != 3 {
		t.Errorf("CompositeLen = %d, %v", n, err)
	}
}

func TestValidateCompositeRefusesHugeCounts(t *testing.T) {
	// A count far beyond what the bytes can hold is refused before any
	// allocation.
	enc := []byte{0xff, 0xff, 0xff, 0xff, 0x0f}
	if err := ValidateComposite(Array(Int), enc); err == nil {
		t.Fatal("accepted")
	}
	if _, _, err := DecodeComposite(Map(Int, Int), enc); err == nil {
		t.Fatal("accepted")
	}
}

func FuzzValidateComposite(f *testing.F) {
	typ := Map(String, Array(Row(Field{Name: "a", Type: Int}, Field{Name: "b", Type: String})))
	row := AppendComposite(nil, typ.MapValue().Elem(), nil, []any{int64(1), "x"})
	arr := AppendComposite(nil, typ.MapValue(), nil, []any{row, nil})
	f.Add(AppendComposite(nil, typ, []any{"k"}, []any{arr}))
	f.Add([]byte{})
	f.Add([]byte{1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if ValidateComposite(typ, b) != nil {
			return
		}
		s := FormatComposite(typ, b, nil)
		if s == "?" {
			t.Fatalf("valid value %x does not print", b)
		}
	})
}
