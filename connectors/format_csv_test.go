package connectors

import (
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

// csvFormat reads the csv format of a table with the given options.
func csvFormat(t *testing.T, schema types.Schema, kv ...string) jobgraph.FormatSpec {
	t.Helper()
	opts := map[string]string{"format": "csv"}
	for i := 0; i+1 < len(kv); i += 2 {
		opts[kv[i]] = kv[i+1]
	}
	f, err := formatFor(&catalog.Table{Database: "db", Name: "c", Options: opts}, "value.", schema)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// decodeAll decodes values with f and returns the rows and the error of
// each value ("" when none).
func decodeAll(f jobgraph.FormatSpec, schema types.Schema, values ...string) ([]string, []string) {
	d := newRowDecoder(f, schema)
	defer d.Release()
	errs := make([]string, len(values))
	for i, v := range values {
		if _, err := d.Decode([]byte(v)); err != nil {
			errs[i] = err.Error()
		}
	}
	b, ok := d.Flush()
	if !ok {
		return nil, errs
	}
	defer b.Release()
	return schemaRows(schema, b), errs
}

func TestCSVDecode(t *testing.T) {
	schema := types.Schema{{Name: "id", Type: types.BigInt}, {Name: "s", Type: types.String}, {Name: "ok", Type: types.Boolean},
		{Name: "amount", Type: types.Decimal(10, 2)}, {Name: "ts", Type: types.Timestamp(3)}, {Name: "tags", Type: types.Array(types.Int)}}
	f := csvFormat(t, schema)
	rows, errs := decodeAll(f, schema,
		`1,plain,true,12.5,2024-01-02 03:04:05.678,1;2;3`,
		`2,"quoted, with ""quotes""",FALSE,-0.01,2024-01-02T03:04:05,`,
		`3,,yes,0,2024-01-02 00:00:00,7`,
		"4,x,true,1,2024-01-02 00:00:00,1,extra\n",
		``,
	)
	want := []string{
		"+I[1, plain, TRUE, 12.50, 2024-01-02 03:04:05.678, [1, 2, 3]]",
		`+I[2, quoted, with "quotes", FALSE, -0.01, 2024-01-02 03:04:05.000, []]`,
		"+I[3, , FALSE, 0.00, 2024-01-02 00:00:00.000, [7]]",
		"+I[4, x, TRUE, 1.00, 2024-01-02 00:00:00.000, [1]]",
	}
	if !equalStrings(rows, want) || strings.Join(errs, "") != "" {
		t.Errorf("rows:\n%s\nwant:\n%s\nerrors: %q", strings.Join(rows, "\n"), strings.Join(want, "\n"), errs)
	}

	// Errors: too few fields (Flink's message), a field that does not
	// convert, an open quote.
	_, errs = decodeAll(f, schema, `1,a`, `x,a,true,1,2024-01-02 00:00:00,1`, `1,"open,true,1,2024-01-02 00:00:00,1`)
	for i, w := range []string{
		"Row length mismatch. 6 fields expected but was 2.",
		"field 'id': cannot read 'x' as BIGINT",
		"bad CSV: unterminated quoted field",
	} {
		if !strings.Contains(errs[i], w) {
			t.Errorf("error %d = %q, want %q", i, errs[i], w)
		}
	}

	// ignore-parse-errors: missing and bad fields are NULL, a broken line
	// is skipped.
	f = csvFormat(t, schema, "csv.ignore-parse-errors", "true")
	rows, errs = decodeAll(f, schema, `1,a`, `x,a,true,bad,2024-01-02 00:00:00,1`, `1,"open`)
	want = []string{"+I[1, a, NULL, NULL, NULL, NULL]", "+I[NULL, a, TRUE, NULL, 2024-01-02 00:00:00.000, [1]]"}
	if !equalStrings(rows, want) || strings.Join(errs, "") != "" {
		t.Errorf("ignore-parse-errors: %q %q", rows, errs)
	}
}

func TestCSVOptions(t *testing.T) {
	schema := types.Schema{{Name: "a", Type: types.String}, {Name: "b", Type: types.Int}}
	f := csvFormat(t, schema, "csv.field-delimiter", `\t`, "csv.null-literal", "n/a", "csv.allow-comments", "true",
		"csv.escape-character", `\\`, "csv.disable-quote-character", "true")
	rows, errs := decodeAll(f, schema, "x\\\ty\t1", "# a comment", "n/a\tn/a", `"q"	2`)
	want := []string{"+I[x\ty, 1]", "+I[NULL, NULL]", `+I["q", 2]`}
	if !equalStrings(rows, want) || strings.Join(errs, "") != "" {
		t.Errorf("options: %q %q", rows, errs)
	}
	f = csvFormat(t, schema, "csv.quote-character", "'", "csv.array-element-delimiter", "|")
	rows, _ = decodeAll(f, schema, `'a,b',3`)
	if !equalStrings(rows, []string{"+I[a,b, 3]"}) {
		t.Errorf("quote-character: %q", rows)
	}

	for _, tc := range []struct {
		kv   []string
		want string
	}{
		{[]string{"csv.field-delimiter", ";;"}, "option 'csv.field-delimiter' must be a string with single character, but was: ;;"},
		{[]string{"csv.quote-character", "'", "csv.disable-quote-character", "true"}, "options 'csv.quote-character' and 'csv.disable-quote-character' cannot both be set"},
		{[]string{"csv.allow-comments", "maybe"}, "option 'csv.allow-comments' must be 'true' or 'false'"},
		{[]string{"csv.fail-on-missing-field", "true"}, "option 'csv.fail-on-missing-field' is not an option of the 'csv' format"},
		{[]string{"json.ignore-parse-errors", "true"}, "option 'json.ignore-parse-errors' belongs to another format than the table's 'csv'"},
		{[]string{"csv.field-delimiter", `"`}, "must differ"},
	} {
		opts := map[string]string{"format": "csv"}
		for i := 0; i+1 < len(tc.kv); i += 2 {
			opts[tc.kv[i]] = tc.kv[i+1]
		}
		_, err := formatFor(&catalog.Table{Database: "db", Name: "c", Options: opts}, "value.", schema)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.kv, err, tc.want)
		}
	}
	_, err := formatFor(&catalog.Table{Database: "db", Name: "c", Options: map[string]string{"format": "csv"}}, "value.",
		types.Schema{{Name: "r", Type: types.Row(types.Field{Name: "x", Type: types.Int})}})
	if err == nil || !strings.Contains(err.Error(), "column r: the 'csv' format does not support type") {
		t.Errorf("ROW column: %v", err)
	}
}

