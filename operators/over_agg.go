package operators

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

func init() {
	RegisterOperator(jobgraph.KindOverAggregate, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.OverAggSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewOverAgg(*s)
	})
}

// OverAgg is Flink's rowtime OVER aggregation (RowTimeRowsBoundedPreceding,
// RowTimeRangeBoundedPreceding, RowTimeRowsUnboundedPreceding and
// RowTimeRangeUnboundedPrecedingFunction). Each input row is buffered under
// its partition key and rowtime (in ms) until the watermark reaches that
// rowtime; a watermark then processes the buffered rowtimes in ascending
// order, and each row emits one +I row: its columns, then the aggregates
// over its frame.
//
//   - ROWS: the rows of one rowtime go in arrival order, each adding itself
//     to the frame before it emits; a bounded frame of n PRECEDING holds at
//     most n+1 rows, so the oldest leaves first.
//   - RANGE: every row of one rowtime T enters the frame before any emits,
//     so they all get the same values; a bounded frame of d PRECEDING holds
//     the rows at T-d to T.
//
// A row is late, and dropped, when an unbounded frame's watermark is at or
// past its rowtime, or when a bounded frame's partition already processed
// its rowtime or a later one (Flink's lastTriggeringTs, which starts at 0:
// a bounded frame drops rows at or before the epoch). A late bounded row
// that its partition has not passed yet is kept and processed at the next
// watermark, as a Flink timer set in the past fires then.
//
// State, in the subtask's state.Backend, per partition key: the buffered
// rows and (bounded frames) the frame's rows in a MultisetState under
// (key, rowtime), each row tagged with its arrival number; the next
// arrival number and last processed rowtime in a ValueState; the frame's
// row count, its rowtimes with their row counts, and the accumulators in
// another ValueState (MIN and MAX of a bounded frame keep their values in
// a multiset, as group aggregates over retractions do); and a timer index
// of the keys with buffered rows per (key group, rowtime). Memory holds
// only the sorted buffered rowtimes and, per rowtime, the key groups the
// index has rows in; Open rebuilds it from the index, so a checkpoint holds
// only keyed state and the watermark, and restores at any parallelism.
type OverAgg struct {
	spec    jobgraph.OverAggSpec
	aggs    []*aggFunc
	nIn     int
	bounded bool
	be      state.Namespace
	rows    *state.MultisetState
	seqs    *state.ValueState
	accs    *state.ValueState
	timers  *state.MultisetState
	maxPar  int

	watermarkState
	pending []int64 // buffered rowtimes, ascending
	open    map[int64]map[int]struct{}

	keyEnc  *types.RowEncoder
	rowEnc  *types.RowEncoder
	keyCols []arrow.Array
	hashes  []uint64
	acc     []aggAcc
	frame   overFrame
	keyBuf  []byte
	rowKey  []byte
	tsBuf   []byte
	rowBuf  []byte
	valBuf  []byte
	accBuf  []byte
	resBuf  []byte
	work    []overRow // the rows a firing reads: retractable frame rows, then new ones
	fresh   []overRow // the new rows of a firing
	slab    []byte    // the encoded rows of work and fresh
	kgs     []int
	keys    []overKey
	fireKey []byte

	inRB   *types.RowBuilder
	schema *arrow.Schema
	rb     *types.RowBuilder
	kinds  []int8
}

var (
	_ StatefulOperator = (*OverAgg)(nil)
	_ WatermarkHandler = (*OverAgg)(nil)
	_ Checkpointer     = (*OverAgg)(nil)
)

// overFrame is what a partition's frame state holds besides its
// accumulators: its row count and, for a bounded frame, its rowtimes in
// ascending order with the rows at each.
type overFrame struct {
	n   int64
	tss []overTs
}

type overTs struct {
	ts int64
	n  int64
}

// overKey is a partition key of the timer index with its row count there.
type overKey struct {
	key []byte
	n   int64
}

