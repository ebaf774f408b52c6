package shuffle

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/endian"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/types"
)

// allTypesSchema has a column of every SQL type Braid has, nullable and
// NOT NULL.
var allTypesSchema = func() types.Schema {
	ts := []types.DataType{
		types.Null, types.Boolean, types.TinyInt, types.SmallInt, types.Int, types.BigInt,
		types.Float, types.Double, types.Decimal(10, 2), types.Decimal(38, 18),
		types.Char(3), types.VarChar(10), types.String, types.DataType{Kind: types.KindBinary, Length: 4}, types.Bytes,
		types.Date, types.Time(3), types.Timestamp(3), types.TimestampLTZ(6),
		types.IntervalDayTime(), types.IntervalYearMonth(),
		compositeType,
	}
	var s types.Schema
	for i, t := range ts {
		s = append(s, types.Field{Name: fmt.Sprintf("c%d", i), Type: t})
		if t.Kind != types.KindNull {
			s = append(s, types.Field{Name: fmt.Sprintf("c%d_nn", i), Type: t.WithNullable(false)})
		}
	}
	return s
}()

// compositeType is a composite column type of allTypesSchema: an ARRAY of
// ROWs that hold a STRING, an INT and a MAP.
var compositeType = types.Array(types.Row(
	types.Field{Name: "s", Type: types.String},
	types.Field{Name: "i", Type: types.Int},
	types.Field{Name: "m", Type: types.Map(types.String, types.BigInt)},
))

// randomComposite returns a random encoded value of compositeType.
func randomComposite(rng *rand.Rand) []byte {
	rt := compositeType.Elem()
	var rows []any
	for range rng.IntN(4) {
		if rng.IntN(4) == 0 {
			rows = append(rows, nil)
			continue
		}
		var ks, vs []any
		for j := range rng.IntN(3) {
			ks = append(ks, strings.Repeat("k", j+1))
			vs = append(vs, rng.Int64())
		}
		m := types.AppendComposite(nil, rt.FieldAt(2).Type, ks, vs)
		rows = append(rows, types.AppendComposite(nil, rt, nil, []any{strings.Repeat("x", rng.IntN(9)), int64(rng.Int32()), m}))
	}
	return types.AppendComposite(nil, compositeType, nil, rows)
}

// makeRandomBatch builds n rows of schema s with random values and row
// kinds; about one value in five of a nullable column is NULL.
func makeRandomBatch(rng *rand.Rand, s types.Schema, n int) types.Batch {
	mem := memory.DefaultAllocator
	as := s.ArrowSchema()
	cols := make([]arrow.Array, len(s))
	for i, f := range s {
		b := array.NewBuilder(mem, as.Field(i).Type)
		for r := 0; r < n; r++ {
			if f.Type.Nullable() && rng.IntN(5) == 0 {
				b.AppendNull()
				continue
			}
			if f.Type.IsComposite() {
				b.(*array.BinaryBuilder).Append(randomComposite(rng))
				continue
			}
			appendRandom(rng, b)
		}
		cols[i] = b.NewArray()
		b.Release()
	}
	kinds := make([]int8, n)
	for r := range kinds {
		kinds[r] = int8(rng.IntN(4))
	}
	batch := types.NewBatch(as, cols, kinds)
	for _, c := range cols {
		c.Release()
	}
	return batch
}

func appendRandom(rng *rand.Rand, b array.Builder) {
	switch b := b.(type) {
	case *array.NullBuilder:
		b.AppendNull()
	case *array.BooleanBuilder:
		b.Append(rng.IntN(2) == 0)
	case *array.Int8Builder:
		b.Append(int8(rng.Int()))
	case *array.Int16Builder:
		b.Append(int16(rng.Int()))
	case *array.Int32Builder:
		b.Append(int32(rng.Int()))
	case *array.Int64Builder:
		b.Append(rng.Int64())
	case *array.Float32Builder:
		b.Append(rng.Float32())
	case *array.Float64Builder:
		b.Append(rng.NormFloat64())
	case *array.Decimal128Builder:
		b.Append(decimal128.FromI64(rng.Int64N(1e9)))
	case *array.StringBuilder:
		b.Append(strings.Repeat("x", rng.IntN(20)))
	case *array.BinaryBuilder:
		b.Append(bytes.Repeat([]byte{byte(rng.Int())}, rng.IntN(20)))
	case *array.Date32Builder:
		b.Append(arrow.Date32(rng.IntN(30000)))
	case *array.Time32Builder:
		b.Append(arrow.Time32(rng.IntN(86_400_000)))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(rng.Int64()))
	case *array.DurationBuilder:
		b.Append(arrow.Duration(rng.Int64()))
	default:
		panic(fmt.Sprintf("no random values for %T", b))
	}
}

