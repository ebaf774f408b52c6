package types

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Row codec: the compact binary form keyed state stores rows and keys in.
//
// A row (RowEncoder.AppendRow) is a null bitmap of ceil(n/8) bytes (bit c set
// means column c is NULL) followed by the non-NULL values in column order.
// Fixed-width values are little endian at their Arrow width (BOOLEAN one
// byte, DECIMAL 16 bytes: low then high 64 bits); strings and binaries are a
// uvarint length and the bytes. NULL-typed columns take no value bytes.
//
// A key (RowEncoder.EncodeKey) is, per column, a tag byte (0 NULL, 1 value)
// and then the value as above, with -0.0 stored as 0.0 and every NaN as one
// NaN. Every column is self-delimiting, so two keys of one schema have equal
// bytes exactly when their values are equal as SQL values (NULL equal to
// NULL; callers that want SQL's NULL semantics check AnyNull first). The
// byte order is not the SQL order.

// physKind is the physical Arrow layout of a SQL type (see ArrowType).
type physKind uint8

const (
	pNull physKind = iota
	pBool
	pInt8
	pInt16
	pInt32
	pInt64
	pFloat32
	pFloat64
	pDecimal
	pString
	pBinary
	pDate32
	pTime32
	pTimestamp
	pDuration
)

func physOf(t DataType) physKind {
	switch t.Kind {
	case KindNull:
		return pNull
	case KindBoolean:
		return pBool
	case KindTinyInt:
		return pInt8
	case KindSmallInt:
		return pInt16
	case KindInt, KindIntervalYearMonth:
		return pInt32
	case KindBigInt:
		return pInt64
	case KindFloat:
		return pFloat32
	case KindDouble:
		return pFloat64
	case KindDecimal:
		return pDecimal
	case KindChar, KindVarChar:
		return pString
	case KindBinary, KindVarBinary, KindArray, KindMap, KindMultiset, KindRow:
		return pBinary
	case KindDate:
		return pDate32
	case KindTime:
		return pTime32
	case KindTimestamp, KindTimestampLTZ:
		return pTimestamp
	case KindIntervalDayTime:
		return pDuration
	}
	panic(fmt.Sprintf("types: no physical layout for %v", t))
}

// RowEncoder encodes rows of Arrow columns laid out as a Schema (see
// ArrowType). It holds no buffers: the methods append to dst and are safe
// for concurrent use. The columns passed must have the schema's Arrow types;
// a mismatch panics (a broken planner invariant).
type RowEncoder struct {
	kinds []physKind
}

// NewRowEncoder returns an encoder for rows of s.
func NewRowEncoder(s Schema) *RowEncoder {
	e := &RowEncoder{kinds: make([]physKind, len(s))}
	for i, f := range s {
		e.kinds[i] = physOf(f.Type)
	}
	return e
}

// NumColumns returns the number of columns of a row.
func (e *RowEncoder) NumColumns() int { return len(e.kinds) }

// AppendRow appends the encoding of row `row` of cols to dst and returns the
// extended slice.
func (e *RowEncoder) AppendRow(dst []byte, cols []arrow.Array, row int) []byte {
	nb := (len(e.kinds) + 7) / 8
	start := len(dst)
	for i := 0; i < nb; i++ {
		dst = append(dst, 0)
	}
	for c, k := range e.kinds {
		col := cols[c]
		if k == pNull || col.IsNull(row) {
			dst[start+c/8] |= 1 << (c % 8)
			continue
		}
		dst = appendValue(dst, k, col, row, false)
	}
	return dst
}

// EncodeKey appends the key encoding of row `row` of cols to dst and returns
// the extended slice.
func (e *RowEncoder) EncodeKey(dst []byte, cols []arrow.Array, row int) []byte {
	for c, k := range e.kinds {
		col := cols[c]
		if k == pNull || col.IsNull(row) {
			dst = append(dst, 0)
			continue
		}
		dst = append(dst, 1)
		dst = appendValue(dst, k, col, row, true)
	}
	return dst
}

// AnyNull reports whether any of cols is NULL in row `row`.
func AnyNull(cols []arrow.Array, row int) bool {
	for _, c := range cols {
		if c.IsNull(row) {
			return true
		}
	}
	return false
}