// overRow is one stored row: its rowtime and arrival number, and the row
// in the row codec.
type overRow struct {
	ts  int64
	seq uint64
	enc []byte
}

// NewOverAgg checks spec and returns an unopened operator.
func NewOverAgg(spec jobgraph.OverAggSpec) (*OverAgg, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("operators: over aggregate: %w", err)
	}
	nIn := len(spec.InputSchema)
	for i := 0; i < nIn; i++ {
		if !arrow.TypeEqual(spec.InputSchema[i].Type.ArrowType(), spec.OutputSchema[i].Type.ArrowType()) {
			return nil, fmt.Errorf("operators: over aggregate input column %d is %v but output column %q is %v",
				i, spec.InputSchema[i].Type, spec.OutputSchema[i].Name, spec.OutputSchema[i].Type)
		}
	}
	a := &OverAgg{spec: spec, nIn: nIn, bounded: !spec.Unbounded}
	for i, call := range spec.Aggs {
		f, err := newAggFunc(call, spec.InputSchema, spec.OutputSchema[nIn+i].Type)
		if err != nil {
			return nil, err
		}
		a.aggs = append(a.aggs, f)
	}
	return a, nil
}

// Open opens the operator's state in ctx's backend and rebuilds, from its
// timer index, the buffered rowtimes of a resumed subtask.
func (a *OverAgg) Open(ctx *Context) error {
	be, maxPar, err := ctx.Keyed()
	if err != nil {
		return err
	}
	a.be, a.maxPar = be, maxPar
	a.rows = be.Multiset("orows")
	a.seqs = be.Value("oseq")
	a.accs = be.Value("oacc")
	a.timers = be.Multiset("otimers")
	for i, f := range a.aggs {
		if a.bounded && (f.kind == aggMin || f.kind == aggMax) {
			f.values = be.Multiset(fmt.Sprintf("ovalues%d", i))
		}
	}
	if err := a.restoreWatermark(ctx.Restore); err != nil {
		return err
	}
	a.pending = nil
	a.open = map[int64]map[int]struct{}{}
	err = a.timers.ScanKeys(func(kg int, key []byte) error {
		if len(key) != 8 {
			return fmt.Errorf("operators: over aggregate timer state holds a bad rowtime key %x", key)
		}
		a.index(kg, int64(binary.BigEndian.Uint64(key)))
		return nil
	})
	if err != nil {
		return err
	}
	ks := make(types.Schema, len(a.spec.Partition))
	for i, k := range a.spec.Partition {
		ks[i] = a.spec.InputSchema[k]
	}
	a.keyEnc = types.NewRowEncoder(ks)
	a.rowEnc = types.NewRowEncoder(a.spec.InputSchema)
	a.keyCols = make([]arrow.Array, len(ks))
	a.acc = make([]aggAcc, len(a.aggs))
	a.inRB = types.NewRowBuilder(nil, a.spec.InputSchema)
	a.schema = a.spec.OutputSchema.ArrowSchema()
	a.rb = types.NewRowBuilder(nil, a.spec.OutputSchema)
	return nil
}

// index records in memory that key group kg has buffered rows at ts.
func (a *OverAgg) index(kg int, ts int64) {
	kgs := a.open[ts]
	if kgs == nil {
		kgs = map[int]struct{}{}
		a.open[ts] = kgs
		at := sort.Search(len(a.pending), func(j int) bool { return a.pending[j] >= ts })
		a.pending = append(a.pending, 0)
		copy(a.pending[at+1:], a.pending[at:])
		a.pending[at] = ts
	}
	kgs[kg] = struct{}{}
}

