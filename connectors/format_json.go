package connectors

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/types"
)

// jsonDecoder turns JSON objects, one per record value, into rows of a
// schema, as Flink's 'json' format does with its defaults
// (json.timestamp-format.standard = SQL): fields are matched to columns by
// exact name, and each value is converted to its column's type. Rows are
// appended to Arrow builders until Flush hands them out as one batch.
//
// A missing field or JSON null is NULL, or an error with failOnMissing.
// With ignoreErrors a value that does not convert becomes NULL and a value
// that is not a JSON object is skipped; otherwise both are errors.
type jsonDecoder struct {
	schema        types.Schema
	arrow         *arrow.Schema
	failOnMissing bool
	ignoreErrors  bool

	rb   *array.RecordBuilder
	rows int
	// kinds, when it holds one kind per buffered row (a changelog
	// format's), are the rows' kinds; otherwise every row is an insert.
	kinds []int8
	cells []jsonCell
	seen  []bool // which columns the record being decoded has
	index map[string]int
}

// jsonCell is one converted value, held until the whole row converts.
type jsonCell struct {
	null bool
	i    int64
	f    float64
	b    bool
	s    string
	bs   []byte
	d    decimal128.Num
}

func newJSONDecoder(schema types.Schema, failOnMissing, ignoreErrors bool) *jsonDecoder {
	d := &jsonDecoder{schema: schema, arrow: schema.ArrowSchema(), failOnMissing: failOnMissing,
		ignoreErrors: ignoreErrors, cells: make([]jsonCell, len(schema)), seen: make([]bool, len(schema)),
		index: map[string]int{}}
	for i, f := range schema {
		d.index[f.Name] = i
	}
	d.rb = array.NewRecordBuilder(memory.DefaultAllocator, d.arrow)
	return d
}

// Rows returns how many rows are buffered.
func (d *jsonDecoder) Rows() int { return d.rows }

// Release frees the builders.
func (d *jsonDecoder) Release() { d.rb.Release() }

// Decode appends the row of one record value. It reports whether a row was
// appended: a nil value (a tombstone) and, with ignoreErrors, a value that
// is not a JSON object append nothing.
func (d *jsonDecoder) Decode(v []byte) (bool, error) {
	if v == nil {
		return false, nil
	}
	for i := range d.cells {
		d.cells[i] = jsonCell{}
		d.seen[i] = false
	}
	var convErr error
	err := scanJSONObject(v, func(key, raw []byte) error {
		if err := validJSONValue(raw); err != nil {
			return err
		}
		i, ok := d.index[string(key)]
		if !ok || convErr != nil {
			return nil
		}
		c := &d.cells[i]
		*c = jsonCell{}
		d.seen[i] = true
		if err := convertJSON(raw, d.schema[i].Type, c); err != nil {
			if d.ignoreErrors {
				*c = jsonCell{null: true}
				return nil
			}
			// NB: the rest of the record is still checked to be JSON, so
			// that malformed JSON is reported as such.
			convErr = fmt.Errorf("field '%s': cannot read %s as %v: %w", d.schema[i].Name, truncate(raw), d.schema[i].Type, err)
		}
		return nil
	})
	if err != nil {
		if d.ignoreErrors {
			return false, nil
		}
		return false, fmt.Errorf("bad JSON: %w", err)
	}
	if convErr != nil {
		return false, convErr
	}
	for i, f := range d.schema {
		if !d.seen[i] {
			if d.failOnMissing {
				return false, fmt.Errorf("field '%s' is missing", f.Name)
			}
			d.cells[i].null = true
		}
	}
	d.appendRow()
	return true, nil
}

func truncate(raw []byte) string {
	if len(raw) > 64 {
		return string(raw[:61]) + "..."
	}
	return string(raw)
}

