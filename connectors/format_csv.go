package connectors

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// csvDecoder reads one CSV line per record value into a row of a schema,
// as Flink's 'csv' format does: fields by position, in the schema's order.
// A line with fewer fields than columns is an error ("Row length
// mismatch"), or with ignoreErrors fills the missing columns with NULL;
// extra fields are ignored. An empty value, and with allowComments a line
// starting with '#', append nothing. A field equal to the null literal is
// NULL. It shares the json decoder's cells and builders.
type csvDecoder struct {
	*jsonDecoder
	opt jobgraph.CSVFormat
	// fields holds the split fields of the current line; buf their text.
	fields []csvField
	buf    []byte
}

type csvField struct {
	start, end int
	quoted     bool
}

var _ rowDecoder = (*csvDecoder)(nil)

func newCSVDecoder(schema types.Schema, opt jobgraph.CSVFormat, ignoreErrors bool) *csvDecoder {
	return &csvDecoder{jsonDecoder: newJSONDecoder(schema, false, ignoreErrors), opt: opt}
}

// Decode implements rowDecoder.
func (d *csvDecoder) Decode(v []byte) (bool, error) {
	if len(v) == 0 || (d.opt.AllowComments && v[0] == '#') {
		return false, nil
	}
	if err := d.split(v); err != nil {
		if d.ignoreErrors {
			return false, nil
		}
		return false, fmt.Errorf("bad CSV: %w", err)
	}
	if len(d.fields) < len(d.schema) && !d.ignoreErrors {
		//lint:ignore ST1005 Flink's message, verbatim
		return false, fmt.Errorf("Row length mismatch. %d fields expected but was %d.", len(d.schema), len(d.fields))
	}
	for i, f := range d.schema {
		c := &d.cells[i]
		*c = jsonCell{}
		if i >= len(d.fields) {
			c.null = true
			continue
		}
		fl := d.fields[i]
		text := string(d.buf[fl.start:fl.end])
		if d.opt.HasNullLiteral && text == d.opt.NullLiteral {
			c.null = true
			continue
		}
		if err := d.convert(text, f.Type, c); err != nil {
			if d.ignoreErrors {
				*c = jsonCell{null: true}
				continue
			}
			return false, fmt.Errorf("field '%s': cannot read '%s' as %v: %w", f.Name, truncate([]byte(text)), f.Type, err)
		}
	}
	d.appendRow()
	return true, nil
}

// convert reads one field's text as t.
func (d *csvDecoder) convert(text string, t types.DataType, c *jsonCell) error {
	switch {
	case t.IsArray():
		// Elements go through the json converters as JSON strings.
		var raw []byte
		raw = append(raw, '[')
		if text != "" {
			for i, e := range strings.Split(text, d.opt.ArrayElementDelimiter) {
				if i > 0 {
					raw = append(raw, ',')
				}
				if d.opt.HasNullLiteral && e == d.opt.NullLiteral {
					raw = append(raw, "null"...)
					continue
				}
				raw = appendJSONString(raw, e)
			}
		}
		return convertJSONComposite(append(raw, ']'), t, c)
	case t.Kind == types.KindBoolean:
		// As Java's Boolean.parseBoolean: anything but "true" is false.
		c.b = strings.EqualFold(strings.TrimSpace(text), "true")
		return nil
	}
	return convertText(text, true, t, c)
}

// split cuts line into fields: separated by the delimiter, optionally
// enclosed in the quote character (a doubled quote inside is one), with the
// escape character taking the next character literally.
func (d *csvDecoder) split(line []byte) error {
	d.fields, d.buf = d.fields[:0], d.buf[:0]
	delim, quote, esc := d.opt.FieldDelimiter, d.opt.Quote, d.opt.Escape
	start, inQuotes, quoted := 0, false, false
	for i := 0; i < len(line); {
		r, n := utf8.DecodeRune(line[i:])
		switch {
		case esc != 0 && r == esc:
			i += n
			if i < len(line) {
				r, n = utf8.DecodeRune(line[i:])
				d.buf = utf8.AppendRune(d.buf, r)
			}
		case quote != 0 && r == quote && inQuotes:
			if i+n < len(line) {
				if r2, n2 := utf8.DecodeRune(line[i+n:]); r2 == quote {
					d.buf = utf8.AppendRune(d.buf, quote)
					i += n + n2
					continue
				}
			}
			inQuotes = false
		case quote != 0 && r == quote && len(d.buf) == start && !quoted:
			inQuotes, quoted = true, true
		case r == delim && !inQuotes:
			d.fields = append(d.fields, csvField{start, len(d.buf), quoted})
			start, quoted = len(d.buf), false
		case (r == '\n' || r == '\r') && !inQuotes:
			// One record is one line: a trailing line end is dropped.
			if strings.TrimRight(string(line[i:]), "\r\n") != "" {
				return errors.New("more than one line in one record")
			}
			i = len(line)
			continue
		default:
			d.buf = utf8.AppendRune(d.buf, r)
		}
		i += n
	}
	if inQuotes {
		return errors.New("unterminated quoted field")
	}
	d.fields = append(d.fields, csvField{start, len(d.buf), quoted})
	return nil
}