// encodePayloads encodes batches as a remote channel does, one ipc.Writer
// for the channel, and returns the arrow_ipc payloads: the schema with the
// first batch, then one payload per batch, or everything in one payload
// when coalesce is set.
func encodePayloads(t testing.TB, coalesce bool, batches ...types.Batch) [][]byte {
	t.Helper()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf)
	var out [][]byte
	for _, b := range batches {
		if err := w.Write(b.Rec); err != nil {
			t.Fatal(err)
		}
		if !coalesce {
			out = append(out, bytes.Clone(buf.Bytes()))
			buf.Reset()
		}
	}
	if coalesce {
		out = append(out, bytes.Clone(buf.Bytes()))
	}
	return out
}

// decodePayloads feeds payloads to one decoder, as a server stream does.
func decodePayloads(payloads ...[]byte) ([]types.Batch, error) {
	var d decoder
	defer d.release()
	var got []types.Batch
	for _, p := range payloads {
		err := d.feed(p, func(b types.Batch) error { got = append(got, b); return nil })
		if err != nil {
			releaseAll(got)
			return nil, err
		}
	}
	return got, nil
}

func releaseAll(bs []types.Batch) {
	for _, b := range bs {
		b.Release()
	}
}

// TestDecodeRoundTrip checks that the decoder accepts every batch Braid
// encodes, whatever its types, size, nulls or slicing, and returns it
// unchanged.
func TestDecodeRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range []types.Schema{allTypesSchema, testSchema, {}} {
		var in []types.Batch
		for _, n := range []int{0, 1, 7, 256, 4096} {
			in = append(in, makeRandomBatch(rng, s, n))
		}
		// A slice of a batch, as FORWARD edges send what they were given.
		in = append(in, types.Batch{Rec: in[3].Rec.NewSlice(3, 200)})
		for _, coalesce := range []bool{false, true} {
			t.Run(fmt.Sprintf("columns=%d/coalesce=%v", len(s), coalesce), func(t *testing.T) {
				got, err := decodePayloads(encodePayloads(t, coalesce, in...)...)
				if err != nil {
					t.Fatal(err)
				}
				defer releaseAll(got)
				if len(got) != len(in) {
					t.Fatalf("decoded %d batches, sent %d", len(got), len(in))
				}
				for i := range in {
					if !array.RecordEqual(got[i].Rec, in[i].Rec) {
						t.Fatalf("batch %d changed in transit:\nsent %v\ngot  %v", i, in[i].Rec, got[i].Rec)
					}
				}
			})
		}
		releaseAll(in)
	}
}

// ipcMessagesOf cuts a payload into its messages, for crafting. The
// messages' tables alias p, so writing through them patches p.
func ipcMessagesOf(t testing.TB, p []byte) []ipcMessage {
	t.Helper()
	var ms []ipcMessage
	for len(p) > 0 {
		m, rest, err := cutIPCMessage(p)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
		p = rest
	}
	return ms
}

// slotPos is the position in t.b of slot's inline value.
func slotPos(tb testing.TB, t fbTable, slot, size int) int {
	tb.Helper()
	p, ok, err := t.field(slot, size)
	if err != nil || !ok {
		tb.Fatalf("slot %d not in the table: %v", slot, err)
	}
	return p
}

// vectorLenPos is the position in t.b of the length of slot's vector.
func vectorLenPos(tb testing.TB, t fbTable, slot int) int {
	tb.Helper()
	p, ok, err := t.ref(slot, 4)
	if err != nil || !ok {
		tb.Fatalf("vector %d not in the table: %v", slot, err)
	}
	return p
}

type craftedPayload struct {
	name    string
	payload []byte
	// want is part of the error the decoder must return.
	want string
}

