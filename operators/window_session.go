package operators

import (
	"encoding/binary"
	"fmt"
	"sort"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

// SessionWindowAgg is Flink's window aggregate over a SESSION window
// function. Per group key a row at ts opens the window [ts, ts+gap); the
// windows of a key that overlap or touch merge into one session, whose
// accumulators are the merge of theirs (aggFunc.merge; DISTINCT values are
// replayed into the surviving session's views, so each counts once). When
// the watermark reaches a session's end - 1 the session fires: one +I row
// (the keys, window_start, window_end, window_time = window_end - 1 ms,
// the aggregates), sessions in order of their end, and its state is
// dropped. A row whose window, merged with the key's open sessions, has
// already reached the watermark is dropped as late, as Flink's
// MergingWindowProcessFunction does. The output is insert-only; the input
// must be too.
//
// State, in the subtask's state.Backend: per group key a ValueState entry
// holding the key's columns (row codec), the next session id and every
// open session with its bounds, id, timer number, row count and
// accumulators, so a row costs one point read and write; per (key, session
// id) the values of each distinct view; and a timer index, per (key group,
// session end), of the keys with a session ending there, in a
// MultisetState, each tagged with its order of registration. Memory holds
// only the sorted ends in flight and their key groups, rebuilt from the
// timer index at Open, so a checkpoint holds only the keyed state and the
// watermark, and the operator restores at any parallelism.
type SessionWindowAgg struct {
	spec   jobgraph.WindowAggSpec
	gap    int64
	aggs   []*aggFunc
	views  []*distinctView
	nKeys  int
	be     state.Namespace
	sess   *state.ValueState
	timers *state.MultisetState
	maxPar int

	watermarkState
	procClock
	ends []int64 // the ends of the sessions in flight, ascending
	open map[int64]*openWindow

	// the key being processed: its sessions, decoded
	rec sessionRecord

	keyEnc   *types.RowEncoder
	keyCols  []arrow.Array
	hashes   []uint64
	keyBuf   []byte
	sidBuf   []byte
	endBuf   []byte
	idxBuf   []byte
	valBuf   []byte
	recBuf   []byte
	resBuf   []byte
	winBuf   []byte
	firing   []firingGroup
	replay   []*types.RowBuilder // per view: its values as columns
	trueCol  *array.Boolean
	spare    []*session
	viewStep []int

	schema *arrow.Schema
	rb     *types.RowBuilder
	kinds  []int8
}

var (
	_ StatefulOperator      = (*SessionWindowAgg)(nil)
	_ WatermarkHandler      = (*SessionWindowAgg)(nil)
	_ Checkpointer          = (*SessionWindowAgg)(nil)
	_ ProcessingTimeHandler = (*SessionWindowAgg)(nil)
)

// session is one open session window of a key.
type session struct {
	start, end int64
	id         uint64 // names the session's distinct values in the views
	seq        uint64 // its row in the timer index under end
	rows       int64
	acc        []aggAcc
}

// sessionRecord is a key's state entry, decoded: its key columns in the
// row codec, the next session id and its sessions, ascending and apart.
type sessionRecord struct {
	keyRow []byte
	nextID uint64
	list   []*session
}

// NewSessionWindowAgg checks spec and returns an unopened operator.
func NewSessionWindowAgg(spec jobgraph.WindowAggSpec) (*SessionWindowAgg, error) {
	nk := len(spec.Keys)
	if len(spec.OutputSchema) != nk+3+len(spec.Aggs) {
		return nil, fmt.Errorf("operators: session window aggregate has %d keys and %d aggregates but %d output columns",
			nk, len(spec.Aggs), len(spec.OutputSchema))
	}
	if spec.Rowtime < 0 || spec.Rowtime >= len(spec.InputSchema) || !spec.InputSchema[spec.Rowtime].Type.IsTimestamp() {
		return nil, fmt.Errorf("operators: session window aggregate rowtime column %d is not a timestamp", spec.Rowtime)
	}
	if spec.Window.Kind != jobgraph.WindowSession || spec.Window.GapMs <= 0 {
		return nil, fmt.Errorf("operators: bad session window %+v", spec.Window)
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
	a := &SessionWindowAgg{spec: spec, gap: spec.Window.GapMs, nKeys: nk}
	for i, call := range spec.Aggs {
		f, err := newAggFunc(call, spec.InputSchema, spec.OutputSchema[nk+3+i].Type)
		if err != nil {
			return nil, err
		}
		if !f.canMerge() {
			return nil, fmt.Errorf("operators: %s in a session window aggregate: its accumulators cannot merge", call.Func)
		}
		a.aggs = append(a.aggs, f)
	}
	a.views = buildViews(spec.Aggs, a.aggs, spec.InputSchema)
	a.viewStep = make([]int, len(a.views))
	return a, nil
}

// Open opens the operator's state in ctx's backend and rebuilds, from it,
// the sessions in flight of a resumed subtask.
func (a *SessionWindowAgg) Open(ctx *Context) error {
	be, maxPar, err := ctx.Keyed()
	if err != nil {
		return err
	}
	a.maxPar = maxPar
	a.be = be
	a.openClock(ctx, a.spec.Proctime)
	a.sess = be.Value("ssessions")
	a.timers = be.Multiset("stimers")
	openViews(a.views, be, true, 0)
	if err := a.restoreWatermark(ctx.Restore); err != nil {
		return err
	}
	a.ends = nil
	a.open = map[int64]*openWindow{}
	if err := a.restoreEnds(); err != nil {
		return err
	}
	ks := make(types.Schema, a.nKeys)
	for i, k := range a.spec.Keys {
		ks[i] = a.spec.InputSchema[k]
	}
	a.keyEnc = types.NewRowEncoder(ks)
	a.keyCols = make([]arrow.Array, a.nKeys)
	for _, v := range a.views {
		var s types.Schema
		for _, c := range v.args {
			s = append(s, a.spec.InputSchema[c])
		}
		a.replay = append(a.replay, types.NewRowBuilder(nil, s))
	}
	a.schema = a.spec.OutputSchema.ArrowSchema()
	a.rb = types.NewRowBuilder(nil, a.spec.OutputSchema)
	return nil
}

// restoreEnds rebuilds the sorted session ends and their key groups from
// the timer index; an end's next registration number follows the highest
// it holds.
func (a *SessionWindowAgg) restoreEnds() error {
	err := a.timers.Scan(func(kg int, key []byte, rows []state.MultisetRow) error {
		if len(key) != 8 {
			return fmt.Errorf("operators: session window timer state holds a bad end %x", key)
		}
		end := int64(binary.BigEndian.Uint64(key))
		ow := a.openEnd(end, false)
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

// openEnd returns the in-flight entry of end, adding it (in order when
// sorted) if there is none.
func (a *SessionWindowAgg) openEnd(end int64, sorted bool) *openWindow {
	ow := a.open[end]
	if ow != nil {
		return ow
	}
	ow = &openWindow{kgs: map[int]struct{}{}}
	a.open[end] = ow
	if !sorted {
		a.ends = append(a.ends, end)
		return ow
	}
	at := sort.Search(len(a.ends), func(j int) bool { return a.ends[j] >= end })
	a.ends = append(a.ends, 0)
	copy(a.ends[at+1:], a.ends[at:])
	a.ends[at] = end
	return ow
}

// Process adds the rows of b to their keys' sessions. It borrows b.
func (a *SessionWindowAgg) Process(_ int, b types.Batch, _ Collector) error {
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
		kg := types.KeyGroupForHash(a.hashes[i], a.maxPar)
		a.keyBuf = a.keyEnc.EncodeKey(a.keyBuf[:0], a.keyCols, i)
		if err := a.add(kg, cols, i, t); err != nil {
			return err
		}
	}
	return nil
}

// add puts row i, at ts ms, whose encoded key is in a.keyBuf, into its
// key's sessions.
func (a *SessionWindowAgg) add(kg int, cols []arrow.Array, i int, ts int64) error {
	if err := a.load(kg); err != nil {
		return err
	}
	start, end := ts, ts+a.gap
	// The sessions are ascending and apart, so those the new window
	// overlaps or touches are consecutive.
	lo := sort.Search(len(a.rec.list), func(j int) bool { return a.rec.list[j].end >= start })
	hi := lo
	for hi < len(a.rec.list) && a.rec.list[hi].start <= end {
		hi++
	}
	if lo < hi {
		start = min(start, a.rec.list[lo].start)
		end = max(end, a.rec.list[hi-1].end)
	}
	if end-1 <= a.wm {
		// Late: the (merged) window has fired already. It merged no open
		// session, whose end is beyond the watermark.
		return nil
	}
	if a.rec.keyRow == nil {
		a.rec.keyRow = a.keyEnc.AppendRow(nil, a.keyCols, i)
	}
	var s *session
	if lo == hi {
		s = a.newSession()
		s.start, s.end, s.id = start, end, a.rec.nextID
		a.rec.nextID++
		a.rec.list = append(a.rec.list, nil)
		copy(a.rec.list[lo+1:], a.rec.list[lo:])
		a.rec.list[lo] = s
		if err := a.addTimer(kg, s); err != nil {
			return err
		}
	} else {
		var err error
		if s, err = a.merge(kg, lo, hi, start, end); err != nil {
			return err
		}
	}
	if err := a.accumulate(kg, s, cols, i); err != nil {
		return err
	}
	return a.store(kg)
}

// merge merges the key's sessions [lo, hi) into the first of them, which
// becomes [start, end), and returns it.
func (a *SessionWindowAgg) merge(kg, lo, hi int, start, end int64) (*session, error) {
	s := a.rec.list[lo]
	for _, o := range a.rec.list[lo+1 : hi] {
		s.rows += o.rows
		for j, f := range a.aggs {
			if f.view >= 0 {
				continue
			}
			if err := f.merge(&s.acc[j], &o.acc[j]); err != nil {
				return nil, err
			}
		}
		if err := a.mergeViews(kg, s, o); err != nil {
			return nil, err
		}
		if err := a.removeTimer(kg, o); err != nil {
			return nil, err
		}
		a.spare = append(a.spare, o)
	}
	a.rec.list = append(a.rec.list[:lo+1], a.rec.list[hi:]...)
	s.start = start
	if end != s.end {
		if err := a.removeTimer(kg, s); err != nil {
			return nil, err
		}
		s.end = end
		if err := a.addTimer(kg, s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// mergeViews replays the distinct values of session o into s's views: a
// value s has not seen enters its DISTINCT aggregates. o's values are
// dropped.
func (a *SessionWindowAgg) mergeViews(kg int, s, o *session) error {
	if len(a.views) == 0 {
		return nil
	}
	from := a.sessionKey(o)
	from = append([]byte(nil), from...)
	into := append([]byte(nil), a.sessionKey(s)...)
	for vi, v := range a.views {
		rows, err := v.values.Get(kg, from)
		if err != nil {
			return err
		}
		rb := a.replay[vi]
		for _, r := range rows {
			if err := rb.Decoder(0, len(v.args)).Append(r.Row); err != nil {
				return fmt.Errorf("operators: session window aggregate holds a bad distinct value: %w", err)
			}
			rb.EndRow()
		}
		n := rb.Len()
		arrs := rb.NewArrays()
		cols := make([]arrow.Array, len(a.spec.InputSchema))
		if v.filter >= 0 {
			cols[v.filter] = a.trues(n)
		}
		for j, c := range v.args {
			cols[c] = arrs[j]
		}
		for i := 0; i < n; i++ {
			step, err := v.step(cols, i, false, kg, into, 0)
			if err != nil || step == 0 {
				if err != nil {
					releaseAll(arrs)
					return err
				}
				continue
			}
			for j, f := range a.aggs {
				if f.view != vi {
					continue
				}
				if a.valBuf, err = f.accumulate(&s.acc[j], cols[f.arg], i, false, kg, nil, a.valBuf); err != nil {
					releaseAll(arrs)
					return err
				}
			}
		}
		releaseAll(arrs)
		if err := v.drop(kg, from); err != nil {
			return err
		}
	}
	return nil
}

func releaseAll(arrs []arrow.Array) {
	for _, c := range arrs {
		c.Release()
	}
}

// trues returns a BOOLEAN column of at least n TRUE values, the filter
// column of replayed distinct values (they passed it).
func (a *SessionWindowAgg) trues(n int) arrow.Array {
	if a.trueCol == nil || a.trueCol.Len() < n {
		if a.trueCol != nil {
			a.trueCol.Release()
		}
		b := array.NewBooleanBuilder(memory.DefaultAllocator)
		for i := 0; i < max(n, 64); i++ {
			b.Append(true)
		}
		a.trueCol = b.NewBooleanArray()
		b.Release()
	}
	return a.trueCol
}

// accumulate adds row i to session s.
func (a *SessionWindowAgg) accumulate(kg int, s *session, cols []arrow.Array, i int) error {
	s.rows++
	var err error
	if len(a.views) > 0 {
		key := a.sessionKey(s)
		for v, view := range a.views {
			if a.viewStep[v], err = view.step(cols, i, false, kg, key, 0); err != nil {
				return err
			}
		}
	}
	for j, f := range a.aggs {
		switch {
		case f.view >= 0:
			if a.viewStep[f.view] == 0 {
				continue // a value the session has seen
			}
		case !f.passes(cols, i):
			continue
		}
		var col arrow.Array
		if f.arg >= 0 {
			col = cols[f.arg]
		}
		if a.valBuf, err = f.accumulate(&s.acc[j], col, i, false, kg, nil, a.valBuf); err != nil {
			return err
		}
	}
	return nil
}

// sessionKey is the state key of session s's distinct values: the encoded
// group key (in a.keyBuf), then the session id.
func (a *SessionWindowAgg) sessionKey(s *session) []byte {
	a.sidBuf = binary.BigEndian.AppendUint64(append(a.sidBuf[:0], a.keyBuf...), s.id)
	return a.sidBuf
}

// addTimer registers session s of the key in a.keyBuf in the timer index
// under (kg, s.end), with the end's next registration number.
func (a *SessionWindowAgg) addTimer(kg int, s *session) error {
	ow := a.openEnd(s.end, true)
	ow.kgs[kg] = struct{}{}
	s.seq = ow.seq
	ow.seq++
	return a.timers.Add(kg, a.endKey(s.end), a.timerRow(s.seq), 1)
}

// removeTimer takes session s out of the timer index.
func (a *SessionWindowAgg) removeTimer(kg int, s *session) error {
	return a.timers.Add(kg, a.endKey(s.end), a.timerRow(s.seq), -1)
}

func (a *SessionWindowAgg) endKey(end int64) []byte {
	a.endBuf = binary.BigEndian.AppendUint64(a.endBuf[:0], uint64(end))
	return a.endBuf
}

// timerRow is a timer index row: the registration number, then the
// encoded key (in a.keyBuf).
func (a *SessionWindowAgg) timerRow(seq uint64) []byte {
	a.idxBuf = append(binary.BigEndian.AppendUint64(a.idxBuf[:0], seq), a.keyBuf...)
	return a.idxBuf
}

func (a *SessionWindowAgg) newSession() *session {
	var s *session
	if n := len(a.spare); n > 0 {
		s, a.spare = a.spare[n-1], a.spare[:n-1]
	} else {
		s = &session{acc: make([]aggAcc, len(a.aggs))}
	}
	s.rows = 0
	for j := range s.acc {
		s.acc[j].reset()
	}
	return s
}

// load decodes the state of the key in a.keyBuf into a.rec.
func (a *SessionWindowAgg) load(kg int) error {
	a.spare = append(a.spare, a.rec.list...)
	a.rec = sessionRecord{keyRow: a.rec.keyRow[:0], list: a.rec.list[:0]}
	stored, found, err := a.sess.Get(kg, a.keyBuf)
	if err != nil {
		return err
	}
	if !found {
		a.rec.keyRow = nil
		return nil
	}
	src := stored
	var l, n uint64
	if !uvarint(&src, &a.rec.nextID) || !uvarint(&src, &l) || uint64(len(src)) < l {
		return errBadAggState
	}
	a.rec.keyRow, src = append(a.rec.keyRow, src[:l]...), src[l:]
	if !uvarint(&src, &n) {
		return errBadAggState
	}
	for ; n > 0; n-- {
		s := a.newSession()
		var w int
		if s.start, w = binary.Varint(src); w <= 0 {
			return errBadAggState
		}
		src = src[w:]
		if s.end, w = binary.Varint(src); w <= 0 {
			return errBadAggState
		}
		src = src[w:]
		if !uvarint(&src, &s.id) || !uvarint(&src, &s.seq) {
			return errBadAggState
		}
		if s.rows, w = binary.Varint(src); w <= 0 {
			return errBadAggState
		}
		src = src[w:]
		for j, f := range a.aggs {
			if src, err = f.decodeAcc(src, &s.acc[j]); err != nil {
				return err
			}
		}
		a.rec.list = append(a.rec.list, s)
	}
	if len(src) != 0 {
		return errBadAggState
	}
	return nil
}

// store writes a.rec as the state of the key in a.keyBuf, or deletes it
// when no session is left.
func (a *SessionWindowAgg) store(kg int) error {
	if len(a.rec.list) == 0 {
		return a.sess.Delete(kg, a.keyBuf)
	}
	b := binary.AppendUvarint(a.recBuf[:0], a.rec.nextID)
	b = append(binary.AppendUvarint(b, uint64(len(a.rec.keyRow))), a.rec.keyRow...)
	b = binary.AppendUvarint(b, uint64(len(a.rec.list)))
	for _, s := range a.rec.list {
		b = binary.AppendVarint(b, s.start)
		b = binary.AppendVarint(b, s.end)
		b = binary.AppendUvarint(b, s.id)
		b = binary.AppendUvarint(b, s.seq)
		b = binary.AppendVarint(b, s.rows)
		for j, f := range a.aggs {
			b = f.appendAcc(b, &s.acc[j])
		}
	}
	a.recBuf = b
	return a.sess.Put(kg, a.keyBuf, b)
}

// ProcessWatermark fires the sessions wm completes, then forwards wm. Over
// processing time it only forwards wm, but for the maximum watermark, which
// ends the input: that fires every session.
func (a *SessionWindowAgg) ProcessWatermark(wm int64, out Collector) error {
	if a.proctime && wm != MaxWatermark {
		return EmitWatermark(out, wm)
	}
	if err := a.fireUpTo(wm, out); err != nil {
		return err
	}
	return EmitWatermark(out, wm)
}

// OnProcessingTime fires, over processing time, the sessions whose end - 1
// the clock has reached.
func (a *SessionWindowAgg) OnProcessingTime(now time.Time, out Collector) error {
	if !a.proctime {
		return nil
	}
	return a.fireUpTo(now.UnixMilli(), out)
}

// fireUpTo fires the sessions whose end - 1 is at most wm, in order of end.
func (a *SessionWindowAgg) fireUpTo(wm int64, out Collector) error {
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

// fire emits the sessions that end at end, in order of registration, and
// drops their state.
func (a *SessionWindowAgg) fire(end int64, out Collector) error {
	ow := a.open[end]
	delete(a.open, end)
	a.firing = a.firing[:0]
	for kg := range ow.kgs {
		rows, err := a.timers.Get(kg, a.endKey(end))
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
		a.keyBuf = append(a.keyBuf[:0], g.row[8:]...)
		if err := a.load(g.kg); err != nil {
			return err
		}
		at := -1
		for j, s := range a.rec.list {
			if s.end == end && s.seq == g.seq {
				at = j
			}
		}
		if at < 0 {
			return fmt.Errorf("operators: session window aggregate lost the state of a session ending at %d", end)
		}
		s := a.rec.list[at]
		if err := a.emit(s); err != nil {
			return err
		}
		if len(a.views) > 0 {
			key := a.sessionKey(s)
			for _, v := range a.views {
				if err := v.drop(g.kg, key); err != nil {
					return err
				}
			}
		}
		if err := a.timers.Add(g.kg, a.endKey(end), g.row, -1); err != nil {
			return err
		}
		a.spare = append(a.spare, s)
		a.rec.list = append(a.rec.list[:at], a.rec.list[at+1:]...)
		if err := a.store(g.kg); err != nil {
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

// emit appends session s's result row for the key of a.rec.
func (a *SessionWindowAgg) emit(s *session) error {
	if err := a.rb.Decoder(0, a.nKeys).Append(a.rec.keyRow); err != nil {
		return fmt.Errorf("operators: session window aggregate built a bad key row: %w", err)
	}
	// window_start, window_end, window_time in the row codec: no NULLs,
	// then nanoseconds.
	a.winBuf = append(a.winBuf[:0], 0)
	for _, ms := range []int64{s.start, s.end, s.end - 1} {
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
		if a.resBuf, null = f.appendResult(a.resBuf, &s.acc[j], s.rows); null {
			a.resBuf[j/8] |= 1 << (j % 8)
		}
	}
	if err := a.rb.Decoder(a.nKeys+3, len(a.aggs)).Append(a.resBuf); err != nil {
		return fmt.Errorf("operators: session window aggregate built a bad result row: %w", err)
	}
	a.rb.EndRow()
	a.kinds = append(a.kinds, int8(types.Insert))
	return nil
}

func (a *SessionWindowAgg) flush(out Collector) error {
	return emitBuilt(out, a.schema, a.rb, &a.kinds)
}

// EndInput has nothing to flush: the maximum watermark, which precedes the
// end of the input, fired every session.
func (a *SessionWindowAgg) EndInput(int, Collector) error { return nil }

// Close releases the builders. It is safe after a failed Open.
func (a *SessionWindowAgg) Close() error {
	if a.rb != nil {
		a.rb.Release()
		a.rb = nil
	}
	for _, rb := range a.replay {
		rb.Release()
	}
	a.replay = nil
	if a.trueCol != nil {
		a.trueCol.Release()
		a.trueCol = nil
	}
	a.be = state.Namespace{}
	return nil
}

// StateStats reports the state's cache and spill counters; valid between
// Open and Close.
func (a *SessionWindowAgg) StateStats() state.Stats { return a.be.Backend().Stats() }

// UsesKeyedState reports that the operator keeps keyed state.
func (*SessionWindowAgg) UsesKeyedState() bool { return true }
