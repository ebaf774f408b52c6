package operators

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"

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
	aggListAgg // LISTAGG: the non-NULL strings in arrival order, joined
	aggFirst   // FIRST_VALUE: the earliest live non-NULL value
	aggLast    // LAST_VALUE: the latest live non-NULL value
	aggVar     // VAR_POP, VAR_SAMP, STDDEV_POP, STDDEV_SAMP: Welford's m2
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
	valEnc *types.RowEncoder // one-column encoder of the argument's values
	// list holds, for LISTAGG, FIRST_VALUE and LAST_VALUE over a
	// retracting input, every live value of each group under its arrival
	// number (8 bytes, big-endian, then the value), one state entry per
	// value.
	list *state.MultisetState
	// filter is the BOOLEAN input column of FILTER (WHERE ...), or -1.
	filter int
	// more are COUNT's further arguments: a row counts only when none is
	// NULL.
	more []int
	// view is the index of the distinct view that feeds a DISTINCT
	// aggregate, or -1.
	view int
	sep  []byte // LISTAGG's separator
	samp bool   // VAR_SAMP, STDDEV_SAMP: divide by n - 1
	sqrt bool   // STDDEV_*: the square root of the variance
}

// aggAcc is the accumulator of one aggregate in one group.
type aggAcc struct {
	n   int64 // non-NULL values accumulated minus retracted
	i   int64
	f   float64
	d   decimal128.Num
	has bool   // MIN/MAX/FIRST_VALUE/LAST_VALUE: v holds the current value
	v   []byte // the value in the row codec's value encoding; LISTAGG: the joined string
	// seq is the next arrival number of LISTAGG, FIRST_VALUE and
	// LAST_VALUE; cur is the arrival number of the current value.
	seq, cur uint64
	m2       float64 // VAR/STDDEV: the sum of squared deviations (f is the mean)
}

func (a *aggAcc) reset() {
	a.n, a.i, a.f, a.d, a.has, a.v = 0, 0, 0, decimal128.Num{}, false, a.v[:0]
	a.seq, a.cur, a.m2 = 0, 0, 0
}

// newAggFunc specialises call for its argument and result types.
func newAggFunc(call jobgraph.AggCall, in types.Schema, out types.DataType) (*aggFunc, error) {
	f := &aggFunc{arg: call.Arg, out: out, filter: -1, view: -1}
	if call.Filtered {
		if call.Filter < 0 || call.Filter >= len(in) || in[call.Filter].Type.Kind != types.KindBoolean {
			return nil, fmt.Errorf("operators: %s filter column %d is not a BOOLEAN input column", call.Func, call.Filter)
		}
		f.filter = call.Filter
	}
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
	for _, c := range call.More {
		if call.Func != jobgraph.AggCount || c < 0 || c >= len(in) {
			return nil, fmt.Errorf("operators: %s argument column %d is not valid", call.Func, c)
		}
	}
	f.more = call.More
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
	case jobgraph.AggListAgg:
		if !t.IsString() {
			return nil, fmt.Errorf("operators: %s of %v", call.Func, t)
		}
		f.kind, f.sep = aggListAgg, []byte(",")
		if call.Separator != nil {
			f.sep = []byte(*call.Separator)
		}
	case jobgraph.AggFirstValue, jobgraph.AggLastValue:
		if t.Kind == types.KindNull {
			return nil, fmt.Errorf("operators: %s of %v", call.Func, t)
		}
		f.kind = pick(call.Func == jobgraph.AggFirstValue, aggFirst, aggLast)
	case jobgraph.AggVarPop, jobgraph.AggVarSamp, jobgraph.AggStddevPop, jobgraph.AggStddevSamp:
		if !t.IsInteger() && t.Kind != types.KindFloat && t.Kind != types.KindDouble {
			return nil, fmt.Errorf("operators: %s of %v", call.Func, t)
		}
		f.kind = aggVar
		f.samp = call.Func == jobgraph.AggVarSamp || call.Func == jobgraph.AggStddevSamp
		f.sqrt = call.Func == jobgraph.AggStddevPop || call.Func == jobgraph.AggStddevSamp
	default:
		return nil, fmt.Errorf("operators: unknown aggregate function %q", call.Func)
	}
	if f.valEnc == nil {
		f.valEnc = types.NewRowEncoder(types.Schema{{Name: "v", Type: t}})
	}
	if err := f.checkResultType(); err != nil {
		return nil, fmt.Errorf("operators: %s of %v: %w", call.Func, t, err)
	}
	return f, nil
}

