package operators

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

func init() {
	RegisterOperator(jobgraph.KindWindowRank, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.WindowRankSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewWindowRank(*s)
	})
}

// WindowRank is Flink's WindowRank (and, configured by
// NewWindowDeduplicate, its WindowDeduplicate): a Top-N per (partition key,
// window) over an insert-only input that carries each row's window in its
// window_end column (and, for SESSION windows, which may end together
// with different starts, its window_start column too). A row whose window_end - 1 is at or behind the
// watermark is dropped as late. Other rows are kept, per (key,
// window_end), in sort-key order, ties in arrival order (a newcomer goes
// after the rows it ties with, as Flink's TopNBuffer appends it; for a
// keep-last deduplicate before them, since the later row wins a tie
// there), and only the first Limit of them: on insert-only input a row
// below the top can never enter it. When the watermark reaches
// window_end - 1 the window fires: for each key, in order of the key's
// first row in the window, its rows are emitted as +I in rank order (with
// the row number when it is output), and the window's state is dropped.
// Windows fire in order of their end. The output is insert-only.
//
// State, in the subtask's state.Backend: per (key, window_end) the top
// rows in one ValueState value (per row its encoded sort key and the row
// in the row codec), and a timer index per (key group, window_end) of the
// keys that have rows in that window, in a MultisetState, each tagged
// with its order of first appearance. In Go memory there is only the
// sorted set of window ends in flight and, per end, the next appearance
// number and the key groups the index has rows in; Open rebuilds it from
// the index, so a checkpoint holds only the keyed state and the watermark
// (see watermarkState). Both are filed per key group of the partition key,
// so the operator restores at any parallelism.
type WindowRank struct {
	inSchema  types.Schema
	outSchema types.Schema
	partition []int
	// keys are the columns of the state key: the partition, then for
	// SESSION windows window_start, since sessions of different starts may
	// end together. Rows are routed, and their key group taken, by the
	// partition alone.
	keys    []int
	limit   int64
	rankNum bool
	winEnd  int
	// newWinsTies puts a newcomer before the rows it ties with (keep-last
	// deduplication).
	newWinsTies bool
	// what names the operator in errors, as Flink's do.
	what string

	be     state.Namespace
	rows   *state.ValueState
	timers *state.MultisetState
	maxPar int

	watermarkState
	ends []int64 // the ends of the windows in flight, ascending
	open map[int64]*openWindow

	keyEnc   *types.RowEncoder
	rowEnc   *types.RowEncoder
	sortEnc  *sortKeyEncoder
	keyCols  []arrow.Array
	hashCols []arrow.Array
	hashes   []uint64
	keyBuf   []byte
	rowBuf   []byte
	sortBuf  []byte
	valBuf   []byte
	idxBuf   []byte
	endBuf   []byte
	firing   []firingGroup

	schema *arrow.Schema
	rb     *types.RowBuilder
	kinds  []int8
	ranks  []int64
}

var (
	_ StatefulOperator = (*WindowRank)(nil)
	_ WatermarkHandler = (*WindowRank)(nil)
	_ Checkpointer     = (*WindowRank)(nil)
)

var errBadWindowRankState = errors.New("operators: corrupt window rank state")

// NewWindowRank checks spec and returns an unopened operator.
func NewWindowRank(spec jobgraph.WindowRankSpec) (*WindowRank, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("operators: window rank: %w", err)
	}
	for _, k := range spec.OrderBy {
		if err := checkSortable(spec.InputSchema[k.Col].Type.ArrowType()); err != nil {
			return nil, err
		}
	}
	keys := spec.Partition
	if spec.Window.Kind == jobgraph.WindowSession {
		keys = append(append([]int{}, keys...), spec.WindowStart)
	}
	return &WindowRank{inSchema: spec.InputSchema, outSchema: spec.OutputSchema(), partition: spec.Partition,
		keys: keys, limit: spec.Limit, rankNum: spec.OutputRankNumber, winEnd: spec.WindowEnd,
		sortEnc: newSortKeyEncoder(spec.OrderBy), what: "Window rank"}, nil
}

