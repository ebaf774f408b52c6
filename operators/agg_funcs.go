package operators

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

// aggKind is an aggregate function specialised for its argument type.
type aggKind uint8

const (
	aggCountStar aggKind = iota // COUNT(*): the group's row count
	aggCount                    // COUNT(x): non-NULL values
	aggSumInt                   // SUM of an integer type, wrapping at the type's width
	aggSumFloat                 // SUM of FLOAT or DOUBLE
	aggSumDec                   // SUM of DECIMAL(p, s): DECIMAL(38, s)
	aggAvgInt                   // AVG of an integer type: BIGINT sum / count, truncated
	aggAvgFloat                 // AVG of FLOAT or DOUBLE
	aggAvgDec                   // AVG of DECIMAL(p, s): DECIMAL(38, max(6, s)), rounded half up
	aggMin
	aggMax
)

// aggFunc is one compiled aggregate of a GroupAggregate.
type aggFunc struct {
	kind aggKind
	arg  int            // input column; -1 for COUNT(*)
	in   types.DataType // argument type
	out  types.DataType // result type
	// values holds, for MIN and MAX over a retracting input, every value
	// of each group with its count (Flink's MinWithRetract map).
	values *state.MultisetState
	valEnc *types.RowEncoder // one-column encoder of MIN/MAX values
}

// aggAcc is the accumulator of one aggregate in one group.
type aggAcc struct {
	n   int64 // non-NULL values accumulated minus retracted
	i   int64
	f   float64
	d   decimal128.Num
	has bool   // MIN/MAX: v holds the current extreme
	v   []byte // MIN/MAX: the value in the row codec's value encoding
}

func (a *aggAcc) reset() {
	a.n, a.i, a.f, a.d, a.has, a.v = 0, 0, 0, decimal128.Num{}, false, a.v[:0]
}

// newAggFunc specialises call for its argument and result types.
func newAggFunc(call jobgraph.AggCall, in types.Schema, out types.DataType) (*aggFunc, error) {
	f := &aggFunc{arg: call.Arg, out: out}
	if call.Arg == -1 {
		if call.Func != jobgraph.AggCount {
			return nil, fmt.Errorf("operators: %s needs an argument", call.Func)
		}
		f.kind = aggCountStar
		return f, nil
	}
	if call.Arg < 0 || call.Arg >= len(in) {
		return nil, fmt.Errorf("operators: %s argument column %d is out of range", call.Func, call.Arg)
	}
	f.in = in[call.Arg].Type
	t := f.in
	switch call.Func {
	case jobgraph.AggCount:
		f.kind = aggCount
	case jobgraph.AggSum, jobgraph.AggAvg:
		avg := call.Func == jobgraph.AggAvg
		switch {
		case t.IsInteger():
			f.kind = pick(avg, aggAvgInt, aggSumInt)
		case t.Kind == types.KindFloat || t.Kind == types.KindDouble:
			f.kind = pick(avg, aggAvgFloat, aggSumFloat)
		case t.Kind == types.KindDecimal:
			f.kind = pick(avg, aggAvgDec, aggSumDec)
		default:
			return nil, fmt.Errorf("operators: %s of %v", call.Func, t)
		}
	case jobgraph.AggMin, jobgraph.AggMax:
		if t.Kind == types.KindNull {
			return nil, fmt.Errorf("operators: %s of %v", call.Func, t)
		}
		f.kind = pick(call.Func == jobgraph.AggMin, aggMin, aggMax)
		f.valEnc = types.NewRowEncoder(types.Schema{{Name: "v", Type: t}})
	default:
		return nil, fmt.Errorf("operators: unknown aggregate function %q", call.Func)
	}
	if err := f.checkResultType(); err != nil {
		return nil, fmt.Errorf("operators: %s of %v: %w", call.Func, t, err)
	}
	return f, nil
}

func pick(c bool, a, b aggKind) aggKind {
	if c {
		return a
	}
	return b
}

