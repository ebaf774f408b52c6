package types

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// withNulls returns a copy of a whose rows in nulls are NULL, keeping the
// values under the null bits (as an expression's result does).
func withNulls(a arrow.Array, nulls ...int) arrow.Array {
	d := a.Data()
	valid := memory.NewResizableBuffer(memory.DefaultAllocator)
	valid.Resize(int(bitutil.BytesForBits(int64(d.Len()))))
	bitutil.SetBitsTo(valid.Bytes(), 0, int64(d.Len()), true)
	for _, i := range nulls {
		bitutil.ClearBit(valid.Bytes(), i)
	}
	bufs := append([]*memory.Buffer{valid}, d.Buffers()[1:]...)
	return array.MakeFromData(array.NewData(d.DataType(), d.Len(), bufs, nil, len(nulls), 0))
}

// TestHashNullIgnoresValue: a NULL hashes the same whatever its slot
// holds, and as a NULL a builder made (whose slot holds zero) always has,
// so key groups of NULL keys in existing state do not move.
func TestHashNullIgnoresValue(t *testing.T) {
	mem := memory.DefaultAllocator
	ib := array.NewInt64Builder(mem)
	ib.AppendValues([]int64{6, 0}, nil)
	computed := withNulls(ib.NewArray(), 0, 1) // NULL over 6, NULL over 0
	ib.AppendNull()
	ib.Append(3)
	built := ib.NewArray()
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"x", ""}, nil)
	strs := withNulls(sb.NewArray(), 0, 1)

	h := func(cols ...arrow.Array) []uint64 {
		out := make([]uint64, cols[0].Len())
		HashColumns(cols, out)
		return out
	}
	c, b := h(computed), h(built)
	if c[0] != c[1] || c[0] != b[0] {
		t.Errorf("NULL hashes %x (over 6), %x (over 0), %x (built)", c[0], c[1], b[0])
	}
	// The hash NULLs had before: the zero value's, then the NULL mark.
	seed := uint64(0x9e3779b97f4a7c15)
	if want := fmix64(combine(combine(seed, fmix64(0))*31, nullHash)); b[0] != want {
		t.Errorf("NULL BIGINT hashes %x, it always hashed %x", b[0], want)
	}
	if s := h(strs); s[0] != s[1] || s[0] != fmix64(combine(combine(seed, hashBytes(""))*31, nullHash)) {
		t.Errorf("NULL STRING hashes %x and %x", s[0], s[1])
	}
	if b[1] == b[0] {
		t.Error("3 hashes as NULL")
	}
}
