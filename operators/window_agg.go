package operators

import (
	"encoding/binary"
	"fmt"
	"sort"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

func init() {
	RegisterOperator(jobgraph.KindWindowAggregate, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.WindowAggSpec](spec)
		if err != nil {
			return nil, err
		}
		if s.Window.Kind == jobgraph.WindowSession {
			return NewSessionWindowAgg(*s)
		}
		return NewWindowAgg(*s)
	})
}

// WindowAgg is Flink's window aggregate over a TUMBLE, HOP or CUMULATE
// window function. Each input row is assigned to its windows by its
// rowtime (in ms; windows aligned to the epoch) and accumulated into the
// state of (group key, window) with the group aggregate's accumulators.
// When the watermark reaches window_end - 1 the window fires: one +I row
// per group (the keys, window_start, window_end, window_time =
// window_end - 1 ms, the aggregates), windows in order of their end, groups
// in the order they first appeared, and the window's state is dropped. A
// row is not added to a window that has fired; a row whose windows have
// all fired (for TUMBLE, its one window) is dropped as late, as Flink
// does. The output is insert-only; the input must be too.
//
// State, in the subtask's state.Backend (a write-back cache in front of
// Pebble, so cold windows spill): per (group key, window end) the row count
// and the accumulators in a ValueState, and per distinct view its values
// (see distinctView); and a timer index, per (key group,
// window end), of the group keys that have that window, in a MultisetState,
// each row tagged with its order of first appearance. In Go memory there
// is only the sorted set of window ends in flight and, per end, its start,
// the next appearance number and the key groups the index has rows in, so
// a watermark finds the windows it fires without scanning keys. Open
// rebuilds it from the timer index, so a checkpoint holds only the keyed
// state and the watermark (see watermarkState); both are filed per key
// group of the group key, so the operator restores at any parallelism.
//
// NB: a window end determines its window: TUMBLE and HOP windows have a
// fixed size, and a CUMULATE window is the step of its size-aligned window
// that ends there.
type WindowAgg struct {
	spec   jobgraph.WindowAggSpec
	aggs   []*aggFunc
	views  []*distinctView
	steps  []int // per view, what the current row did to it
	nKeys  int
	be     state.Namespace
	accs   *state.ValueState
	timers *state.MultisetState
	maxPar int

	watermarkState
	procClock
	ends []int64 // the ends of the windows in flight, ascending
	open map[int64]*openWindow

	keyEnc  *types.RowEncoder
	keyCols []arrow.Array
	hashes  []uint64
	acc     []aggAcc
	keyBuf  []byte
	endBuf  []byte
	idxBuf  []byte
	accBuf  []byte
	valBuf  []byte
	resBuf  []byte
	winBuf  []byte
	starts  []window
	firing  []firingGroup

	schema *arrow.Schema
	rb     *types.RowBuilder
	kinds  []int8
}

var (
	_ StatefulOperator      = (*WindowAgg)(nil)
	_ WatermarkHandler      = (*WindowAgg)(nil)
	_ Checkpointer          = (*WindowAgg)(nil)
	_ ProcessingTimeHandler = (*WindowAgg)(nil)
)

// window is [start, end) in ms.
type window struct{ start, end int64 }

// openWindow is what memory holds of a window that has not fired.
type openWindow struct {
	start int64
	seq   uint64           // the next group's appearance number
	kgs   map[int]struct{} // key groups with rows in the timer index
}

// firingGroup is one group of a firing window, read from the timer index.
type firingGroup struct {
	seq uint64
	kg  int
	row []byte // the index row: seq, encoded key, key in the row codec
}

