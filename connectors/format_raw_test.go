package connectors

import (
	"strings"
	"testing"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

func rawFormat(schema types.Schema, kv ...string) (jobgraph.FormatSpec, error) {
	opts := map[string]string{"format": "raw"}
	for i := 0; i+1 < len(kv); i += 2 {
		opts[kv[i]] = kv[i+1]
	}
	return formatFor(&catalog.Table{Database: "db", Name: "r", Options: opts}, "value.", schema)
}

func TestRawDecode(t *testing.T) {
	for _, tc := range []struct {
		typ    types.DataType
		kv     []string
		values []string
		want   []string
		err    string
	}{
		{types.String, nil, []string{"héllo", ""}, []string{"+I[héllo]", "+I[]"}, ""},
		{types.Bytes, nil, []string{"\x01\x02"}, []string{"+I[x'0102']"}, ""},
		{types.Int, nil, []string{"\x00\x00\x01\x02"}, []string{"+I[258]"}, ""},
		{types.Int, []string{"raw.endianness", "little-endian"}, []string{"\x02\x01\x00\x00"}, []string{"+I[258]"}, ""},
		{types.BigInt, nil, []string{"\xff\xff\xff\xff\xff\xff\xff\xfe"}, []string{"+I[-2]"}, ""},
		{types.SmallInt, nil, []string{"\x80\x00"}, []string{"+I[-32768]"}, ""},
		{types.TinyInt, nil, []string{"\xff"}, []string{"+I[-1]"}, ""},
		{types.Boolean, nil, []string{"\x00", "\x01"}, []string{"+I[FALSE]", "+I[TRUE]"}, ""},
		{types.Double, nil, []string{"\x3f\xf8\x00\x00\x00\x00\x00\x00"}, []string{"+I[1.5]"}, ""},
		{types.Int, nil, []string{"\x01"}, nil, "cannot read 1 bytes as INT: it takes 4"},
		{types.String, nil, []string{"\xff"}, nil, "not UTF-8"},
	} {
		schema := types.Schema{{Name: "v", Type: tc.typ}}
		f, err := rawFormat(schema, tc.kv...)
		if err != nil {
			t.Fatal(err)
		}
		rows, errs := decodeAll(f, schema, tc.values...)
		if tc.err != "" {
			if !strings.Contains(strings.Join(errs, ""), tc.err) {
				t.Errorf("%v %q: errors %q, want %q", tc.typ, tc.values, errs, tc.err)
			}
			continue
		}
		if !equalStrings(rows, tc.want) || strings.Join(errs, "") != "" {
			t.Errorf("%v %q: %q %q, want %q", tc.typ, tc.values, rows, errs, tc.want)
			continue
		}
		// What is read is written back byte for byte.
		d := newRowDecoder(f, schema)
		for _, v := range tc.values {
			_, _ = d.Decode([]byte(v))
		}
		b, _ := d.Flush()
		enc := newRowEncoder(f, schema)
		for r, v := range tc.values {
			if got := string(enc.AppendRow(nil, b, r)); got != v {
				t.Errorf("%v: wrote %q, want %q", tc.typ, got, v)
			}
		}
		b.Release()
		d.Release()
	}
	// A record without a value is a row of NULL.
	schema := types.Schema{{Name: "v", Type: types.String}}
	f, _ := rawFormat(schema)
	d := newRowDecoder(f, schema)
	defer d.Release()
	if ok, err := d.Decode(nil); !ok || err != nil {
		t.Errorf("nil value: %v %v", ok, err)
	}
}

func TestRawOptions(t *testing.T) {
	one := types.Schema{{Name: "v", Type: types.String}}
	for _, tc := range []struct {
		schema types.Schema
		kv     []string
		want   string
	}{
		{one, []string{"raw.charset", "utf-8"}, ""},
		{one, []string{"raw.charset", "ISO-8859-1"}, "option 'raw.charset' 'ISO-8859-1' is not supported: Braid's raw format reads and writes UTF-8 only"},
		{one, []string{"raw.endianness", "middle"}, "Unsupported endianness name: middle. Valid values of 'raw.endianness' option are 'big-endian' and 'little-endian'."},
		{one, []string{"raw.line-delimiter", "\n"}, "option 'raw.line-delimiter' is not an option of the 'raw' format"},
		{types.Schema{{Name: "a", Type: types.Int}, {Name: "b", Type: types.String}}, nil,
			"The 'raw' format only supports single physical column. However the defined schema contains multiple physical columns: [a INT, b STRING]"},
		{types.Schema{{Name: "d", Type: types.Date}}, nil, "The 'raw' format doesn't supports 'DATE' as column type."},
	} {
		_, err := rawFormat(tc.schema, tc.kv...)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.kv, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: %v, want %q", tc.kv, err, tc.want)
		}
	}
}

// TestKafkaRaw: a 'kafka' table with the raw format reads each record value
// as its one column and writes it back.
func TestKafkaRaw(t *testing.T) {
	b := startBroker(t)
	kafkaTopic(t, b.Addrs(), "logs", 1)
	produce(t, b.Addrs(), "logs", 0, `GET /a 200`, `GET /b, "quoted" 404`)
	tbl := &catalog.Table{Database: "db", Name: "logs", Options: map[string]string{
		"connector": "kafka", "topic": "logs", "properties.bootstrap.servers": strings.Join(b.Addrs(), ","), "format": "raw"},
		Columns: []catalog.Column{{Name: "line", Type: types.String}}}
	kt, err := kafkaTableFor(tbl)
	if err != nil {
		t.Fatal(err)
	}
	rows, errs := readKafka(t, kt.source, 1)
	want := []string{`+I[GET /a 200]`, `+I[GET /b, "quoted" 404]`}
	if errs[0] != nil || !equalStrings(rows[0], want) {
		t.Fatalf("read %q %v", rows[0], errs[0])
	}
	sink := NewKafkaSink(kt.sink)
	if err := sink.Open(&operators.Context{}); err != nil {
		t.Fatal(err)
	}
	d := newRowDecoder(kt.source.ValueFormat(), kt.source.Schema)
	_, _ = d.Decode([]byte("third line"))
	batch, _ := d.Flush()
	d.Release()
	defer batch.Release()
	if err := sink.Process(0, batch, nil); err != nil {
		t.Fatal(err)
	}
	if err := sink.EndInput(0, nil); err != nil {
		t.Fatal(err)
	}
	_ = sink.Close()
	rows, errs = readKafka(t, kt.source, 1)
	if errs[0] != nil || !equalStrings(rows[0], append(want, "+I[third line]")) {
		t.Errorf("read back %q %v", rows[0], errs[0])
	}
}
