package operators

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

func init() {
	RegisterOperator(jobgraph.KindWindowTVF, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.WindowTVFSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewWindowTVF(*s)
	})
}

// WindowTVF is a TUMBLE, HOP or CUMULATE window function as a relation,
// Flink's (aligned) WindowTableFunction: each row is emitted once per
// window its rowtime (floored to ms, windows aligned to the epoch) falls
// in, in the order Flink's window assigners list them (HOP: the latest
// start first; CUMULATE: the earliest end first), with its kind and with
// window_start, window_end and window_time = window_end - 1 ms appended.
// It holds no state and drops no late rows: lateness is decided by the
// operator that consumes the windows (a window join, a window Top-N). A
// row with a NULL rowtime is dropped, as Flink's operator does. Watermarks
// pass through. EndInput has nothing to flush.
type WindowTVF struct {
	spec   jobgraph.WindowTVFSpec
	schema *arrow.Schema
	types  [3]arrow.DataType
	wins   []window
	sel    []int32
	times  [3][]int64
}

var _ Operator = (*WindowTVF)(nil)

// NewWindowTVF checks spec and returns an unopened operator.
func NewWindowTVF(spec jobgraph.WindowTVFSpec) (*WindowTVF, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("operators: window function: %w", err)
	}
	n := len(spec.InputSchema)
	for i, f := range spec.InputSchema {
		if !arrow.TypeEqual(f.Type.ArrowType(), spec.OutputSchema[i].Type.ArrowType()) {
			return nil, fmt.Errorf("operators: window function output column %q is %v, input column is %v", spec.OutputSchema[i].Name, spec.OutputSchema[i].Type, f.Type)
		}
	}
	w := &WindowTVF{spec: spec, schema: spec.OutputSchema.ArrowSchema()}
	for i := range w.types {
		f := spec.OutputSchema[n+i]
		if !f.Type.IsTimestamp() {
			return nil, fmt.Errorf("operators: window function column %q is %v, not a timestamp", f.Name, f.Type)
		}
		w.types[i] = f.Type.ArrowType()
	}
	return w, nil
}

// Open does nothing: the operator holds no state.
func (w *WindowTVF) Open(*Context) error { return nil }

// Process emits the rows of b with their windows, in b's order, in batches
// of at most joinBatchRows rows. It borrows b.
func (w *WindowTVF) Process(_ int, b types.Batch, out Collector) error {
	ts, ok := b.Column(w.spec.Rowtime).(*array.Timestamp)
	if !ok {
		return fmt.Errorf("operators: window function rowtime column is %s, not a timestamp", b.Column(w.spec.Rowtime).DataType())
	}
	w.reset()
	n := b.NumRows()
	for i := 0; i < n; i++ {
		if ts.IsNull(i) {
			continue
		}
		w.wins = assignWindows(w.wins[:0], w.spec.Window, floorMillis(int64(ts.Value(i))))
		for _, win := range w.wins {
			w.sel = append(w.sel, int32(i))
			w.times[0] = append(w.times[0], win.start*1e6)
			w.times[1] = append(w.times[1], win.end*1e6)
			w.times[2] = append(w.times[2], (win.end-1)*1e6)
			if len(w.sel) == joinBatchRows {
				if err := w.emit(b, out); err != nil {
					return err
				}
				w.reset()
			}
		}
	}
	if len(w.sel) == 0 {
		return nil
	}
	return w.emit(b, out)
}

func (w *WindowTVF) reset() {
	w.sel = w.sel[:0]
	for i := range w.times {
		w.times[i] = w.times[i][:0]
	}
}

// emit sends b's rows w.sel with the window columns in w.times.
func (w *WindowTVF) emit(b types.Batch, out Collector) error {
	nIn := len(w.spec.InputSchema)
	cols := make([]arrow.Array, nIn+3)
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	// NB: when every row has one window (TUMBLE, no NULL rowtime) the input
	// columns are reused as they are.
	whole := len(w.sel) == b.NumRows()
	for i, s := range w.sel {
		if int(s) != i {
			whole = false
			break
		}
	}
	for c := 0; c < nIn; c++ {
		if whole {
			cols[c] = b.Column(c)
			cols[c].Retain()
			continue
		}
		col, err := expr.Take(b.Column(c), w.spec.InputSchema[c].Type, w.sel)
		if err != nil {
			return err
		}
		cols[c] = col
	}
	for i, vals := range w.times {
		tb := array.NewTimestampBuilder(memory.DefaultAllocator, w.types[i].(*arrow.TimestampType))
		tb.Reserve(len(vals))
		for _, v := range vals {
			tb.UnsafeAppend(arrow.Timestamp(v))
		}
		cols[nIn+i] = tb.NewArray()
		tb.Release()
	}
	kinds := b.Kinds()
	k := make([]int8, len(w.sel))
	for i, j := range w.sel {
		k[i] = kinds[j]
	}
	ob := types.NewBatch(w.schema, cols, k)
	defer ob.Release()
	return out.Emit(ob)
}

// EndInput does nothing: the operator holds no rows.
func (w *WindowTVF) EndInput(int, Collector) error { return nil }

// Close releases nothing; it exists for the Operator contract.
func (w *WindowTVF) Close() error { return nil }
