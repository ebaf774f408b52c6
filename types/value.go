package types

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Composite values. A value of a composite type is one cell of an Arrow
// Binary column holding its encoding, so batches, the shuffle, keyed state
// and every gather and filter carry it as they carry BYTES:
//
//	ROW       null bitmap of ceil(f/8) bytes (bit i set: field i is NULL),
//	          then the non-NULL fields in order: RowEncoder.AppendRow's form
//	ARRAY     uvarint n, null bitmap of ceil(n/8) bytes, the non-NULL elements
//	MAP       uvarint n, the keys as an ARRAY's bitmap and elements, then the
//	          values likewise, entry i being keys[i] => values[i]
//	MULTISET  a MAP from element to its count (INT NOT NULL), as Flink holds it
//
// A value is written at its Arrow width (rowcodec.go), little endian;
// strings, binaries and nested composite values are a uvarint length and
// the bytes. The encoding of a value is unique: equal values have equal
// bytes (as in Flink's binary formats, -0.0 and 0.0 differ).
//
// In Go, one element is nil (NULL) or, by its type's physical class:
// bool; int64 for every integer, DATE (days), TIME (ms of the day),
// TIMESTAMP and TIMESTAMP_LTZ (ns) and the intervals (ms, months); float64
// for FLOAT and DOUBLE; decimal128.Num (unscaled) for DECIMAL; string for
// CHAR and VARCHAR; []byte for BINARY, VARBINARY and a nested composite
// value (its encoding).

// errBadValue reports an encoded composite value that is not one.
var errBadValue = errors.New("types: malformed composite value")

// AppendComposite appends the encoding of a value of composite type t to
// dst: vals are a ROW's fields or an ARRAY's elements, keys and vals a MAP's
// or MULTISET's entries (a MULTISET's vals are int64 counts). Elements must
// be in the Go form of their type; one that is not panics (a planner bug).
func AppendComposite(dst []byte, t DataType, keys, vals []any) []byte {
	switch t.Kind {
	case KindRow:
		if len(vals) != t.NumFields() {
			panic(fmt.Sprintf("types: %d values for %v", len(vals), t))
		}
		return appendElems(dst, vals, func(i int) DataType { return t.FieldAt(i).Type })
	case KindArray:
		dst = binary.AppendUvarint(dst, uint64(len(vals)))
		e := t.Elem()
		return appendElems(dst, vals, func(int) DataType { return e })
	case KindMap, KindMultiset:
		if len(keys) != len(vals) {
			panic("types: map keys and values differ in number")
		}
		kt, vt := t.MapEntryTypes()
		dst = binary.AppendUvarint(dst, uint64(len(vals)))
		dst = appendElems(dst, keys, func(int) DataType { return kt })
		return appendElems(dst, vals, func(int) DataType { return vt })
	}
	panic(fmt.Sprintf("types: %v is not a composite type", t))
}

func appendElems(dst []byte, vals []any, typeOf func(int) DataType) []byte {
	nb := (len(vals) + 7) / 8
	start := len(dst)
	for i := 0; i < nb; i++ {
		dst = append(dst, 0)
	}
	for i, v := range vals {
		if v == nil || typeOf(i).Kind == KindNull {
			dst[start+i/8] |= 1 << (i % 8)
			continue
		}
		dst = AppendElem(dst, typeOf(i), v)
	}
	return dst
}

// AppendElem appends the encoding of one non-NULL element v of type t.
func AppendElem(dst []byte, t DataType, v any) []byte {
	bad := func() []byte { panic(fmt.Sprintf("types: element %v (%T) does not fit %v", v, v, t)) }
	k := physOf(t)
	switch k {
	case pBool:
		b, ok := v.(bool)
		if !ok {
			return bad()
		}
		if b {
			return append(dst, 1)
		}
		return append(dst, 0)
	case pFloat32, pFloat64:
		f, ok := v.(float64)
		if !ok {
			return bad()
		}
		if k == pFloat32 {
			return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(f)))
		}
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
	case pDecimal:
		n, ok := v.(decimal128.Num)
		if !ok {
			return bad()
		}
		dst = binary.LittleEndian.AppendUint64(dst, n.LowBits())
		return binary.LittleEndian.AppendUint64(dst, uint64(n.HighBits()))
	case pString:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		return append(dst, s...)
	case pBinary:
		b, ok := v.([]byte)
		if !ok {
			return bad()
		}
		dst = binary.AppendUvarint(dst, uint64(len(b)))
		return append(dst, b...)
	}
	i, ok := v.(int64)
	if !ok {
		return bad()
	}
	switch fixedWidth(k) {
	case 1:
		return append(dst, byte(i))
	case 2:
		return binary.LittleEndian.AppendUint16(dst, uint16(i))
	case 4:
		return binary.LittleEndian.AppendUint32(dst, uint32(i))
	}
	return binary.LittleEndian.AppendUint64(dst, uint64(i))
}

