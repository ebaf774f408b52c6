package types

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Batch is a run of changelog rows: an Arrow record whose last column is the
// int8 row kind (OpColumn). Batches are immutable once built. Whoever holds a
// Batch owns one reference to its record; Release gives it up.
type Batch struct {
	Rec arrow.RecordBatch
}

// NumRows returns the number of rows.
func (b Batch) NumRows() int { return int(b.Rec.NumRows()) }

// NumCols returns the number of data columns (the changelog column excluded).
func (b Batch) NumCols() int { return int(b.Rec.NumCols()) - 1 }

// Column returns data column i.
func (b Batch) Column(i int) arrow.Array { return b.Rec.Column(i) }

// Kinds returns the row kinds, one per row.
func (b Batch) Kinds() []int8 {
	return b.Rec.Column(int(b.Rec.NumCols()) - 1).(*array.Int8).Int8Values()
}

// Kind returns the row kind of row i.
func (b Batch) Kind(i int) RowKind { return RowKind(b.Kinds()[i]) }

// Release drops the holder's reference.
func (b Batch) Release() {
	if b.Rec != nil {
		b.Rec.Release()
	}
}

// Retain adds a reference, for a holder that keeps the batch.
func (b Batch) Retain() { b.Rec.Retain() }

// NewBatch assembles a batch from data columns and row kinds. The batch takes
// its own references to cols; the caller keeps (and must release) its own.
func NewBatch(schema *arrow.Schema, cols []arrow.Array, kinds []int8) Batch {
	n := len(kinds)
	kb := array.NewInt8Builder(memory.DefaultAllocator)
	kb.AppendValues(kinds, nil)
	ka := kb.NewArray()
	all := make([]arrow.Array, 0, len(cols)+1)
	all = append(all, cols...)
	all = append(all, ka)
	rec := array.NewRecordBatch(schema, all, int64(n))
	ka.Release()
	return Batch{Rec: rec}
}

// NewInsertBatch is NewBatch with every row an insertion.
func NewInsertBatch(schema *arrow.Schema, cols []arrow.Array, n int) Batch {
	return NewBatch(schema, cols, make([]int8, n))
}
