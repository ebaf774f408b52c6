package operators

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

func init() {
	RegisterOperator(jobgraph.KindJoinTemporal, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.TemporalJoinSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewTemporalJoin(*s)
	})
}

// TemporalJoin is Flink's event-time temporal join (its
// TemporalRowTimeJoinOperator): each left row joins the version of its key
// in the right input that was valid at the left row's rowtime.
//
// Right rows are versions: a +I or +U of key k at rowtime v is k's row from
// v on; a -D at v ends k's validity from v (a tombstone version); a -U is
// ignored, as the +U that follows supersedes it. A version with the same
// time as a stored one replaces it. Left rows are buffered until the
// watermark (the minimum over both inputs) reaches their rowtime t; then
// each joins the version of its key with the greatest time <= t, if it is
// not a tombstone and the residual holds. An unmatched row is dropped, or
// padded with NULLs for a LEFT join. The output is insert-only. After a key
// is joined at watermark wm, the versions older than its latest version at
// or before wm can no longer be used and are removed (a tombstone that is
// the latest is removed too). A left row that arrives behind the watermark
// is joined at the next watermark.
//
// State lives in the Backend: the left rows as a multiset of
// [rowtime: 8 bytes][row] under the join key, the versions as a multiset of
// [version time: 8 bytes][tombstone: 1 byte][row] under the join key, and a
// timer multiset keyed by one-second buckets listing (key group, key) for
// every row that arrived in the bucket (see bucketTimers). A bucket fires
// when the watermark reaches its start; a key whose rows are not all due is
// listed again and fires at the next watermark.
type TemporalJoin struct {
	spec   jobgraph.TemporalJoinSpec
	left   *joinSide
	right  *joinSide
	timers *bucketTimers
	refire [][]byte
	watermarkState

	residual *expr.Filter
	cand     *joinOutput // joined rows waiting for the residual
	out      *joinOutput // rows to emit
	candLeft [][]byte    // the stored left row of each candidate
	sel      []int32
	rowBuf   []byte

	be     state.Namespace
	maxPar int
}

var (
	_ StatefulOperator = (*TemporalJoin)(nil)
	_ WatermarkHandler = (*TemporalJoin)(nil)
	_ Checkpointer     = (*TemporalJoin)(nil)
)

// temporalBucketMs is the width of a timer bucket.
const temporalBucketMs = 1000

// version is a decoded version of a key: its time, whether it is a
// tombstone, and its stored bytes (prefix included).
type version struct {
	t      int64
	tomb   bool
	stored []byte
	count  int64
}

// NewTemporalJoin checks spec and returns an unopened join.
func NewTemporalJoin(spec jobgraph.TemporalJoinSpec) (*TemporalJoin, error) {
	if err := checkJoinSpec(&spec.JoinSpec); err != nil {
		return nil, err
	}
	if len(spec.LeftKeys) == 0 {
		return nil, fmt.Errorf("operators: a temporal join needs equality keys")
	}
	for _, c := range []struct {
		col int
		s   types.Schema
	}{{spec.LeftTime, spec.LeftSchema}, {spec.RightTime, spec.RightSchema}} {
		if c.col < 0 || c.col >= len(c.s) || !c.s[c.col].Type.IsTimestamp() {
			return nil, fmt.Errorf("operators: temporal join rowtime column %d is not a timestamp", c.col)
		}
	}
	return &TemporalJoin{spec: spec}, nil
}

