package shuffle

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/types"
)

// Take returns a new batch holding rows idx of b, in that order, with every
// column of b (the changelog column included). Each column is gathered with
// a loop specialised to its physical layout; the result's buffers are Go
// memory. The caller owns the result and keeps its own reference to b.
func Take(b types.Batch, idx []int32) types.Batch {
	rec := b.Rec
	cols := make([]arrow.Array, rec.NumCols())
	for i := range cols {
		cols[i] = takeArray(rec.Column(i), idx)
	}
	out := array.NewRecordBatch(rec.Schema(), cols, int64(len(idx)))
	for _, c := range cols {
		c.Release()
	}
	return types.Batch{Rec: out}
}

func takeArray(a arrow.Array, idx []int32) arrow.Array {
	d := a.Data()
	n := len(idx)
	off := d.Offset()
	if _, ok := a.DataType().(*arrow.NullType); ok {
		return array.NewNull(n)
	}
	validity, nulls := takeValidity(a, idx)
	var bufs []*memory.Buffer
	switch dt := a.DataType().(type) {
	case *arrow.BooleanType:
		src := d.Buffers()[1].Bytes()
		dst := make([]byte, bitutil.BytesForBits(int64(n)))
		for j, i := range idx {
			if bitutil.BitIsSet(src, off+int(i)) {
				bitutil.SetBit(dst, j)
			}
		}
		bufs = []*memory.Buffer{validity, memory.NewBufferBytes(dst)}
	case *arrow.StringType, *arrow.BinaryType:
		offs, data := takeVarBinary(d, idx)
		bufs = []*memory.Buffer{validity, memory.NewBufferBytes(offs), memory.NewBufferBytes(data)}
	case arrow.FixedWidthDataType:
		src := d.Buffers()[1].Bytes()
		var dst []byte
		switch dt.BitWidth() {
		case 8:
			dst = takeFixed[uint8](src, off, idx)
		case 16:
			dst = takeFixed[uint16](src, off, idx)
		case 32:
			dst = takeFixed[uint32](src, off, idx)
		case 64:
			dst = takeFixed[uint64](src, off, idx)
		case 128:
			dst = takeFixed[[2]uint64](src, off, idx)
		case 256:
			dst = takeFixed[[4]uint64](src, off, idx)
		default:
			panic(fmt.Sprintf("shuffle: cannot gather %d-bit column of %s", dt.BitWidth(), dt))
		}
		bufs = []*memory.Buffer{validity, memory.NewBufferBytes(dst)}
	default:
		panic(fmt.Sprintf("shuffle: cannot gather column of %s", a.DataType()))
	}
	data := array.NewData(a.DataType(), n, bufs, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// takeValidity gathers the validity bitmap; nil when no row is NULL.
func takeValidity(a arrow.Array, idx []int32) (*memory.Buffer, int) {
	if a.NullN() == 0 {
		return nil, 0
	}
	src := a.NullBitmapBytes()
	off := a.Data().Offset()
	dst := make([]byte, bitutil.BytesForBits(int64(len(idx))))
	nulls := 0
	for j, i := range idx {
		if bitutil.BitIsSet(src, off+int(i)) {
			bitutil.SetBit(dst, j)
		} else {
			nulls++
		}
	}
	if nulls == 0 {
		return nil, 0
	}
	return memory.NewBufferBytes(dst), nulls
}

// takeFixed gathers elements of a fixed-width values buffer starting at
// element off and returns the new buffer's bytes.
func takeFixed[T any](src []byte, off int, idx []int32) []byte {
	if len(idx) == 0 {
		return nil
	}
	var zero T
	size := int(unsafe.Sizeof(zero))
	vals := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(src))), len(src)/size)[off:]
	dst := make([]T, len(idx))
	for j, i := range idx {
		dst[j] = vals[i]
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst)*size)
}

// takeVarBinary gathers a String or Binary column: the int32 offsets and the
// value bytes.
func takeVarBinary(d arrow.ArrayData, idx []int32) (offsets, data []byte) {
	ob := d.Buffers()[1].Bytes()
	offs := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(ob))), len(ob)/4)[d.Offset():]
	var src []byte
	if b := d.Buffers()[2]; b != nil {
		src = b.Bytes()
	}
	out := make([]int32, len(idx)+1)
	total := int32(0)
	for j, i := range idx {
		total += offs[i+1] - offs[i]
		out[j+1] = total
	}
	data = make([]byte, total)
	for j, i := range idx {
		copy(data[out[j]:out[j+1]], src[offs[i]:offs[i+1]])
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(out))), len(out)*4), data
}
