package shuffle

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/braidflow/braid/types"
)

// Limits on the Arrow IPC stream of a remote channel, beyond maxMessage
// (pool.go), which bounds the bytes of one DataMessage and so the body of
// every IPC message in it.
const (
	// maxIPCMetadata bounds the flatbuffer header of one IPC message: a
	// schema, or the header of a record batch (16 bytes per column and 48
	// per column's buffers).
	maxIPCMetadata = 4 << 20
	// maxSchemaFields bounds the columns of a channel, $op included.
	maxSchemaFields = 10_000
)

// The parts of the Arrow format (format/Message.fbs and Schema.fbs) that
// the checks read. arrow-go keeps its generated flatbuffers code internal.
const (
	ipcContinuation = 0xFFFFFFFF
	ipcMetadataV5   = 4

	ipcHeaderSchema      = 1
	ipcHeaderRecordBatch = 3

	// Slots of table Message.
	msgVersion, msgHeaderType, msgHeader, msgBodyLength, msgCustomMetadata = 0, 1, 2, 3, 4
	// Slots of table Schema.
	schemaEndianness, schemaFields, schemaCustomMetadata = 0, 1, 2
	// Slots of table Field.
	fieldName, fieldNullable, fieldTypeType, fieldType, fieldDictionary, fieldChildren, fieldCustomMetadata = 0, 1, 2, 3, 4, 5, 6
	// Slots of table KeyValue.
	kvKey, kvValue = 0, 1
	// Slots of table RecordBatch; nodes and buffers are vectors of 16-byte
	// structs (FieldNode: length, null_count; Buffer: offset, length).
	rbLength, rbNodes, rbBuffers, rbCompression, rbVariadicCounts = 0, 1, 2, 3, 4

	// Members of union Type that Braid's SQL types map to (types/arrow.go).
	ipcTypeNull, ipcTypeInt, ipcTypeFloatingPoint, ipcTypeBinary, ipcTypeUtf8 = 1, 2, 3, 4, 5
	ipcTypeBool, ipcTypeDecimal, ipcTypeDate, ipcTypeTime, ipcTypeTimestamp   = 6, 7, 8, 9, 10
	ipcTypeDuration                                                           = 18

	ipcPrecisionSingle, ipcPrecisionDouble = 1, 2
	ipcDateDay                             = 0
	ipcTimeUnitSecond, ipcTimeUnitMilli    = 0, 1
	ipcTimeUnitNano                        = 3
)

// ipcMessage is one encapsulated message of a channel's Arrow IPC stream:
// its flatbuffer metadata and its body, both slices of the received bytes.
type ipcMessage struct {
	meta, body []byte
	kind       uint8   // the Message's header type
	header     fbTable // the Schema or RecordBatch table
}

// cutIPCMessage takes the first encapsulated message off p, as an
// ipc.Writer writes it: the continuation marker, the metadata length, the
// metadata (padded to 8 bytes), then the body that the metadata's
// bodyLength announces. The whole message must lie in p, so nothing it
// claims can exceed what the peer sent.
func cutIPCMessage(p []byte) (m ipcMessage, rest []byte, err error) {
	if len(p) < 8 {
		return m, nil, fmt.Errorf("truncated message prefix (%d bytes)", len(p))
	}
	if binary.LittleEndian.Uint32(p) != ipcContinuation {
		return m, nil, fmt.Errorf("message does not start with the continuation marker (got %#x)", binary.LittleEndian.Uint32(p))
	}
	n := int64(int32(binary.LittleEndian.Uint32(p[4:])))
	switch {
	case n == 0:
		return m, nil, fmt.Errorf("end-of-stream marker inside a channel")
	case n < 0 || n > maxIPCMetadata:
		return m, nil, fmt.Errorf("message metadata of %d bytes (limit %d)", n, maxIPCMetadata)
	case n%8 != 0:
		return m, nil, fmt.Errorf("message metadata of %d bytes is not padded to 8", n)
	case n > int64(len(p)-8):
		return m, nil, fmt.Errorf("message metadata of %d bytes, but only %d follow", n, len(p)-8)
	}
	m.meta, rest = p[8:8+n], p[8+n:]
	msg, err := fbRoot(m.meta)
	if err != nil {
		return m, nil, err
	}
	version, err := msg.int16(msgVersion, 0)
	if err != nil {
		return m, nil, err
	}
	if version != ipcMetadataV5 {
		return m, nil, fmt.Errorf("message has metadata version %d, want %d (V5)", version, ipcMetadataV5)
	}
	if m.kind, err = msg.uint8(msgHeaderType, 0); err != nil {
		return m, nil, err
	}
	hdr, ok, err := msg.table(msgHeader)
	if err != nil {
		return m, nil, err
	}
	if !ok {
		return m, nil, fmt.Errorf("message has no header")
	}
	m.header = hdr
	if err := noVector(msg, msgCustomMetadata, "message custom metadata"); err != nil {
		return m, nil, err
	}
	bodyLen, err := msg.int64(msgBodyLength, 0)
	if err != nil {
		return m, nil, err
	}
	switch {
	case bodyLen < 0 || bodyLen > int64(len(rest)):
		return m, nil, fmt.Errorf("message body of %d bytes, but only %d follow", bodyLen, len(rest))
	case bodyLen%8 != 0:
		return m, nil, fmt.Errorf("message body of %d bytes is not padded to 8", bodyLen)
	}
	m.body, rest = rest[:bodyLen], rest[bodyLen:]
	return m, rest, nil
}