// keepsList reports whether the aggregate, over a retracting input, keeps
// every live value of a group in f.list.
func (f *aggFunc) keepsList() bool {
	return f.kind == aggListAgg || f.kind == aggFirst || f.kind == aggLast
}

// passes reports whether row i reaches the aggregate: it has no FILTER, or
// the filter is TRUE (not FALSE, not NULL).
func (f *aggFunc) passes(cols []arrow.Array, i int) bool {
	for _, c := range f.more {
		if cols[c].IsNull(i) {
			return false
		}
	}
	return passesFilter(cols, f.filter, i)
}

func passesFilter(cols []arrow.Array, filter, i int) bool {
	if filter < 0 {
		return true
	}
	c := cols[filter].(*array.Boolean)
	return c.IsValid(i) && c.Value(i)
}

func pick64(c bool, a, b int64) int64 {
	if c {
		return a
	}
	return b
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
	case aggListAgg:
		want = types.String
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
	if f.kind == aggCountStar {
		// COUNT(*) counts the group's rows, or with a FILTER the rows it
		// lets through.
		if f.filter >= 0 {
			a.n += pick64(retract, -1, 1)
		}
		return buf, nil
	}
	if col.IsNull(i) {
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
	case aggVar:
		welford(a, valueAt(col, i), retract)
	case aggListAgg, aggFirst, aggLast:
		buf = f.valEnc.AppendRow(buf[:0], []arrow.Array{col}, i)
		return buf, f.accumulateList(a, buf[1:], retract, kg, key)
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

// welford adds (or takes away) x to the running mean (a.f) and m2 of a,
// whose count a.n already includes (excludes) it, as Flink's WELFORD_M2
// does: a count at or below zero leaves mean and m2 alone (at zero, reset).
func welford(a *aggAcc, x float64, retract bool) {
	if a.n <= 0 {
		if a.n == 0 {
			a.f, a.m2 = 0, 0
		}
		return
	}
	// NB: the explicit float64 conversions forbid fused multiply-adds, so
	// every platform rounds as Java does.
	if !retract {
		delta := x - a.f
		a.f += float64(delta / float64(a.n))
		a.m2 += float64(delta * (x - a.f))
		return
	}
	delta2 := x - a.f
	a.f -= float64(delta2 / float64(a.n))
	a.m2 -= float64((x - a.f) * delta2)
}

func valueAt(col arrow.Array, i int) float64 {
	switch col.(type) {
	case *array.Float32, *array.Float64:
		return floatAt(col, i)
	}
	return float64(intAt(col, i))
}

// accumulateList adds (or takes away) value v, in the row codec's value
// encoding, to a LISTAGG, FIRST_VALUE or LAST_VALUE; a.n already counts
// (uncounts) it. Over an insert-only input the accumulator alone holds the
// result. Over a retracting one every live value is in f.list under its
// arrival number, and a retraction removes the earliest live occurrence of
// its value (a value that is not there changes nothing), as Flink's
// ListAggWithRetract and First/LastValueWithRetract do; FIRST_VALUE and
// LAST_VALUE then fall back to the earliest (latest) value left.
func (f *aggFunc) accumulateList(a *aggAcc, v []byte, retract bool, kg int, key []byte) error {
	if f.list == nil {
		if retract {
			return fmt.Errorf("operators: %v without retraction got a retraction; the planner marked its input insert-only", f.name())
		}
		switch f.kind {
		case aggFirst:
			if !a.has {
				a.v, a.has = append(a.v[:0], v...), true
			}
		case aggLast:
			a.v, a.has = append(a.v[:0], v...), true
		case aggListAgg:
			if a.n > 1 {
				a.v = append(a.v, f.sep...)
			}
			a.v = append(a.v, stringBytes(v)...)
		}
		return nil
	}
	if !retract {
		seq := a.seq
		a.seq++
		row := append(binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(v)), seq), v...)
		if err := f.list.Add(kg, key, row, 1); err != nil {
			return err
		}
		switch f.kind {
		case aggFirst:
			if !a.has {
				a.v, a.cur, a.has = append(a.v[:0], v...), seq, true
			}
		case aggLast:
			a.v, a.cur, a.has = append(a.v[:0], v...), seq, true
		case aggListAgg:
			// The newest value goes last.
			if a.n > 1 {
				a.v = append(a.v, f.sep...)
			}
			a.v = append(a.v, stringBytes(v)...)
		}
		return nil
	}
	rows, err := f.list.Get(kg, key)
	if err != nil {
		return err
	}
	var gone []byte
	for _, r := range rows {
		if bytes.Equal(r.Row[8:], v) && (gone == nil || bytes.Compare(r.Row[:8], gone[:8]) < 0) {
			gone = r.Row
		}
	}
	if gone == nil {
		a.n++ // not there: nothing to take away
		return nil
	}
	gone = append([]byte(nil), gone...)
	if err := f.list.Add(kg, key, gone, -1); err != nil {
		return err
	}
	if f.kind == aggListAgg || binary.BigEndian.Uint64(gone) == a.cur {
		return f.loadList(a, kg, key)
	}
	return nil
}

