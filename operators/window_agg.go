package operators

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

func init() {
	RegisterOperator(jobgraph.KindWindowAggregate, func(config []byte) (Operator, error) {
		var spec jobgraph.WindowAggSpec
		if err := jobgraph.DecodeSpec(config, &spec); err != nil {
			return nil, err
		}
		return NewWindowAgg(spec)
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
// NB: the state is held in memory, not in Pebble: it holds only windows
// the watermark has not passed, and Braid has no checkpoints yet.
type WindowAgg struct {
	spec  jobgraph.WindowAggSpec
	aggs  []*aggFunc
	nKeys int

	wm      int64
	windows map[window]*windowGroups

	keyEnc  *types.RowEncoder
	keyCols []arrow.Array
	keyBuf  []byte
	valBuf  []byte
	resBuf  []byte
	winBuf  []byte
	starts  []window

	schema *arrow.Schema
	rb     *types.RowBuilder
	kinds  []int8
}

var (
	_ Operator         = (*WindowAgg)(nil)
	_ WatermarkHandler = (*WindowAgg)(nil)
)

// window is [start, end) in ms.
type window struct{ start, end int64 }

// windowGroups is one window's groups, in order of first appearance.
type windowGroups struct {
	index  map[string]int
	groups []*windowGroup
}

type windowGroup struct {
	key  []byte // the key columns in the row codec
	rows int64
	acc  []aggAcc
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
	case (w.Kind == jobgraph.WindowHop || w.Kind == jobgraph.WindowCumulate) && w.StepMs > 0 && w.SizeMs%w.StepMs == 0:
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
	return a, nil
}

// Open prepares empty state.
func (a *WindowAgg) Open(*Context) error {
	a.wm = MinWatermark
	a.windows = map[window]*windowGroups{}
	ks := make(types.Schema, a.nKeys)
	for i, k := range a.spec.Keys {
		ks[i] = a.spec.InputSchema[k]
	}
	a.keyEnc = types.NewRowEncoder(ks)
	a.keyCols = make([]arrow.Array, a.nKeys)
	a.schema = a.spec.OutputSchema.ArrowSchema()
	a.rb = types.NewRowBuilder(nil, a.spec.OutputSchema)
	return nil
}

// Process accumulates the rows of b into their windows. It borrows b.
func (a *WindowAgg) Process(_ int, b types.Batch, _ Collector) error {
	n := b.NumRows()
	cols := b.Rec.Columns()[:b.NumCols()]
	for i, k := range a.spec.Keys {
		a.keyCols[i] = cols[k]
	}
	ts := cols[a.spec.Rowtime].(*array.Timestamp)
	kinds := b.Kinds()
	for i := 0; i < n; i++ {
		if types.RowKind(kinds[i]).IsRetract() {
			return fmt.Errorf("operators: window aggregate got a %v row; its input must be insert-only", types.RowKind(kinds[i]))
		}
		if ts.IsNull(i) {
			return ErrNullRowtime
		}
		a.starts = assignWindows(a.starts[:0], a.spec.Window, floorMillis(int64(ts.Value(i))))
		for _, w := range a.starts {
			if w.end-1 <= a.wm {
				continue // fired already: late for this window
			}
			if err := a.accumulate(w, cols, i); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *WindowAgg) accumulate(w window, cols []arrow.Array, i int) error {
	wg := a.windows[w]
	if wg == nil {
		wg = &windowGroups{index: map[string]int{}}
		a.windows[w] = wg
	}
	a.keyBuf = a.keyEnc.EncodeKey(a.keyBuf[:0], a.keyCols, i)
	gi, ok := wg.index[string(a.keyBuf)]
	if !ok {
		gi = len(wg.groups)
		wg.index[string(a.keyBuf)] = gi
		wg.groups = append(wg.groups, &windowGroup{
			key: a.keyEnc.AppendRow(nil, a.keyCols, i),
			acc: make([]aggAcc, len(a.aggs)),
		})
	}
	g := wg.groups[gi]
	g.rows++
	for j, f := range a.aggs {
		var col arrow.Array
		if f.arg >= 0 {
			col = cols[f.arg]
		}
		var err error
		if a.valBuf, err = f.accumulate(&g.acc[j], col, i, false, 0, nil, a.valBuf); err != nil {
			return err
		}
	}
	return nil
}

// assignWindows appends the windows containing ts (ms).
func assignWindows(dst []window, w jobgraph.WindowSpec, ts int64) []window {
	switch w.Kind {
	case jobgraph.WindowHop:
		last := ts - floorMod(ts, w.StepMs)
		for start := last; start > ts-w.SizeMs; start -= w.StepMs {
			dst = append(dst, window{start, start + w.SizeMs})
		}
	case jobgraph.WindowCumulate:
		start := ts - floorMod(ts, w.SizeMs)
		for end := start + w.StepMs; end <= start+w.SizeMs; end += w.StepMs {
			if end > ts {
				dst = append(dst, window{start, end})
			}
		}
	default:
		start := ts - floorMod(ts, w.SizeMs)
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

// ProcessWatermark fires the windows wm completes, then forwards wm.
func (a *WindowAgg) ProcessWatermark(wm int64, out Collector) error {
	if wm <= a.wm {
		return nil
	}
	a.wm = wm
	var fired []window
	for w := range a.windows {
		if w.end-1 <= wm {
			fired = append(fired, w)
		}
	}
	sort.Slice(fired, func(i, j int) bool {
		if fired[i].end != fired[j].end {
			return fired[i].end < fired[j].end
		}
		return fired[i].start < fired[j].start
	})
	for _, w := range fired {
		for _, g := range a.windows[w].groups {
			if err := a.emit(w, g); err != nil {
				return err
			}
			if a.rb.Len() >= joinBatchRows {
				if err := a.flush(out); err != nil {
					return err
				}
			}
		}
		delete(a.windows, w)
	}
	if err := a.flush(out); err != nil {
		return err
	}
	return EmitWatermark(out, wm)
}

// emit appends one window's result row for group g.
func (a *WindowAgg) emit(w window, g *windowGroup) error {
	if err := a.rb.Decoder(0, a.nKeys).Append(g.key); err != nil {
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
		if a.resBuf, null = f.appendResult(a.resBuf, &g.acc[j], g.rows); null {
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
	if a.rb.Len() == 0 {
		return nil
	}
	arrs := a.rb.NewArrays()
	b := types.NewBatch(a.schema, arrs, a.kinds)
	for _, arr := range arrs {
		arr.Release()
	}
	a.kinds = a.kinds[:0]
	err := out.Emit(b)
	b.Release()
	return err
}

// EndInput has nothing to flush: the maximum watermark, which precedes the
// end of the input, fired every window.
func (a *WindowAgg) EndInput(int, Collector) error { return nil }

// Close releases the builders.
func (a *WindowAgg) Close() error {
	if a.rb != nil {
		a.rb.Release()
		a.rb = nil
	}
	return nil
}
