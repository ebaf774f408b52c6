package expr

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/types"
)

// vec is one evaluated column inside the engine. Exactly one value slice is
// used, chosen by the SQL type's class: every integer, DATE, TIME,
// TIMESTAMP and INTERVAL in i64 (TIMESTAMP in ns, DATE in days, TIME in ms);
// FLOAT and DOUBLE in f64; DECIMAL in dec (unscaled); strings in str;
// binaries in bin; BOOLEAN in b. valid is nil when no value is NULL.
//
// NB: kernels never write into their inputs; a vec may alias an input
// column's buffer or a cached literal (borrowed), so export copies those.
type vec struct {
	n        int
	valid    []bool
	i64      []int64
	f64      []float64
	dec      []decimal128.Num
	str      []string
	bin      [][]byte
	b        []bool
	borrowed bool
}

type class uint8

const (
	clsNull class = iota
	clsBool
	clsInt
	clsFloat
	clsDec
	clsStr
	clsBin
)

func classOf(t types.DataType) class {
	switch t.Kind {
	case types.KindBoolean:
		return clsBool
	case types.KindFloat, types.KindDouble:
		return clsFloat
	case types.KindDecimal:
		return clsDec
	case types.KindChar, types.KindVarChar:
		return clsStr
	case types.KindBinary, types.KindVarBinary, types.KindArray, types.KindMap, types.KindMultiset, types.KindRow:
		return clsBin
	case types.KindNull:
		return clsNull
	}
	return clsInt
}

func (v *vec) isNull(i int) bool { return v.valid != nil && !v.valid[i] }

func newVec(c class, n int) *vec {
	v := &vec{n: n}
	switch c {
	case clsBool:
		v.b = make([]bool, n)
	case clsInt:
		v.i64 = make([]int64, n)
	case clsFloat:
		v.f64 = make([]float64, n)
	case clsDec:
		v.dec = make([]decimal128.Num, n)
	case clsStr:
		v.str = make([]string, n)
	case clsBin:
		v.bin = make([][]byte, n)
	case clsNull:
		v.valid = make([]bool, n)
	}
	return v
}

// andValid returns the validity of a row-wise strict function of vs: a row
// is valid when it is valid in every input. It returns nil when no input
// has nulls, and a fresh slice otherwise.
func andValid(n int, vs ...*vec) []bool {
	var out []bool
	for _, v := range vs {
		if v.valid == nil {
			continue
		}
		if out == nil {
			out = make([]bool, n)
			copy(out, v.valid)
			continue
		}
		for i, ok := range v.valid {
			out[i] = out[i] && ok
		}
	}
	return out
}

func validOf(a arrow.Array) []bool {
	if a.NullN() == 0 {
		return nil
	}
	out := make([]bool, a.Len())
	for i := range out {
		out[i] = a.IsValid(i)
	}
	return out
}

func asInt64s[T ~int64](s []T) []int64 {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(&s[0])), len(s))
}

func widen[T int8 | int16 | int32 | arrow.Date32 | arrow.Time32](s []T) []int64 {
	out := make([]int64, len(s))
	for i, x := range s {
		out[i] = int64(x)
	}
	return out
}

