package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/braidflow/braid/types"
)

// Take returns a new array holding rows idx of a, whose SQL type is t, in
// that order; the caller releases it. a is borrowed. It fails when the
// rows' strings or binaries exceed what an Arrow column holds (2 GiB; idx
// may repeat rows).
func Take(a arrow.Array, t types.DataType, idx []int32) (arrow.Array, error) {
	v, err := fromArrow(a, t)
	if err != nil {
		return nil, err
	}
	n := len(idx)
	out := &vec{n: n}
	if v.valid != nil {
		out.valid = gather(v.valid, idx)
	}
	switch {
	case v.b != nil:
		out.b = gather(v.b, idx)
	case v.i64 != nil:
		out.i64 = gather(v.i64, idx)
	case v.f64 != nil:
		out.f64 = gather(v.f64, idx)
	case v.dec != nil:
		out.dec = gather[decimal128.Num](v.dec, idx)
	case v.str != nil:
		out.str = gather(v.str, idx)
	case v.bin != nil:
		out.bin = gather(v.bin, idx)
	default:
		out.valid = make([]bool, n)
	}
	return out.toArrow(t)
}

func gather[T any](s []T, idx []int32) []T {
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = s[j]
	}
	return out
}