// checkResultType checks the planner's result type against Flink's rules.
func (f *aggFunc) checkResultType() error {
	want := f.in
	switch f.kind {
	case aggCount, aggCountStar:
		want = types.BigInt
	case aggSumDec:
		want = types.Decimal(38, f.in.Scale)
	case aggAvgDec:
		want = types.Decimal(38, max(6, f.in.Scale))
	}
	if !arrow.TypeEqual(want.ArrowType(), f.out.ArrowType()) {
		return fmt.Errorf("result type %v, want %v", f.out, want)
	}
	return nil
}

// accumulate adds (or, with retract, takes away) row i of col. NULLs are
// ignored. MIN/MAX over a retracting input also update the group's value
// multiset under (kg, key).
func (f *aggFunc) accumulate(a *aggAcc, col arrow.Array, i int, retract bool, kg int, key []byte, buf []byte) ([]byte, error) {
	if f.kind == aggCountStar || col.IsNull(i) {
		return buf, nil
	}
	sign := int64(1)
	if retract {
		sign = -1
	}
	a.n += sign
	switch f.kind {
	case aggSumInt, aggAvgInt:
		a.i += sign * intAt(col, i)
	case aggSumFloat, aggAvgFloat:
		x := floatAt(col, i)
		if retract {
			x = -x
		}
		if f.kind == aggSumFloat && f.in.Kind == types.KindFloat {
			// NB: SUM(FLOAT) adds in single precision, as Flink does.
			a.f = float64(float32(a.f) + float32(x))
		} else {
			a.f += x
		}
	case aggSumDec, aggAvgDec:
		x := col.(*array.Decimal128).Value(i)
		if retract {
			a.d = a.d.Sub(x)
		} else {
			a.d = a.d.Add(x)
		}
	case aggMin, aggMax:
		buf = f.valEnc.AppendRow(buf[:0], []arrow.Array{col}, i)
		v := buf[1:] // drop the one-column null bitmap
		if f.values == nil {
			if retract {
				return buf, fmt.Errorf("operators: %v without retraction got a retraction; the planner marked its input insert-only", f.name())
			}
			if !a.has || f.better(v, a.v) {
				a.v, a.has = append(a.v[:0], v...), true
			}
			return buf, nil
		}
		if err := f.values.Add(kg, key, v, sign); err != nil {
			return buf, err
		}
		switch {
		case !retract && (!a.has || f.better(v, a.v)):
			a.v, a.has = append(a.v[:0], v...), true
		case retract && a.has && bytes.Equal(v, a.v):
			// The current extreme may be gone: find the next one.
			rows, err := f.values.Get(kg, key)
			if err != nil {
				return buf, err
			}
			a.has = false
			for _, r := range rows {
				if !a.has || f.better(r.Row, a.v) {
					a.v, a.has = append(a.v[:0], r.Row...), true
				}
			}
		}
	}
	return buf, nil
}

// clearValues removes whatever values of the group remain in the multiset
// (a group retracted to zero rows, or whose state expired).
func (f *aggFunc) clearValues(kg int, key []byte) error {
	if f.values == nil {
		return nil
	}
	rows, err := f.values.Get(kg, key)
	if err != nil || len(rows) == 0 {
		return err
	}
	type rc struct {
		row []byte
		n   int64
	}
	all := make([]rc, len(rows))
	for i, r := range rows {
		all[i] = rc{append([]byte(nil), r.Row...), r.Count}
	}
	for _, r := range all {
		if err := f.values.Add(kg, key, r.row, -r.n); err != nil {
			return err
		}
	}
	return nil
}

func (f *aggFunc) name() string {
	switch f.kind {
	case aggMin:
		return "MIN"
	case aggMax:
		return "MAX"
	}
	return fmt.Sprintf("aggregate %d", f.kind)
}

// better reports whether v should replace cur as the group's MIN (MAX).
func (f *aggFunc) better(v, cur []byte) bool {
	c := compareValues(f.in, v, cur)
	if f.kind == aggMin {
		return c < 0
	}
	return c > 0
}

