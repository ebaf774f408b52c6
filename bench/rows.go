package bench

import (
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/types"
)

// BatchRows is the number of rows in the batches the runners send.
const BatchRows = 4096

// rowSchema is the benchmark row: BIGINT key, BIGINT value, 16-char STRING.
func rowSchema(prefix string) types.Schema {
	return types.Schema{
		{Name: prefix + "k", Type: types.BigInt},
		{Name: prefix + "v", Type: types.BigInt},
		{Name: prefix + "s", Type: types.String},
	}
}

// batchBuilder builds insert batches of the benchmark row from key slices,
// writing the columns straight into their builders.
type batchBuilder struct {
	schema *arrow.Schema
	kb, vb *array.Int64Builder
	sb     *array.StringBuilder
	sbuf   []byte
}

func newBatchBuilder(s types.Schema) *batchBuilder {
	mem := memory.DefaultAllocator
	return &batchBuilder{schema: s.ArrowSchema(),
		kb: array.NewInt64Builder(mem), vb: array.NewInt64Builder(mem), sb: array.NewStringBuilder(mem)}
}

// build returns a batch with keys[i] as key, base+i as value and a
// 16-character string derived from the value. The caller owns the batch.
func (bb *batchBuilder) build(keys []int64, base int64) types.Batch {
	n := len(keys)
	bb.kb.Reserve(n)
	bb.vb.Reserve(n)
	bb.sb.Reserve(n)
	bb.sb.ReserveData(16 * n)
	bb.kb.AppendValues(keys, nil)
	for i := range keys {
		v := base + int64(i)
		bb.vb.UnsafeAppend(v)
		bb.sbuf = string16(bb.sbuf[:0], v)
		bb.sb.BinaryBuilder.Append(bb.sbuf)
	}
	cols := []arrow.Array{bb.kb.NewArray(), bb.vb.NewArray(), bb.sb.NewArray()}
	b := types.NewInsertBatch(bb.schema, cols, n)
	for _, c := range cols {
		c.Release()
	}
	return b
}

func (bb *batchBuilder) release() {
	bb.kb.Release()
	bb.vb.Release()
	bb.sb.Release()
}

// string16 formats v as "row-" and 12 zero-padded digits: 16 characters.
func string16(buf []byte, v int64) []byte {
	var d [20]byte
	buf = append(buf, "row-000000000000"...)
	digits := strconv.AppendInt(d[:0], v%1_000_000_000_000, 10)
	copy(buf[16-len(digits):], digits)
	return buf
}