func appendValue(dst []byte, k physKind, col arrow.Array, row int, canon bool) []byte {
	switch k {
	case pBool:
		if col.(*array.Boolean).Value(row) {
			return append(dst, 1)
		}
		return append(dst, 0)
	case pInt8:
		return append(dst, byte(col.(*array.Int8).Value(row)))
	case pInt16:
		return binary.LittleEndian.AppendUint16(dst, uint16(col.(*array.Int16).Value(row)))
	case pInt32:
		return binary.LittleEndian.AppendUint32(dst, uint32(col.(*array.Int32).Value(row)))
	case pInt64:
		return binary.LittleEndian.AppendUint64(dst, uint64(col.(*array.Int64).Value(row)))
	case pFloat32:
		v := col.(*array.Float32).Value(row)
		if canon {
			if v == 0 {
				v = 0
			} else if v != v {
				v = float32(math.NaN())
			}
		}
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
	case pFloat64:
		v := col.(*array.Float64).Value(row)
		if canon {
			if v == 0 {
				v = 0
			} else if v != v {
				v = math.NaN()
			}
		}
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
	case pDecimal:
		n := col.(*array.Decimal128).Value(row)
		dst = binary.LittleEndian.AppendUint64(dst, n.LowBits())
		return binary.LittleEndian.AppendUint64(dst, uint64(n.HighBits()))
	case pString:
		s := col.(*array.String).Value(row)
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		return append(dst, s...)
	case pBinary:
		b := col.(*array.Binary).Value(row)
		dst = binary.AppendUvarint(dst, uint64(len(b)))
		return append(dst, b...)
	case pDate32:
		return binary.LittleEndian.AppendUint32(dst, uint32(col.(*array.Date32).Value(row)))
	case pTime32:
		return binary.LittleEndian.AppendUint32(dst, uint32(col.(*array.Time32).Value(row)))
	case pTimestamp:
		return binary.LittleEndian.AppendUint64(dst, uint64(col.(*array.Timestamp).Value(row)))
	case pDuration:
		return binary.LittleEndian.AppendUint64(dst, uint64(col.(*array.Duration).Value(row)))
	}
	panic(fmt.Sprintf("types: cannot encode physical kind %d", k))
}

// errShortRow reports an encoded row that ends early.
var errShortRow = errors.New("types: encoded row is truncated")

// colBuilder is one output column with its concrete builder, so appends
// switch on a small kind rather than calling through an interface.
type colBuilder struct {
	kind physKind
	b    array.Builder
	bl   *array.BooleanBuilder
	i8   *array.Int8Builder
	i16  *array.Int16Builder
	i32  *array.Int32Builder
	i64  *array.Int64Builder
	f32  *array.Float32Builder
	f64  *array.Float64Builder
	dec  *array.Decimal128Builder
	str  *array.StringBuilder
	bin  *array.BinaryBuilder
	d32  *array.Date32Builder
	t32  *array.Time32Builder
	ts   *array.TimestampBuilder
	dur  *array.DurationBuilder
	null *array.NullBuilder
}

// RowBuilder builds the Arrow columns of a Schema from encoded rows (see
// RowDecoder), from rows of other Arrow columns, or from NULLs. One builder
// is made per column when the RowBuilder is made and is reused for every
// batch: call Reserve, append rows, then NewArrays. A RowBuilder is not safe
// for concurrent use; Release frees its builders.
type RowBuilder struct {
	schema Schema
	cols   []colBuilder
	n      int
}