// loadList recomputes a list-backed accumulator's value from f.list:
// LISTAGG's joined string, FIRST_VALUE's earliest or LAST_VALUE's latest
// value.
func (f *aggFunc) loadList(a *aggAcc, kg int, key []byte) error {
	rows, err := f.list.Get(kg, key)
	if err != nil {
		return err
	}
	a.v, a.has = a.v[:0], false
	if f.kind != aggListAgg {
		var best []byte
		for _, r := range rows {
			c := 0
			if best != nil {
				c = bytes.Compare(r.Row[:8], best[:8])
			}
			if best == nil || (f.kind == aggFirst && c < 0) || (f.kind == aggLast && c > 0) {
				best = r.Row
			}
		}
		if best != nil {
			a.v, a.cur, a.has = append(a.v, best[8:]...), binary.BigEndian.Uint64(best), true
		}
		return nil
	}
	sorted := make([][]byte, 0, len(rows))
	for _, r := range rows {
		for c := int64(0); c < r.Count; c++ {
			sorted = append(sorted, r.Row)
		}
	}
	sort.Slice(sorted, func(i, j int) bool { return bytes.Compare(sorted[i][:8], sorted[j][:8]) < 0 })
	for i, r := range sorted {
		if i > 0 {
			a.v = append(a.v, f.sep...)
		}
		a.v = append(a.v, stringBytes(r[8:])...)
	}
	return nil
}

// stringBytes is the bytes of a string in the row codec's value encoding
// (a uvarint length, then the bytes).
func stringBytes(v []byte) []byte {
	_, w := binary.Uvarint(v)
	return v[w:]
}

// clearValues removes whatever values of the group remain in the
// multisets (a group retracted to zero rows, or whose state expired).
func (f *aggFunc) clearValues(kg int, key []byte) error {
	if err := clearMultiset(f.values, kg, key); err != nil {
		return err
	}
	return clearMultiset(f.list, kg, key)
}