// noVector checks that the table leaves out slot's vector or has it empty.
func noVector(t fbTable, slot int, what string) error {
	_, n, err := t.vector(slot, 4)
	if err != nil {
		return err
	}
	if n != 0 {
		return fmt.Errorf("%s has %d entries, want none", what, n)
	}
	return nil
}

// checkIPCSchema checks a schema message before arrow-go decodes it: it
// must be what an ipc.Writer makes of a types.Schema's ArrowSchema, that
// is little-endian, at most maxSchemaFields fields, each of an Arrow type
// that a Braid SQL type maps to, with no children (Braid's types are flat,
// so the nesting depth is one), no dictionary, and key-value metadata that
// lies in the message. braidColumns then compares the decoded schema with
// Braid's own.
func checkIPCSchema(m ipcMessage) error {
	if m.kind != ipcHeaderSchema {
		return fmt.Errorf("first message has header type %d, not a schema (%d)", m.kind, ipcHeaderSchema)
	}
	if len(m.body) != 0 {
		return fmt.Errorf("schema message has a %d-byte body", len(m.body))
	}
	s := m.header
	endianness, err := s.int16(schemaEndianness, 0)
	if err != nil {
		return err
	}
	if endianness != 0 {
		return fmt.Errorf("schema is big-endian")
	}
	if err := noVector(s, schemaCustomMetadata, "schema custom metadata"); err != nil {
		return err
	}
	start, n, err := s.vector(schemaFields, 4)
	if err != nil {
		return err
	}
	if n == 0 || n > maxSchemaFields {
		return fmt.Errorf("schema has %d fields, want 1 to %d", n, maxSchemaFields)
	}
	for i := 0; i < n; i++ {
		f, err := s.elem(start, i)
		if err == nil {
			err = checkIPCField(f)
		}
		if err != nil {
			return fmt.Errorf("schema field %d: %w", i, err)
		}
	}
	return nil
}

// checkIPCField checks one field of a schema.
//
// NB: every slot arrow-go reads must be read here, even where Braid's
// value does not matter (nullable, a decimal's precision): arrow-go reads
// it unchecked, and its vtable entry may point outside the message.
func checkIPCField(f fbTable) error {
	if _, err := f.bytes(fieldName); err != nil {
		return err
	}
	if _, err := f.uint8(fieldNullable, 0); err != nil {
		return err
	}
	if _, ok, err := f.table(fieldDictionary); err != nil || ok {
		if err == nil {
			err = fmt.Errorf("field is dictionary-encoded")
		}
		return err
	}
	if _, n, err := f.vector(fieldChildren, 4); err != nil || n != 0 {
		if err == nil {
			err = fmt.Errorf("field has %d children; Braid's types are not nested", n)
		}
		return err
	}
	start, n, err := f.vector(fieldCustomMetadata, 4)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		kv, err := f.elem(start, i)
		if err != nil {
			return err
		}
		if _, err := kv.bytes(kvKey); err != nil {
			return err
		}
		if _, err := kv.bytes(kvValue); err != nil {
			return err
		}
	}
	typ, err := f.uint8(fieldTypeType, 0)
	if err != nil {
		return err
	}
	t, ok, err := f.table(fieldType)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("field has no type")
	}
	return checkIPCType(typ, t)
}

