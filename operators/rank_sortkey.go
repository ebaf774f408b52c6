package operators

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/braidflow/braid/jobgraph"
)

// sortKeyEncoder encodes a row's ORDER BY columns so that bytes.Compare of
// two encodings orders the rows as the ORDER BY does (a "memcomparable"
// key). Per column: a tag byte (0 for a NULL that sorts first, 1 for a
// value, 2 for a NULL that sorts last), then the value in an
// order-preserving form, with every byte inverted for DESC:
//
//   - integers, dates, times, timestamps and intervals: big endian with the
//     sign bit flipped;
//   - BOOLEAN: one byte, FALSE before TRUE;
//   - floats: the IEEE bits, all inverted for negative numbers and the sign
//     bit flipped for the others (-0.0 sorts before 0.0 and NaN, made one
//     NaN, after +Inf, as Java's Double.compare has it);
//   - DECIMAL: the 128-bit value big endian with the sign bit flipped;
//   - strings and binaries: the bytes with 0x00 escaped as 0x00 0xFF, ended
//     by 0x00 0x01 (so a prefix sorts first, and the encoding stays
//     self-delimiting when inverted).
type sortKeyEncoder struct {
	keys []jobgraph.SortKey
	// nullsFirst per key: NULL is the smallest value by default (first
	// ascending, last descending) unless NULLS FIRST/LAST was written.
	nullsFirst []bool
}

func newSortKeyEncoder(keys []jobgraph.SortKey) *sortKeyEncoder {
	e := &sortKeyEncoder{keys: keys, nullsFirst: make([]bool, len(keys))}
	for i, k := range keys {
		switch {
		case k.NullsFirst:
			e.nullsFirst[i] = true
		case k.NullsLast:
			e.nullsFirst[i] = false
		default:
			e.nullsFirst[i] = !k.Desc
		}
	}
	return e
}

// checkSortable reports an error for a column type the encoder cannot order.
func checkSortable(t arrow.DataType) error {
	switch t.ID() {
	case arrow.NULL, arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128, arrow.STRING, arrow.BINARY,
		arrow.DATE32, arrow.TIME32, arrow.TIMESTAMP, arrow.DURATION:
		return nil
	}
	return fmt.Errorf("operators: cannot sort on a column of type %v", t)
}

// append appends the sort key of row `row` of cols to dst.
func (e *sortKeyEncoder) append(dst []byte, cols []arrow.Array, row int) []byte {
	for i, k := range e.keys {
		col := cols[k.Col]
		if col.IsNull(row) {
			if e.nullsFirst[i] {
				dst = append(dst, 0)
			} else {
				dst = append(dst, 2)
			}
			continue
		}
		dst = append(dst, 1)
		start := len(dst)
		dst = appendSortValue(dst, col, row)
		if k.Desc {
			for j := start; j < len(dst); j++ {
				dst[j] = ^dst[j]
			}
		}
	}
	return dst
}

func appendSortInt(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v)^(1<<63))
}

func appendSortFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) {
		f = math.NaN()
	}
	b := math.Float64bits(f)
	if b&(1<<63) != 0 {
		b = ^b
	} else {
		b |= 1 << 63
	}
	return binary.BigEndian.AppendUint64(dst, b)
}

func appendSortBytes(dst, v []byte) []byte {
	for _, c := range v {
		if c == 0 {
			dst = append(dst, 0, 0xFF)
		} else {
			dst = append(dst, c)
		}
	}
	return append(dst, 0, 1)
}

func appendSortValue(dst []byte, col arrow.Array, row int) []byte {
	switch a := col.(type) {
	case *array.Boolean:
		if a.Value(row) {
			return append(dst, 1)
		}
		return append(dst, 0)
	case *array.Int8:
		return appendSortInt(dst, int64(a.Value(row)))
	case *array.Int16:
		return appendSortInt(dst, int64(a.Value(row)))
	case *array.Int32:
		return appendSortInt(dst, int64(a.Value(row)))
	case *array.Int64:
		return appendSortInt(dst, a.Value(row))
	case *array.Float32:
		return appendSortFloat(dst, float64(a.Value(row)))
	case *array.Float64:
		return appendSortFloat(dst, a.Value(row))
	case *array.Decimal128:
		v := a.Value(row)
		dst = binary.BigEndian.AppendUint64(dst, uint64(v.HighBits())^(1<<63))
		return binary.BigEndian.AppendUint64(dst, v.LowBits())
	case *array.String:
		return appendSortBytes(dst, []byte(a.Value(row)))
	case *array.Binary:
		return appendSortBytes(dst, a.Value(row))
	case *array.Date32:
		return appendSortInt(dst, int64(a.Value(row)))
	case *array.Time32:
		return appendSortInt(dst, int64(a.Value(row)))
	case *array.Timestamp:
		return appendSortInt(dst, int64(a.Value(row)))
	case *array.Duration:
		return appendSortInt(dst, int64(a.Value(row)))
	}
	panic(fmt.Sprintf("operators: cannot sort on %T", col))
}