// csvEncoder writes rows as CSV lines, without a line end, as Flink's 'csv'
// format does: NULL as the null literal (empty without one), a field
// quoted when it holds the delimiter, the quote or escape character or a
// line break, DATE/TIME/TIMESTAMP as the json format writes them, BYTES as
// base64, an ARRAY as its elements joined by the array element delimiter.
type csvEncoder struct {
	schema types.Schema
	opt    jobgraph.CSVFormat
	cols   []int
	text   []byte
}

var _ rowEncoder = (*csvEncoder)(nil)

func newCSVEncoder(schema types.Schema, opt jobgraph.CSVFormat) *csvEncoder {
	return &csvEncoder{schema: schema, opt: opt}
}

func (e *csvEncoder) project(cols []int) rowEncoder {
	e.cols = cols
	return e
}

// AppendRow implements rowEncoder.
func (e *csvEncoder) AppendRow(dst []byte, b types.Batch, r int) []byte {
	for i, f := range e.schema {
		c := i
		if e.cols != nil {
			c = e.cols[i]
		}
		if i > 0 {
			dst = utf8.AppendRune(dst, e.opt.FieldDelimiter)
		}
		col := b.Column(c)
		if col.IsNull(r) {
			dst = append(dst, e.opt.NullLiteral...)
			continue
		}
		e.text = e.appendText(e.text[:0], col, r, f.Type)
		dst = e.appendField(dst, e.text)
	}
	return dst
}

func (e *csvEncoder) appendText(dst []byte, col arrow.Array, r int, t types.DataType) []byte {
	switch a := col.(type) {
	case *array.String:
		return append(dst, a.Value(r)...)
	case *array.Boolean:
		return strconv.AppendBool(dst, a.Value(r))
	case *array.Binary:
		if t.IsArray() {
			return e.appendArray(dst, t, a.Value(r))
		}
		return base64.StdEncoding.AppendEncode(dst, a.Value(r))
	case *array.Date32:
		return append(dst, types.FormatDate(int32(a.Value(r)))...)
	case *array.Time32:
		return append(dst, flinkTime(time.Unix(0, int64(a.Value(r))*1e6).UTC())...)
	case *array.Timestamp:
		tm := time.Unix(0, int64(a.Value(r))).UTC()
		dst = append(dst, tm.Format("2006-01-02")+" "+flinkTime(tm)...)
		if t.Kind == types.KindTimestampLTZ {
			dst = append(dst, 'Z')
		}
		return dst
	}
	// Numbers print as in JSON.
	return appendJSONValue(dst, col, r, t)
}

// appendArray writes the elements of an encoded ARRAY joined by the array
// element delimiter; a NULL element is the null literal.
func (e *csvEncoder) appendArray(dst []byte, t types.DataType, enc []byte) []byte {
	var elems []json.RawMessage
	_ = json.Unmarshal(appendJSONComposite(nil, t, enc), &elems)
	for i, el := range elems {
		if i > 0 {
			dst = append(dst, e.opt.ArrayElementDelimiter...)
		}
		switch {
		case string(el) == "null":
			dst = append(dst, e.opt.NullLiteral...)
		case len(el) > 0 && el[0] == '"':
			var s string
			_ = json.Unmarshal(el, &s)
			dst = append(dst, s...)
		default:
			dst = append(dst, el...)
		}
	}
	return dst
}

// appendField writes text, quoted when it must be.
func (e *csvEncoder) appendField(dst, text []byte) []byte {
	q := e.opt.Quote
	needs := false
	for _, r := range string(text) {
		if r == e.opt.FieldDelimiter || r == '\n' || r == '\r' || (q != 0 && r == q) || (e.opt.Escape != 0 && r == e.opt.Escape) {
			needs = true
			break
		}
	}
	if !needs {
		return append(dst, text...)
	}
	if q == 0 {
		// Without quotes, the escape character protects what would split.
		for _, r := range string(text) {
			if e.opt.Escape != 0 && (r == e.opt.FieldDelimiter || r == e.opt.Escape || r == '\n' || r == '\r') {
				dst = utf8.AppendRune(dst, e.opt.Escape)
			}
			dst = utf8.AppendRune(dst, r)
		}
		return dst
	}
	dst = utf8.AppendRune(dst, q)
	for _, r := range string(text) {
		switch {
		case r == q:
			dst = utf8.AppendRune(dst, q)
		case e.opt.Escape != 0 && r == e.opt.Escape:
			dst = utf8.AppendRune(dst, r)
		}
		dst = utf8.AppendRune(dst, r)
	}
	return utf8.AppendRune(dst, q)
}

// csvSupports reports whether the csv format reads and writes t: the json
// format's scalar types and ARRAYs of them.
func csvSupports(t types.DataType) bool {
	if t.IsArray() {
		return !t.Elem().IsComposite() && jsonSupports(t.Elem())
	}
	return !t.IsComposite() && jsonSupports(t)
}