// checkIPCType accepts the Arrow types of types.DataType.ArrowType only.
func checkIPCType(typ uint8, t fbTable) error {
	var ok bool
	switch typ {
	case ipcTypeNull, ipcTypeBinary, ipcTypeUtf8, ipcTypeBool:
		return nil
	case ipcTypeInt: // table Int { bitWidth: int; is_signed: bool }
		bits, err1 := t.int32(0, 0)
		signed, err2 := t.uint8(1, 0)
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		ok = (bits == 8 || bits == 16 || bits == 32 || bits == 64) && signed == 1
	case ipcTypeFloatingPoint: // table FloatingPoint { precision: short }
		p, err := t.int16(0, 0)
		if err != nil {
			return err
		}
		ok = p == ipcPrecisionSingle || p == ipcPrecisionDouble
	case ipcTypeDecimal: // table Decimal { precision, scale, bitWidth: int = 128 }
		_, err1 := t.int32(0, 0)
		_, err2 := t.int32(1, 0)
		bits, err3 := t.int32(2, 128)
		if err := errors.Join(err1, err2, err3); err != nil {
			return err
		}
		ok = bits == 128
	case ipcTypeDate: // table Date { unit: short = MILLISECOND }
		unit, err := t.int16(0, 1)
		if err != nil {
			return err
		}
		ok = unit == ipcDateDay
	case ipcTypeTime: // table Time { unit: short = MILLISECOND; bitWidth: int = 32 }
		unit, err1 := t.int16(0, ipcTimeUnitMilli)
		bits, err2 := t.int32(1, 32)
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		ok = unit == ipcTimeUnitMilli && bits == 32
	case ipcTypeTimestamp: // table Timestamp { unit: short; timezone: string }
		unit, err1 := t.int16(0, ipcTimeUnitSecond)
		tz, err2 := t.bytes(1)
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		ok = unit == ipcTimeUnitNano && (len(tz) == 0 || string(tz) == "UTC")
	case ipcTypeDuration: // table Duration { unit: short = MILLISECOND }
		unit, err := t.int16(0, ipcTimeUnitMilli)
		if err != nil {
			return err
		}
		ok = unit == ipcTimeUnitMilli
	}
	if !ok {
		return fmt.Errorf("field has Arrow type %d with parameters no Braid type maps to", typ)
	}
	return nil
}

// ipcColumn says how one column of a channel's schema lies in the body of a
// record batch.
type ipcColumn struct {
	layout ipcLayout
	width  int  // bytes per value, for layoutFixed
	op     bool // the trailing changelog column
	// composite is the type of a column of encoded composite values
	// (ARRAY, MAP, MULTISET, ROW), each of which is checked.
	composite types.DataType
}

type ipcLayout uint8

const (
	layoutNull   ipcLayout = iota // no buffers
	layoutBool                    // validity, bit-packed values
	layoutFixed                   // validity, values of width bytes
	layoutBinary                  // validity, int32 offsets, data
)

// buffers is the number of Buffer entries the column has in a record batch.
func (c ipcColumn) buffers() int {
	switch c.layout {
	case layoutNull:
		return 0
	case layoutBinary:
		return 3
	}
	return 2
}

// braidColumns checks that s, as arrow-go decoded it, is exactly a schema
// that types.Schema.ArrowSchema makes (names, types, nullability, the
// braid.type metadata, the trailing $op column), and returns the layout of
// its columns.
func braidColumns(s *arrow.Schema) ([]ipcColumn, error) {
	ts, err := types.SchemaFromArrow(s)
	if err != nil {
		return nil, err
	}
	want := ts.ArrowSchema()
	if want.NumFields() != s.NumFields() {
		return nil, fmt.Errorf("schema has %d fields, Braid's reading of it %d", s.NumFields(), want.NumFields())
	}
	cols := make([]ipcColumn, s.NumFields())
	for i, f := range s.Fields() {
		if w := want.Field(i); !f.Equal(w) {
			return nil, fmt.Errorf("schema field %d (%q) is not one Braid writes: %s", i, clip(f.Name), fieldDiff(f, w))
		}
		switch t := f.Type.(type) {
		case *arrow.NullType:
			cols[i].layout = layoutNull
		case *arrow.BooleanType:
			cols[i].layout = layoutBool
		case *arrow.StringType, *arrow.BinaryType:
			cols[i].layout = layoutBinary
			if i < len(ts) && ts[i].Type.IsComposite() {
				cols[i].composite = ts[i].Type
			}
		case arrow.FixedWidthDataType:
			cols[i] = ipcColumn{layout: layoutFixed, width: t.BitWidth() / 8}
		default:
			return nil, fmt.Errorf("schema field %d (%q %s) has no known layout", i, clip(f.Name), f.Type)
		}
	}
	cols[len(cols)-1].op = true
	return cols, nil
}