// NewRowBuilder returns a builder of columns of s allocating from mem (nil
// means memory.DefaultAllocator).
func NewRowBuilder(mem memory.Allocator, s Schema) *RowBuilder {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	rb := &RowBuilder{schema: s, cols: make([]colBuilder, len(s))}
	for i, f := range s {
		cb := &rb.cols[i]
		cb.kind = physOf(f.Type)
		cb.b = array.NewBuilder(mem, f.Type.ArrowType())
		switch cb.kind {
		case pNull:
			cb.null = cb.b.(*array.NullBuilder)
		case pBool:
			cb.bl = cb.b.(*array.BooleanBuilder)
		case pInt8:
			cb.i8 = cb.b.(*array.Int8Builder)
		case pInt16:
			cb.i16 = cb.b.(*array.Int16Builder)
		case pInt32:
			cb.i32 = cb.b.(*array.Int32Builder)
		case pInt64:
			cb.i64 = cb.b.(*array.Int64Builder)
		case pFloat32:
			cb.f32 = cb.b.(*array.Float32Builder)
		case pFloat64:
			cb.f64 = cb.b.(*array.Float64Builder)
		case pDecimal:
			cb.dec = cb.b.(*array.Decimal128Builder)
		case pString:
			cb.str = cb.b.(*array.StringBuilder)
		case pBinary:
			cb.bin = cb.b.(*array.BinaryBuilder)
		case pDate32:
			cb.d32 = cb.b.(*array.Date32Builder)
		case pTime32:
			cb.t32 = cb.b.(*array.Time32Builder)
		case pTimestamp:
			cb.ts = cb.b.(*array.TimestampBuilder)
		case pDuration:
			cb.dur = cb.b.(*array.DurationBuilder)
		}
	}
	return rb
}

// Schema returns the schema the builder builds.
func (rb *RowBuilder) Schema() Schema { return rb.schema }

// Len returns the number of rows appended since the last NewArrays.
func (rb *RowBuilder) Len() int { return rb.n }

// Reserve makes room for n more rows in every column.
func (rb *RowBuilder) Reserve(n int) {
	for i := range rb.cols {
		rb.cols[i].b.Reserve(n)
	}
}

// NewArrays returns the built columns, one per schema field, and resets the
// builder for the next batch. The caller owns (and releases) the arrays.
func (rb *RowBuilder) NewArrays() []arrow.Array {
	out := make([]arrow.Array, len(rb.cols))
	for i := range rb.cols {
		out[i] = rb.cols[i].b.NewArray()
	}
	rb.n = 0
	return out
}

// Release frees the builders.
func (rb *RowBuilder) Release() {
	for i := range rb.cols {
		rb.cols[i].b.Release()
	}
}

// EndRow marks the end of one output row, after its columns were appended
// (by RowDecoder.Append, AppendColumns or AppendNulls, each over a part of
// the columns). It only counts rows for Len.
func (rb *RowBuilder) EndRow() { rb.n++ }

// AppendNulls appends NULL to columns [off, off+n).
func (rb *RowBuilder) AppendNulls(off, n int) {
	for c := off; c < off+n; c++ {
		rb.cols[c].b.AppendNull()
	}
}

// AppendColumns appends row `row` of cols to columns [off, off+len(cols)).
// The arrays must have the Arrow types of those columns.
func (rb *RowBuilder) AppendColumns(off int, cols []arrow.Array, row int) {
	for i, col := range cols {
		cb := &rb.cols[off+i]
		if cb.kind == pNull || col.IsNull(row) {
			cb.b.AppendNull()
			continue
		}
		switch cb.kind {
		case pBool:
			cb.bl.Append(col.(*array.Boolean).Value(row))
		case pInt8:
			cb.i8.Append(col.(*array.Int8).Value(row))
		case pInt16:
			cb.i16.Append(col.(*array.Int16).Value(row))
		case pInt32:
			cb.i32.Append(col.(*array.Int32).Value(row))
		case pInt64:
			cb.i64.Append(col.(*array.Int64).Value(row))
		case pFloat32:
			cb.f32.Append(col.(*array.Float32).Value(row))
		case pFloat64:
			cb.f64.Append(col.(*array.Float64).Value(row))
		case pDecimal:
			cb.dec.Append(col.(*array.Decimal128).Value(row))
		case pString:
			cb.str.Append(col.(*array.String).Value(row))
		case pBinary:
			cb.bin.Append(col.(*array.Binary).Value(row))
		case pDate32:
			cb.d32.Append(col.(*array.Date32).Value(row))
		case pTime32:
			cb.t32.Append(col.(*array.Time32).Value(row))
		case pTimestamp:
			cb.ts.Append(col.(*array.Timestamp).Value(row))
		case pDuration:
			cb.dur.Append(col.(*array.Duration).Value(row))
		}
	}
}

// Decoder returns a decoder of rows encoded by a RowEncoder for the schema
// of columns [off, off+n) into those columns.
func (rb *RowBuilder) Decoder(off, n int) RowDecoder {
	return RowDecoder{rb: rb, off: off, n: n}
}