// NewWindowAgg checks spec and returns an unopened operator.
func NewWindowAgg(spec jobgraph.WindowAggSpec) (*WindowAgg, error) {
	nk := len(spec.Keys)
	if len(spec.OutputSchema) != nk+3+len(spec.Aggs) {
		return nil, fmt.Errorf("operators: window aggregate has %d keys and %d aggregates but %d output columns",
			nk, len(spec.Aggs), len(spec.OutputSchema))
	}
	if spec.Rowtime < 0 || spec.Rowtime >= len(spec.InputSchema) || !spec.InputSchema[spec.Rowtime].Type.IsTimestamp() {
		return nil, fmt.Errorf("operators: window aggregate rowtime column %d is not a timestamp", spec.Rowtime)
	}
	w := spec.Window
	switch {
	case w.SizeMs <= 0:
		return nil, fmt.Errorf("operators: window size %d ms", w.SizeMs)
	case w.Kind == jobgraph.WindowTumble:
	case w.Kind == jobgraph.WindowHop && w.StepMs > 0:
		// NB: a legacy HOP group window's size need not be a multiple of
		// its slide (the HOP function's must, which the planner checks).
	case w.Kind == jobgraph.WindowCumulate && w.StepMs > 0 && w.SizeMs%w.StepMs == 0:
	default:
		return nil, fmt.Errorf("operators: bad window %+v", w)
	}
	for i, k := range spec.Keys {
		if k < 0 || k >= len(spec.InputSchema) {
			return nil, fmt.Errorf("operators: window key column %d is out of range", k)
		}
		if !arrow.TypeEqual(spec.InputSchema[k].Type.ArrowType(), spec.OutputSchema[i].Type.ArrowType()) {
			return nil, fmt.Errorf("operators: window key %d is %v but output column %q is %v",
				i, spec.InputSchema[k].Type, spec.OutputSchema[i].Name, spec.OutputSchema[i].Type)
		}
	}
	a := &WindowAgg{spec: spec, nKeys: nk}
	for i, call := range spec.Aggs {
		f, err := newAggFunc(call, spec.InputSchema, spec.OutputSchema[nk+3+i].Type)
		if err != nil {
			return nil, err
		}
		a.aggs = append(a.aggs, f)
	}
	a.views = buildViews(spec.Aggs, a.aggs, spec.InputSchema)
	a.steps = make([]int, len(a.views))
	return a, nil
}

// Open opens the operator's state in ctx's backend and rebuilds, from it,
// the windows in flight of a resumed subtask.
func (a *WindowAgg) Open(ctx *Context) error {
	be, maxPar, err := ctx.Keyed()
	if err != nil {
		return err
	}
	a.maxPar = maxPar
	a.be = be
	a.openClock(ctx, a.spec.Proctime)
	a.accs = be.Value("wacc")
	a.timers = be.Multiset("wtimers")
	openViews(a.views, be, true, 0)
	if err := a.restoreWatermark(ctx.Restore); err != nil {
		return err
	}
	a.ends = nil
	a.open = map[int64]*openWindow{}
	if err := a.restoreWindows(); err != nil {
		return err
	}
	ks := make(types.Schema, a.nKeys)
	for i, k := range a.spec.Keys {
		ks[i] = a.spec.InputSchema[k]
	}
	a.keyEnc = types.NewRowEncoder(ks)
	a.keyCols = make([]arrow.Array, a.nKeys)
	a.acc = make([]aggAcc, len(a.aggs))
	a.schema = a.spec.OutputSchema.ArrowSchema()
	a.rb = types.NewRowBuilder(nil, a.spec.OutputSchema)
	return nil
}

// restoreWindows rebuilds what memory holds of the windows in flight from
// the timer index, as a resumed subtask finds it (a fresh one finds none):
// the index has a row per group of every window that has not fired, under
// (its group's key group, the window's end). A window's next appearance
// number follows the highest it holds, so groups keep their order of first
// appearance.
//
// NB: at another parallelism the index holds the rows of whichever old
// subtasks owned this subtask's key groups; their appearance numbers were
// counted apart, so the order of groups within a window merged from
// several is by number, then key group (the result rows are the same).
func (a *WindowAgg) restoreWindows() error {
	err := a.timers.Scan(func(kg int, key []byte, rows []state.MultisetRow) error {
		if len(key) != 8 {
			return fmt.Errorf("operators: window aggregate timer state holds a bad window key %x", key)
		}
		end := int64(binary.BigEndian.Uint64(key))
		ow := a.open[end]
		if ow == nil {
			ow = &openWindow{start: windowStart(a.spec.Window, end), kgs: map[int]struct{}{}}
			a.open[end] = ow
			a.ends = append(a.ends, end)
		}
		ow.kgs[kg] = struct{}{}
		for _, r := range rows {
			if len(r.Row) < 8 {
				return errBadAggState
			}
			if seq := binary.BigEndian.Uint64(r.Row); seq >= ow.seq {
				ow.seq = seq + 1
			}
		}
		return nil
	})
	sort.Slice(a.ends, func(i, j int) bool { return a.ends[i] < a.ends[j] })
	return err
}

