package operators

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// TestReplicate checks copies per count (NULL and non-positive counts emit
// nothing), that each copy keeps its row's kind, and that a large count
// leaves in bounded batches.
func TestReplicate(t *testing.T) {
	schema := types.Schema{{Name: "s", Type: types.String}, {Name: "n", Type: types.BigInt}}
	mem := memory.DefaultAllocator
	sb := array.NewStringBuilder(mem)
	nb := array.NewInt64Builder(mem)
	defer sb.Release()
	defer nb.Release()
	sb.AppendValues([]string{"a", "b", "c", "d", "e"}, nil)
	sb.AppendNull()
	nb.AppendValues([]int64{2, 0, -1}, nil)
	nb.AppendNull()
	nb.AppendValues([]int64{1, 3}, nil)
	cols := []arrow.Array{sb.NewArray(), nb.NewArray()}
	kinds := []int8{int8(types.Insert), int8(types.Insert), int8(types.Insert), int8(types.Insert), int8(types.UpdateBefore), int8(types.Delete)}
	b := types.NewBatch(schema.ArrowSchema(), cols, kinds)
	for _, c := range cols {
		c.Release()
	}
	defer b.Release()

	r, err := NewReplicate(jobgraph.ReplicateSpec{Schema: schema, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	sink := &calcSink{}
	if err := r.Process(0, b, sink); err != nil {
		t.Fatal(err)
	}
	want := []string{"+I[a]", "+I[a]", "-U[e]", "-D[NULL]", "-D[NULL]", "-D[NULL]"}
	if len(sink.rows) != len(want) {
		t.Fatalf("got %v, want %v", sink.rows, want)
	}
	for i := range want {
		if sink.rows[i] != want[i] {
			t.Fatalf("got %v, want %v", sink.rows, want)
		}
	}

	nb.AppendValues([]int64{replicateBatchRows*2 + 1}, nil)
	sb.Append("x")
	cols = []arrow.Array{sb.NewArray(), nb.NewArray()}
	big := types.NewBatch(schema.ArrowSchema(), cols, []int8{int8(types.Insert)})
	for _, c := range cols {
		c.Release()
	}
	defer big.Release()
	var sizes []int
	if err := r.Process(0, big, collectorFunc(func(b types.Batch) error {
		sizes = append(sizes, b.NumRows())
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	if len(sizes) != 3 || sizes[0] != replicateBatchRows || sizes[2] != 1 {
		t.Fatalf("batch sizes %v, want two of %d and one of 1", sizes, replicateBatchRows)
	}
}

type collectorFunc func(types.Batch) error

func (f collectorFunc) Emit(b types.Batch) error { return f(b) }