func (d *jsonDecoder) appendRow() {
	for i, f := range d.schema {
		c := &d.cells[i]
		fb := d.rb.Field(i)
		if c.null {
			fb.AppendNull()
			continue
		}
		switch b := fb.(type) {
		case *array.BooleanBuilder:
			b.Append(c.b)
		case *array.Int8Builder:
			b.Append(int8(c.i))
		case *array.Int16Builder:
			b.Append(int16(c.i))
		case *array.Int32Builder:
			b.Append(int32(c.i))
		case *array.Int64Builder:
			b.Append(c.i)
		case *array.Float32Builder:
			b.Append(float32(c.f))
		case *array.Float64Builder:
			b.Append(c.f)
		case *array.Decimal128Builder:
			b.Append(c.d)
		case *array.StringBuilder:
			b.Append(c.s)
		case *array.BinaryBuilder:
			b.Append(c.bs)
		case *array.Date32Builder:
			b.Append(arrow.Date32(c.i))
		case *array.Time32Builder:
			b.Append(arrow.Time32(c.i))
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(c.i))
		default:
			panic(fmt.Sprintf("connectors: json: no builder for %v", f.Type))
		}
	}
	d.rows++
}

// Flush returns the buffered rows as one batch, which the caller owns, and
// starts a new one; it is insert-only unless kinds were recorded. ok is false when no row is buffered.
func (d *jsonDecoder) Flush() (b types.Batch, ok bool) {
	if d.rows == 0 {
		return types.Batch{}, false
	}
	ops := d.rb.Field(len(d.schema)).(*array.Int8Builder)
	if len(d.kinds) == d.rows {
		ops.AppendValues(d.kinds, nil)
	} else {
		for range d.rows {
			ops.Append(int8(types.Insert))
		}
	}
	d.rows, d.kinds = 0, d.kinds[:0]
	return types.Batch{Rec: d.rb.NewRecordBatch()}, true
}

// convertJSON converts one JSON value to t into c.
func convertJSON(raw json.RawMessage, t types.DataType, c *jsonCell) error {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		c.null = true
		return nil
	}
	// text is the value of a JSON string, or the JSON text of any other
	// value (numbers read from either, as Flink's converters do).
	isString := len(raw) > 0 && raw[0] == '"'
	if !isString && isIntKind(t.Kind) {
		if n, ok := plainJSONInt(raw); ok {
			if !fitsIntKind(n, t.Kind) {
				return errors.New("not a whole number in range")
			}
			c.i = n
			return nil
		}
	}
	var text string
	if isString {
		var ok bool
		if text, ok = plainJSONString(raw); !ok {
			if err := json.Unmarshal(raw, &text); err != nil {
				return err
			}
		}
	} else {
		text = string(raw)
	}
	if t.IsComposite() {
		return convertJSONComposite(raw, t, c)
	}
	return convertText(text, isString, t, c)
}

// convertText converts the text of a scalar value to t into c; isString
// says the text was quoted (a JSON string), which DATE, TIME, TIMESTAMP and
// BYTES need.
func convertText(text string, isString bool, t types.DataType, c *jsonCell) error {
	switch t.Kind {
	case types.KindBoolean:
		switch text {
		case "true":
			c.b = true
		case "false":
		default:
			return errors.New("not a boolean")
		}
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		bits := map[types.Kind]int{types.KindTinyInt: 8, types.KindSmallInt: 16, types.KindInt: 32, types.KindBigInt: 64}[t.Kind]
		n, err := strconv.ParseInt(strings.TrimSpace(text), 10, bits)
		if err != nil {
			return errors.New("not a whole number in range")
		}
		c.i = n
	case types.KindFloat, types.KindDouble:
		f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return errors.New("not a number")
		}
		c.f = f
	case types.KindDecimal:
		s := strings.TrimSpace(text)
		if _, err := strconv.ParseFloat(s, 64); err != nil && !errors.Is(err, strconv.ErrRange) {
			return errors.New("not a number")
		}
		n, err := decimal128.FromString(s, int32(t.Precision), int32(t.Scale))
		if err != nil {
			return errors.New("does not fit")
		}
		c.d = n
	case types.KindChar, types.KindVarChar:
		c.s = text
	case types.KindBinary, types.KindVarBinary:
		if !isString {
			return errors.New("not a base64 string")
		}
		bs, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			return errors.New("not base64")
		}
		c.bs = bs
	case types.KindDate:
		tm, err := time.Parse("2006-01-02", text)
		if err != nil || !isString {
			return errors.New("not a yyyy-MM-dd date")
		}
		c.i = tm.Unix() / 86400
		if tm.Unix() < 0 && tm.Unix()%86400 != 0 {
			c.i--
		}
	case types.KindTime:
		ns, ok := parseJSONTime(text)
		if !ok || !isString {
			return errors.New("not an HH:mm:ss[.fff] time")
		}
		c.i = truncateNanos(ns, min(t.Precision, 3)) / 1e6
	case types.KindTimestamp, types.KindTimestampLTZ:
		ns, ok := parseJSONTimestamp(text, t.Kind == types.KindTimestampLTZ)
		if !ok || !isString {
			return errors.New("not a yyyy-MM-dd HH:mm:ss[.fff] timestamp")
		}
		c.i = truncateNanos(ns, t.Precision)
	default:
		return fmt.Errorf("type %v is not supported by the json format", t)
	}
	return nil
}