// fromArrow reads column a (of SQL type t) into a vec without copying where
// the layouts agree.
func fromArrow(a arrow.Array, t types.DataType) (*vec, error) {
	n := a.Len()
	v := &vec{n: n, valid: validOf(a), borrowed: true}
	switch x := a.(type) {
	case *array.Null:
		v.valid = make([]bool, n)
	case *array.Boolean:
		v.b = make([]bool, n)
		for i := range v.b {
			v.b[i] = x.Value(i)
		}
	case *array.Int8:
		v.i64 = widen(x.Int8Values())
	case *array.Int16:
		v.i64 = widen(x.Int16Values())
	case *array.Int32:
		v.i64 = widen(x.Int32Values())
	case *array.Int64:
		v.i64 = x.Int64Values()
	case *array.Date32:
		v.i64 = widen(x.Date32Values())
	case *array.Time32:
		v.i64 = widen(x.Time32Values())
	case *array.Timestamp:
		v.i64 = asInt64s(x.TimestampValues())
	case *array.Duration:
		v.i64 = asInt64s(x.DurationValues())
	case *array.Float32:
		v.f64 = make([]float64, n)
		for i, f := range x.Float32Values() {
			v.f64[i] = float64(f)
		}
	case *array.Float64:
		v.f64 = x.Float64Values()
	case *array.Decimal128:
		v.dec = x.Values()
	case *array.String:
		v.str = make([]string, n)
		for i := range v.str {
			v.str[i] = x.Value(i)
		}
	case *array.Binary:
		v.bin = make([][]byte, n)
		for i := range v.bin {
			v.bin[i] = x.Value(i)
		}
	default:
		return nil, fmt.Errorf("expr: column of Arrow type %v cannot hold %v", a.DataType(), t)
	}
	if classOf(t) != classOfVec(v) && t.Kind != types.KindNull {
		return nil, fmt.Errorf("expr: column of Arrow type %v cannot hold %v", a.DataType(), t)
	}
	return v, nil
}

func classOfVec(v *vec) class {
	switch {
	case v.b != nil:
		return clsBool
	case v.i64 != nil:
		return clsInt
	case v.f64 != nil:
		return clsFloat
	case v.dec != nil:
		return clsDec
	case v.str != nil:
		return clsStr
	case v.bin != nil:
		return clsBin
	}
	return clsNull
}

func bitmapOf(valid []bool, n int) (*memory.Buffer, int) {
	if valid == nil {
		return nil, 0
	}
	bm := make([]byte, bitutil.BytesForBits(int64(n)))
	nulls := 0
	for i := 0; i < n; i++ {
		if valid[i] {
			bitutil.SetBit(bm, i)
		} else {
			nulls++
		}
	}
	if nulls == 0 {
		return nil, 0
	}
	return memory.NewBufferBytes(bm), nulls
}

func narrow[T int8 | int16 | int32](s []int64) []T {
	out := make([]T, len(s))
	for i, x := range s {
		out[i] = T(x)
	}
	return out
}

