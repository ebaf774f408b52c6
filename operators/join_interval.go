package operators

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

func init() {
	RegisterOperator(jobgraph.KindJoinInterval, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.IntervalJoinSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewIntervalJoin(*s)
	})
}

// IntervalJoin is Flink's event-time interval join: an equi-join of two
// insert-only inputs whose matches must also satisfy
//
//	LowerMs <= left.rowtime - right.rowtime <= UpperMs
//
// (bounds inclusive, rowtimes floored to ms) and the residual condition.
// Each row is stored under its key with its rowtime and probes the other
// side's rows of that key: every match is emitted at once as +I. A row is
// removed once the watermark (the minimum over both inputs) shows that no
// future row of the other side can match it: a left row at t once
// wm >= t - LowerMs, a right row at s once wm >= s + UpperMs. An outer
// side's row that expires without ever having matched is then emitted
// padded with NULLs (+I), so the output is insert-only. A row that arrives
// already expired (late) still probes the other side; it is not stored, and
// an unmatched outer one is padded at once.
//
// State lives in the Backend: per side a multiset of
// [rowtime: 8 bytes][matched: 1 byte][row] under the join key, and a timer
// multiset keyed by expiry bucket listing (side, key group, key). Expiry is
// bucketed (bucketMs, half the interval's width and at least a second) and a
// bucket fires when the watermark passes its end, so rows leave state, and
// padded rows are emitted, up to one bucket after their exact expiry, as
// Flink's cleanup timers do (see bucketTimers).
type IntervalJoin struct {
	spec     jobgraph.IntervalJoinSpec
	outer    [2]bool
	times    [2]int
	sides    [2]*joinSide
	timers   *bucketTimers
	bucketMs int64
	watermarkState

	residual *expr.Filter
	cand     *joinOutput // candidate matches, before the residual
	out      *joinOutput // rows to emit
	meta     []candidate
	pending  []pendingRow
	sel      []int32
	rowBuf   []byte

	be     state.Namespace
	maxPar int
}

var (
	_ StatefulOperator = (*IntervalJoin)(nil)
	_ WatermarkHandler = (*IntervalJoin)(nil)
	_ Checkpointer     = (*IntervalJoin)(nil)
)

// candidate is a joined row waiting for the residual: pending row p of the
// input with the stored row (prefix included) of the other side.
type candidate struct {
	p      int
	stored []byte
}

// pendingRow is a row of the batch being processed whose matches wait for
// the residual.
type pendingRow struct {
	i       int
	kg      int
	key     []byte
	t       int64
	matched bool
}

// intervalPrefix is the length of a stored row's rowtime and matched flag.
const intervalPrefix = 9

// NewIntervalJoin checks spec and returns an unopened join.
func NewIntervalJoin(spec jobgraph.IntervalJoinSpec) (*IntervalJoin, error) {
	if err := checkJoinSpec(&spec.JoinSpec); err != nil {
		return nil, err
	}
	if len(spec.LeftKeys) == 0 {
		return nil, fmt.Errorf("operators: an interval join needs equality keys")
	}
	for _, c := range []struct {
		col int
		s   types.Schema
	}{{spec.LeftTime, spec.LeftSchema}, {spec.RightTime, spec.RightSchema}} {
		if c.col < 0 || c.col >= len(c.s) || !c.s[c.col].Type.IsTimestamp() {
			return nil, fmt.Errorf("operators: interval join rowtime column %d is not a timestamp", c.col)
		}
	}
	w := (spec.UpperMs - spec.LowerMs) / 2
	if w < 1000 {
		w = 1000
	}
	return &IntervalJoin{spec: spec, outer: [2]bool{spec.OuterLeft, spec.OuterRight},
		times: [2]int{spec.LeftTime, spec.RightTime}, bucketMs: w}, nil
}

// Open opens the join's state at ctx.StateDir and compiles the residual.
func (j *IntervalJoin) Open(ctx *Context) error {
	be, maxPar, err := ctx.Keyed()
	if err != nil {
		return err
	}
	j.maxPar = maxPar
	j.be = be
	j.sides[0] = newJoinSide(j.spec.LeftSchema, j.spec.LeftKeys, be.Multiset("left"))
	j.sides[1] = newJoinSide(j.spec.RightSchema, j.spec.RightKeys, be.Multiset("right"))
	j.timers = newBucketTimers(be.Multiset("timers"), j.bucketMs)
	if err := j.timers.restore(); err != nil {
		return err
	}
	if err := j.restoreWatermark(ctx.Restore); err != nil {
		return err
	}
	if j.spec.Residual != nil {
		var err error
		if j.residual, err = expr.CompileFilter(j.spec.Residual, ctx.Env()); err != nil {
			return fmt.Errorf("operators: join condition: %w", err)
		}
	}
	nl := len(j.spec.LeftSchema)
	j.cand = newJoinOutput(j.spec.OutputSchema, nl, nil)
	j.out = newJoinOutput(j.spec.OutputSchema, nl, nil)
	return nil
}