// Open opens the join's state at ctx.StateDir and compiles the residual.
func (j *TemporalJoin) Open(ctx *Context) error {
	be, maxPar, err := ctx.Keyed()
	if err != nil {
		return err
	}
	j.maxPar = maxPar
	j.be = be
	j.left = newJoinSide(j.spec.LeftSchema, j.spec.LeftKeys, be.Multiset("left"))
	j.right = newJoinSide(j.spec.RightSchema, j.spec.RightKeys, be.Multiset("versions"))
	j.timers = newBucketTimers(be.Multiset("timers"), temporalBucketMs)
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

// Process stores the left rows of b until the watermark reaches them, or
// the versions of the right rows of b. It borrows b.
func (j *TemporalJoin) Process(input int, b types.Batch, out Collector) error {
	if input != 0 && input != 1 {
		return fmt.Errorf("operators: join has no input %d", input)
	}
	n := b.NumRows()
	if n == 0 {
		return nil
	}
	side, tcol := j.left, j.spec.LeftTime
	if input == 1 {
		side, tcol = j.right, j.spec.RightTime
	}
	cols := b.Rec.Columns()[:b.NumCols()]
	side.bind(cols, n)
	ts, ok := cols[tcol].(*array.Timestamp)
	if !ok {
		return fmt.Errorf("operators: temporal join rowtime column is %T", cols[tcol])
	}
	for i, k := range b.Kinds() {
		kind := types.RowKind(k)
		if input == 1 && kind == types.UpdateBefore {
			continue
		}
		if input == 0 && kind != types.Insert {
			return fmt.Errorf("operators: a temporal join takes an insert-only left input, got %v", kind)
		}
		if ts.IsNull(i) {
			return ErrNullRowtime
		}
		t := floorMillis(int64(ts.Value(i)))
		kg, key, ok := side.keyAt(i, j.maxPar)
		if !ok {
			// No version has a NULL key.
			if input == 0 && j.spec.OuterLeft {
				j.out.appendPadded(0, cols, i, int8(types.Insert))
			}
			continue
		}
		key = append([]byte(nil), key...)
		if input == 0 {
			j.rowBuf = binary.BigEndian.AppendUint64(j.rowBuf[:0], uint64(t))
			j.rowBuf = append(j.rowBuf, side.rowAt(cols, i)...)
			if err := side.state.Add(kg, key, j.rowBuf, 1); err != nil {
				return err
			}
		} else if err := j.putVersion(kg, key, t, kind == types.Delete, side.rowAt(cols, i)); err != nil {
			return err
		}
		if err := j.addTimer(kg, key, t); err != nil {
			return err
		}
		if j.out.len() >= joinBatchRows {
			if err := j.out.flush(out); err != nil {
				return err
			}
		}
	}
	return j.out.flush(out)
}

// putVersion stores the version of key starting at t, replacing a stored
// version with the same time.
func (j *TemporalJoin) putVersion(kg int, key []byte, t int64, tomb bool, row []byte) error {
	vs, err := j.versions(kg, key)
	if err != nil {
		return err
	}
	for _, v := range vs {
		if v.t == t {
			if err := j.right.state.Add(kg, key, v.stored, -v.count); err != nil {
				return err
			}
		}
	}
	j.rowBuf = binary.BigEndian.AppendUint64(j.rowBuf[:0], uint64(t))
	flag := byte(0)
	if tomb {
		flag = 1
	}
	j.rowBuf = append(j.rowBuf, flag)
	j.rowBuf = append(j.rowBuf, row...)
	return j.right.state.Add(kg, key, j.rowBuf, 1)
}

// versions returns the versions of key, oldest first, as copies.
func (j *TemporalJoin) versions(kg int, key []byte) ([]version, error) {
	rows, err := j.right.state.Get(kg, key)
	if err != nil {
		return nil, err
	}
	vs := make([]version, 0, len(rows))
	for _, r := range rows {
		stored := append([]byte(nil), r.Row...)
		vs = append(vs, version{t: int64(binary.BigEndian.Uint64(stored)), tomb: stored[8] == 1, stored: stored, count: r.Count})
	}
	sort.Slice(vs, func(a, b int) bool { return vs[a].t < vs[b].t })
	return vs, nil
}

// addTimer records that key has a row at t.
func (j *TemporalJoin) addTimer(kg int, key []byte, t int64) error {
	return j.addBucketTimer(kg, key, j.timers.bucketOf(t))
}

func (j *TemporalJoin) addBucketTimer(kg int, key []byte, bucket int64) error {
	entry := make([]byte, 0, 2+len(key))
	entry = binary.BigEndian.AppendUint16(entry, uint16(kg))
	entry = append(entry, key...)
	return j.timers.add(kg, bucket, entry)
}

// ProcessWatermark joins the left rows the watermark has reached, cleans
// up the versions they made unusable, and forwards wm.
func (j *TemporalJoin) ProcessWatermark(wm int64, out Collector) error {
	if wm <= j.wm {
		return nil
	}
	j.wm = wm
	for bucket, kgs, ok := j.timers.next(wm); ok; bucket, kgs, ok = j.timers.next(wm) {
		if err := j.fire(bucket, kgs, out); err != nil {
			return err
		}
	}
	// Keys with rows not yet due fire again at the next watermark.
	for _, e := range j.refire {
		if err := j.addBucketTimer(int(binary.BigEndian.Uint16(e)), e[2:], j.timers.bucketOf(j.wm)); err != nil {
			return err
		}
	}
	j.refire = j.refire[:0]
	if err := j.finish(out); err != nil {
		return err
	}
	return EmitWatermark(out, wm)
}

// fire joins the keys listed in bucket's timers.
func (j *TemporalJoin) fire(bucket int64, kgs []int, out Collector) error {
	entries, err := j.timers.take(bucket, kgs)
	if err != nil {
		return err
	}
	for _, e := range entries {
		kg, key := int(binary.BigEndian.Uint16(e.Row[:2])), e.Row[2:]
		pending, err := j.joinKey(kg, key, bucket, out)
		if err != nil {
			return err
		}
		if pending {
			j.refire = append(j.refire, e.Row)
		}
	}
	return nil
}

// joinKey joins the due left rows of key, removes them and the unusable
// versions, and reports whether rows of the fired bucket are still not due.
func (j *TemporalJoin) joinKey(kg int, key []byte, bucket int64, out Collector) (bool, error) {
	lrows, err := j.left.state.Get(kg, key)
	if err != nil {
		return false, err
	}
	var due []state.MultisetRow
	pending := false
	for _, r := range lrows {
		t := int64(binary.BigEndian.Uint64(r.Row))
		if t <= j.wm {
			due = append(due, state.MultisetRow{Row: append([]byte(nil), r.Row...), Count: r.Count})
		} else if j.timers.bucketOf(t) <= bucket {
			pending = true
		}
	}
	vs, err := j.versions(kg, key)
	if err != nil {
		return false, err
	}
	for _, r := range due {
		if err := j.left.state.Add(kg, key, r.Row, -r.Count); err != nil {
			return false, err
		}
		t := int64(binary.BigEndian.Uint64(r.Row))
		// The version valid at t: the last one starting at or before t.
		i := sort.Search(len(vs), func(i int) bool { return vs[i].t > t }) - 1
		for c := int64(0); c < r.Count; c++ {
			if i < 0 || vs[i].tomb {
				if err := j.pad(r.Row[8:], out); err != nil {
					return false, err
				}
				continue
			}
			if err := j.candidate(r.Row[8:], vs[i].stored[9:], out); err != nil {
				return false, err
			}
		}
	}
	// The versions before the latest one at or before wm are unusable; so
	// is that one when it is a tombstone.
	last := sort.Search(len(vs), func(i int) bool { return vs[i].t > j.wm }) - 1
	if last >= 0 && vs[last].tomb {
		last++
	}
	for i, v := range vs {
		if i < last {
			if err := j.right.state.Add(kg, key, v.stored, -v.count); err != nil {
				return false, err
			}
		} else if v.t > j.wm && j.timers.bucketOf(v.t) <= bucket {
			pending = true
		}
	}
	return pending, nil
}

// pad emits the stored left row padded with NULLs for a LEFT join.
func (j *TemporalJoin) pad(left []byte, out Collector) error {
	if !j.spec.OuterLeft {
		return nil
	}
	if err := j.out.appendStoredPadded(0, left, int8(types.Insert)); err != nil {
		return err
	}
	if j.out.len() >= joinBatchRows {
		return j.out.flush(out)
	}
	return nil
}

// candidate queues the joined row of the stored left and right rows for
// the residual.
func (j *TemporalJoin) candidate(left, right []byte, out Collector) error {
	o := j.cand
	if err := o.rb.Decoder(0, o.nLeft).Append(left); err != nil {
		return fmt.Errorf("operators: join state holds a bad row: %w", err)
	}
	if err := o.rb.Decoder(o.nLeft, o.nRight).Append(right); err != nil {
		return fmt.Errorf("operators: join state holds a bad row: %w", err)
	}
	o.rb.EndRow()
	o.kinds = append(o.kinds, int8(types.Insert))
	j.candLeft = append(j.candLeft, left)
	if o.len() >= joinBatchRows {
		return j.finish(out)
	}
	return nil
}

// finish applies the residual to the queued candidates, emits those that
// pass and pads (LEFT) the left rows of those that fail, then flushes.
func (j *TemporalJoin) finish(out Collector) error {
	if j.cand.len() > 0 {
		b := takeBatch(j.cand.schema, j.cand.rb, &j.cand.kinds)
		j.cand.rb.Reserve(joinBatchRows)
		err := j.emitSelected(b, out)
		b.Release()
		if err != nil {
			return err
		}
		j.candLeft = j.candLeft[:0]
	}
	return j.out.flush(out)
}

// emitSelected emits the rows of candidate batch b that pass the residual and
// pads the others.
func (j *TemporalJoin) emitSelected(b types.Batch, out Collector) error {
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
	s := 0
	for i := 0; i < n; i++ {
		if s < len(j.sel) && int(j.sel[s]) == i {
			s++
			j.out.rb.AppendColumns(0, bcols, i)
			j.out.rb.EndRow()
			j.out.kinds = append(j.out.kinds, int8(types.Insert))
		} else if j.spec.OuterLeft {
			if err := j.out.appendStoredPadded(0, j.candLeft[i], int8(types.Insert)); err != nil {
				return err
			}
		}
		if j.out.len() >= joinBatchRows {
			if err := j.out.flush(out); err != nil {
				return err
			}
		}
	}
	return nil
}

// EndInput does nothing: MaxWatermark, which comes before the end of the
// last input, has joined every buffered left row.
func (j *TemporalJoin) EndInput(int, Collector) error { return nil }

// Close closes the state. It is safe after a failed Open.
func (j *TemporalJoin) Close() error {
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
func (*TemporalJoin) UsesKeyedState() bool { return true }