// toArrow builds an Arrow array of type t holding v's n rows. The caller
// owns the result. It fails, before allocating, on string or binary values
// that together exceed what an Arrow column holds.
func (v *vec) toArrow(t types.DataType) (arrow.Array, error) {
	n := v.n
	at := t.ArrowType()
	if t.Kind == types.KindNull {
		return array.NewNull(n), nil
	}
	nullBuf, nulls := bitmapOf(v.valid, n)
	fixed := func(data []byte) arrow.Array {
		d := array.NewData(at, n, []*memory.Buffer{nullBuf, memory.NewBufferBytes(data)}, nil, nulls, 0)
		defer d.Release()
		return array.MakeFromData(d)
	}
	switch t.Kind {
	case types.KindTinyInt:
		return fixed(arrow.Int8Traits.CastToBytes(narrow[int8](v.i64[:n]))), nil
	case types.KindSmallInt:
		return fixed(arrow.Int16Traits.CastToBytes(narrow[int16](v.i64[:n]))), nil
	case types.KindInt, types.KindDate, types.KindTime, types.KindIntervalYearMonth:
		return fixed(arrow.Int32Traits.CastToBytes(narrow[int32](v.i64[:n]))), nil
	case types.KindBigInt, types.KindTimestamp, types.KindTimestampLTZ, types.KindIntervalDayTime:
		s := v.i64[:n]
		if v.borrowed {
			s = append([]int64(nil), s...)
		}
		return fixed(arrow.Int64Traits.CastToBytes(s)), nil
	case types.KindDouble:
		s := v.f64[:n]
		if v.borrowed {
			s = append([]float64(nil), s...)
		}
		return fixed(arrow.Float64Traits.CastToBytes(s)), nil
	case types.KindFloat:
		s := make([]float32, n)
		for i, f := range v.f64[:n] {
			s[i] = float32(f)
		}
		return fixed(arrow.Float32Traits.CastToBytes(s)), nil
	case types.KindDecimal:
		s := v.dec[:n]
		if v.borrowed {
			s = append([]decimal128.Num(nil), s...)
		}
		return fixed(arrow.Decimal128Traits.CastToBytes(s)), nil
	case types.KindBoolean:
		bm := make([]byte, bitutil.BytesForBits(int64(n)))
		for i, b := range v.b[:n] {
			if b {
				bitutil.SetBit(bm, i)
			}
		}
		return fixed(bm), nil
	case types.KindChar, types.KindVarChar:
		var total int64
		for i, s := range v.str[:n] {
			if !v.isNull(i) {
				total += int64(len(s))
			}
		}
		if err := checkColumnBytes(total); err != nil {
			return nil, err
		}
		offsets := make([]int32, n+1)
		data := make([]byte, 0, total)
		for i, s := range v.str[:n] {
			if !v.isNull(i) {
				data = append(data, s...)
			}
			offsets[i+1] = int32(len(data))
		}
		d := array.NewData(at, n, []*memory.Buffer{nullBuf, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)), memory.NewBufferBytes(data)}, nil, nulls, 0)
		defer d.Release()
		return array.MakeFromData(d), nil
	case types.KindBinary, types.KindVarBinary, types.KindArray, types.KindMap, types.KindMultiset, types.KindRow:
		var total int64
		for i, s := range v.bin[:n] {
			if !v.isNull(i) {
				total += int64(len(s))
			}
		}
		if err := checkColumnBytes(total); err != nil {
			return nil, err
		}
		offsets := make([]int32, n+1)
		data := make([]byte, 0, total)
		for i, s := range v.bin[:n] {
			if !v.isNull(i) {
				data = append(data, s...)
			}
			offsets[i+1] = int32(len(data))
		}
		d := array.NewData(at, n, []*memory.Buffer{nullBuf, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)), memory.NewBufferBytes(data)}, nil, nulls, 0)
		defer d.Release()
		return array.MakeFromData(d), nil
	}
	panic(fmt.Sprintf("expr: cannot export %v", t))
}

// broadcast returns a vec of n rows that all hold row 0 of v.
func broadcast(v *vec, n int) *vec {
	out := &vec{n: n, borrowed: true}
	if v.isNull(0) {
		out.valid = make([]bool, n)
	}
	switch {
	case v.b != nil:
		out.b = fill(make([]bool, n), v.b[0])
	case v.i64 != nil:
		out.i64 = fill(make([]int64, n), v.i64[0])
	case v.f64 != nil:
		out.f64 = fill(make([]float64, n), v.f64[0])
	case v.dec != nil:
		out.dec = fill(make([]decimal128.Num, n), v.dec[0])
	case v.str != nil:
		out.str = fill(make([]string, n), v.str[0])
	case v.bin != nil:
		out.bin = fill(make([][]byte, n), v.bin[0])
	default:
		out.valid = make([]bool, n)
	}
	return out
}

func fill[T any](s []T, x T) []T {
	for i := range s {
		s[i] = x
	}
	return s
}

// literalVec holds a literal's value in a one-row vec.
func literalVec(value any, t types.DataType) *vec {
	v := newVec(classOf(t), 1)
	if value == nil {
		v.valid = []bool{false}
		return v
	}
	switch x := value.(type) {
	case bool:
		v.b[0] = x
	case int64:
		v.i64[0] = x
	case int32:
		v.i64[0] = int64(x)
	case float64:
		v.f64[0] = x
	case decimal128.Num:
		v.dec[0] = x
	case string:
		v.str[0] = x
	case []byte:
		v.bin[0] = x
	}
	return v
}
