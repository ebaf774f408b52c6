package operators

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// TestExpand checks one copy per grouping set, in the sets' order, with
// the set's columns NULL, $e the set's index and each row's kind kept.
func TestExpand(t *testing.T) {
	schema := types.Schema{{Name: "a", Type: types.String}, {Name: "b", Type: types.BigInt}, {Name: "x", Type: types.BigInt}}
	mem := memory.DefaultAllocator
	ab := array.NewStringBuilder(mem)
	bb := array.NewInt64Builder(mem)
	xb := array.NewInt64Builder(mem)
	defer ab.Release()
	defer bb.Release()
	defer xb.Release()
	ab.AppendValues([]string{"p", "q"}, nil)
	bb.AppendValues([]int64{1, 2}, nil)
	xb.AppendValues([]int64{10, 20}, nil)
	cols := []arrow.Array{ab.NewArray(), bb.NewArray(), xb.NewArray()}
	b := types.NewBatch(schema.ArrowSchema(), cols, []int8{int8(types.Insert), int8(types.Delete)})
	for _, c := range cols {
		c.Release()
	}
	defer b.Release()

	e, err := NewExpand(jobgraph.ExpandSpec{Schema: schema, Sets: [][]int{{}, {1}, {0, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	sink := &calcSink{}
	if err := e.Process(0, b, sink); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"+I[p, 1, 10, 0]", "-D[q, 2, 20, 0]",
		"+I[p, NULL, 10, 1]", "-D[q, NULL, 20, 1]",
		"+I[NULL, NULL, 10, 2]", "-D[NULL, NULL, 20, 2]",
	}
	if !slices.Equal(sink.rows, want) {
		t.Fatalf("got %v, want %v", sink.rows, want)
	}
}

// TestExpandSpecRefused checks the spec's own checks: no sets, a column
// out of range, a NOT NULL column set to NULL.
func TestExpandSpecRefused(t *testing.T) {
	schema := types.Schema{{Name: "a", Type: types.BigInt}, {Name: "n", Type: types.BigInt.WithNullable(false)}}
	for _, sets := range [][][]int{nil, {{2}}, {{1}}} {
		if _, err := NewExpand(jobgraph.ExpandSpec{Schema: schema, Sets: sets}); err == nil {
			t.Errorf("sets %v: no error", sets)
		}
	}
}