// CompositeLen returns the number of elements of an encoded ARRAY, MAP or
// MULTISET (entries) or ROW (fields) without decoding them.
func CompositeLen(t DataType, enc []byte) (int, error) {
	if t.Kind == KindRow {
		return t.NumFields(), nil
	}
	n, w := binary.Uvarint(enc)
	if w <= 0 || n > uint64(len(enc))*8 {
		return 0, errBadValue
	}
	return int(n), nil
}

// DecodeComposite decodes an encoded value of composite type t into its
// keys (MAP, MULTISET) and values (ROW fields, ARRAY elements, MAP values),
// in the Go forms above. It checks the whole value, nested values
// included, and fails on anything AppendComposite would not have written.
// The slices it returns hold at most 8 elements per byte of enc; strings
// and byte slices alias enc.
func DecodeComposite(t DataType, enc []byte) (keys, vals []any, err error) {
	if err := ValidateComposite(t, enc); err != nil {
		return nil, nil, err
	}
	r := valueReader{b: enc}
	switch t.Kind {
	case KindRow:
		vals = make([]any, t.NumFields())
		r.elems(vals, func(i int) DataType { return t.FieldAt(i).Type })
	case KindArray:
		n := r.count()
		vals = make([]any, n)
		e := t.Elem()
		r.elems(vals, func(int) DataType { return e })
	case KindMap, KindMultiset:
		n := r.count()
		kt, vt := t.MapEntryTypes()
		keys, vals = make([]any, n), make([]any, n)
		r.elems(keys, func(int) DataType { return kt })
		r.elems(vals, func(int) DataType { return vt })
	}
	return keys, vals, nil
}

// valueReader reads a value ValidateComposite accepted.
type valueReader struct {
	b []byte
	p int
}

func (r *valueReader) count() int {
	n, w := binary.Uvarint(r.b[r.p:])
	r.p += w
	return int(n)
}

func (r *valueReader) elems(out []any, typeOf func(int) DataType) {
	nb := (len(out) + 7) / 8
	bm := r.b[r.p : r.p+nb]
	r.p += nb
	for i := range out {
		t := typeOf(i)
		if bm[i/8]&(1<<(i%8)) != 0 || t.Kind == KindNull {
			out[i] = nil
			continue
		}
		out[i] = r.elem(t)
	}
}

func (r *valueReader) elem(t DataType) any {
	k := physOf(t)
	b := r.b[r.p:]
	switch k {
	case pString, pBinary:
		l, w := binary.Uvarint(b)
		r.p += w + int(l)
		if k == pString {
			return string(b[w : w+int(l)])
		}
		return b[w : w+int(l) : w+int(l)]
	case pBool:
		r.p++
		return b[0] != 0
	case pFloat32:
		r.p += 4
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	case pFloat64:
		r.p += 8
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	case pDecimal:
		r.p += 16
		return decimal128.New(int64(binary.LittleEndian.Uint64(b[8:])), binary.LittleEndian.Uint64(b))
	}
	w := fixedWidth(k)
	r.p += w
	switch w {
	case 1:
		return int64(int8(b[0]))
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(b)))
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(b)))
	}
	return int64(binary.LittleEndian.Uint64(b))
}

// ValidateComposite checks, without allocating, that enc is exactly one
// encoded value of composite type t, nested values included. Its work is
// linear in len(enc) times the depth of t.
func ValidateComposite(t DataType, enc []byte) error {
	p, err := validateAt(t, enc, 0)
	if err != nil {
		return err
	}
	if p != len(enc) {
		return fmt.Errorf("types: composite value of %v has %d trailing bytes", t, len(enc)-p)
	}
	return nil
}

func validateAt(t DataType, b []byte, p int) (int, error) {
	switch t.Kind {
	case KindRow:
		return validateElems(b, p, t.NumFields(), func(i int) DataType { return t.FieldAt(i).Type })
	case KindArray, KindMap, KindMultiset:
		n, w := binary.Uvarint(b[p:])
		if w <= 0 || n > uint64(len(b)-p)*8 {
			return 0, errBadValue
		}
		p += w
		if t.Kind == KindArray {
			e := t.Elem()
			return validateElems(b, p, int(n), func(int) DataType { return e })
		}
		kt, vt := t.MapEntryTypes()
		p, err := validateElems(b, p, int(n), func(int) DataType { return kt })
		if err != nil {
			return 0, err
		}
		return validateElems(b, p, int(n), func(int) DataType { return vt })
	}
	return 0, errBadValue
}

func validateElems(b []byte, p, n int, typeOf func(int) DataType) (int, error) {
	nb := (n + 7) / 8
	if nb > len(b)-p {
		return 0, errBadValue
	}
	bm := b[p : p+nb]
	p += nb
	for i := 0; i < n; i++ {
		t := typeOf(i)
		if bm[i/8]&(1<<(i%8)) != 0 || t.Kind == KindNull {
			continue
		}
		k := physOf(t)
		w := fixedWidth(k)
		if w < 0 {
			l, vw := binary.Uvarint(b[p:])
			if vw <= 0 || l > uint64(len(b)-p-vw) {
				return 0, errBadValue
			}
			if t.IsComposite() {
				end, err := validateAt(t, b[:p+vw+int(l)], p+vw)
				if err != nil {
					return 0, err
				}
				if end != p+vw+int(l) {
					return 0, errBadValue
				}
			}
			w = vw + int(l)
		}
		if w > len(b)-p {
			return 0, errBadValue
		}
		p += w
	}
	return p, nil
}