// Process buffers the rows of b that are not late. It borrows b.
func (a *OverAgg) Process(_ int, b types.Batch, _ Collector) error {
	n := b.NumRows()
	if n == 0 {
		return nil
	}
	cols := b.Rec.Columns()[:b.NumCols()]
	for i, k := range a.spec.Partition {
		a.keyCols[i] = cols[k]
	}
	if cap(a.hashes) < n {
		a.hashes = make([]uint64, n)
	}
	a.hashes = a.hashes[:n]
	types.HashColumns(a.keyCols, a.hashes)
	tsCol := cols[a.spec.Rowtime].(*array.Timestamp)
	kinds := b.Kinds()
	for i := 0; i < n; i++ {
		if types.RowKind(kinds[i]).IsRetract() {
			return fmt.Errorf("operators: over aggregate got a %v row; its input must be insert-only", types.RowKind(kinds[i]))
		}
		if tsCol.IsNull(i) {
			return ErrNullRowtime
		}
		ts := floorMillis(int64(tsCol.Value(i)))
		if !a.bounded && ts <= a.wm {
			continue // late
		}
		kg := types.KeyGroupForHash(a.hashes[i], a.maxPar)
		a.keyBuf = a.keyEnc.EncodeKey(a.keyBuf[:0], a.keyCols, i)
		seq, last, err := a.loadSeq(kg)
		if err != nil {
			return err
		}
		if a.bounded && ts <= last {
			continue // late: its partition processed this rowtime or a later one
		}
		a.rowBuf = binary.BigEndian.AppendUint64(a.rowBuf[:0], seq)
		a.rowBuf = a.rowEnc.AppendRow(a.rowBuf, cols, i)
		if err := a.rows.Add(kg, a.rowStateKey(ts), a.rowBuf, 1); err != nil {
			return err
		}
		if err := a.storeSeq(kg, seq+1, last); err != nil {
			return err
		}
		a.tsBuf = binary.BigEndian.AppendUint64(a.tsBuf[:0], uint64(ts))
		if err := a.timers.Add(kg, a.tsBuf, a.keyBuf, 1); err != nil {
			return err
		}
		a.index(kg, ts)
	}
	return nil
}

// rowStateKey is the state key of the rows of the partition in a.keyBuf
// at ts: the encoded key, then ts.
func (a *OverAgg) rowStateKey(ts int64) []byte {
	a.rowKey = binary.BigEndian.AppendUint64(append(a.rowKey[:0], a.keyBuf...), uint64(ts))
	return a.rowKey
}

// loadSeq reads the next arrival number and the last processed rowtime of
// the partition in a.keyBuf (0 and 0 for a new one).
func (a *OverAgg) loadSeq(kg int) (seq uint64, last int64, err error) {
	v, found, err := a.seqs.Get(kg, a.keyBuf)
	if err != nil || !found {
		return 0, 0, err
	}
	seq, w := binary.Uvarint(v)
	if w <= 0 {
		return 0, 0, errBadAggState
	}
	last, w2 := binary.Varint(v[w:])
	if w2 <= 0 || w+w2 != len(v) {
		return 0, 0, errBadAggState
	}
	return seq, last, nil
}

func (a *OverAgg) storeSeq(kg int, seq uint64, last int64) error {
	a.valBuf = binary.AppendVarint(binary.AppendUvarint(a.valBuf[:0], seq), last)
	return a.seqs.Put(kg, a.keyBuf, a.valBuf)
}

// ProcessWatermark processes the buffered rowtimes wm reaches, in
// ascending order, then forwards wm.
func (a *OverAgg) ProcessWatermark(wm int64, out Collector) error {
	if wm <= a.wm {
		return nil
	}
	a.wm = wm
	done := 0
	for ; done < len(a.pending) && a.pending[done] <= wm; done++ {
		if err := a.fireTs(a.pending[done], out); err != nil {
			return err
		}
	}
	a.pending = append(a.pending[:0], a.pending[done:]...)
	if err := a.flush(out); err != nil {
		return err
	}
	return EmitWatermark(out, wm)
}