// appendResult appends the aggregate's value in the row codec's value
// encoding; null reports a NULL result (nothing appended).
func (f *aggFunc) appendResult(dst []byte, a *aggAcc, rows int64) (out []byte, null bool) {
	switch f.kind {
	case aggCountStar:
		return binary.LittleEndian.AppendUint64(dst, uint64(rows)), false
	case aggCount:
		return binary.LittleEndian.AppendUint64(dst, uint64(a.n)), false
	case aggMin, aggMax:
		if !a.has {
			return dst, true
		}
		return append(dst, a.v...), false
	}
	if a.n <= 0 {
		return dst, true
	}
	switch f.kind {
	case aggSumInt:
		return appendInt(dst, f.out.Kind, a.i), false
	case aggAvgInt:
		// NB: Go's division truncates toward zero, as Java's does.
		return appendInt(dst, f.out.Kind, a.i/a.n), false
	case aggSumFloat:
		return appendFloat(dst, f.out.Kind, a.f), false
	case aggAvgFloat:
		return appendFloat(dst, f.out.Kind, a.f/float64(a.n)), false
	case aggSumDec:
		if !a.d.FitsInPrecision(38) {
			return dst, true
		}
		return appendDecimal(dst, a.d), false
	case aggAvgDec:
		d, ok := avgDecimal(a.d, a.n, f.out.Scale-f.in.Scale)
		if !ok {
			return dst, true
		}
		return appendDecimal(dst, d), false
	}
	panic(fmt.Sprintf("operators: no result for aggregate kind %d", f.kind))
}

// avgDecimal divides sum by n after raising its scale by up, rounding half
// away from zero (Java's HALF_UP); ok is false when the result does not fit
// DECIMAL(38).
func avgDecimal(sum decimal128.Num, n int64, up int) (decimal128.Num, bool) {
	num := sum.BigInt()
	num.Mul(num, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(up)), nil))
	den := big.NewInt(n)
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	// |2r| >= n rounds away from zero.
	if r.Sign() != 0 && new(big.Int).Abs(new(big.Int).Lsh(r, 1)).Cmp(den) >= 0 {
		if num.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	if q.BitLen() > 127 {
		return decimal128.Num{}, false
	}
	d := decimal128.FromBigInt(q)
	return d, d.FitsInPrecision(38)
}

func appendInt(dst []byte, k types.Kind, v int64) []byte {
	switch k {
	case types.KindTinyInt:
		return append(dst, byte(int8(v)))
	case types.KindSmallInt:
		return binary.LittleEndian.AppendUint16(dst, uint16(int16(v)))
	case types.KindInt:
		return binary.LittleEndian.AppendUint32(dst, uint32(int32(v)))
	}
	return binary.LittleEndian.AppendUint64(dst, uint64(v))
}

func appendFloat(dst []byte, k types.Kind, v float64) []byte {
	if k == types.KindFloat {
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(v)))
	}
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
}

func appendDecimal(dst []byte, d decimal128.Num) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, d.LowBits())
	return binary.LittleEndian.AppendUint64(dst, uint64(d.HighBits()))
}

func intAt(col arrow.Array, i int) int64 {
	switch a := col.(type) {
	case *array.Int8:
		return int64(a.Value(i))
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	}
	panic(fmt.Sprintf("operators: %T is not an integer column", col))
}

func floatAt(col arrow.Array, i int) float64 {
	switch a := col.(type) {
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	}
	panic(fmt.Sprintf("operators: %T is not a floating-point column", col))
}

