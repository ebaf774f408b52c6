package connectors

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/braidflow/braid/types"
)

// rawDecoder reads each record value as the one column of its schema, as
// Flink's 'raw' format does: STRING the UTF-8 text, BYTES the bytes
// themselves, BOOLEAN one byte (0 is FALSE), the whole numbers and
// FLOAT/DOUBLE their fixed-size two's complement or IEEE 754 bytes in the
// configured byte order. A record without a value reads as NULL. It shares
// the json decoder's cells and builders.
type rawDecoder struct {
	*jsonDecoder
	order binary.ByteOrder
}

var _ rowDecoder = (*rawDecoder)(nil)

func newRawDecoder(schema types.Schema, littleEndian bool) *rawDecoder {
	d := &rawDecoder{jsonDecoder: newJSONDecoder(schema, false, false), order: binary.BigEndian}
	if littleEndian {
		d.order = binary.LittleEndian
	}
	return d
}

// rawSize is the size in bytes of a fixed-size raw value of kind k, or 0.
func rawSize(k types.Kind) int {
	switch k {
	case types.KindBoolean, types.KindTinyInt:
		return 1
	case types.KindSmallInt:
		return 2
	case types.KindInt, types.KindFloat:
		return 4
	case types.KindBigInt, types.KindDouble:
		return 8
	}
	return 0
}

// Decode implements rowDecoder. Unlike the other formats, a nil value
// appends a row (of NULL).
func (d *rawDecoder) Decode(v []byte) (bool, error) {
	f := d.schema[0]
	c := &d.cells[0]
	*c = jsonCell{null: v == nil}
	if v != nil {
		if n := rawSize(f.Type.Kind); n > 0 && len(v) != n {
			return false, fmt.Errorf("cannot read %d bytes as %v: it takes %d", len(v), f.Type, n)
		}
		switch f.Type.Kind {
		case types.KindChar, types.KindVarChar:
			if !utf8.Valid(v) {
				return false, fmt.Errorf("the value is not UTF-8 text")
			}
			c.s = string(v)
		case types.KindBinary, types.KindVarBinary:
			c.bs = v
		case types.KindBoolean:
			c.b = v[0] != 0
		case types.KindTinyInt:
			c.i = int64(int8(v[0]))
		case types.KindSmallInt:
			c.i = int64(int16(d.order.Uint16(v)))
		case types.KindInt:
			c.i = int64(int32(d.order.Uint32(v)))
		case types.KindBigInt:
			c.i = int64(d.order.Uint64(v))
		case types.KindFloat:
			c.f = float64(math.Float32frombits(d.order.Uint32(v)))
		case types.KindDouble:
			c.f = math.Float64frombits(d.order.Uint64(v))
		}
	}
	d.appendRow()
	return true, nil
}

// rawEncoder writes the one column of each row as the raw format's bytes;
// NULL as an empty value.
type rawEncoder struct {
	schema types.Schema
	order  binary.AppendByteOrder
	col    int
}

var _ rowEncoder = (*rawEncoder)(nil)

func newRawEncoder(schema types.Schema, littleEndian bool) *rawEncoder {
	e := &rawEncoder{schema: schema, order: binary.BigEndian}
	if littleEndian {
		e.order = binary.LittleEndian
	}
	return e
}

func (e *rawEncoder) project(cols []int) rowEncoder {
	e.col = cols[0]
	return e
}

// AppendRow implements rowEncoder.
func (e *rawEncoder) AppendRow(dst []byte, b types.Batch, r int) []byte {
	col := b.Column(e.col)
	if col.IsNull(r) {
		return dst
	}
	switch a := col.(type) {
	case *array.String:
		return append(dst, a.Value(r)...)
	case *array.Binary:
		return append(dst, a.Value(r)...)
	case *array.Boolean:
		if a.Value(r) {
			return append(dst, 1)
		}
		return append(dst, 0)
	case *array.Int8:
		return append(dst, byte(a.Value(r)))
	case *array.Int16:
		return e.order.AppendUint16(dst, uint16(a.Value(r)))
	case *array.Int32:
		return e.order.AppendUint32(dst, uint32(a.Value(r)))
	case *array.Int64:
		return e.order.AppendUint64(dst, uint64(a.Value(r)))
	case *array.Float32:
		return e.order.AppendUint32(dst, math.Float32bits(a.Value(r)))
	case *array.Float64:
		return e.order.AppendUint64(dst, math.Float64bits(a.Value(r)))
	}
	panic(fmt.Sprintf("connectors: raw: cannot write %v", e.schema[0].Type))
}

// rawFormatFor checks the raw format's options and the table's columns
// with Flink's rules, and reports whether numbers are little-endian
// ('raw.endianness' = 'little-endian'; big-endian is the default).
func rawFormatFor(table string, own, ownKey map[string]string, schema types.Schema) (bool, error) {
	if cs, ok := own["charset"]; ok {
		switch strings.ToUpper(strings.TrimSpace(cs)) {
		case "UTF-8", "UTF8":
		default:
			return false, fmt.Errorf("table %s: option '%s' '%s' is not supported: Braid's raw format reads and writes UTF-8 only", table, ownKey["charset"], cs)
		}
	}
	little := false
	if en, ok := own["endianness"]; ok {
		switch strings.ToLower(strings.TrimSpace(en)) {
		case "big-endian":
		case "little-endian":
			little = true
		default:
			//lint:ignore ST1005 Flink's message, verbatim
			return false, fmt.Errorf("Unsupported endianness name: %s. Valid values of 'raw.endianness' option are 'big-endian' and 'little-endian'. (table %s)", en, table)
		}
	}
	if len(schema) != 1 {
		cols := make([]string, len(schema))
		for i, f := range schema {
			cols[i] = f.Name + " " + f.Type.String()
		}
		//lint:ignore ST1005 Flink's message, verbatim
		return false, fmt.Errorf("The 'raw' format only supports single physical column. However the defined schema contains multiple physical columns: [%s] (table %s)", strings.Join(cols, ", "), table)
	}
	switch t := schema[0].Type; t.Kind {
	case types.KindChar, types.KindVarChar, types.KindBinary, types.KindVarBinary:
	default:
		if rawSize(t.Kind) == 0 {
			//lint:ignore ST1005 Flink's message, verbatim
			return false, fmt.Errorf("The 'raw' format doesn't supports '%s' as column type. (table %s)", t, table)
		}
	}
	return little, nil
}
