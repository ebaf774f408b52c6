package connectors

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// rowDecoder turns record values of one format into rows of a schema,
// appended to Arrow builders until Flush hands them out as one batch.
type rowDecoder interface {
	// Decode appends the row of one record value. It reports whether a
	// row was appended: a nil value (a tombstone) and a value the format
	// skips (with its ignore-parse-errors) append nothing.
	Decode(v []byte) (bool, error)
	// Rows returns how many rows are buffered.
	Rows() int
	// Flush returns the buffered rows as one batch, which the caller owns,
	// and starts a new one. ok is false when no row is buffered.
	Flush() (b types.Batch, ok bool)
	// Release frees the builders.
	Release()
}

// rowEncoder writes rows as record values of one format.
type rowEncoder interface {
	// AppendRow appends the value of row r of b to dst.
	AppendRow(dst []byte, b types.Batch, r int) []byte
	// project makes the encoder read its fields from batch columns cols.
	project(cols []int) rowEncoder
}

var (
	_ rowDecoder = (*jsonDecoder)(nil)
	_ rowEncoder = (*jsonEncoder)(nil)
)

// formatNames are the value formats of a 'kafka' table.
var formatNames = []string{jobgraph.FormatJSON, jobgraph.FormatCSV, jobgraph.FormatRaw, jobgraph.FormatDebeziumJSON}

// formatOptions are the options of each format, without the format's
// prefix.
var formatOptions = map[string][]string{
	jobgraph.FormatJSON: {"fail-on-missing-field", "ignore-parse-errors"},
	jobgraph.FormatCSV: {"field-delimiter", "quote-character", "disable-quote-character", "allow-comments",
		"ignore-parse-errors", "array-element-delimiter", "escape-character", "null-literal"},
	jobgraph.FormatRaw:          {"charset", "endianness"},
	jobgraph.FormatDebeziumJSON: {"schema-include", "ignore-parse-errors", "timestamp-format.standard"},
}

// isFormatOption reports whether k is an option of some format, under
// prefix ("" or "value."): the kafka connector leaves its check to
// formatFor.
func isFormatOption(k, prefix string) bool {
	for _, f := range formatNames {
		if strings.HasPrefix(k, prefix+f+".") {
			return true
		}
	}
	return false
}

// formatFor reads the format of t's record values: '<prefix>format' (for
// the value, prefix "value." also takes the plain 'format') and that
// format's options '<prefix><format>.<option>', and checks that schema's
// columns have types the format reads and writes. An option of another
// format is an error. Errors name the table and the option.
func formatFor(t *catalog.Table, prefix string, schema types.Schema) (jobgraph.FormatSpec, error) {
	name := tableName(t)
	opts := t.Options
	get := func(k string) string { return strings.TrimSpace(opts[k]) }
	bad := func(k, format string, args ...any) error {
		return fmt.Errorf("table %s: option '%s' %s", name, k, fmt.Sprintf(format, args...))
	}
	format, fk := get(prefix+"format"), prefix+"format"
	if prefix == "value." {
		format, fk = get("format"), "format"
		if v := get("value.format"); v != "" {
			if format != "" && format != v {
				return jobgraph.FormatSpec{}, bad("value.format", "is '%s' but 'format' is '%s'", v, format)
			}
			format, fk = v, "value.format"
		}
	}
	if format == "" {
		return jobgraph.FormatSpec{}, bad(fk, "is required (%s)", strings.Join(formatNames, ", "))
	}
	if !contains(formatNames, format) {
		return jobgraph.FormatSpec{}, bad(fk, "'%s' is not supported (supported: %s)", format, strings.Join(formatNames, ", "))
	}
	// Format options under both spellings: 'json.x' and 'value.json.x'.
	own, ownKey := map[string]string{}, map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok && prefix == "value." {
			rest, ok = k, true
		}
		if !ok || !isFormatOption(rest, "") {
			continue
		}
		opt, found := strings.CutPrefix(rest, format+".")
		if !found {
			return jobgraph.FormatSpec{}, bad(k, "belongs to another format than the table's '%s'", format)
		}
		if !contains(formatOptions[format], opt) {
			return jobgraph.FormatSpec{}, bad(k, "is not an option of the '%s' format (options: %s)", format, strings.Join(formatOptions[format], ", "))
		}
		own[opt], ownKey[opt] = opts[k], k
	}
	f := jobgraph.FormatSpec{Name: format}
	boolOpt := func(opt string) (bool, error) {
		k, ok := ownKey[opt]
		if !ok {
			return false, nil
		}
		v, err := boolOption(map[string]string{k: own[opt]}, k)
		if err != nil {
			err = fmt.Errorf("table %s: %w", name, err)
		}
		return v, err
	}
	var err error
	if f.IgnoreParseErrors, err = boolOpt("ignore-parse-errors"); err != nil {
		return jobgraph.FormatSpec{}, err
	}
	switch format {
	case jobgraph.FormatJSON:
		if f.FailOnMissingField, err = boolOpt("fail-on-missing-field"); err != nil {
			return jobgraph.FormatSpec{}, err
		}
		if f.FailOnMissingField && f.IgnoreParseErrors {
			return jobgraph.FormatSpec{}, fmt.Errorf("table %s: 'json.fail-on-missing-field' and 'json.ignore-parse-errors' cannot both be true", name)
		}
	case jobgraph.FormatCSV:
		if f.CSV, err = csvFormatFor(name, own, ownKey, boolOpt); err != nil {
			return jobgraph.FormatSpec{}, err
		}
	case jobgraph.FormatDebeziumJSON:
		if f.SchemaInclude, err = boolOpt("schema-include"); err != nil {
			return jobgraph.FormatSpec{}, err
		}
		switch v, ok := own["timestamp-format.standard"]; {
		case !ok, strings.EqualFold(v, "SQL"):
		case strings.EqualFold(v, "ISO-8601"):
			f.ISOTimestamps = true
		default:
			return jobgraph.FormatSpec{}, bad(ownKey["timestamp-format.standard"], "must be 'SQL' or 'ISO-8601', got '%s'", v)
		}
	case jobgraph.FormatRaw:
		// NB: raw checks its one column itself, with Flink's messages.
		f.LittleEndian, err = rawFormatFor(name, own, ownKey, schema)
		return f, err
	}
	for _, c := range schema {
		if !formatSupports(format, c.Type) {
			return jobgraph.FormatSpec{}, fmt.Errorf("table %s: column %s: the '%s' format does not support type %v", name, c.Name, format, c.Type)
		}
	}
	return f, nil
}

