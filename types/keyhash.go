package types

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// HashColumns computes a 64-bit hash of the values of cols in every row into
// out (len(out) must equal the row count). Shuffles and keyed state both use
// it, so a row's key group is the same wherever it is computed. Equal SQL
// values of the same type hash equally; NULL hashes to a fixed value. Join
// and group keys are cast to one type by the planner before hashing.
func HashColumns(cols []arrow.Array, out []uint64) {
	for i := range out {
		out[i] = 0x9e3779b97f4a7c15
	}
	for _, c := range cols {
		hashColumn(c, out)
	}
	for i, h := range out {
		out[i] = fmix64(h)
	}
}

const nullHash = 0x5bd1e9955bd1e995

func combine(h, v uint64) uint64 { return (h ^ v) * 0x100000001b3 }

func hashColumn(c arrow.Array, out []uint64) {
	// NB: a NULL's hash must not depend on what the column holds under the
	// null bit (an expression's result keeps whatever it computed there):
	// a NULL row hashes as if its value were the zero value, then the NULL
	// mark, so NULLs whose slot holds zero hash as they always did.
	var prev []uint64
	if c.NullN() > 0 {
		prev = make([]uint64, len(out))
		copy(prev, out)
	}
	hashValues(c, out)
	if prev == nil {
		return
	}
	_, untyped := c.(*array.Null)
	zero := zeroHash(c)
	for i := range out {
		if c.IsNull(i) {
			h := prev[i]
			if !untyped {
				h = combine(h, zero)
			}
			out[i] = combine(h*31, nullHash)
		}
	}
}

// zeroHash is what hashValues combines for the zero value of c's type.
func zeroHash(c arrow.Array) uint64 {
	switch c.(type) {
	case *array.Boolean:
		return fmix64(2)
	case *array.Decimal128:
		return fmix64(0 ^ fmix64(0))
	case *array.String, *array.Binary:
		return hashBytes("")
	}
	return fmix64(0)
}

// hashValues combines the hash of every row's value of c into out, NULL
// or not.
func hashValues(c arrow.Array, out []uint64) {
	switch a := c.(type) {
	case *array.Int8:
		for i, v := range a.Int8Values() {
			out[i] = combine(out[i], fmix64(uint64(int64(v))))
		}
	case *array.Int16:
		for i, v := range a.Int16Values() {
			out[i] = combine(out[i], fmix64(uint64(int64(v))))
		}
	case *array.Int32:
		for i, v := range a.Int32Values() {
			out[i] = combine(out[i], fmix64(uint64(int64(v))))
		}
	case *array.Int64:
		for i, v := range a.Int64Values() {
			out[i] = combine(out[i], fmix64(uint64(v)))
		}
	case *array.Date32:
		for i, v := range a.Date32Values() {
			out[i] = combine(out[i], fmix64(uint64(int64(v))))
		}
	case *array.Time32:
		for i, v := range a.Time32Values() {
			out[i] = combine(out[i], fmix64(uint64(int64(v))))
		}
	case *array.Timestamp:
		for i, v := range a.TimestampValues() {
			out[i] = combine(out[i], fmix64(uint64(v)))
		}
	case *array.Duration:
		for i, v := range a.DurationValues() {
			out[i] = combine(out[i], fmix64(uint64(v)))
		}
	case *array.Float32:
		for i, v := range a.Float32Values() {
			if v == 0 {
				v = 0 // -0.0 equals 0.0
			}
			out[i] = combine(out[i], fmix64(uint64(math.Float32bits(v))))
		}
	case *array.Float64:
		for i, v := range a.Float64Values() {
			if v == 0 {
				v = 0
			}
			out[i] = combine(out[i], fmix64(math.Float64bits(v)))
		}
	case *array.Boolean:
		for i := range out {
			if a.Value(i) {
				out[i] = combine(out[i], fmix64(1))
			} else {
				out[i] = combine(out[i], fmix64(2))
			}
		}
	case *array.Decimal128:
		for i := range out {
			n := a.Value(i)
			out[i] = combine(out[i], fmix64(n.LowBits()^fmix64(uint64(n.HighBits()))))
		}
	case *array.String:
		for i := range out {
			out[i] = combine(out[i], hashBytes(a.Value(i)))
		}
	case *array.Binary:
		for i := range out {
			out[i] = combine(out[i], hashBytes(string(a.Value(i))))
		}
	case *array.Null:
	default:
		panic(fmt.Sprintf("types: cannot hash column of %s", c.DataType()))
	}
}

// hashBytes is FNV-1a over 8-byte words, then mixed.
func hashBytes(s string) uint64 {
	h := uint64(0xcbf29ce484222325)
	for len(s) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64([]byte(s[:8]))) * 0x100000001b3
		s = s[8:]
	}
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 0x100000001b3
	}
	return fmix64(h)
}

// fmix64 is MurmurHash3's 64-bit finalizer.
func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9e53fb81349
	k ^= k >> 33
	return k
}