// RowDecoder appends rows encoded by RowEncoder.AppendRow to a run of a
// RowBuilder's columns. It is a small value; copy it freely.
type RowDecoder struct {
	rb     *RowBuilder
	off, n int
}

// Append decodes one encoded row into the decoder's columns. It returns an
// error, appending nothing, if enc is not a complete row of that schema.
func (d RowDecoder) Append(enc []byte) error {
	// NB: validate before appending so a bad row never leaves columns of
	// different lengths behind.
	if err := d.validate(enc); err != nil {
		return err
	}
	nb := (d.n + 7) / 8
	bm, p := enc[:nb], nb
	for i := 0; i < d.n; i++ {
		cb := &d.rb.cols[d.off+i]
		if bm[i/8]&(1<<(i%8)) != 0 || cb.kind == pNull {
			cb.b.AppendNull()
			continue
		}
		switch cb.kind {
		case pBool:
			cb.bl.Append(enc[p] != 0)
			p++
		case pInt8:
			cb.i8.Append(int8(enc[p]))
			p++
		case pInt16:
			cb.i16.Append(int16(binary.LittleEndian.Uint16(enc[p:])))
			p += 2
		case pInt32:
			cb.i32.Append(int32(binary.LittleEndian.Uint32(enc[p:])))
			p += 4
		case pInt64:
			cb.i64.Append(int64(binary.LittleEndian.Uint64(enc[p:])))
			p += 8
		case pFloat32:
			cb.f32.Append(math.Float32frombits(binary.LittleEndian.Uint32(enc[p:])))
			p += 4
		case pFloat64:
			cb.f64.Append(math.Float64frombits(binary.LittleEndian.Uint64(enc[p:])))
			p += 8
		case pDecimal:
			lo := binary.LittleEndian.Uint64(enc[p:])
			hi := int64(binary.LittleEndian.Uint64(enc[p+8:]))
			cb.dec.Append(decimal128.New(hi, lo))
			p += 16
		case pString, pBinary:
			l, w := binary.Uvarint(enc[p:])
			p += w
			v := enc[p : p+int(l)]
			p += int(l)
			if cb.kind == pString {
				cb.str.BinaryBuilder.Append(v)
			} else {
				cb.bin.Append(v)
			}
		case pDate32:
			cb.d32.Append(arrow.Date32(binary.LittleEndian.Uint32(enc[p:])))
			p += 4
		case pTime32:
			cb.t32.Append(arrow.Time32(binary.LittleEndian.Uint32(enc[p:])))
			p += 4
		case pTimestamp:
			cb.ts.Append(arrow.Timestamp(binary.LittleEndian.Uint64(enc[p:])))
			p += 8
		case pDuration:
			cb.dur.Append(arrow.Duration(binary.LittleEndian.Uint64(enc[p:])))
			p += 8
		}
	}
	return nil
}

// validate checks that enc holds exactly one row of the decoder's schema.
func (d RowDecoder) validate(enc []byte) error {
	nb := (d.n + 7) / 8
	if len(enc) < nb {
		return errShortRow
	}
	p := nb
	for i := 0; i < d.n; i++ {
		k := d.rb.cols[d.off+i].kind
		if enc[i/8]&(1<<(i%8)) != 0 || k == pNull {
			continue
		}
		w := fixedWidth(k)
		if w < 0 {
			l, vw := binary.Uvarint(enc[p:])
			if vw <= 0 || l > uint64(len(enc)) {
				return errShortRow
			}
			w = vw + int(l)
		}
		if p+w > len(enc) {
			return errShortRow
		}
		p += w
	}
	if p != len(enc) {
		return fmt.Errorf("types: encoded row has %d trailing bytes", len(enc)-p)
	}
	return nil
}

// fixedWidth is the encoded width of a value of kind k, or -1 when the value
// is length-prefixed.
func fixedWidth(k physKind) int {
	switch k {
	case pBool, pInt8:
		return 1
	case pInt16:
		return 2
	case pInt32, pFloat32, pDate32, pTime32:
		return 4
	case pInt64, pFloat64, pTimestamp, pDuration:
		return 8
	case pDecimal:
		return 16
	case pString, pBinary:
		return -1
	}
	return 0
}