// TestCSVRoundTrip: what the encoder writes the decoder reads back, with
// the characters that need quoting or escaping, and NULL as the null
// literal.
func TestCSVRoundTrip(t *testing.T) {
	schema := types.Schema{{Name: "id", Type: types.BigInt}, {Name: "s", Type: types.String}, {Name: "tags", Type: types.Array(types.String)}}
	ib, sb := array.NewInt64Builder(memory.DefaultAllocator), array.NewStringBuilder(memory.DefaultAllocator)
	texts := []string{"plain", "a,b", `say "hi"`, "two\nlines", `back\slash`, "pipe|d", ""}
	for i, s := range texts {
		ib.Append(int64(i))
		sb.Append(s)
	}
	ib.AppendNull()
	sb.AppendNull()
	ids, strs := ib.NewArray(), sb.NewArray()
	ib.Release()
	sb.Release()
	// tags: the column of texts again, as one-element arrays.
	tb := array.NewBinaryBuilder(memory.DefaultAllocator, arrow.BinaryTypes.Binary)
	for i := range texts {
		enc, err := jsonComposite(append(appendJSONString([]byte("["), texts[i]), ",null]"...), schema[2].Type)
		if err != nil {
			t.Fatal(err)
		}
		tb.Append(enc)
	}
	tb.AppendNull()
	tags := tb.NewArray()
	tb.Release()
	b := types.NewInsertBatch(schema.ArrowSchema(), []arrow.Array{ids, strs, tags}, len(texts)+1)
	ids.Release()
	strs.Release()
	tags.Release()
	defer b.Release()
	for _, kv := range [][]string{
		{"csv.null-literal", "NULL"},
		{"csv.null-literal", "NULL", "csv.escape-character", "\\"},
		{"csv.null-literal", "-", "csv.disable-quote-character", "true", "csv.escape-character", "\\", "csv.field-delimiter", "|"},
	} {
		f := csvFormat(t, schema, kv...)
		enc := newRowEncoder(f, schema)
		var values []string
		for r := range b.NumRows() {
			values = append(values, string(enc.AppendRow(nil, b, r)))
		}
		rows, errs := decodeAll(f, schema, values...)
		if !equalStrings(rows, schemaRows(schema, b)) || strings.Join(errs, "") != "" {
			t.Errorf("%v: wrote %q\nread %q %q\nwant %q", kv, values, rows, errs, schemaRows(schema, b))
		}
	}
	// Quoting as written with the defaults.
	f := csvFormat(t, schema)
	for _, tc := range []struct{ in, want string }{
		{`a,b`, `"a,b"`}, {`say "hi"`, `"say ""hi"""`}, {"two\nlines", "\"two\nlines\""}, {"plain", "plain"},
	} {
		got := string(newCSVEncoder(schema, *f.CSV).appendField(nil, []byte(tc.in)))
		if got != tc.want {
			t.Errorf("field %q written %q, want %q", tc.in, got, tc.want)
		}
	}
}