// expiry is the watermark from which a row of side input at time t can no
// longer match.
func (j *IntervalJoin) expiry(input int, t int64) int64 {
	if input == 0 {
		return t - j.spec.LowerMs
	}
	return t + j.spec.UpperMs
}

// inBounds reports whether a left row at lt and a right row at rt match in
// time.
func (j *IntervalJoin) inBounds(lt, rt int64) bool {
	d := lt - rt
	return d >= j.spec.LowerMs && d <= j.spec.UpperMs
}

// Process probes the other side with each row of b, emits the matches and
// stores the rows that can still match. It borrows b.
func (j *IntervalJoin) Process(input int, b types.Batch, out Collector) error {
	if input != 0 && input != 1 {
		return fmt.Errorf("operators: join has no input %d", input)
	}
	n := b.NumRows()
	if n == 0 {
		return nil
	}
	own, other := j.sides[input], j.sides[1-input]
	cols := b.Rec.Columns()[:b.NumCols()]
	own.bind(cols, n)
	ts, ok := cols[j.times[input]].(*array.Timestamp)
	if !ok {
		return fmt.Errorf("operators: interval join rowtime column is %T", cols[j.times[input]])
	}
	for i, k := range b.Kinds() {
		if k != int8(types.Insert) {
			return fmt.Errorf("operators: an interval join takes insert-only input, got %v", types.RowKind(k))
		}
		if ts.IsNull(i) {
			return ErrNullRowtime
		}
		t := floorMillis(int64(ts.Value(i)))
		kg, key, ok := own.keyAt(i, j.maxPar)
		p := pendingRow{i: i, kg: kg, t: t}
		if ok {
			p.key = append([]byte(nil), key...)
		}
		j.pending = append(j.pending, p)
		if !ok {
			continue
		}
		matches, err := other.state.Get(kg, key)
		if err != nil {
			return err
		}
		for _, m := range matches {
			mt := int64(binary.BigEndian.Uint64(m.Row))
			lt, rt := t, mt
			if input == 1 {
				lt, rt = mt, t
			}
			if !j.inBounds(lt, rt) {
				continue
			}
			stored := append([]byte(nil), m.Row...)
			for c := int64(0); c < m.Count; c++ {
				if err := j.cand.appendJoined(input, cols, i, stored[intervalPrefix:], int8(types.Insert)); err != nil {
					return err
				}
				j.meta = append(j.meta, candidate{p: len(j.pending) - 1, stored: stored})
			}
		}
		if j.cand.len() >= joinBatchRows {
			if err := j.evaluate(input, cols, out); err != nil {
				return err
			}
		}
	}
	if err := j.evaluate(input, cols, out); err != nil {
		return err
	}
	return j.out.flush(out)
}

// evaluate applies the residual to the candidate matches, emits those that
// pass, marks the rows they matched, and stores the pending rows of input
// (cols) that can still match; late unmatched outer rows are padded.
func (j *IntervalJoin) evaluate(input int, cols []arrow.Array, out Collector) error {
	if j.cand.len() > 0 {
		b := takeBatch(j.cand.schema, j.cand.rb, &j.cand.kinds)
		j.cand.rb.Reserve(joinBatchRows)
		err := j.applyResidual(input, b, out)
		b.Release()
		if err != nil {
			return err
		}
	}
	j.meta = j.meta[:0]
	own := j.sides[input]
	for _, p := range j.pending {
		if p.key != nil && j.expiry(input, p.t) > j.wm {
			row := j.storedRow(p.t, p.matched, own.rowAt(cols, p.i))
			if err := own.state.Add(p.kg, p.key, row, 1); err != nil {
				return err
			}
			if err := j.addTimer(input, p.kg, p.key, j.expiry(input, p.t)); err != nil {
				return err
			}
		} else if j.outer[input] && !p.matched {
			j.out.appendPadded(input, cols, p.i, int8(types.Insert))
		}
		if j.out.len() >= joinBatchRows {
			if err := j.out.flush(out); err != nil {
				return err
			}
		}
	}
	j.pending = j.pending[:0]
	return nil
}

// applyResidual emits the rows of candidate batch b that satisfy the
// residual and marks both rows of each as matched.
func (j *IntervalJoin) applyResidual(input int, b types.Batch, out Collector) error {
	n := b.NumRows()
	j.sel = j.sel[:0]
	if j.residual != nil {
		var err error
		if j.sel, err = j.residual.Select(b, j.sel); err != nil {
			return err
		}
	} else {
		for i := 0; i < n; i++ {
			j.sel = append(j.sel, int32(i))
		}
	}
	bcols := b.Rec.Columns()[:b.NumCols()]
	for _, s := range j.sel {
		c := j.meta[s]
		p := &j.pending[c.p]
		p.matched = true
		if j.outer[1-input] && c.stored[8] == 0 {
			if err := j.markMatched(1-input, p.kg, p.key, c.stored); err != nil {
				return err
			}
		}
		j.out.rb.AppendColumns(0, bcols, int(s))
		j.out.rb.EndRow()
		j.out.kinds = append(j.out.kinds, int8(types.Insert))
		if j.out.len() >= joinBatchRows {
			if err := j.out.flush(out); err != nil {
				return err
			}
		}
	}
	return nil
}

