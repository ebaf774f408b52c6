package connectors

import (
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
}

// FuzzJSONFormat feeds arbitrary record values to the json format's
// decoder, strict and lenient: it never panics; a value that decodes to a
// row encodes back and decodes again to the same row.
func FuzzJSONFormat(f *testing.F) {
	for _, seed := range []string{
		`{"i":1,"b":2,"d":1.5,"f":2.5,"s":"x","ok":true,"dec":12.34,"ts":"2025-05-01 10:00:00.123","ltz":"2025-05-01 10:00:00Z","day":"2025-05-01","t":"10:00:00","bin":"AQI="}`,
		`{"i":null}`, `{}`, `[]`, `null`, `"x"`, `{"i":1e400}`, `{"i":"12"}`, `{"dec":1e30}`,
		`{"ts":"not a time"}`, `{"s":"\u00e9\ud800"}`, `{"i":-2147483649}`, `{"b":9223372036854775808}`,
		`{"d":"NaN"}`, `{"f":3.5e38}`, `{"i":1,"i":2}`, `{"bin":"!!"}`, strings.Repeat(`{"a":`, 200),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
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