// craftedPayloads are arrow_ipc payloads of a stream's first message that
// Braid's sender never writes: what a peer could send to make the decoder
// allocate without bound, recurse forever or read outside the message. The
// first is the reported finding: a schema of a few hundred bytes that
// claims 2^31-1 fields (arrow-go's reader allocates 88 bytes per field,
// 189 GB, before it reads any).
func craftedPayloads(t testing.TB) []craftedPayload {
	t.Helper()
	// valid is the schema and one 5-row batch of testSchema, with NULLs.
	valid := func() ([]byte, ipcMessage, ipcMessage) {
		b := makeBatch(0, 5, 3, true)
		defer b.Release()
		p := encodePayloads(t, true, b)[0]
		ms := ipcMessagesOf(t, p)
		return p, ms[0], ms[1]
	}
	put32 := func(b []byte, pos int, v uint32) { binary.LittleEndian.PutUint32(b[pos:], v) }
	put64 := func(b []byte, pos int, v uint64) { binary.LittleEndian.PutUint64(b[pos:], v) }
	// buffer returns the position in the batch's metadata of Buffer i.
	buffer := func(rb ipcMessage, i int) int {
		start, _, err := rb.header.vector(rbBuffers, 16)
		if err != nil {
			t.Fatal(err)
		}
		return start + 16*i
	}
	node := func(rb ipcMessage, i int) int {
		start, _, err := rb.header.vector(rbNodes, 16)
		if err != nil {
			t.Fatal(err)
		}
		return start + 16*i
	}
	// bodyOf returns buffer i of the batch inside the body.
	bodyOf := func(rb ipcMessage, i int) []byte {
		e := rb.meta[buffer(rb, i):]
		off, n := binary.LittleEndian.Uint64(e), binary.LittleEndian.Uint64(e[8:])
		return rb.body[off : off+n]
	}
	encodeSchema := func(s *arrow.Schema, opts ...ipc.Option) []byte {
		var buf bytes.Buffer
		w := ipc.NewWriter(&buf, append(opts, ipc.WithSchema(s))...)
		cols := make([]arrow.Array, len(s.Fields()))
		for i, f := range s.Fields() {
			cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, 0)
			defer cols[i].Release()
		}
		rec := array.NewRecordBatch(s, cols, 0)
		defer rec.Release()
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	op := arrow.Field{Name: types.OpColumn, Type: arrow.PrimitiveTypes.Int8}
	braidField := func(name string, dt arrow.DataType, braidType string) arrow.Field {
		return arrow.Field{Name: name, Type: dt, Nullable: true, Metadata: arrow.NewMetadata([]string{"braid.type"}, []string{braidType})}
	}

	var cs []craftedPayload
	add := func(name, want string, p []byte) { cs = append(cs, craftedPayload{name, p, want}) }

	// The schema.
	p, schema, _ := valid()
	put32(schema.meta, vectorLenPos(t, schema.header, schemaFields), math.MaxInt32)
	add("schema claims 2^31-1 fields", "claims 2147483647 elements", p)

	p, schema, _ = valid()
	{
		// Field 0 claims one child: itself, through an offset that wraps
		// round 2^32 (arrow-go recursed until the stack overflowed).
		start, _, _ := schema.header.vector(schemaFields, 4)
		f0, err := schema.header.elem(start, 0)
		if err != nil {
			t.Fatal(err)
		}
		kids := vectorLenPos(t, f0, fieldChildren)
		put32(f0.b, kids, 1)
		put32(f0.b, kids+4, uint32(f0.pos-(kids+4)))
	}
	add("field is its own child", "field has 1 children", p)

	p, schema, _ = valid()
	put32(p, 4, math.MaxInt32&^7)
	add("metadata length 2^31", "message metadata of 2147483640 bytes (limit 4194304)", p)

	p, schema, _ = valid()
	put32(p, 4, 0xFFFFFFF0)
	add("negative metadata length", "message metadata of -16 bytes", p)

	p, schema, _ = valid()
	put32(schema.meta, 0, 1<<30)
	add("root table outside the metadata", "outside the", p)

	p, schema, _ = valid()
	put32(schema.meta, schema.header.pos, 0x80000000)
	add("vtable outside the metadata", "has its vtable at byte", p)

	p, schema, _ = valid()
	{
		root, _ := fbRoot(schema.meta)
		binary.LittleEndian.PutUint16(schema.meta[slotPos(t, root, msgVersion, 2):], 3)
	}
	add("metadata version V4", "metadata version 3", p)

	p, schema, _ = valid()
	{
		// Field 0's vtable sends its nullable flag 64 KB on, outside the
		// message; arrow-go read it unchecked (found by FuzzDecodeFrame).
		start, _, _ := schema.header.vector(schemaFields, 4)
		f0, _ := schema.header.elem(start, 0)
		binary.LittleEndian.PutUint16(f0.b[f0.vt+4+2*fieldNullable:], 0xFFF0)
	}
	add("nullable flag outside the metadata", "flatbuffer field 1 of the table at byte", p)

	{
		p := encodeSchema(arrow.NewSchema([]arrow.Field{
			braidField("d", &arrow.Decimal128Type{Precision: 10, Scale: 2}, "DECIMAL(10, 2)"), op}, nil))
		schema := ipcMessagesOf(t, p)[0]
		start, _, _ := schema.header.vector(schemaFields, 4)
		f0, _ := schema.header.elem(start, 0)
		dec, _, _ := f0.table(fieldType)
		binary.LittleEndian.PutUint16(dec.b[dec.vt+4:], 0xFFF0) // precision
		add("decimal precision outside the metadata", "flatbuffer field 0 of the table at byte", p)
	}

	add("nested list column", "field has 1 children", encodeSchema(arrow.NewSchema([]arrow.Field{
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true}, op}, nil)))

	deep := arrow.DataType(arrow.PrimitiveTypes.Int64)
	for range 60 {
		deep = arrow.StructOf(arrow.Field{Name: "s", Type: deep, Nullable: true})
	}
	add("struct nested 60 deep", "field has 1 children", encodeSchema(arrow.NewSchema([]arrow.Field{{Name: "d", Type: deep}, op}, nil)))

	add("dictionary column", "dictionary-encoded", encodeSchema(arrow.NewSchema([]arrow.Field{
		{Name: "d", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}}, op}, nil)))

	add("unsigned column", "Arrow type 2 with parameters no Braid type maps to", encodeSchema(arrow.NewSchema([]arrow.Field{
		braidField("u", arrow.PrimitiveTypes.Uint32, "INT"), op}, nil)))

	add("timestamp in a named zone", "Arrow type 10", encodeSchema(arrow.NewSchema([]arrow.Field{
		braidField("t", &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Europe/Paris"}, "TIMESTAMP_LTZ(3)"), op}, nil)))

	add("big-endian schema", "big-endian", encodeSchema(arrow.NewSchemaWithEndian([]arrow.Field{
		braidField("v", arrow.PrimitiveTypes.Int64, "BIGINT"), op}, nil, endian.BigEndian)))

	add("no changelog column", "no trailing $op column", encodeSchema(arrow.NewSchema([]arrow.Field{
		braidField("v", arrow.PrimitiveTypes.Int64, "BIGINT")}, nil)))

	add("braid.type disagrees with the Arrow type", "Arrow type int64, but its braid.type maps to utf8", encodeSchema(arrow.NewSchema([]arrow.Field{
		braidField("v", arrow.PrimitiveTypes.Int64, "STRING"), op}, nil)))

	add("schema metadata", "schema custom metadata has 1 entries", encodeSchema(arrow.NewSchema([]arrow.Field{op},
		func() *arrow.Metadata { md := arrow.NewMetadata([]string{"k"}, []string{"v"}); return &md }())))

	// The record batch.
	p, _, rb := valid()
	{
		root, _ := fbRoot(rb.meta)
		put64(rb.meta, slotPos(t, root, msgBodyLength, 8), 1<<40)
	}
	add("body length 2^40", "message body of 1099511627776 bytes", p)

	p, _, rb = valid()
	put64(rb.meta, slotPos(t, rb.header, rbLength, 8), 1<<40)
	add("row count 2^40", "record batch of 1099511627776 rows", p)

	p, _, rb = valid()
	put64(rb.meta, node(rb, 1), 1<<40)
	add("column longer than the batch", "column 1 has 1099511627776 rows", p)

	p, _, rb = valid()
	put64(rb.meta, buffer(rb, 3)+8, 1<<62)
	add("buffer length 2^62", "buffer 3 at offset", p)

	p, _, rb = valid()
	put64(rb.meta, buffer(rb, 1), math.MaxUint64-7)
	add("negative buffer offset", "buffer 1 at offset -8", p)

	p, _, rb = valid()
	put64(rb.meta, buffer(rb, 1), 4)
	add("unaligned buffer", "not 8-byte aligned", p)

	p, _, rb = valid()
	put32(rb.meta, vectorLenPos(t, rb.header, rbBuffers), 1<<28)
	add("buffer vector of 2^28 entries", "claims 268435456 elements", p)

	p, _, rb = valid()
	put32(rb.meta, vectorLenPos(t, rb.header, rbNodes), 3)
	add("a node short", "3 field nodes for 4 columns", p)

	// Buffers: k validity, values; v validity, values; s validity,
	// offsets, data; $op validity, values.
	p, _, rb = valid()
	put32(bodyOf(rb, 5), 4*5, 1<<20)
	add("string offsets past the data", "offsets end at 1048576", p)

	p, _, rb = valid()
	put32(bodyOf(rb, 5), 4*3, 0)
	add("string offsets decreasing", "offset 0 of row 3 below the previous 15", p)

	p, _, rb = valid()
	bodyOf(rb, 8)[2] = 9
	add("row kind 9", "row kind 9", p)

	p, _, rb = valid()
	put64(rb.meta, node(rb, 2)+8, 2)
	add("null count disagrees with the bitmap", "validity bitmap has 1 nulls, the node says 2", p)

	p, _, rb = valid()
	put64(rb.meta, node(rb, 3)+8, 1)
	add("null row kind", "1 null row kinds", p)

	p, schema, _ = valid()
	first := p[:8+len(schema.meta)]
	add("second schema", "not a record batch", append(bytes.Clone(first), first...))

	p, _, _ = valid()
	add("end-of-stream marker", "end-of-stream marker inside a channel", append(p, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0))

	p, _, _ = valid()
	add("truncated batch", "but only", p[:len(p)-8])

	{
		b := makeBatch(0, 100, 3, false)
		var buf bytes.Buffer
		w := ipc.NewWriter(&buf, ipc.WithLZ4())
		if err := w.Write(b.Rec); err != nil {
			t.Fatal(err)
		}
		b.Release()
		add("compressed batch", "record batch is compressed", buf.Bytes())
	}
	{
		// A composite column whose value is not an encoding of its type.
		s := types.Schema{{Name: "a", Type: compositeType}}
		bb := array.NewBinaryBuilder(memory.DefaultAllocator, arrow.BinaryTypes.Binary)
		bb.Append(randomComposite(rand.New(rand.NewPCG(5, 6))))
		bb.Append([]byte{0xff, 0xff, 0xff, 0x7f})
		col := bb.NewArray()
		bb.Release()
		b := types.NewInsertBatch(s.ArrowSchema(), []arrow.Array{col}, 2)
		col.Release()
		add("malformed composite value", "row 1: types: malformed composite value", encodePayloads(t, true, b)[0])
		b.Release()
	}
	return cs
}

// TestDecodeRefusesCrafted checks that each crafted payload fails decoding
// with its error, classified as the peer's fault.
func TestDecodeRefusesCrafted(t *testing.T) {
	for _, c := range craftedPayloads(t) {
		t.Run(c.name, func(t *testing.T) {
			got, err := decodePayloads(c.payload)
			releaseAll(got)
			var bad *badStreamError
			switch {
			case err == nil:
				t.Fatal("decoded")
			case !errors.As(err, &bad):
				t.Fatalf("error %q is not a *badStreamError", err)
			case !strings.Contains(err.Error(), c.want):
				t.Fatalf("error %q, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestDecodeSchemaLimit checks the field limit on a schema Braid could
// otherwise write.
func TestDecodeSchemaLimit(t *testing.T) {
	for _, n := range []int{maxSchemaFields - 1, maxSchemaFields} {
		s := make(types.Schema, n)
		for i := range s {
			s[i] = types.Field{Name: fmt.Sprintf("column_%d", i), Type: types.BigInt}
		}
		b := makeRandomBatch(rand.New(rand.NewPCG(1, 2)), s, 3)
		got, err := decodePayloads(encodePayloads(t, true, b)...)
		b.Release()
		releaseAll(got)
		fields := n + 1
		switch {
		case fields <= maxSchemaFields && err != nil:
			t.Fatalf("%d fields: %v", fields, err)
		case fields > maxSchemaFields && (err == nil || !strings.Contains(err.Error(), "schema has 10001 fields, want 1 to 10000")):
			t.Fatalf("%d fields: got error %v", fields, err)
		}
	}
}

// TestDecodePayloadLimit checks that the decoder refuses a payload over
// maxMessage whatever the server let through.
func TestDecodePayloadLimit(t *testing.T) {
	_, err := decodePayloads(make([]byte, maxMessage+1))
	if err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("got %v", err)
	}
}

// TestBudgetAllocator checks the decoder's tripwire allocator.
func TestBudgetAllocator(t *testing.T) {
	a := budgetAllocator{left: 100}
	b := a.Allocate(60)
	b = a.Reallocate(90, b)
	if a.left != 10 || len(b) != 90 {
		t.Fatalf("left %d, len %d", a.left, len(b))
	}
	a.Free(b)
	defer func() {
		if recover() == nil {
			t.Fatal("allocation over the budget did not panic")
		}
	}()
	a.Allocate(11)
}