// compareValues orders two values of type t in the row codec's value
// encoding. Floating point follows Java's compareTo (-0.0 < 0.0, NaN
// greatest); strings and binaries compare bytewise, as Flink compares
// StringData.
func compareValues(t types.DataType, a, b []byte) int {
	le := binary.LittleEndian
	switch t.Kind {
	case types.KindBoolean, types.KindTinyInt:
		if t.Kind == types.KindBoolean {
			return cmpInt(int64(a[0]), int64(b[0]))
		}
		return cmpInt(int64(int8(a[0])), int64(int8(b[0])))
	case types.KindSmallInt:
		return cmpInt(int64(int16(le.Uint16(a))), int64(int16(le.Uint16(b))))
	case types.KindInt, types.KindDate, types.KindTime, types.KindIntervalYearMonth:
		return cmpInt(int64(int32(le.Uint32(a))), int64(int32(le.Uint32(b))))
	case types.KindBigInt, types.KindTimestamp, types.KindTimestampLTZ, types.KindIntervalDayTime:
		return cmpInt(int64(le.Uint64(a)), int64(le.Uint64(b)))
	case types.KindFloat:
		return cmpFloat(float64(math.Float32frombits(le.Uint32(a))), float64(math.Float32frombits(le.Uint32(b))))
	case types.KindDouble:
		return cmpFloat(math.Float64frombits(le.Uint64(a)), math.Float64frombits(le.Uint64(b)))
	case types.KindDecimal:
		x := decimal128.New(int64(le.Uint64(a[8:])), le.Uint64(a))
		y := decimal128.New(int64(le.Uint64(b[8:])), le.Uint64(b))
		return x.Cmp(y)
	}
	// Strings and binaries: a uvarint length, then the bytes.
	_, wa := binary.Uvarint(a)
	_, wb := binary.Uvarint(b)
	return bytes.Compare(a[wa:], b[wb:])
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	// Equal, or a NaN involved, or zeros of two signs: order by bits as
	// Java's Double.compare does (NaN above everything, -0.0 below 0.0).
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmpInt(boolInt(!math.Signbit(a)), boolInt(!math.Signbit(b)))
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

var errBadAggState = errors.New("operators: corrupt aggregate state")

// appendAcc appends the compact encoding of an accumulator.
func (f *aggFunc) appendAcc(dst []byte, a *aggAcc) []byte {
	switch f.kind {
	case aggCountStar:
		return dst
	case aggCount:
		return binary.AppendVarint(dst, a.n)
	case aggSumInt, aggAvgInt:
		return binary.AppendVarint(binary.AppendVarint(dst, a.n), a.i)
	case aggSumFloat, aggAvgFloat:
		return binary.LittleEndian.AppendUint64(binary.AppendVarint(dst, a.n), math.Float64bits(a.f))
	case aggSumDec, aggAvgDec:
		return appendDecimal(binary.AppendVarint(dst, a.n), a.d)
	}
	if !a.has {
		return append(dst, 0)
	}
	return append(binary.AppendUvarint(dst, uint64(len(a.v))+1), a.v...)
}

// decodeAcc reads what appendAcc wrote from the front of src and returns
// the rest.
func (f *aggFunc) decodeAcc(src []byte, a *aggAcc) ([]byte, error) {
	a.reset()
	bad := errBadAggState
	varint := func(p *int64) bool {
		v, w := binary.Varint(src)
		if w <= 0 {
			return false
		}
		*p, src = v, src[w:]
		return true
	}
	switch f.kind {
	case aggCountStar:
	case aggCount:
		if !varint(&a.n) {
			return nil, bad
		}
	case aggSumInt, aggAvgInt:
		if !varint(&a.n) || !varint(&a.i) {
			return nil, bad
		}
	case aggSumFloat, aggAvgFloat:
		if !varint(&a.n) || len(src) < 8 {
			return nil, bad
		}
		a.f, src = math.Float64frombits(binary.LittleEndian.Uint64(src)), src[8:]
	case aggSumDec, aggAvgDec:
		if !varint(&a.n) || len(src) < 16 {
			return nil, bad
		}
		a.d = decimal128.New(int64(binary.LittleEndian.Uint64(src[8:])), binary.LittleEndian.Uint64(src))
		src = src[16:]
	default:
		l, w := binary.Uvarint(src)
		if w <= 0 || uint64(len(src)-w)+1 < l {
			return nil, bad
		}
		src = src[w:]
		if l > 0 {
			a.v, a.has = append(a.v[:0], src[:l-1]...), true
			src = src[l-1:]
		}
	}
	return src, nil
}
