package operators

import (
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// unnestBatch builds a batch of (id BIGINT, c coll) rows with the given
// kinds; a nil value is a NULL collection.
func unnestBatch(coll types.DataType, encs [][]byte, kinds []int8) types.Batch {
	schema := types.Schema{{Name: "id", Type: types.BigInt}, {Name: "c", Type: coll}}
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	cb := array.NewBinaryBuilder(memory.DefaultAllocator, arrow.BinaryTypes.Binary)
	defer ib.Release()
	defer cb.Release()
	for i, e := range encs {
		ib.Append(int64(i))
		if e == nil {
			cb.AppendNull()
		} else {
			cb.Append(e)
		}
	}
	cols := []arrow.Array{ib.NewArray(), cb.NewArray()}
	b := types.NewBatch(schema.ArrowSchema(), cols, kinds)
	for _, c := range cols {
		c.Release()
	}
	return b
}

func newUnnestOp(t *testing.T, coll types.DataType, ordinality, outer bool) *Unnest {
	t.Helper()
	in := types.Schema{{Name: "id", Type: types.BigInt}, {Name: "c", Type: coll}}
	fields, _ := expr.UnnestFields(coll, ordinality, outer)
	u, err := NewUnnest(jobgraph.UnnestSpec{InputSchema: in, Collection: expr.Column(1, coll),
		Ordinality: ordinality, Outer: outer, OutputSchema: append(slices.Clone(in), fields...)})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestUnnest checks each collection kind, ordinality, LEFT (outer) rows for
// empty and NULL collections, and that every output row keeps its input
// row's kind.
func TestUnnest(t *testing.T) {
	arr := types.Array(types.String)
	row := types.Row(types.Field{Name: "a", Type: types.Int}, types.Field{Name: "b", Type: types.String})
	arrRow := types.Array(row)
	m := types.Map(types.String, types.Int)
	ms := types.Multiset(types.String)
	enc := func(t types.DataType, keys, vals []any) []byte { return types.AppendComposite(nil, t, keys, vals) }
	ins, del, ub := int8(types.Insert), int8(types.Delete), int8(types.UpdateBefore)
	cases := []struct {
		name              string
		coll              types.DataType
		encs              [][]byte
		kinds             []int8
		ordinality, outer bool
		want              []string
	}{
		{"array", arr, [][]byte{enc(arr, nil, []any{"a", nil}), nil, enc(arr, nil, []any{}), enc(arr, nil, []any{"z"})},
			[]int8{ins, ins, ins, del}, false, false,
			[]string{"+I[0, [a, null], a]", "+I[0, [a, null], NULL]", "-D[3, [z], z]"}},
		{"array with ordinality", arr, [][]byte{enc(arr, nil, []any{"a", "b"})}, []int8{ub}, true, false,
			[]string{"-U[0, [a, b], a, 1]", "-U[0, [a, b], b, 2]"}},
		{"left", arr, [][]byte{nil, enc(arr, nil, []any{}), enc(arr, nil, []any{"x"})}, []int8{ins, del, ins}, true, true,
			[]string{"+I[0, NULL, NULL, NULL]", "-D[1, [], NULL, NULL]", "+I[2, [x], x, 1]"}},
		{"array of rows", arrRow, [][]byte{enc(arrRow, nil, []any{enc(row, nil, []any{int64(1), "p"}), nil})}, []int8{ins}, false, false,
			[]string{"+I[0, [(1, p), null], 1, p]", "+I[0, [(1, p), null], NULL, NULL]"}},
		{"map", m, [][]byte{enc(m, []any{"k", "j"}, []any{int64(1), nil})}, []int8{ins}, false, false,
			[]string{"+I[0, {k=1, j=null}, k, 1]", "+I[0, {k=1, j=null}, j, NULL]"}},
		{"multiset", ms, [][]byte{enc(ms, []any{"e"}, []any{int64(3)})}, []int8{ins}, false, false,
			[]string{"+I[0, {e=3}, e]", "+I[0, {e=3}, e]", "+I[0, {e=3}, e]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := newUnnestOp(t, c.coll, c.ordinality, c.outer)
			defer u.Close()
			b := unnestBatch(c.coll, c.encs, c.kinds)
			defer b.Release()
			sink := &calcSink{}
			if err := u.Process(0, b, sink); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sink.rows, c.want) {
				t.Fatalf("got %v, want %v", sink.rows, c.want)
			}
		})
	}
}

// TestUnnestBatchSizes unnests rows whose arrays hold 0..n elements at
// several batch sizes and checks the row count and the bounded output
// batches.
func TestUnnestBatchSizes(t *testing.T) {
	arr := types.Array(types.BigInt)
	for _, n := range []int{1, 7, 256, 4096} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			encs := make([][]byte, n)
			kinds := make([]int8, n)
			want := 0
			for i := range encs {
				vals := make([]any, i%5)
				for j := range vals {
					vals[j] = int64(i*10 + j)
				}
				want += len(vals)
				encs[i] = types.AppendComposite(nil, arr, nil, vals)
			}
			u := newUnnestOp(t, arr, true, false)
			defer u.Close()
			b := unnestBatch(arr, encs, kinds)
			defer b.Release()
			got := 0
			if err := u.Process(0, b, collectorFunc(func(ob types.Batch) error {
				if ob.NumRows() > unnestBatchRows {
					return fmt.Errorf("batch of %d rows", ob.NumRows())
				}
				ids := ob.Column(0).(*array.Int64)
				elems := ob.Column(2).(*array.Int64)
				pos := ob.Column(3).(*array.Int32)
				for r := 0; r < ob.NumRows(); r++ {
					if elems.Value(r) != ids.Value(r)*10+int64(pos.Value(r))-1 {
						return fmt.Errorf("row %d: element %d at %d of input %d", r, elems.Value(r), pos.Value(r), ids.Value(r))
					}
				}
				got += ob.NumRows()
				return nil
			})); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("%d rows, want %d", got, want)
			}
		})
	}
}

func TestUnnestRefusesBadSpec(t *testing.T) {
	in := types.Schema{{Name: "id", Type: types.BigInt}}
	if _, err := NewUnnest(jobgraph.UnnestSpec{InputSchema: in, Collection: expr.Column(0, types.BigInt), OutputSchema: append(in, in...)}); err == nil {
		t.Fatal("an UNNEST of a BIGINT was built")
	}
}