// truncateNanos cuts ns to precision fractional second digits.
func truncateNanos(ns int64, precision int) int64 {
	if precision >= 9 {
		return ns
	}
	unit := int64(math.Pow10(9 - max(precision, 0)))
	r := ns % unit
	if r < 0 {
		r += unit
	}
	return ns - r
}

// parseJSONTime reads HH:mm:ss[.f{1,9}] as nanoseconds of the day.
func parseJSONTime(s string) (int64, bool) {
	tm, err := time.Parse("15:04:05.999999999", s)
	if err != nil {
		return 0, false
	}
	return int64(tm.Hour())*int64(time.Hour) + int64(tm.Minute())*int64(time.Minute) +
		int64(tm.Second())*int64(time.Second) + int64(tm.Nanosecond()), true
}

// parseJSONTimestamp reads "yyyy-MM-dd HH:mm:ss[.f{1,9}]" or the ISO-8601
// form with 'T', as nanoseconds since the epoch of the wall-clock reading.
// A TIMESTAMP_LTZ value may end in 'Z' (it is UTC either way).
func parseJSONTimestamp(s string, ltz bool) (int64, bool) {
	if ltz {
		s = strings.TrimSuffix(s, "Z")
	}
	if len(s) > 10 && s[10] == 'T' {
		s = s[:10] + " " + s[11:]
	}
	tm, err := time.Parse("2006-01-02 15:04:05.999999999", s)
	if err != nil {
		// ISO-8601 allows leaving out the seconds.
		if tm, err = time.Parse("2006-01-02 15:04", s); err != nil {
			return 0, false
		}
	}
	return tm.UnixNano(), true
}

// jsonEncoder writes rows as JSON objects the way Flink's 'json' format does
// with json.timestamp-format.standard = SQL: NULL as null, DECIMAL as a plain
// number, TIMESTAMP as "yyyy-MM-dd HH:mm:ss[.fff]" (fraction digits only as
// needed), TIMESTAMP_LTZ in UTC with a trailing 'Z', BYTES as base64.
type jsonEncoder struct {
	schema types.Schema
	// cols, when set, are the batch columns of the schema's fields (see
	// project); otherwise field i is column i.
	cols []int
	keys [][]byte // `"name":` per column, with the separating comma
	// isoTimestamps writes TIMESTAMP as yyyy-MM-ddTHH:mm:ss[.fff]
	// (timestamp-format.standard ISO-8601) instead of with a space.
	isoTimestamps bool
}

// appendISOTimestamp writes ns as an ISO-8601 string, with a trailing 'Z'
// for TIMESTAMP_LTZ.
func appendISOTimestamp(dst []byte, ns int64, t types.DataType) []byte {
	tm := time.Unix(0, ns).UTC()
	s := tm.Format("2006-01-02") + "T" + flinkTime(tm)
	if t.Kind == types.KindTimestampLTZ {
		s += "Z"
	}
	return appendJSONString(dst, s)
}