// Open opens the operator's state in ctx's backend and rebuilds, from it,
// the windows in flight of a resumed subtask.
func (r *WindowRank) Open(ctx *Context) error {
	be, maxPar, err := ctx.Keyed()
	if err != nil {
		return err
	}
	r.be, r.maxPar = be, maxPar
	r.rows = be.Value("wrank")
	r.timers = be.Multiset("wrtimers")
	if err := r.restoreWatermark(ctx.Restore); err != nil {
		return err
	}
	r.ends = nil
	r.open = map[int64]*openWindow{}
	if err := r.restoreWindows(); err != nil {
		return err
	}
	ks := make(types.Schema, len(r.keys))
	for i, c := range r.keys {
		ks[i] = r.inSchema[c]
	}
	r.keyEnc = types.NewRowEncoder(ks)
	r.keyCols = make([]arrow.Array, len(ks))
	r.hashCols = make([]arrow.Array, len(r.partition))
	r.rowEnc = types.NewRowEncoder(r.inSchema)
	r.schema = r.outSchema.ArrowSchema()
	r.rb = types.NewRowBuilder(nil, r.inSchema)
	return nil
}

// restoreWindows rebuilds the windows in flight from the timer index, as
// a resumed subtask finds it (a fresh one finds none). A window's next
// appearance number follows the highest it holds.
func (r *WindowRank) restoreWindows() error {
	err := r.timers.Scan(func(kg int, key []byte, rows []state.MultisetRow) error {
		if len(key) != 8 {
			return errBadWindowRankState
		}
		end := int64(binary.BigEndian.Uint64(key))
		ow := r.open[end]
		if ow == nil {
			ow = &openWindow{kgs: map[int]struct{}{}}
			r.open[end] = ow
			r.ends = append(r.ends, end)
		}
		ow.kgs[kg] = struct{}{}
		for _, row := range rows {
			if len(row.Row) < 8 {
				return errBadWindowRankState
			}
			if seq := binary.BigEndian.Uint64(row.Row); seq >= ow.seq {
				ow.seq = seq + 1
			}
		}
		return nil
	})
	sort.Slice(r.ends, func(i, j int) bool { return r.ends[i] < r.ends[j] })
	return err
}

// Process adds the rows of b to their windows. It borrows b.
func (r *WindowRank) Process(_ int, b types.Batch, _ Collector) error {
	n := b.NumRows()
	if n == 0 {
		return nil
	}
	cols := b.Rec.Columns()[:b.NumCols()]
	for i, c := range r.keys {
		r.keyCols[i] = cols[c]
	}
	for i, c := range r.partition {
		r.hashCols[i] = cols[c]
	}
	if cap(r.hashes) < n {
		r.hashes = make([]uint64, n)
	}
	r.hashes = r.hashes[:n]
	types.HashColumns(r.hashCols, r.hashes)
	ends := cols[r.winEnd].(*array.Timestamp)
	kinds := b.Kinds()
	for i := 0; i < n; i++ {
		if k := types.RowKind(kinds[i]); k.IsRetract() {
			return fmt.Errorf("%s does not support input RowKind: %v", r.what, k)
		}
		if ends.IsNull(i) {
			return fmt.Errorf("operators: %s got a NULL window_end", r.what)
		}
		end := floorMillis(int64(ends.Value(i)))
		if end-1 <= r.wm {
			continue // its window has fired: late
		}
		if err := r.add(end, types.KeyGroupForHash(r.hashes[i], r.maxPar), cols, i); err != nil {
			return err
		}
	}
	return nil
}