// checkIPCRecordBatch checks a record batch message against the columns of
// its channel before arrow-go decodes it, so that every array it builds
// lies in the body: one node per column, each as long as the batch (so the
// row count is bounded by the body, where $op takes a byte per row), and
// null counts that match the validity bitmaps; every buffer inside the
// body, 8-byte aligned and long enough for its values; string and binary
// offsets non-decreasing and inside their data; row kinds valid; no
// compression and no dictionaries; every value of a composite column
// (ARRAY, MAP, MULTISET, ROW, encoded in Binary cells) a whole encoding of
// its type. STRING values are not checked to be UTF-8: Braid's own batches
// need not be.
func checkIPCRecordBatch(m ipcMessage, cols []ipcColumn) error {
	if m.kind != ipcHeaderRecordBatch {
		return fmt.Errorf("message has header type %d, not a record batch (%d)", m.kind, ipcHeaderRecordBatch)
	}
	rb := m.header
	rows, err := rb.int64(rbLength, 0)
	if err != nil {
		return err
	}
	if rows < 0 || rows > int64(len(m.body)) {
		return fmt.Errorf("record batch of %d rows in a %d-byte body", rows, len(m.body))
	}
	if _, ok, err := rb.table(rbCompression); err != nil || ok {
		if err == nil {
			err = fmt.Errorf("record batch is compressed")
		}
		return err
	}
	if _, n, err := rb.vector(rbVariadicCounts, 8); err != nil || n != 0 {
		if err == nil {
			err = fmt.Errorf("record batch has variadic buffers")
		}
		return err
	}
	nodes, nn, err := rb.vector(rbNodes, 16)
	if err != nil {
		return err
	}
	if nn != len(cols) {
		return fmt.Errorf("record batch has %d field nodes for %d columns", nn, len(cols))
	}
	bufs, nb, err := rb.vector(rbBuffers, 16)
	if err != nil {
		return err
	}
	want := 0
	for _, c := range cols {
		want += c.buffers()
	}
	if nb != want {
		return fmt.Errorf("record batch has %d buffers, its columns %d", nb, want)
	}
	b := batchBody{meta: rb.b, bufs: bufs, body: m.body}
	n := int(rows)
	for i, c := range cols {
		node := rb.b[nodes+16*i:]
		length := int64(binary.LittleEndian.Uint64(node))
		nulls := int64(binary.LittleEndian.Uint64(node[8:]))
		if length != rows || nulls < 0 || nulls > length {
			return fmt.Errorf("column %d has %d rows and %d nulls in a batch of %d rows", i, length, nulls, rows)
		}
		if err := b.checkColumn(c, n, int(nulls)); err != nil {
			return fmt.Errorf("column %d: %w", i, err)
		}
	}
	return nil
}

// fieldDiff says how got differs from the field Braid would write, want.
func fieldDiff(got, want arrow.Field) string {
	switch {
	case !arrow.TypeEqual(got.Type, want.Type):
		return fmt.Sprintf("Arrow type %s, but its braid.type maps to %s", got.Type, want.Type)
	case got.Nullable != want.Nullable:
		return fmt.Sprintf("nullable=%v, want %v", got.Nullable, want.Nullable)
	}
	return fmt.Sprintf("metadata %s, want %s", clip(got.Metadata.String()), want.Metadata)
}

// clip shortens a name from the network for an error message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// batchBody walks the buffers of a record batch in order.
type batchBody struct {
	meta []byte
	bufs int // start of the Buffer vector in meta
	next int // index of the next Buffer
	body []byte
}