// markMatched sets the matched flag of the stored row of side (all its
// occurrences). A row already marked is left alone.
func (j *IntervalJoin) markMatched(side, kg int, key, stored []byte) error {
	st := j.sides[side].state
	rows, err := st.Get(kg, key)
	if err != nil {
		return err
	}
	count := int64(0)
	for _, r := range rows {
		if bytes.Equal(r.Row, stored) {
			count = r.Count
		}
	}
	if count == 0 {
		return nil
	}
	if err := st.Add(kg, key, stored, -count); err != nil {
		return err
	}
	flagged := append([]byte(nil), stored...)
	flagged[8] = 1
	return st.Add(kg, key, flagged, count)
}

// storedRow lays out a row for the state: its rowtime, its matched flag,
// then the row. The bytes are valid until the next call.
func (j *IntervalJoin) storedRow(t int64, matched bool, row []byte) []byte {
	j.rowBuf = binary.BigEndian.AppendUint64(j.rowBuf[:0], uint64(t))
	flag := byte(0)
	if matched {
		flag = 1
	}
	j.rowBuf = append(j.rowBuf, flag)
	return append(j.rowBuf, row...)
}

// addTimer records that key of side has a row expiring at e.
func (j *IntervalJoin) addTimer(side, kg int, key []byte, e int64) error {
	entry := make([]byte, 0, 3+len(key))
	entry = append(entry, byte(side))
	entry = binary.BigEndian.AppendUint16(entry, uint16(kg))
	entry = append(entry, key...)
	return j.timers.add(kg, j.timers.bucketOf(e), entry)
}

// ProcessWatermark expires the rows of every bucket wm has passed, padding
// the unmatched ones of outer sides, and forwards wm.
func (j *IntervalJoin) ProcessWatermark(wm int64, out Collector) error {
	if wm <= j.wm {
		return nil
	}
	j.wm = wm
	for bucket, kgs, ok := j.timers.next(wm - (j.bucketMs - 1)); ok; bucket, kgs, ok = j.timers.next(wm - (j.bucketMs - 1)) {
		if err := j.fire(bucket, kgs, out); err != nil {
			return err
		}
	}
	if err := j.out.flush(out); err != nil {
		return err
	}
	return EmitWatermark(out, wm)
}

// fire expires the rows of the keys listed in bucket's timers.
func (j *IntervalJoin) fire(bucket int64, kgs []int, out Collector) error {
	entries, err := j.timers.take(bucket, kgs)
	if err != nil {
		return err
	}
	for _, e := range entries {
		side, kg, key := int(e.Row[0]), int(binary.BigEndian.Uint16(e.Row[1:3])), e.Row[3:]
		if err := j.expireKey(side, kg, key, out); err != nil {
			return err
		}
	}
	return nil
}

// expireKey removes the rows of side under key that the watermark has
// expired, padding the unmatched ones of an outer side.
func (j *IntervalJoin) expireKey(side, kg int, key []byte, out Collector) error {
	st := j.sides[side].state
	rows, err := st.Get(kg, key)
	if err != nil {
		return err
	}
	var gone []state.MultisetRow
	for _, r := range rows {
		t := int64(binary.BigEndian.Uint64(r.Row))
		if j.expiry(side, t) <= j.wm {
			gone = append(gone, state.MultisetRow{Row: append([]byte(nil), r.Row...), Count: r.Count})
		}
	}
	for _, r := range gone {
		if err := st.Add(kg, key, r.Row, -r.Count); err != nil {
			return err
		}
		if !j.outer[side] || r.Row[8] != 0 {
			continue
		}
		for c := int64(0); c < r.Count; c++ {
			if err := j.out.appendStoredPadded(side, r.Row[intervalPrefix:], int8(types.Insert)); err != nil {
				return err
			}
			if j.out.len() >= joinBatchRows {
				if err := j.out.flush(out); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// EndInput does nothing: MaxWatermark, which comes before the end of the
// last input, has expired every row.
func (j *IntervalJoin) EndInput(int, Collector) error { return nil }

// Close closes the state. It is safe after a failed Open.
func (j *IntervalJoin) Close() error {
	for _, o := range []*joinOutput{j.cand, j.out} {
		if o != nil {
			o.release()
		}
	}
	j.cand, j.out = nil, nil
	j.be = state.Namespace{}
	return nil
}

// UsesKeyedState reports that the operator keeps keyed state.
func (*IntervalJoin) UsesKeyedState() bool { return true }