// add puts row i into the top rows of its key in the window ending at end,
// if it ranks within the limit.
func (r *WindowRank) add(end int64, kg int, cols []arrow.Array, i int) error {
	r.keyBuf = r.keyEnc.EncodeKey(r.keyBuf[:0], r.keyCols, i)
	nk := len(r.keyBuf)
	r.keyBuf = binary.BigEndian.AppendUint64(r.keyBuf, uint64(end))
	r.sortBuf = r.sortEnc.append(r.sortBuf[:0], cols, i)
	stored, found, err := r.rows.Get(kg, r.keyBuf)
	if err != nil {
		return err
	}
	// Find where the row goes among the stored ones, copying those before
	// it into the new value.
	r.valBuf = r.valBuf[:0]
	rank, rest := int64(0), stored
	for len(rest) > 0 && rank < r.limit {
		s, _, next, err := nextWindowRankEntry(rest)
		if err != nil {
			return err
		}
		c := bytes.Compare(s, r.sortBuf)
		if c > 0 || c == 0 && r.newWinsTies {
			break
		}
		r.valBuf = append(r.valBuf, rest[:len(rest)-len(next)]...)
		rest = next
		rank++
	}
	if rank >= r.limit {
		return nil // below the top
	}
	r.rowBuf = r.rowEnc.AppendRow(r.rowBuf[:0], cols, i)
	r.valBuf = appendWindowRankEntry(r.valBuf, r.sortBuf, r.rowBuf)
	// The rows after it, but the one pushed out of the top.
	for rank++; len(rest) > 0 && rank < r.limit; rank++ {
		_, _, next, err := nextWindowRankEntry(rest)
		if err != nil {
			return err
		}
		r.valBuf = append(r.valBuf, rest[:len(rest)-len(next)]...)
		rest = next
	}
	if !found {
		if err := r.addTimer(end, kg, r.keyBuf[:nk]); err != nil {
			return err
		}
	}
	return r.rows.Put(kg, r.keyBuf, r.valBuf)
}

// appendWindowRankEntry appends one stored row: its sort key and the row,
// each preceded by its length.
func appendWindowRankEntry(dst, sortKey, row []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(sortKey)))
	dst = append(dst, sortKey...)
	dst = binary.AppendUvarint(dst, uint64(len(row)))
	return append(dst, row...)
}

// nextWindowRankEntry splits the first stored row off src.
func nextWindowRankEntry(src []byte) (sortKey, row, rest []byte, err error) {
	l, w := binary.Uvarint(src)
	if w <= 0 || uint64(len(src)-w) < l {
		return nil, nil, nil, errBadWindowRankState
	}
	sortKey, src = src[w:w+int(l)], src[w+int(l):]
	l, w = binary.Uvarint(src)
	if w <= 0 || uint64(len(src)-w) < l {
		return nil, nil, nil, errBadWindowRankState
	}
	return sortKey, src[w : w+int(l)], src[w+int(l):], nil
}

// addTimer records that key (in key group kg) has rows in the window
// ending at end: a row of the timer index under (kg, end) holding the
// key's appearance number and the key.
func (r *WindowRank) addTimer(end int64, kg int, key []byte) error {
	ow := r.open[end]
	if ow == nil {
		ow = &openWindow{kgs: map[int]struct{}{}}
		r.open[end] = ow
		at := sort.Search(len(r.ends), func(j int) bool { return r.ends[j] >= end })
		r.ends = append(r.ends, 0)
		copy(r.ends[at+1:], r.ends[at:])
		r.ends[at] = end
	}
	ow.kgs[kg] = struct{}{}
	r.idxBuf = binary.BigEndian.AppendUint64(r.idxBuf[:0], ow.seq)
	ow.seq++
	r.idxBuf = append(r.idxBuf, key...)
	r.endBuf = binary.BigEndian.AppendUint64(r.endBuf[:0], uint64(end))
	return r.timers.Add(kg, r.endBuf, r.idxBuf, 1)
}

// ProcessWatermark fires the windows wm completes, then forwards wm.
func (r *WindowRank) ProcessWatermark(wm int64, out Collector) error {
	if wm > r.wm {
		r.wm = wm
		fired := 0
		for ; fired < len(r.ends) && r.ends[fired]-1 <= wm; fired++ {
			if err := r.fire(r.ends[fired], out); err != nil {
				return err
			}
		}
		r.ends = append(r.ends[:0], r.ends[fired:]...)
		if err := r.flush(out); err != nil {
			return err
		}
	}
	return EmitWatermark(out, wm)
}