// schemaRows formats the rows of b, of schema, as the print sink does.
func schemaRows(schema types.Schema, b types.Batch) []string {
	s := string(appendRows(nil, "", schema, b, time.UTC))
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// TestKafkaCSV: a 'kafka' table with the csv format reads CSV record values
// and writes what it reads back.
func TestKafkaCSV(t *testing.T) {
	b := startBroker(t)
	kafkaTopic(t, b.Addrs(), "csvin", 1)
	kafkaTopic(t, b.Addrs(), "csvout", 1)
	produce(t, b.Addrs(), "csvin", 0, `1,"a,b",0.5`, `2,,1.5`, `# skipped`, `3,n/a,2`)
	tbl := func(topic string) *catalog.Table {
		return &catalog.Table{Database: "db", Name: topic, Options: map[string]string{
			"connector": "kafka", "topic": topic, "properties.bootstrap.servers": strings.Join(b.Addrs(), ","),
			"format": "csv", "csv.allow-comments": "true", "csv.null-literal": "n/a"},
			Columns: []catalog.Column{{Name: "id", Type: types.BigInt}, {Name: "name", Type: types.String}, {Name: "x", Type: types.Double}}}
	}
	kt, err := kafkaTableFor(tbl("csvin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := kt.source.Validate(); err != nil {
		t.Fatal(err)
	}
	rows, errs := readKafka(t, kt.source, 1)
	want := []string{"+I[1, a,b, 0.5]", "+I[2, , 1.5]", "+I[3, NULL, 2.0]"}
	if errs[0] != nil || !equalStrings(rows[0], want) {
		t.Fatalf("read %q %v, want %q", rows[0], errs[0], want)
	}

	out, err := kafkaTableFor(tbl("csvout"))
	if err != nil {
		t.Fatal(err)
	}
	sink := NewKafkaSink(out.sink)
	if err := sink.Open(&operators.Context{}); err != nil {
		t.Fatal(err)
	}
	batch := testBatch(0, 3, types.Insert)
	defer batch.Release()
	if err := sink.Process(0, batch, nil); err != nil {
		t.Fatal(err)
	}
	if err := sink.EndInput(0, nil); err != nil {
		t.Fatal(err)
	}
	_ = sink.Close()
	rows, errs = readKafka(t, out.source, 1)
	if errs[0] != nil || !equalStrings(rows[0], formatted(batch)) {
		t.Errorf("read back %q %v, want %q", rows[0], errs[0], formatted(batch))
	}
}
