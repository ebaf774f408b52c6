package operators

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/braidflow/braid/types"
)

// takeBatch turns the rows built in rb, with their kinds, into a batch of
// schema, and resets rb and kinds for the next batch. The caller owns (and
// releases) the batch.
func takeBatch(schema *arrow.Schema, rb *types.RowBuilder, kinds *[]int8) types.Batch {
	arrs := rb.NewArrays()
	b := types.NewBatch(schema, arrs, *kinds)
	for _, a := range arrs {
		a.Release()
	}
	*kinds = (*kinds)[:0]
	return b
}

// emitBuilt emits the rows built in rb, if any, as one batch.
func emitBuilt(out Collector, schema *arrow.Schema, rb *types.RowBuilder, kinds *[]int8) error {
	if rb.Len() == 0 {
		return nil
	}
	b := takeBatch(schema, rb, kinds)
	err := out.Emit(b)
	b.Release()
	return err
}
