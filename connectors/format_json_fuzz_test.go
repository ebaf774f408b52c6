package connectors

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/braidflow/braid/types"
)

// fuzzJSONSchema has a column of every kind the json format converts.
var fuzzJSONSchema = types.Schema{
	{Name: "i", Type: types.Int}, {Name: "b", Type: types.BigInt}, {Name: "d", Type: types.Double},
	{Name: "f", Type: types.Float}, {Name: "s", Type: types.String}, {Name: "ok", Type: types.Boolean},
	{Name: "dec", Type: types.Decimal(10, 2)}, {Name: "ts", Type: types.Timestamp(3)},
	{Name: "ltz", Type: types.TimestampLTZ(3)}, {Name: "day", Type: types.Date}, {Name: "t", Type: types.Time(0)},
	{Name: "bin", Type: types.Bytes},
	{Name: "p", Type: types.Row(types.Field{Name: "id", Type: types.BigInt}, types.Field{Name: "name", Type: types.String},
		types.Field{Name: "tags", Type: types.Array(types.String)})},
	{Name: "arr", Type: types.Array(types.Int)}, {Name: "m", Type: types.Map(types.String, types.Double)},
	{Name: "im", Type: types.Map(types.Int, types.Array(types.Date))}, {Name: "ms", Type: types.Multiset(types.String)},
}

// FuzzJSONFormat feeds arbitrary record values to the json format's
// decoder, strict and lenient: it never panics; a value that decodes to a
// row encodes back and decodes again to the same row.
func FuzzJSONFormat(f *testing.F) {
	for _, seed := range []string{
		`{"i":1,"b":2,"d":1.5,"f":2.5,"s":"x","ok":true,"dec":12.34,"ts":"2025-05-01 10:00:00.123","ltz":"2025-05-01 10:00:00Z","day":"2025-05-01","t":"10:00:00","bin":"AQI="}`,
		`{"i":null}`, `{}`, `[]`, `null`, `"x"`, `{"i":1e400}`, `{"i":"12"}`, `{"dec":1e30}`,
		`{"ts":"not a time"}`, `{"s":"\u00e9\ud800"}`, `{"i":-2147483649}`, `{"b":9223372036854775808}`,
		`{"p":{"id":1,"name":"x","tags":["a",null]},"arr":[1,null,3],"m":{"k":1.5,"j":null},"im":{"7":["2025-05-01"]},"ms":{"a":2}}`,
		`{"p":{"zz":1}}`, `{"p":[]}`, `{"arr":{}}`, `{"m":{"k":1,"k":2}}`, `{"ms":{"a":null}}`, `{"im":{"x":[]}}`,
		`{"arr":[[1]]}`, `{"p":null,"arr":null}`,
		`{"d":"NaN"}`, `{"f":3.5e38}`, `{"i":1,"i":2}`, `{"bin":"!!"}`, strings.Repeat(`{"a":`, 200),
		`{"x":tru}`, `{"x":01}`, `{"x":1.}`, `{"x":"\q"}`, `{"x":"a	b"}`, `{"x":[1,}`, `{"a\u0069":1}`, `{"i":1} x`, "{\"s\":\"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		// The record reader refuses exactly what encoding/json refuses.
		var obj map[string]json.RawMessage
		stdErr := json.Unmarshal(v, &obj)
		scanErr := scanJSONObject(v, func(_, raw []byte) error { return validJSONValue(raw) })
		if (stdErr == nil && obj != nil) != (scanErr == nil) {
			t.Fatalf("%q: encoding/json says %v (object %v), the record reader %v", v, stdErr, obj != nil, scanErr)
		}
		for _, strict := range []bool{true, false} {
			d := newJSONDecoder(fuzzJSONSchema, strict, !strict)
			ok, err := d.Decode(v)
			if err != nil || !ok {
				d.Release()
				continue
			}
			b, _ := d.Flush()
			d.Release()
			if b.NumRows() != 1 {
				t.Fatalf("one decoded value made %d rows", b.NumRows())
			}
			first := formatted(b)
			enc := newJSONEncoder(fuzzJSONSchema)
			out := enc.AppendRow(nil, b, 0)
			b.Release()
			d2 := newJSONDecoder(fuzzJSONSchema, false, false)
			ok, err = d2.Decode(out)
			if err != nil || !ok {
				d2.Release()
				t.Fatalf("%s decoded, but its encoding %s does not: %v", v, out, err)
			}
			b2, _ := d2.Flush()
			d2.Release()
			again := formatted(b2)
			b2.Release()
			if strings.Join(first, "") != strings.Join(again, "") {
				t.Fatalf("%s: decoded %v, encoded %s, decoded again %v", v, first, out, again)
			}
		}
	})
}

// TestJSONComposite reads nested objects and arrays into ROW, ARRAY, MAP
// and MULTISET columns and writes them back as Flink's json format does.
func TestJSONComposite(t *testing.T) {
	schema := types.Schema{
		{Name: "p", Type: types.Row(types.Field{Name: "id", Type: types.BigInt}, types.Field{Name: "tags", Type: types.Array(types.String)})},
		{Name: "m", Type: types.Map(types.String, types.Int)},
		{Name: "ms", Type: types.Multiset(types.String)},
		{Name: "ts", Type: types.Array(types.Timestamp(3))},
	}
	in := `{"p":{"tags":["a",null],"extra":true,"id":7},"m":{"y":2,"x":null},"ms":{"e":3},"ts":["2025-05-01 10:00:00.5"]}`
	d := newJSONDecoder(schema, false, false)
	defer d.Release()
	if ok, err := d.Decode([]byte(in)); !ok || err != nil {
		t.Fatalf("Decode: %v, %v", ok, err)
	}
	b, _ := d.Flush()
	defer b.Release()
	var got []string
	for i, f := range schema {
		s, _ := types.FormatValue(b.Column(i), 0, f.Type, nil)
		got = append(got, s)
	}
	if want := "(7, [a, null])|{y=2, x=null}|{e=3}|[2025-05-01 10:00:00.500]"; strings.Join(got, "|") != want {
		t.Errorf("decoded %q, want %q", strings.Join(got, "|"), want)
	}
	out := string(newJSONEncoder(schema).AppendRow(nil, b, 0))
	if want := `{"p":{"id":7,"tags":["a",null]},"m":{"y":2,"x":null},"ms":{"e":3},"ts":["2025-05-01 10:00:00.5"]}`; out != want {
		t.Errorf("encoded %s, want %s", out, want)
	}
	for _, bad := range []string{`{"p":[1]}`, `{"m":[1]}`, `{"p":{"id":"x"}}`, `{"ms":{"e":null}}`} {
		d := newJSONDecoder(schema, false, false)
		if _, err := d.Decode([]byte(bad)); err == nil {
			t.Errorf("%s decoded", bad)
		}
		d.Release()
	}
}