// fireTs processes the rows buffered at ts, partition by partition (key
// groups ascending, then keys in byte order), and clears the timer index
// there.
func (a *OverAgg) fireTs(ts int64, out Collector) error {
	a.kgs = a.kgs[:0]
	for kg := range a.open[ts] {
		a.kgs = append(a.kgs, kg)
	}
	delete(a.open, ts)
	sort.Ints(a.kgs)
	a.fireKey = binary.BigEndian.AppendUint64(a.fireKey[:0], uint64(ts))
	tsKey := a.fireKey
	for _, kg := range a.kgs {
		rows, err := a.timers.Get(kg, tsKey)
		if err != nil {
			return err
		}
		a.keys = a.keys[:0]
		for _, r := range rows {
			a.keys = append(a.keys, overKey{append([]byte(nil), r.Row...), r.Count})
		}
		keys := a.keys
		if len(keys) > 1 {
			sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i].key, keys[j].key) < 0 })
		}
		for _, k := range keys {
			a.keyBuf = append(a.keyBuf[:0], k.key...)
			if err := a.fire(kg, ts, out); err != nil {
				return err
			}
			if err := a.timers.Add(kg, tsKey, k.key, -k.n); err != nil {
				return err
			}
			if a.rb.Len() >= joinBatchRows {
				if err := a.flush(out); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// fire processes the rows of the partition in a.keyBuf buffered at ts.
func (a *OverAgg) fire(kg int, ts int64, out Collector) error {
	seq, last, err := a.loadSeq(kg)
	if err != nil {
		return err
	}
	if a.bounded && ts <= last {
		return fmt.Errorf("operators: over aggregate fires rowtime %d after %d", ts, last)
	}
	if err := a.loadAccs(kg); err != nil {
		return err
	}
	// The rows this firing reads: the frame's rows that may leave it, then
	// the new ones in arrival order.
	a.slab = a.slab[:0]
	newRows, err := a.readRows(kg, ts, a.fresh[:0])
	if err != nil {
		return err
	}
	a.fresh = newRows
	if a.work, err = a.retractable(kg, ts, int64(len(newRows)), a.work[:0]); err != nil {
		return err
	}
	nOld := len(a.work)
	a.work = append(a.work, newRows...)
	for _, r := range a.work {
		if err := a.inRB.Decoder(0, a.nIn).Append(r.enc); err != nil {
			return fmt.Errorf("operators: over aggregate state holds a bad row: %w", err)
		}
		a.inRB.EndRow()
	}
	cols := a.inRB.NewArrays()
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	gone := 0 // work rows retracted so far, oldest first
	spec := a.spec
	switch {
	case !spec.Rows:
		// RANGE: the rows before ts - Preceding leave, every row at ts
		// enters, then all of them emit the same values.
		if a.bounded {
			for ; gone < nOld && a.work[gone].ts < ts-spec.Preceding; gone++ {
				if err := a.step(cols, gone, true, kg); err != nil {
					return err
				}
			}
		}
		for j := nOld; j < len(a.work); j++ {
			if err := a.step(cols, j, false, kg); err != nil {
				return err
			}
		}
		if err := a.result(); err != nil {
			return err
		}
		for j := nOld; j < len(a.work); j++ {
			if err := a.emit(a.work[j].enc); err != nil {
				return err
			}
		}
	default:
		for j := nOld; j < len(a.work); j++ {
			if a.bounded && a.frame.n > spec.Preceding {
				if err := a.step(cols, gone, true, kg); err != nil {
					return err
				}
				gone++
			}
			if err := a.step(cols, j, false, kg); err != nil {
				return err
			}
			if err := a.result(); err != nil {
				return err
			}
			if err := a.emit(a.work[j].enc); err != nil {
				return err
			}
		}
	}
	if err := a.storeSeq(kg, seq, ts); err != nil {
		return err
	}
	return a.settle(kg, ts, gone, len(newRows))
}

// step adds (or with retract takes away) work row j to the accumulators
// and the frame's row count.
func (a *OverAgg) step(cols []arrow.Array, j int, retract bool, kg int) error {
	a.frame.n += pick64(retract, -1, 1)
	var err error
	for i, f := range a.aggs {
		var col arrow.Array
		if f.arg >= 0 {
			col = cols[f.arg]
		}
		if a.valBuf, err = f.accumulate(&a.acc[i], col, j, retract, kg, a.keyBuf, a.valBuf); err != nil {
			return err
		}
	}
	return nil
}

// result encodes the aggregates' current values into a.resBuf: a null
// bitmap, then the values, as the row codec has them.
func (a *OverAgg) result() error {
	a.resBuf = a.resBuf[:0]
	for j := 0; j < (len(a.aggs)+7)/8; j++ {
		a.resBuf = append(a.resBuf, 0)
	}
	for j, f := range a.aggs {
		var null bool
		if a.resBuf, null = f.appendResult(a.resBuf, &a.acc[j], a.frame.n); null {
			a.resBuf[j/8] |= 1 << (j % 8)
		}
	}
	return nil
}

// emit appends an output row: the input row enc, then a.resBuf.
func (a *OverAgg) emit(enc []byte) error {
	if err := a.rb.Decoder(0, a.nIn).Append(enc); err != nil {
		return fmt.Errorf("operators: over aggregate built a bad row: %w", err)
	}
	if err := a.rb.Decoder(a.nIn, len(a.aggs)).Append(a.resBuf); err != nil {
		return fmt.Errorf("operators: over aggregate built a bad result row: %w", err)
	}
	a.rb.EndRow()
	a.kinds = append(a.kinds, int8(types.Insert))
	return nil
}

// readRows appends to dst the rows of the partition in a.keyBuf stored at
// ts, in arrival order, their encodings copied into a.slab.
func (a *OverAgg) readRows(kg int, ts int64, dst []overRow) ([]overRow, error) {
	stored, err := a.rows.Get(kg, a.rowStateKey(ts))
	if err != nil {
		return dst, err
	}
	from := len(dst)
	for _, r := range stored {
		if len(r.Row) < 8 || r.Count != 1 {
			return dst, errBadAggState
		}
		start := len(a.slab)
		a.slab = append(a.slab, r.Row[8:]...)
		dst = append(dst, overRow{ts: ts, seq: binary.BigEndian.Uint64(r.Row), enc: a.slab[start:len(a.slab):len(a.slab)]})
	}
	if out := dst[from:]; len(out) > 1 {
		sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	}
	return dst, nil
}

// retractable appends to out the frame rows, oldest first, that may leave
// the frame when m rows at ts enter it: for RANGE those before ts -
// Preceding, for ROWS the oldest frame.n + m - (Preceding + 1). An
// unbounded frame keeps every row.
func (a *OverAgg) retractable(kg int, ts, m int64, out []overRow) ([]overRow, error) {
	if !a.bounded {
		return out, nil
	}
	want := a.frame.n + m - (a.spec.Preceding + 1)
	for _, ft := range a.frame.tss {
		if !a.spec.Rows && ft.ts >= ts-a.spec.Preceding {
			break
		}
		if a.spec.Rows && int64(len(out)) >= want {
			break
		}
		before := len(out)
		var err error
		if out, err = a.readRows(kg, ft.ts, out); err != nil {
			return out, err
		}
		if got := int64(len(out) - before); got != ft.n {
			return out, fmt.Errorf("operators: over aggregate frame holds %d rows at %d, its state %d", ft.n, ft.ts, got)
		}
	}
	return out, nil
}

// settle writes the partition's state after a firing at ts that retracted
// the first gone work rows and added the last m: the retracted rows leave
// the row state, and with an unbounded frame so do the new ones.
func (a *OverAgg) settle(kg int, ts int64, gone, m int) error {
	for _, r := range a.work[:gone] {
		a.rowBuf = binary.BigEndian.AppendUint64(a.rowBuf[:0], r.seq)
		a.rowBuf = append(a.rowBuf, r.enc...)
		if err := a.rows.Add(kg, a.rowStateKey(r.ts), a.rowBuf, -1); err != nil {
			return err
		}
	}
	if a.bounded {
		// The frame's rowtimes: drop the retracted rows from the oldest,
		// then add ts with the new rows that stayed.
		left := int64(gone)
		tss := a.frame.tss[:0]
		for _, ft := range a.frame.tss {
			take := min(left, ft.n)
			left -= take
			if ft.n -= take; ft.n > 0 {
				tss = append(tss, ft)
			}
		}
		if stay := int64(m) - left; stay > 0 {
			tss = append(tss, overTs{ts: ts, n: stay})
		}
		a.frame.tss = tss
	} else {
		for _, r := range a.work[len(a.work)-m:] {
			a.rowBuf = binary.BigEndian.AppendUint64(a.rowBuf[:0], r.seq)
			a.rowBuf = append(a.rowBuf, r.enc...)
			if err := a.rows.Add(kg, a.rowStateKey(ts), a.rowBuf, -1); err != nil {
				return err
			}
		}
	}
	return a.storeAccs(kg)
}

// loadAccs reads the frame state of the partition in a.keyBuf into
// a.frame and a.acc (empty for a new partition).
func (a *OverAgg) loadAccs(kg int) error {
	a.frame.n, a.frame.tss = 0, a.frame.tss[:0]
	for i := range a.acc {
		a.acc[i].reset()
	}
	src, found, err := a.accs.Get(kg, a.keyBuf)
	if err != nil || !found {
		return err
	}
	var n, nts uint64
	if !uvarint(&src, &n) || !uvarint(&src, &nts) {
		return errBadAggState
	}
	a.frame.n = int64(n)
	prev := int64(0)
	for i := uint64(0); i < nts; i++ {
		d, w := binary.Varint(src)
		if w <= 0 {
			return errBadAggState
		}
		src = src[w:]
		var c uint64
		if !uvarint(&src, &c) {
			return errBadAggState
		}
		prev += d
		a.frame.tss = append(a.frame.tss, overTs{ts: prev, n: int64(c)})
	}
	for i, f := range a.aggs {
		if src, err = f.decodeAcc(src, &a.acc[i]); err != nil {
			return err
		}
	}
	if len(src) != 0 {
		return errBadAggState
	}
	return nil
}

// storeAccs writes a.frame and a.acc as the frame state of the partition
// in a.keyBuf: the row count, the rowtimes (delta-encoded) with their row
// counts, then the accumulators.
func (a *OverAgg) storeAccs(kg int) error {
	a.accBuf = binary.AppendUvarint(a.accBuf[:0], uint64(a.frame.n))
	a.accBuf = binary.AppendUvarint(a.accBuf, uint64(len(a.frame.tss)))
	prev := int64(0)
	for _, ft := range a.frame.tss {
		a.accBuf = binary.AppendVarint(a.accBuf, ft.ts-prev)
		a.accBuf = binary.AppendUvarint(a.accBuf, uint64(ft.n))
		prev = ft.ts
	}
	for i, f := range a.aggs {
		a.accBuf = f.appendAcc(a.accBuf, &a.acc[i])
	}
	return a.accs.Put(kg, a.keyBuf, a.accBuf)
}

func (a *OverAgg) flush(out Collector) error {
	return emitBuilt(out, a.schema, a.rb, &a.kinds)
}

// EndInput has nothing to flush: the maximum watermark, which precedes the
// end of the input, processed every buffered row.
func (a *OverAgg) EndInput(int, Collector) error { return nil }

// Close releases the builders. It is safe after a failed Open.
func (a *OverAgg) Close() error {
	if a.rb != nil {
		a.rb.Release()
		a.inRB.Release()
		a.rb, a.inRB = nil, nil
	}
	a.be = state.Namespace{}
	return nil
}

// StateStats reports the state's cache and spill counters; valid between
// Open and Close.
func (a *OverAgg) StateStats() state.Stats { return a.be.Backend().Stats() }

// UsesKeyedState reports that the operator keeps keyed state.
func (*OverAgg) UsesKeyedState() bool { return true }