// fire emits the window that ends at end, key by key in order of
// appearance, and drops its state.
func (r *WindowRank) fire(end int64, out Collector) error {
	ow := r.open[end]
	delete(r.open, end)
	r.endBuf = binary.BigEndian.AppendUint64(r.endBuf[:0], uint64(end))
	r.firing = r.firing[:0]
	for kg := range ow.kgs {
		rows, err := r.timers.Get(kg, r.endBuf)
		if err != nil {
			return err
		}
		for _, row := range rows {
			r.firing = append(r.firing, firingGroup{seq: binary.BigEndian.Uint64(row.Row), kg: kg, row: append([]byte(nil), row.Row...)})
		}
	}
	sort.Slice(r.firing, func(i, j int) bool {
		fi, fj := &r.firing[i], &r.firing[j]
		return fi.seq < fj.seq || fi.seq == fj.seq && fi.kg < fj.kg
	})
	for _, g := range r.firing {
		r.keyBuf = binary.BigEndian.AppendUint64(append(r.keyBuf[:0], g.row[8:]...), uint64(end))
		stored, found, err := r.rows.Get(g.kg, r.keyBuf)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("operators: %s lost the rows of a key of the window ending at %d", r.what, end)
		}
		for rank, rest := int64(1), stored; len(rest) > 0; rank++ {
			_, row, next, err := nextWindowRankEntry(rest)
			if err != nil {
				return err
			}
			if err := r.emit(row, rank, out); err != nil {
				return err
			}
			rest = next
		}
		if err := r.rows.Delete(g.kg, r.keyBuf); err != nil {
			return err
		}
		if err := r.timers.Add(g.kg, r.endBuf, g.row, -1); err != nil {
			return err
		}
	}
	for i := range r.firing {
		r.firing[i].row = nil
	}
	return nil
}

// emit appends an encoded input row to the output as +I, with its row
// number when the operator outputs it.
func (r *WindowRank) emit(row []byte, rank int64, out Collector) error {
	if r.rb.Len() >= joinBatchRows {
		if err := r.flush(out); err != nil {
			return err
		}
	}
	if err := r.rb.Decoder(0, len(r.inSchema)).Append(row); err != nil {
		return fmt.Errorf("operators: %s state holds a bad row: %w", r.what, err)
	}
	r.rb.EndRow()
	r.kinds = append(r.kinds, int8(types.Insert))
	if r.rankNum {
		r.ranks = append(r.ranks, rank)
	}
	return nil
}

func (r *WindowRank) flush(out Collector) error {
	if !r.rankNum {
		return emitBuilt(out, r.schema, r.rb, &r.kinds)
	}
	if r.rb.Len() == 0 {
		return nil
	}
	arrs := r.rb.NewArrays()
	nb := array.NewInt64Builder(memory.DefaultAllocator)
	nb.AppendValues(r.ranks, nil)
	arrs = append(arrs, nb.NewArray())
	nb.Release()
	b := types.NewBatch(r.schema, arrs, r.kinds)
	for _, a := range arrs {
		a.Release()
	}
	r.kinds, r.ranks = r.kinds[:0], r.ranks[:0]
	err := out.Emit(b)
	b.Release()
	return err
}

// EndInput has nothing to flush: the maximum watermark, which precedes the
// end of the input, fired every window.
func (r *WindowRank) EndInput(int, Collector) error { return nil }

// Close releases the builder. It is safe after a failed Open.
func (r *WindowRank) Close() error {
	if r.rb != nil {
		r.rb.Release()
		r.rb = nil
	}
	r.be = state.Namespace{}
	return nil
}

// StateStats reports the state's cache and spill counters; valid between
// Open and Close.
func (r *WindowRank) StateStats() state.Stats { return r.be.Backend().Stats() }

// UsesKeyedState reports that the operator keeps keyed state.
func (*WindowRank) UsesKeyedState() bool { return true }
