package operators

import (
	"bytes"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/jobgraph"
)

// TestSortKeyOrder checks that the sort key encoding orders each type's
// values, given in ascending order with NULL first, ascending and
// descending, with NULLs where each direction puts them.
func TestSortKeyOrder(t *testing.T) {
	mem := memory.DefaultAllocator
	dec := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: 2})
	dec.AppendNull()
	for _, v := range []int64{math.MinInt64, -100, -1, 0, 1, 100, math.MaxInt64} {
		dec.Append(decimal128.FromI64(v))
	}
	dec.Append(decimal128.New(1, 0))
	f64 := array.NewFloat64Builder(mem)
	f64.AppendNull()
	f64.AppendValues([]float64{math.Inf(-1), -2.5, -1e-300, math.Copysign(0, -1), 0, 1e-300, 3, math.Inf(1), math.NaN()}, nil)
	i64 := array.NewInt64Builder(mem)
	i64.AppendNull()
	i64.AppendValues([]int64{math.MinInt64, -1, 0, 1, math.MaxInt64}, nil)
	str := array.NewStringBuilder(mem)
	str.AppendNull()
	str.AppendValues([]string{"", "\x00", "\x00\x00", "\x00a", "a", "a\x00", "ab", "b", "é"}, nil)
	bl := array.NewBooleanBuilder(mem)
	bl.AppendNull()
	bl.AppendValues([]bool{false, true}, nil)
	for _, b := range []array.Builder{dec, f64, i64, str, bl} {
		col := b.NewArray()
		n := col.Len()
		for _, desc := range []bool{false, true} {
			e := newSortKeyEncoder([]jobgraph.SortKey{{Col: 0, Desc: desc}})
			keys := make([][]byte, n)
			for i := range keys {
				keys[i] = e.append(nil, []arrow.Array{col}, i)
			}
			for i := 1; i < n; i++ {
				// Ascending: NULL first, then the values in order; descending:
				// the values in reverse order, NULL last.
				a, b := keys[i-1], keys[i]
				if desc && i > 1 {
					a, b = b, a
				}
				if desc && i == 1 {
					// NULL after every value.
					for j := 1; j < n; j++ {
						if bytes.Compare(keys[0], keys[j]) <= 0 {
							t.Errorf("%s DESC: NULL sorts before row %d", col.DataType(), j)
						}
					}
					continue
				}
				if bytes.Compare(a, b) >= 0 {
					t.Errorf("%s desc=%v: row %d (%s) does not sort before row %d (%s)", col.DataType(), desc,
						i-1, col.ValueStr(i-1), i, col.ValueStr(i))
				}
			}
		}
		col.Release()
	}
}