// buffer returns the next buffer, checking that it lies in the body and
// starts 8-byte aligned.
func (b *batchBody) buffer() ([]byte, error) {
	e := b.meta[b.bufs+16*b.next:]
	i := b.next
	b.next++
	off := int64(binary.LittleEndian.Uint64(e))
	n := int64(binary.LittleEndian.Uint64(e[8:]))
	if off < 0 || n < 0 || off > int64(len(b.body)) || n > int64(len(b.body))-off {
		return nil, fmt.Errorf("buffer %d at offset %d, %d bytes long, outside the %d-byte body", i, off, n, len(b.body))
	}
	if off%8 != 0 {
		return nil, fmt.Errorf("buffer %d at offset %d is not 8-byte aligned", i, off)
	}
	return b.body[off : off+n], nil
}

func (b *batchBody) checkColumn(c ipcColumn, rows, nulls int) error {
	if c.layout == layoutNull {
		if nulls != rows {
			return fmt.Errorf("NULL column with %d of %d rows null", nulls, rows)
		}
		return nil
	}
	if c.op && nulls != 0 {
		return fmt.Errorf("%d null row kinds", nulls)
	}
	validity, err := b.buffer()
	if err != nil {
		return err
	}
	// NB: arrow-go ignores the validity buffer of a column without nulls.
	if nulls > 0 {
		if int64(len(validity)) < bitutil.BytesForBits(int64(rows)) {
			return fmt.Errorf("validity bitmap of %d bytes for %d rows", len(validity), rows)
		}
		if set := bitutil.CountSetBits(validity, 0, rows); rows-set != nulls {
			return fmt.Errorf("validity bitmap has %d nulls, the node says %d", rows-set, nulls)
		}
	}
	values, err := b.buffer()
	if err != nil {
		return err
	}
	switch c.layout {
	case layoutBool:
		if int64(len(values)) < bitutil.BytesForBits(int64(rows)) {
			return fmt.Errorf("boolean values of %d bytes for %d rows", len(values), rows)
		}
	case layoutFixed:
		if len(values)/c.width < rows {
			return fmt.Errorf("values of %d bytes for %d rows of %d bytes", len(values), rows, c.width)
		}
		if c.op {
			for _, k := range values[:rows] {
				if k > byte(types.Delete) {
					return fmt.Errorf("row kind %d", int8(k))
				}
			}
		}
	case layoutBinary:
		data, err := b.buffer()
		if err != nil {
			return err
		}
		if rows > 0 {
			if err := checkOffsets(values, data, rows); err != nil {
				return err
			}
			if c.composite.IsComposite() {
				return checkComposite(c.composite, validity, nulls > 0, values, data, rows)
			}
		}
	}
	return nil
}

// checkOffsets checks the rows+1 int32 offsets of a string or binary
// column: non-negative, non-decreasing, and ending inside data.
func checkOffsets(offsets, data []byte, rows int) error {
	if len(offsets)/4 < rows+1 {
		return fmt.Errorf("offsets of %d bytes for %d rows", len(offsets), rows)
	}
	prev := int32(binary.LittleEndian.Uint32(offsets))
	if prev < 0 {
		return fmt.Errorf("first offset %d", prev)
	}
	for i := 1; i <= rows; i++ {
		o := int32(binary.LittleEndian.Uint32(offsets[4*i:]))
		if o < prev {
			return fmt.Errorf("offset %d of row %d below the previous %d", o, i, prev)
		}
		prev = o
	}
	if int(prev) > len(data) {
		return fmt.Errorf("offsets end at %d in %d bytes of data", prev, len(data))
	}
	return nil
}

// checkComposite checks each non-NULL value of a column of encoded
// composite values of type t (offsets already checked). Its work is linear
// in the data times the depth of t, and it allocates nothing.
func checkComposite(t types.DataType, validity []byte, hasNulls bool, offsets, data []byte, rows int) error {
	for i := 0; i < rows; i++ {
		if hasNulls && !bitutil.BitIsSet(validity, i) {
			continue
		}
		lo := binary.LittleEndian.Uint32(offsets[4*i:])
		hi := binary.LittleEndian.Uint32(offsets[4*i+4:])
		if err := types.ValidateComposite(t, data[lo:hi]); err != nil {
			return fmt.Errorf("row %d: %w", i, err)
		}
	}
	return nil
}
