package shuffle

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/types"
)

func TestTakeEveryLayout(t *testing.T) {
	schema := types.Schema{
		{Name: "b", Type: types.Boolean}, {Name: "i8", Type: types.TinyInt}, {Name: "i16", Type: types.SmallInt},
		{Name: "i32", Type: types.Int}, {Name: "i64", Type: types.BigInt}, {Name: "f", Type: types.Float},
		{Name: "d", Type: types.Double}, {Name: "dec", Type: types.Decimal(20, 2)}, {Name: "s", Type: types.String},
		{Name: "bin", Type: types.Bytes}, {Name: "date", Type: types.Date}, {Name: "ts", Type: types.Timestamp(3)},
		{Name: "n", Type: types.Null},
	}
	as := schema.ArrowSchema()
	const n = 50
	rb := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer rb.Release()
	for i := 0; i < n; i++ {
		null := i%5 == 0
		for c := range schema {
			fb := rb.Field(c)
			if null && c != len(schema)-1 {
				fb.AppendNull()
				continue
			}
			switch b := fb.(type) {
			case *array.BooleanBuilder:
				b.Append(i%3 == 0)
			case *array.Int8Builder:
				b.Append(int8(i))
			case *array.Int16Builder:
				b.Append(int16(i * 3))
			case *array.Int32Builder:
				b.Append(int32(i * 5))
			case *array.Int64Builder:
				b.Append(int64(i) << 40)
			case *array.Float32Builder:
				b.Append(float32(i) / 2)
			case *array.Float64Builder:
				b.Append(float64(i) / 4)
			case *array.Decimal128Builder:
				b.Append(decimal128.FromI64(int64(i) * 1001))
			case *array.StringBuilder:
				b.Append(string(rune('a'+i%26)) + "xyz"[:i%4])
			case *array.BinaryBuilder:
				b.Append([]byte{byte(i), byte(i + 1)})
			case *array.Date32Builder:
				b.Append(arrow.Date32(i * 10))
			case *array.TimestampBuilder:
				b.Append(arrow.Timestamp(i * 1000))
			case *array.NullBuilder:
				b.AppendNull()
			}
		}
		rb.Field(len(schema)).(*array.Int8Builder).Append(int8(i % 4))
	}
	full := rb.NewRecordBatch()
	defer full.Release()
	// A slice with a non-zero offset exercises offset handling.
	sliced := full.NewSlice(3, n)
	defer sliced.Release()
	src := types.Batch{Rec: sliced}
	idx := []int32{0, 46, 2, 2, 7, 12, 11, 1}
	got := Take(src, idx)
	defer got.Release()
	if got.NumRows() != len(idx) {
		t.Fatalf("rows = %d, want %d", got.NumRows(), len(idx))
	}
	for c := 0; c < int(src.Rec.NumCols()); c++ {
		want, have := src.Rec.Column(c), got.Rec.Column(c)
		for j, i := range idx {
			if want.IsNull(int(i)) != have.IsNull(j) {
				t.Fatalf("column %s row %d: null mismatch", as.Field(c).Name, j)
			}
			if !want.IsNull(int(i)) && want.ValueStr(int(i)) != have.ValueStr(j) {
				t.Fatalf("column %s row %d: got %s, want %s", as.Field(c).Name, j, have.ValueStr(j), want.ValueStr(int(i)))
			}
		}
		if err := array.ValidateFull(have); err != nil {
			t.Fatalf("column %s: %v", as.Field(c).Name, err)
		}
	}
}

func TestHashPartitionFollowsKeyGroups(t *testing.T) {
	const maxP, n = 128, 3
	b := makeBatch(0, 5000, 997, true)
	defer b.Release()
	p, err := NewPartitioner(types.PartitionHash, n, []int{0, 2}, maxP)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	vals := map[int64]bool{}
	err = p.Partition(b, func(target int, part types.Batch) error {
		hs := make([]uint64, part.NumRows())
		types.HashColumns([]arrow.Array{part.Column(0), part.Column(2)}, hs)
		for i, h := range hs {
			kg := types.KeyGroupForHash(h, maxP)
			if want := types.SubtaskForKeyGroup(kg, n, maxP); want != target {
				t.Fatalf("row in key group %d sent to %d, want %d", kg, target, want)
			}
			if !types.KeyGroupRangeFor(target, n, maxP).Contains(kg) {
				t.Fatalf("key group %d outside range of subtask %d", kg, target)
			}
			v := part.Column(1).(*array.Int64).Value(i)
			if vals[v] {
				t.Fatalf("row %d sent twice", v)
			}
			vals[v] = true
		}
		seen += part.NumRows()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != 5000 || len(vals) != 5000 {
		t.Fatalf("partitioned %d rows (%d distinct), want 5000", seen, len(vals))
	}
}

func TestOtherPartitionings(t *testing.T) {
	b := makeBatch(0, 10, 3, false)
	defer b.Release()
	collect := func(kind types.Partitioning, n, batches int) map[int]int {
		p, err := NewPartitioner(kind, n, nil, 128)
		if err != nil {
			t.Fatal(err)
		}
		rows := map[int]int{}
		for i := 0; i < batches; i++ {
			if err := p.Partition(b, func(target int, part types.Batch) error {
				if part.Rec != b.Rec {
					t.Fatalf("%v copied the batch", kind)
				}
				rows[target] += part.NumRows()
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		return rows
	}
	if got := collect(types.PartitionBroadcast, 3, 1); len(got) != 3 || got[0] != 10 || got[1] != 10 || got[2] != 10 {
		t.Errorf("broadcast: %v", got)
	}
	if got := collect(types.PartitionRebalance, 3, 6); len(got) != 3 || got[0] != 20 || got[1] != 20 || got[2] != 20 {
		t.Errorf("rebalance: %v", got)
	}
	if got := collect(types.PartitionForward, 1, 2); got[0] != 20 || len(got) != 1 {
		t.Errorf("forward: %v", got)
	}
	if got := collect(types.PartitionSingle, 1, 2); got[0] != 20 || len(got) != 1 {
		t.Errorf("single: %v", got)
	}
	if _, err := NewPartitioner(types.PartitionHash, 2, nil, 128); err == nil {
		t.Error("HASH without keys accepted")
	}
}

func TestTargetsAndSources(t *testing.T) {
	fwd := types.PartitionForward
	if got := Targets(fwd, 2, 3); len(got) != 1 || got[0] != 2 {
		t.Errorf("forward targets: %v", got)
	}
	if got := Sources(fwd, 1, 3, 3); len(got) != 1 || got[0] != 1 {
		t.Errorf("forward sources: %v", got)
	}
	single := types.PartitionSingle
	if got := Sources(single, 0, 4, 2); len(got) != 4 {
		t.Errorf("single sources of 0: %v", got)
	}
	if got := Sources(single, 1, 4, 2); len(got) != 0 {
		t.Errorf("single sources of 1: %v", got)
	}
	if got := Sources(types.PartitionHash, 1, 2, 3); len(got) != 2 {
		t.Errorf("hash sources: %v", got)
	}
}