// formatSupports reports whether format reads and writes t.
func formatSupports(format string, t types.DataType) bool {
	switch format {
	case jobgraph.FormatJSON, jobgraph.FormatDebeziumJSON:
		return jsonSupports(t)
	case jobgraph.FormatCSV:
		return csvSupports(t)
	}
	return false
}

// newRowDecoder returns the decoder of f's values into rows of schema.
func newRowDecoder(f jobgraph.FormatSpec, schema types.Schema) rowDecoder {
	switch f.Name {
	case jobgraph.FormatJSON:
		return newJSONDecoder(schema, f.FailOnMissingField, f.IgnoreParseErrors)
	case jobgraph.FormatCSV:
		return newCSVDecoder(schema, *f.CSV, f.IgnoreParseErrors)
	case jobgraph.FormatRaw:
		return newRawDecoder(schema, f.LittleEndian)
	case jobgraph.FormatDebeziumJSON:
		return newDebeziumDecoder(schema, f.SchemaInclude, f.IgnoreParseErrors)
	}
	panic(fmt.Sprintf("connectors: unknown format %q", f.Name))
}

// newRowEncoder returns the encoder of rows of schema as f's values.
func newRowEncoder(f jobgraph.FormatSpec, schema types.Schema) rowEncoder {
	switch f.Name {
	case jobgraph.FormatJSON:
		return newJSONEncoder(schema)
	case jobgraph.FormatCSV:
		return newCSVEncoder(schema, *f.CSV)
	case jobgraph.FormatRaw:
		return newRawEncoder(schema, f.LittleEndian)
	case jobgraph.FormatDebeziumJSON:
		row := newJSONEncoder(schema)
		row.isoTimestamps = f.ISOTimestamps
		return &debeziumEncoder{row: row}
	}
	panic(fmt.Sprintf("connectors: unknown format %q", f.Name))
}

// csvFormatFor reads the csv format's options (own, by option name without
// the prefix; ownKey gives each one's full name) with Flink's defaults and
// checks.
func csvFormatFor(table string, own, ownKey map[string]string, boolOpt func(string) (bool, error)) (*jobgraph.CSVFormat, error) {
	c := &jobgraph.CSVFormat{FieldDelimiter: ',', Quote: '"', ArrayElementDelimiter: ";"}
	char := func(opt string, dst *rune) error {
		v, ok := own[opt]
		if !ok {
			return nil
		}
		if strings.HasPrefix(v, `\`) {
			// '\t' and the like name a special character.
			if u, err := strconv.Unquote(`"` + v + `"`); err == nil {
				v = u
			}
		}
		if utf8.RuneCountInString(v) != 1 {
			return fmt.Errorf("table %s: option '%s' must be a string with single character, but was: %s", table, ownKey[opt], own[opt])
		}
		*dst, _ = utf8.DecodeRuneInString(v)
		return nil
	}
	if err := char("field-delimiter", &c.FieldDelimiter); err != nil {
		return nil, err
	}
	if err := char("quote-character", &c.Quote); err != nil {
		return nil, err
	}
	if err := char("escape-character", &c.Escape); err != nil {
		return nil, err
	}
	disable, err := boolOpt("disable-quote-character")
	if err != nil {
		return nil, err
	}
	if disable {
		if _, ok := own["quote-character"]; ok {
			// Flink: "Format cannot define a quote character and disabled
			// quote character at the same time."
			return nil, fmt.Errorf("table %s: options '%s' and '%s' cannot both be set", table, ownKey["quote-character"], ownKey["disable-quote-character"])
		}
		c.Quote = 0
	}
	if c.AllowComments, err = boolOpt("allow-comments"); err != nil {
		return nil, err
	}
	if v, ok := own["array-element-delimiter"]; ok {
		if v == "" {
			return nil, fmt.Errorf("table %s: option '%s' must not be empty", table, ownKey["array-element-delimiter"])
		}
		c.ArrayElementDelimiter = v
	}
	c.NullLiteral, c.HasNullLiteral = own["null-literal"]
	if c.FieldDelimiter == c.Quote || (c.Escape != 0 && (c.Escape == c.FieldDelimiter || c.Escape == c.Quote)) {
		return nil, fmt.Errorf("table %s: the csv field delimiter, quote character and escape character must differ", table)
	}
	return c, nil
}

// formatSinkError refuses writing table's values in f where Flink does.
func formatSinkError(f jobgraph.FormatSpec, table string) error {
	if f.Name == jobgraph.FormatDebeziumJSON && f.SchemaInclude {
		//lint:ignore ST1005 Flink's message, verbatim
		return fmt.Errorf("Debezium JSON serialization doesn't support 'debezium-json.schema-include' option been set to true. (table %s)", table)
	}
	return nil
}