// FormatComposite prints an encoded composite value as Flink's CAST to
// STRING does, which is what the SQL client shows: ROW as (1, abc), ARRAY
// as [1, 2], MAP as {a=1, b=2}, MULTISET as {a=2} (element=count), a NULL
// inside as null; nested values print likewise, scalars as FormatValue
// prints them. A malformed value prints as "?".
func FormatComposite(t DataType, enc []byte, loc *time.Location) string {
	var sb strings.Builder
	if err := writeComposite(&sb, t, enc, loc); err != nil {
		return "?"
	}
	return sb.String()
}

func writeComposite(sb *strings.Builder, t DataType, enc []byte, loc *time.Location) error {
	keys, vals, err := DecodeComposite(t, enc)
	if err != nil {
		return err
	}
	switch t.Kind {
	case KindRow:
		sb.WriteByte('(')
		for i, v := range vals {
			if i > 0 {
				sb.WriteString(", ")
			}
			if err := writeElem(sb, t.FieldAt(i).Type, v, loc); err != nil {
				return err
			}
		}
		sb.WriteByte(')')
	case KindArray:
		sb.WriteByte('[')
		for i, v := range vals {
			if i > 0 {
				sb.WriteString(", ")
			}
			if err := writeElem(sb, t.Elem(), v, loc); err != nil {
				return err
			}
		}
		sb.WriteByte(']')
	default:
		kt, vt := t.MapEntryTypes()
		sb.WriteByte('{')
		for i := range vals {
			if i > 0 {
				sb.WriteString(", ")
			}
			if err := writeElem(sb, kt, keys[i], loc); err != nil {
				return err
			}
			sb.WriteByte('=')
			if err := writeElem(sb, vt, vals[i], loc); err != nil {
				return err
			}
		}
		sb.WriteByte('}')
	}
	return nil
}

func writeElem(sb *strings.Builder, t DataType, v any, loc *time.Location) error {
	if v == nil {
		sb.WriteString("null")
		return nil
	}
	if t.IsComposite() {
		return writeComposite(sb, t, v.([]byte), loc)
	}
	sb.WriteString(FormatElem(t, v, loc))
	return nil
}

// FormatElem prints one non-NULL element in its Go form as FormatValue
// prints the same value in a column.
func FormatElem(t DataType, v any, loc *time.Location) string {
	switch x := v.(type) {
	case bool:
		if x {
			return "TRUE"
		}
		return "FALSE"
	case float64:
		if t.Kind == KindFloat {
			return FormatJavaFloat(float32(x))
		}
		return FormatJavaDouble(x)
	case decimal128.Num:
		return x.ToString(int32(t.Scale))
	case string:
		return x
	case []byte:
		if t.IsComposite() {
			return FormatComposite(t, x, loc)
		}
		return FormatBytes(x)
	case int64:
		switch t.Kind {
		case KindDate:
			return FormatDate(int32(x))
		case KindTime:
			return FormatTime(int32(x), t.Precision)
		case KindTimestamp:
			return FormatTimestamp(x, t.Precision)
		case KindTimestampLTZ:
			return FormatTimestampLTZ(x, t.Precision, loc)
		case KindIntervalDayTime:
			return FormatIntervalDayTime(x)
		case KindIntervalYearMonth:
			return FormatIntervalYearMonth(int32(x))
		}
		return strconv.FormatInt(x, 10)
	}
	return "?"
}

// CompositeElem returns element i (0-based) of an encoded ROW (field i) or
// ARRAY without decoding the others; ok is false when there is no element
// i. Like DecodeComposite it checks the whole value first.
func CompositeElem(t DataType, enc []byte, i int) (v any, ok bool, err error) {
	if err := ValidateComposite(t, enc); err != nil {
		return nil, false, err
	}
	r := valueReader{b: enc}
	var n int
	var typeOf func(int) DataType
	switch t.Kind {
	case KindRow:
		n, typeOf = t.NumFields(), func(j int) DataType { return t.FieldAt(j).Type }
	case KindArray:
		e := t.Elem()
		n, typeOf = r.count(), func(int) DataType { return e }
	default:
		return nil, false, fmt.Errorf("types: %v has no positional elements", t)
	}
	if i < 0 || i >= n {
		return nil, false, nil
	}
	bm := r.b[r.p : r.p+(n+7)/8]
	r.p += (n + 7) / 8
	isNull := func(j int) bool { return bm[j/8]&(1<<(j%8)) != 0 || typeOf(j).Kind == KindNull }
	for j := 0; j < i; j++ {
		if isNull(j) {
			continue
		}
		k := physOf(typeOf(j))
		if w := fixedWidth(k); w >= 0 {
			r.p += w
			continue
		}
		l, w := binary.Uvarint(r.b[r.p:])
		r.p += w + int(l)
	}
	if isNull(i) {
		return nil, true, nil
	}
	return r.elem(typeOf(i)), true, nil
}