// clearMultiset removes every row under key.
func clearMultiset(m *state.MultisetState, kg int, key []byte) error {
	if m == nil {
		return nil
	}
	rows, err := m.Get(kg, key)
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
		if err := m.Add(kg, key, r.row, -r.n); err != nil {
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
	case aggListAgg:
		return "LISTAGG"
	case aggFirst:
		return "FIRST_VALUE"
	case aggLast:
		return "LAST_VALUE"
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
		if f.filter >= 0 {
			rows = a.n
		}
		return binary.LittleEndian.AppendUint64(dst, uint64(rows)), false
	case aggCount:
		return binary.LittleEndian.AppendUint64(dst, uint64(a.n)), false
	case aggMin, aggMax, aggFirst, aggLast:
		if !a.has {
			return dst, true
		}
		return append(dst, a.v...), false
	case aggListAgg:
		if a.n <= 0 {
			return dst, true
		}
		return append(binary.AppendUvarint(dst, uint64(len(a.v))), a.v...), false
	case aggVar:
		return f.appendVariance(dst, a)
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

// appendVariance appends VAR_POP (m2 / n), VAR_SAMP (m2 / (n - 1)) or
// their square roots, cast to the result type as Flink's rewrite casts its
// DOUBLE: NULL without values, for SAMP of one value, or when unmatched
// retractions left m2 negative.
func (f *aggFunc) appendVariance(dst []byte, a *aggAcc) ([]byte, bool) {
	den := a.n
	if f.samp {
		den--
	}
	if a.n <= 0 || den <= 0 || a.m2 < 0 {
		return dst, true
	}
	v := a.m2 / float64(den)
	if f.sqrt {
		v = math.Sqrt(v)
	}
	if f.out.IsInteger() {
		return appendInt(dst, f.out.Kind, javaDoubleToLong(v, f.out.Kind)), false
	}
	return appendFloat(dst, f.out.Kind, v), false
}

// javaDoubleToLong casts as Java's (int) or (long) of a double does:
// toward zero, NaN to 0, saturating at the range of INT (TINYINT and
// SMALLINT narrow from INT) or BIGINT.
func javaDoubleToLong(v float64, k types.Kind) int64 {
	lo, hi := float64(math.MinInt32), float64(math.MaxInt32)
	if k == types.KindBigInt {
		lo, hi = math.MinInt64, math.MaxInt64
	}
	switch {
	case math.IsNaN(v):
		return 0
	case v <= lo:
		return int64(lo)
	case v >= hi:
		if k == types.KindBigInt {
			return math.MaxInt64
		}
		return math.MaxInt32
	}
	return int64(v)
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
			return cmp.Compare(int64(a[0]), int64(b[0]))
		}
		return cmp.Compare(int64(int8(a[0])), int64(int8(b[0])))
	case types.KindSmallInt:
		return cmp.Compare(int64(int16(le.Uint16(a))), int64(int16(le.Uint16(b))))
	case types.KindInt, types.KindDate, types.KindTime, types.KindIntervalYearMonth:
		return cmp.Compare(int64(int32(le.Uint32(a))), int64(int32(le.Uint32(b))))
	case types.KindBigInt, types.KindTimestamp, types.KindTimestampLTZ, types.KindIntervalDayTime:
		return cmp.Compare(int64(le.Uint64(a)), int64(le.Uint64(b)))
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
	return cmp.Compare(boolInt(!math.Signbit(a)), boolInt(!math.Signbit(b)))
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
		if f.filter >= 0 {
			return binary.AppendVarint(dst, a.n)
		}
		return dst
	case aggCount:
		return binary.AppendVarint(dst, a.n)
	case aggSumInt, aggAvgInt:
		return binary.AppendVarint(binary.AppendVarint(dst, a.n), a.i)
	case aggSumFloat, aggAvgFloat:
		return binary.LittleEndian.AppendUint64(binary.AppendVarint(dst, a.n), math.Float64bits(a.f))
	case aggSumDec, aggAvgDec:
		return appendDecimal(binary.AppendVarint(dst, a.n), a.d)
	case aggVar:
		dst = binary.LittleEndian.AppendUint64(binary.AppendVarint(dst, a.n), math.Float64bits(a.f))
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(a.m2))
	case aggListAgg:
		dst = binary.AppendUvarint(binary.AppendVarint(dst, a.n), a.seq)
		if f.list != nil {
			return dst // the values are in f.list
		}
		return append(binary.AppendUvarint(dst, uint64(len(a.v))), a.v...)
	case aggFirst, aggLast:
		dst = binary.AppendUvarint(binary.AppendUvarint(dst, a.seq), a.cur)
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
		if f.filter >= 0 && !varint(&a.n) {
			return nil, bad
		}
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
	case aggVar:
		if !varint(&a.n) || len(src) < 16 {
			return nil, bad
		}
		a.f = math.Float64frombits(binary.LittleEndian.Uint64(src))
		a.m2 = math.Float64frombits(binary.LittleEndian.Uint64(src[8:]))
		src = src[16:]
	case aggListAgg:
		if !varint(&a.n) || !uvarint(&src, &a.seq) {
			return nil, bad
		}
		if f.list == nil {
			var l uint64
			if !uvarint(&src, &l) || uint64(len(src)) < l {
				return nil, bad
			}
			a.v, src = append(a.v[:0], src[:l]...), src[l:]
		}
	default:
		if f.kind == aggFirst || f.kind == aggLast {
			if !uvarint(&src, &a.seq) || !uvarint(&src, &a.cur) {
				return nil, bad
			}
		}
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

func uvarint(src *[]byte, p *uint64) bool {
	v, w := binary.Uvarint(*src)
	if w <= 0 {
		return false
	}
	*p, *src = v, (*src)[w:]
	return true
}

// canMerge reports whether merge can combine two accumulators of f. The
// aggregates that depend on arrival order (LISTAGG, FIRST_VALUE,
// LAST_VALUE) cannot: two merged session windows interleave their rows.
func (f *aggFunc) canMerge() bool { return !f.keepsList() }

// merge adds the accumulator src of an insert-only input into dst, as if
// dst had also accumulated src's rows: the merge of Flink's aggregate
// functions, which session windows use. A DISTINCT aggregate is not merged
// here: its view's values are replayed instead (the values both windows
// hold count once).
func (f *aggFunc) merge(dst, src *aggAcc) error {
	switch f.kind {
	case aggCountStar, aggCount:
		dst.n += src.n // COUNT(*) without a FILTER counts the window's rows
	case aggSumInt, aggAvgInt:
		dst.n += src.n
		dst.i += src.i
	case aggSumFloat, aggAvgFloat:
		dst.n += src.n
		if f.kind == aggSumFloat && f.in.Kind == types.KindFloat {
			dst.f = float64(float32(dst.f) + float32(src.f))
		} else {
			dst.f += src.f
		}
	case aggSumDec, aggAvgDec:
		dst.n += src.n
		dst.d = dst.d.Add(src.d)
	case aggVar:
		mergeWelford(dst, src)
	case aggMin, aggMax:
		if src.has && (!dst.has || f.better(src.v, dst.v)) {
			dst.v, dst.has = append(dst.v[:0], src.v...), true
		}
	default:
		return fmt.Errorf("operators: %v cannot merge its accumulators", f.name())
	}
	return nil
}

// mergeWelford combines two running means and m2s (Chan et al.'s parallel
// update): with delta the difference of the means, the mean moves by
// delta * nb / n and m2 gains delta² * na * nb / n.
func mergeWelford(dst, src *aggAcc) {
	if src.n == 0 {
		return
	}
	if dst.n == 0 {
		dst.n, dst.f, dst.m2 = src.n, src.f, src.m2
		return
	}
	na, nb := float64(dst.n), float64(src.n)
	n := na + nb
	delta := src.f - dst.f
	dst.f += float64(delta * nb / n)
	dst.m2 += src.m2 + float64(float64(delta*delta)*na*nb/n)
	dst.n += src.n
}