func newJSONEncoder(schema types.Schema) *jsonEncoder {
	e := &jsonEncoder{schema: schema}
	for i, f := range schema {
		k, _ := json.Marshal(f.Name)
		sep := ","
		if i == 0 {
			sep = "{"
		}
		e.keys = append(e.keys, append(append([]byte(sep), k...), ':'))
	}
	return e
}

// project makes the encoder read its fields from batch columns cols.
func (e *jsonEncoder) project(cols []int) rowEncoder {
	e.cols = cols
	return e
}

// AppendRow appends row r of b as one JSON object.
func (e *jsonEncoder) AppendRow(dst []byte, b types.Batch, r int) []byte {
	if len(e.schema) == 0 {
		return append(dst, "{}"...)
	}
	for i, f := range e.schema {
		c := i
		if e.cols != nil {
			c = e.cols[i]
		}
		dst = append(dst, e.keys[i]...)
		if ts, ok := b.Column(c).(*array.Timestamp); ok && e.isoTimestamps && !ts.IsNull(r) {
			dst = appendISOTimestamp(dst, int64(ts.Value(r)), f.Type)
			continue
		}
		dst = appendJSONValue(dst, b.Column(c), r, f.Type)
	}
	return append(dst, '}')
}

func appendJSONValue(dst []byte, col arrow.Array, r int, t types.DataType) []byte {
	if col.IsNull(r) {
		return append(dst, "null"...)
	}
	switch a := col.(type) {
	case *array.Boolean:
		return strconv.AppendBool(dst, a.Value(r))
	case *array.Int8:
		return strconv.AppendInt(dst, int64(a.Value(r)), 10)
	case *array.Int16:
		return strconv.AppendInt(dst, int64(a.Value(r)), 10)
	case *array.Int32:
		return strconv.AppendInt(dst, int64(a.Value(r)), 10)
	case *array.Int64:
		return strconv.AppendInt(dst, a.Value(r), 10)
	case *array.Float32:
		return appendJSONFloat(dst, float64(a.Value(r)), types.FormatJavaFloat(a.Value(r)))
	case *array.Float64:
		return appendJSONFloat(dst, a.Value(r), types.FormatJavaDouble(a.Value(r)))
	case *array.Decimal128:
		return append(dst, a.Value(r).ToString(int32(t.Scale))...)
	case *array.String:
		return appendJSONString(dst, a.Value(r))
	case *array.Binary:
		if t.IsComposite() {
			return appendJSONComposite(dst, t, a.Value(r))
		}
		return appendJSONString(dst, base64.StdEncoding.EncodeToString(a.Value(r)))
	case *array.Date32:
		return appendJSONString(dst, types.FormatDate(int32(a.Value(r))))
	case *array.Time32:
		ms := int64(a.Value(r))
		return appendJSONString(dst, flinkTime(time.Unix(0, ms*1e6).UTC()))
	case *array.Timestamp:
		tm := time.Unix(0, int64(a.Value(r))).UTC()
		s := tm.Format("2006-01-02") + " " + flinkTime(tm)
		if t.Kind == types.KindTimestampLTZ {
			s += "Z"
		}
		return appendJSONString(dst, s)
	}
	panic(fmt.Sprintf("connectors: json: cannot write %v", t))
}

// flinkTime prints HH:mm:ss and as many fraction digits as needed, as
// Flink's SQL_TIME_FORMAT (appendFraction(NANO_OF_SECOND, 0, 9, true)) does.
func flinkTime(tm time.Time) string {
	return tm.Format("15:04:05.999999999")
}

// appendJSONFloat writes a finite number as Java prints it (valid JSON) and
// NaN and the infinities as strings, as Jackson does by default.
func appendJSONFloat(dst []byte, f float64, java string) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return appendJSONString(dst, java)
	}
	return append(dst, java...)
}

func appendJSONString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s)
	return append(dst, b...)
}