// windowStart is the start of the window of w that ends at end.
func windowStart(w jobgraph.WindowSpec, end int64) int64 {
	if w.Kind == jobgraph.WindowCumulate {
		// The step ends inside its size-aligned window.
		return (end - 1) - floorMod(end-1-w.OffsetMs, w.SizeMs)
	}
	return end - w.SizeMs
}

// Process accumulates the rows of b into their windows. It borrows b.
func (a *WindowAgg) Process(_ int, b types.Batch, _ Collector) error {
	n := b.NumRows()
	if n == 0 {
		return nil
	}
	cols := b.Rec.Columns()[:b.NumCols()]
	for i, k := range a.spec.Keys {
		a.keyCols[i] = cols[k]
	}
	if cap(a.hashes) < n {
		a.hashes = make([]uint64, n)
	}
	a.hashes = a.hashes[:n]
	types.HashColumns(a.keyCols, a.hashes)
	ts := cols[a.spec.Rowtime].(*array.Timestamp)
	kinds := b.Kinds()
	a.tick()
	for i := 0; i < n; i++ {
		if types.RowKind(kinds[i]).IsRetract() {
			return fmt.Errorf("operators: window aggregate got a %v row; its input must be insert-only", types.RowKind(kinds[i]))
		}
		t := a.nowMs
		if !a.proctime {
			if ts.IsNull(i) {
				return ErrNullRowtime
			}
			t = floorMillis(int64(ts.Value(i)))
		}
		a.starts = assignWindows(a.starts[:0], a.spec.Window, t)
		kg := types.KeyGroupForHash(a.hashes[i], a.maxPar)
		a.keyBuf = a.keyEnc.EncodeKey(a.keyBuf[:0], a.keyCols, i)
		for _, w := range a.starts {
			if w.end-1 <= a.wm {
				continue // fired already: late for this window
			}
			if err := a.accumulate(w, kg, cols, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// accumulate adds row i, whose encoded key is in a.keyBuf, to the state of
// its group in window w.
func (a *WindowAgg) accumulate(w window, kg int, cols []arrow.Array, i int) error {
	nk := len(a.keyBuf)
	a.keyBuf = binary.BigEndian.AppendUint64(a.keyBuf, uint64(w.end))
	err := a.update(w, kg, nk, cols, i)
	a.keyBuf = a.keyBuf[:nk]
	return err
}

// update is accumulate with the state key, encoded key then window end, in
// a.keyBuf.
func (a *WindowAgg) update(w window, kg, nk int, cols []arrow.Array, i int) error {
	stored, found, err := a.accs.Get(kg, a.keyBuf)
	if err != nil {
		return err
	}
	var rows int64
	if found {
		if rows, err = a.decode(stored); err != nil {
			return err
		}
	} else {
		for j := range a.acc {
			a.acc[j].reset()
		}
		if err := a.addTimer(w, kg, a.keyBuf[:nk], i); err != nil {
			return err
		}
	}
	rows++
	for v, view := range a.views {
		if a.steps[v], err = view.step(cols, i, false, kg, a.keyBuf, 0); err != nil {
			return err
		}
	}
	for j, f := range a.aggs {
		switch {
		case f.view >= 0:
			if a.steps[f.view] == 0 {
				continue // a value the window's group has seen
			}
		case !f.passes(cols, i):
			continue
		}
		var col arrow.Array
		if f.arg >= 0 {
			col = cols[f.arg]
		}
		if a.valBuf, err = f.accumulate(&a.acc[j], col, i, false, kg, nil, a.valBuf); err != nil {
			return err
		}
	}
	a.accBuf = binary.AppendVarint(a.accBuf[:0], rows)
	for j, f := range a.aggs {
		a.accBuf = f.appendAcc(a.accBuf, &a.acc[j])
	}
	return a.accs.Put(kg, a.keyBuf, a.accBuf)
}

// addTimer records that the group of row i (encoded key key, in key group
// kg) has window w: a row of the timer index under (kg, w.end) holding the
// group's appearance number, its encoded key and its key columns in the
// row codec.
func (a *WindowAgg) addTimer(w window, kg int, key []byte, i int) error {
	ow := a.open[w.end]
	if ow == nil {
		ow = &openWindow{start: w.start, kgs: map[int]struct{}{}}
		a.open[w.end] = ow
		at := sort.Search(len(a.ends), func(j int) bool { return a.ends[j] >= w.end })
		a.ends = append(a.ends, 0)
		copy(a.ends[at+1:], a.ends[at:])
		a.ends[at] = w.end
	}
	ow.kgs[kg] = struct{}{}
	a.idxBuf = binary.BigEndian.AppendUint64(a.idxBuf[:0], ow.seq)
	ow.seq++
	a.idxBuf = binary.AppendUvarint(a.idxBuf, uint64(len(key)))
	a.idxBuf = append(a.idxBuf, key...)
	a.idxBuf = a.keyEnc.AppendRow(a.idxBuf, a.keyCols, i)
	a.endBuf = binary.BigEndian.AppendUint64(a.endBuf[:0], uint64(w.end))
	return a.timers.Add(kg, a.endBuf, a.idxBuf, 1)
}

// decode reads a group's state into a.acc and returns its row count.
func (a *WindowAgg) decode(src []byte) (int64, error) {
	rows, w := binary.Varint(src)
	if w <= 0 {
		return 0, errBadAggState
	}
	src = src[w:]
	var err error
	for j, f := range a.aggs {
		if src, err = f.decodeAcc(src, &a.acc[j]); err != nil {
			return 0, err
		}
	}
	if len(src) != 0 {
		return 0, errBadAggState
	}
	return rows, nil
}

// assignWindows appends the windows containing ts (ms).
func assignWindows(dst []window, w jobgraph.WindowSpec, ts int64) []window {
	switch w.Kind {
	case jobgraph.WindowHop:
		last := ts - floorMod(ts-w.OffsetMs, w.StepMs)
		for start := last; start > ts-w.SizeMs; start -= w.StepMs {
			dst = append(dst, window{start, start + w.SizeMs})
		}
	case jobgraph.WindowCumulate:
		start := ts - floorMod(ts-w.OffsetMs, w.SizeMs)
		for end := start + w.StepMs; end <= start+w.SizeMs; end += w.StepMs {
			if end > ts {
				dst = append(dst, window{start, end})
			}
		}
	default:
		start := ts - floorMod(ts-w.OffsetMs, w.SizeMs)
		dst = append(dst, window{start, start + w.SizeMs})
	}
	return dst
}

func floorMod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// ProcessWatermark fires the windows wm completes, then forwards wm. Over
// processing time it only forwards wm, but for the maximum watermark, which
// ends the input: that fires every window.
func (a *WindowAgg) ProcessWatermark(wm int64, out Collector) error {
	if a.proctime && wm != MaxWatermark {
		return EmitWatermark(out, wm)
	}
	if err := a.fireUpTo(wm, out); err != nil {
		return err
	}
	return EmitWatermark(out, wm)
}

// OnProcessingTime fires, over processing time, the windows whose end - 1
// the clock has reached.
func (a *WindowAgg) OnProcessingTime(now time.Time, out Collector) error {
	if !a.proctime {
		return nil
	}
	return a.fireUpTo(now.UnixMilli(), out)
}

// fireUpTo fires the windows whose end - 1 is at most t, in order of end.
func (a *WindowAgg) fireUpTo(wm int64, out Collector) error {
	if wm <= a.wm {
		return nil
	}
	a.wm = wm
	fired := 0
	for ; fired < len(a.ends) && a.ends[fired]-1 <= wm; fired++ {
		if err := a.fire(a.ends[fired], out); err != nil {
			return err
		}
	}
	a.ends = append(a.ends[:0], a.ends[fired:]...)
	return a.flush(out)
}

// fire emits the window that ends at end, one row per group in order of
// appearance, and drops its state.
func (a *WindowAgg) fire(end int64, out Collector) error {
	ow := a.open[end]
	delete(a.open, end)
	w := window{ow.start, end}
	a.endBuf = binary.BigEndian.AppendUint64(a.endBuf[:0], uint64(end))
	a.firing = a.firing[:0]
	for kg := range ow.kgs {
		rows, err := a.timers.Get(kg, a.endBuf)
		if err != nil {
			return err
		}
		for _, r := range rows {
			a.firing = append(a.firing, firingGroup{
				seq: binary.BigEndian.Uint64(r.Row), kg: kg, row: append([]byte(nil), r.Row...),
			})
		}
	}
	sort.Slice(a.firing, func(i, j int) bool {
		fi, fj := &a.firing[i], &a.firing[j]
		return fi.seq < fj.seq || fi.seq == fj.seq && fi.kg < fj.kg
	})
	for _, g := range a.firing {
		kl, n := binary.Uvarint(g.row[8:])
		if n <= 0 || uint64(len(g.row)-8-n) < kl {
			return errBadAggState
		}
		key, rowKey := g.row[8+n:8+n+int(kl)], g.row[8+n+int(kl):]
		a.keyBuf = binary.BigEndian.AppendUint64(append(a.keyBuf[:0], key...), uint64(end))
		stored, found, err := a.accs.Get(g.kg, a.keyBuf)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("operators: window aggregate lost the state of a group of window %v", w)
		}
		rows, err := a.decode(stored)
		if err != nil {
			return err
		}
		if err := a.emit(w, rowKey, rows); err != nil {
			return err
		}
		if err := a.accs.Delete(g.kg, a.keyBuf); err != nil {
			return err
		}
		for _, v := range a.views {
			if err := v.drop(g.kg, a.keyBuf); err != nil {
				return err
			}
		}
		if err := a.timers.Add(g.kg, a.endBuf, g.row, -1); err != nil {
			return err
		}
		if a.rb.Len() >= joinBatchRows {
			if err := a.flush(out); err != nil {
				return err
			}
		}
	}
	for i := range a.firing {
		a.firing[i].row = nil
	}
	return nil
}

// emit appends one window's result row for the group whose key columns
// are rowKey (in the row codec) and whose accumulators are in a.acc.
func (a *WindowAgg) emit(w window, rowKey []byte, rows int64) error {
	if err := a.rb.Decoder(0, a.nKeys).Append(rowKey); err != nil {
		return fmt.Errorf("operators: window aggregate built a bad key row: %w", err)
	}
	// window_start, window_end, window_time in the row codec: no NULLs,
	// then nanoseconds.
	a.winBuf = append(a.winBuf[:0], 0)
	for _, ms := range []int64{w.start, w.end, w.end - 1} {
		a.winBuf = binary.LittleEndian.AppendUint64(a.winBuf, uint64(ms*1e6))
	}
	if err := a.rb.Decoder(a.nKeys, 3).Append(a.winBuf); err != nil {
		return err
	}
	a.resBuf = a.resBuf[:0]
	for j := 0; j < (len(a.aggs)+7)/8; j++ {
		a.resBuf = append(a.resBuf, 0)
	}
	for j, f := range a.aggs {
		var null bool
		if a.resBuf, null = f.appendResult(a.resBuf, &a.acc[j], rows); null {
			a.resBuf[j/8] |= 1 << (j % 8)
		}
	}
	if err := a.rb.Decoder(a.nKeys+3, len(a.aggs)).Append(a.resBuf); err != nil {
		return fmt.Errorf("operators: window aggregate built a bad result row: %w", err)
	}
	a.rb.EndRow()
	a.kinds = append(a.kinds, int8(types.Insert))
	return nil
}

func (a *WindowAgg) flush(out Collector) error {
	return emitBuilt(out, a.schema, a.rb, &a.kinds)
}

// EndInput has nothing to flush: the maximum watermark, which precedes the
// end of the input, fired every window.
func (a *WindowAgg) EndInput(int, Collector) error { return nil }

// Close releases the builders, flushes the state to Pebble and closes it.
// It is safe after a failed Open.
func (a *WindowAgg) Close() error {
	if a.rb != nil {
		a.rb.Release()
		a.rb = nil
	}
	a.be = state.Namespace{}
	return nil
}

// StateStats reports the state's cache and spill counters; valid between
// Open and Close.
func (a *WindowAgg) StateStats() state.Stats { return a.be.Backend().Stats() }

// UsesKeyedState reports that the operator keeps keyed state.
func (*WindowAgg) UsesKeyedState() bool { return true }
