package operators

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

func init() {
	RegisterOperator(jobgraph.KindWindowJoin, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.WindowJoinSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewWindowJoin(*s)
	})
}

// WindowJoin is Flink's window join (WindowJoinOperator): a join of two
// window function relations over the same windows, whose rows match only
// within one window. Each insert-only input row is buffered under its join
// key and its window_end. Once the watermark (the minimum over both
// inputs) reaches window_end - 1 the window fires for every key that has
// rows in it: the window's rows of both sides are joined, emitted as +I,
// and dropped from state. Per key and window:
//
//   - INNER emits every pair that satisfies the residual;
//   - LEFT, RIGHT and FULL also emit each row of a preserved side that
//     matched nothing, padded with NULLs;
//   - SEMI emits each left row with a match, ANTI each left row without.
//
// A key with a NULL column matches nothing (its rows are still padded or,
// for ANTI, emitted). A row whose window has fired already is late: it is
// dropped and counted (LateRowsDropped), as Flink counts it in its
// leftNumLateRecordsDropped and rightNumLateRecordsDropped metrics. The
// output is insert-only.
//
// State lives in the Backend: per side a multiset of encoded rows under
// [has NULL][join key][window_end: 8 bytes], and one timer per key and window
// (bucketTimers, one bucket per window_end) listing (key group, key). The
// watermark is operator state (watermarkState).
type WindowJoin struct {
	spec  jobgraph.WindowJoinSpec
	sides [2]*joinSide
	ends  [2]int
	// preserve marks the sides whose unmatched rows are emitted: padded
	// for outer joins, as they are for ANTI.
	preserve [2]bool
	timers   *bucketTimers
	watermarkState

	residual *expr.Filter
	cand     *joinOutput // candidate pairs, before the residual
	out      *joinOutput // rows to emit
	pairs    []windowPair
	groups   []*windowGroup
	sel      []int32
	late     [2]int64

	// arena holds the rows of the groups being joined, copied out of the
	// state; it is reused once no pending group points into it.
	arena   []byte
	scratch windowGroup // the group of a join without residual
	seen    map[string]struct{}
	keyBuf  []byte
	entry   []byte
	be      state.Namespace
	maxPar  int
}

var (
	_ StatefulOperator = (*WindowJoin)(nil)
	_ WatermarkHandler = (*WindowJoin)(nil)
	_ Checkpointer     = (*WindowJoin)(nil)
)

// windowGroup is one key's rows of a firing window, copied out of the
// state, with what matched.
type windowGroup struct {
	rows    [2][]state.MultisetRow
	matched [2][]bool
	// done is set once all of the group's pairs are among the candidates.
	done bool
}

// windowPair is a candidate: left row l and right row r of group g.
type windowPair struct {
	g    *windowGroup
	l, r int
}

// NewWindowJoin checks spec and returns an unopened join.
func NewWindowJoin(spec jobgraph.WindowJoinSpec) (*WindowJoin, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("operators: window join: %w", err)
	}
	j := &WindowJoin{spec: spec, ends: [2]int{spec.LeftWindowEnd, spec.RightWindowEnd}}
	switch spec.JoinType {
	case jobgraph.WindowJoinLeft:
		j.preserve[0] = true
	case jobgraph.WindowJoinRight:
		j.preserve[1] = true
	case jobgraph.WindowJoinFull:
		j.preserve = [2]bool{true, true}
	}
	return j, nil
}

// Open opens the join's state and compiles the residual.
func (j *WindowJoin) Open(ctx *Context) error {
	be, maxPar, err := ctx.Keyed()
	if err != nil {
		return err
	}
	j.be, j.maxPar = be, maxPar
	j.sides[0] = newJoinSide(j.spec.LeftSchema, j.spec.LeftKeys, be.Multiset("left"))
	j.sides[1] = newJoinSide(j.spec.RightSchema, j.spec.RightKeys, be.Multiset("right"))
	// NB: window ends are the buckets themselves (width 1 ms): a window
	// fires exactly when the watermark reaches its end - 1.
	j.timers = newBucketTimers(be.Multiset("timers"), 1)
	if err := j.timers.restore(); err != nil {
		return err
	}
	if err := j.restoreWatermark(ctx.Restore); err != nil {
		return err
	}
	if j.spec.Residual != nil {
		if j.residual, err = expr.CompileFilter(j.spec.Residual, ctx.Env()); err != nil {
			return fmt.Errorf("operators: window join condition: %w", err)
		}
	}
	nl := len(j.spec.LeftSchema)
	both := append(append(types.Schema{}, j.spec.LeftSchema...), j.spec.RightSchema...)
	j.cand = newJoinOutput(both, nl, nil)
	j.out = newJoinOutput(j.spec.OutputSchema, nl, nil)
	return nil
}

// fired reports whether the window ending at end (ms) has fired at
// watermark wm, as Flink's TimeWindowUtil.isWindowFired.
func fired(end, wm int64) bool { return end-1 <= wm }

// Process buffers the rows of b under their key and window, dropping late
// ones. It emits nothing and borrows b.
func (j *WindowJoin) Process(input int, b types.Batch, _ Collector) error {
	if input != 0 && input != 1 {
		return fmt.Errorf("operators: join has no input %d", input)
	}
	n := b.NumRows()
	if n == 0 {
		return nil
	}
	side := j.sides[input]
	cols := b.Rec.Columns()[:b.NumCols()]
	side.bind(cols, n)
	ends, ok := cols[j.ends[input]].(*array.Timestamp)
	if !ok {
		return fmt.Errorf("operators: window join window_end column is %T", cols[j.ends[input]])
	}
	for i, k := range b.Kinds() {
		if k != int8(types.Insert) {
			return fmt.Errorf("operators: a window join takes insert-only input, got %v", types.RowKind(k))
		}
		if ends.IsNull(i) {
			return fmt.Errorf("operators: a window join row has a NULL window_end")
		}
		end := floorMillis(int64(ends.Value(i)))
		if fired(end, j.wm) {
			j.late[input]++
			continue
		}
		kg, key := j.stateKey(side, i, end)
		rows, err := side.state.Get(kg, key)
		if err != nil {
			return err
		}
		first := len(rows) == 0
		if err := side.state.Add(kg, key, side.rowAt(cols, i), 1); err != nil {
			return err
		}
		if first {
			// NB: a timer per side and window; fire dedups the two.
			if err := j.timers.add(kg, end, j.timerEntry(kg, key)); err != nil {
				return err
			}
		}
	}
	return nil
}

// stateKey returns the key group of row i's join key (NULLs included) and
// the state key [has NULL: 1 byte][key][end]; the key is valid until the
// next call.
func (j *WindowJoin) stateKey(s *joinSide, i int, end int64) (int, []byte) {
	null := byte(0)
	if types.AnyNull(s.keyCols, i) {
		null = 1
	}
	j.keyBuf = s.keyEnc.EncodeKey(append(j.keyBuf[:0], null), s.keyCols, i)
	j.keyBuf = binary.BigEndian.AppendUint64(j.keyBuf, uint64(end))
	return types.KeyGroupForHash(s.hashes[i], j.maxPar), j.keyBuf
}

// timerEntry is a timer's entry for state key key: [kg][key].
func (j *WindowJoin) timerEntry(kg int, key []byte) []byte {
	j.entry = binary.BigEndian.AppendUint16(j.entry[:0], uint16(kg))
	return append(j.entry, key...)
}

// ProcessWatermark fires every window wm has reached, then forwards wm.
func (j *WindowJoin) ProcessWatermark(wm int64, out Collector) error {
	if wm <= j.wm {
		return nil
	}
	j.wm = wm
	limit := wm
	if limit < MaxWatermark {
		limit++ // a window fires at end - 1 <= wm
	}
	for end, kgs, ok := j.timers.next(limit); ok; end, kgs, ok = j.timers.next(limit) {
		if err := j.fire(end, kgs, out); err != nil {
			return err
		}
	}
	if err := j.evaluate(out); err != nil {
		return err
	}
	if err := j.out.flush(out); err != nil {
		return err
	}
	return EmitWatermark(out, wm)
}

// fire joins and clears the rows of the keys with timers in window end.
func (j *WindowJoin) fire(end int64, kgs []int, out Collector) error {
	entries, err := j.timers.take(end, kgs)
	if err != nil {
		return err
	}
	if j.seen == nil {
		j.seen = map[string]struct{}{}
	}
	clear(j.seen)
	for _, e := range entries {
		if _, dup := j.seen[string(e.Row)]; dup {
			continue
		}
		j.seen[string(e.Row)] = struct{}{}
		kg, key := int(binary.BigEndian.Uint16(e.Row[:2])), e.Row[2:]
		if err := j.joinKey(kg, key, out); err != nil {
			return err
		}
	}
	return nil
}

// joinKey takes one key's rows of a window out of the state and joins
// them: directly without a residual, else as candidate pairs that
// evaluate filters in batches.
func (j *WindowJoin) joinKey(kg int, key []byte, out Collector) error {
	if len(j.groups) == 0 {
		j.arena = j.arena[:0]
	}
	g := &j.scratch
	if j.residual != nil {
		g = &windowGroup{}
	}
	for s := 0; s < 2; s++ {
		st := j.sides[s].state
		rows, err := st.Get(kg, key)
		if err != nil {
			return err
		}
		g.rows[s] = g.rows[s][:0]
		for _, r := range rows {
			off := len(j.arena)
			j.arena = append(j.arena, r.Row...)
			g.rows[s] = append(g.rows[s], state.MultisetRow{Row: j.arena[off:len(j.arena):len(j.arena)], Count: r.Count})
		}
		for _, r := range g.rows[s] {
			if err := st.Add(kg, key, r.Row, -r.Count); err != nil {
				return err
			}
		}
		g.matched[s] = append(g.matched[s][:0], make([]bool, len(rows))...)
	}
	// NB: a key with a NULL column matches nothing.
	nullKey := key[0] != 0
	if nullKey || len(g.rows[0]) == 0 || len(g.rows[1]) == 0 {
		g.done = true
		return j.emitUnmatched(g, out)
	}
	if j.residual == nil {
		for s := range g.matched {
			for i := range g.matched[s] {
				g.matched[s][i] = true
			}
		}
		g.done = true
		if !j.spec.SemiOrAnti() {
			for _, l := range g.rows[0] {
				for _, r := range g.rows[1] {
					for c := int64(0); c < l.Count*r.Count; c++ {
						if err := j.appendPair(l.Row, r.Row); err != nil {
							return err
						}
						if err := j.maybeFlush(out); err != nil {
							return err
						}
					}
				}
			}
		}
		return j.emitUnmatched(g, out)
	}
	j.groups = append(j.groups, g)
	for li, l := range g.rows[0] {
		for ri, r := range g.rows[1] {
			if err := j.cand.rb.Decoder(0, j.cand.nLeft).Append(l.Row); err != nil {
				return fmt.Errorf("operators: window join state holds a bad row: %w", err)
			}
			if err := j.cand.rb.Decoder(j.cand.nLeft, j.cand.nRight).Append(r.Row); err != nil {
				return fmt.Errorf("operators: window join state holds a bad row: %w", err)
			}
			j.cand.rb.EndRow()
			j.cand.kinds = append(j.cand.kinds, int8(types.Insert))
			j.pairs = append(j.pairs, windowPair{g: g, l: li, r: ri})
			if j.cand.len() >= joinBatchRows {
				if err := j.evaluate(out); err != nil {
					return err
				}
			}
		}
	}
	g.done = true
	return nil
}

// evaluate applies the residual to the candidate pairs, emits the joined
// rows that pass (not for SEMI and ANTI), and settles the groups whose
// pairs have all been evaluated.
func (j *WindowJoin) evaluate(out Collector) error {
	if j.cand.len() > 0 {
		b := takeBatch(j.cand.schema, j.cand.rb, &j.cand.kinds)
		j.cand.rb.Reserve(joinBatchRows)
		var err error
		j.sel, err = j.residual.Select(b, j.sel[:0])
		if err != nil {
			b.Release()
			return err
		}
		bcols := b.Rec.Columns()[:b.NumCols()]
		for _, s := range j.sel {
			p := j.pairs[s]
			p.g.matched[0][p.l], p.g.matched[1][p.r] = true, true
			if j.spec.SemiOrAnti() {
				continue
			}
			for c := int64(0); c < p.g.rows[0][p.l].Count*p.g.rows[1][p.r].Count; c++ {
				j.out.rb.AppendColumns(0, bcols, int(s))
				j.out.rb.EndRow()
				j.out.kinds = append(j.out.kinds, int8(types.Insert))
				if err := j.maybeFlush(out); err != nil {
					b.Release()
					return err
				}
			}
		}
		b.Release()
		j.pairs = j.pairs[:0]
	}
	keep := j.groups[:0]
	for _, g := range j.groups {
		if !g.done {
			keep = append(keep, g)
			continue
		}
		if err := j.emitUnmatched(g, out); err != nil {
			return err
		}
	}
	clear(j.groups[len(keep):])
	j.groups = keep
	return nil
}

// emitUnmatched emits what a settled group adds to its pairs: the left
// rows of SEMI that matched, of ANTI that did not, and the unmatched rows
// of preserved sides, padded.
func (j *WindowJoin) emitUnmatched(g *windowGroup, out Collector) error {
	switch j.spec.JoinType {
	case jobgraph.WindowJoinSemi, jobgraph.WindowJoinAnti:
		want := j.spec.JoinType == jobgraph.WindowJoinSemi
		for i, r := range g.rows[0] {
			if g.matched[0][i] != want {
				continue
			}
			for c := int64(0); c < r.Count; c++ {
				if err := j.out.rb.Decoder(0, j.out.nLeft).Append(r.Row); err != nil {
					return fmt.Errorf("operators: window join state holds a bad row: %w", err)
				}
				j.out.rb.EndRow()
				j.out.kinds = append(j.out.kinds, int8(types.Insert))
				if err := j.maybeFlush(out); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for s := 0; s < 2; s++ {
		if !j.preserve[s] {
			continue
		}
		for i, r := range g.rows[s] {
			if g.matched[s][i] {
				continue
			}
			for c := int64(0); c < r.Count; c++ {
				if err := j.out.appendStoredPadded(s, r.Row, int8(types.Insert)); err != nil {
					return err
				}
				if err := j.maybeFlush(out); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// appendPair appends the joined row of stored rows l and r to the output.
func (j *WindowJoin) appendPair(l, r []byte) error {
	if err := j.out.rb.Decoder(0, j.out.nLeft).Append(l); err != nil {
		return fmt.Errorf("operators: window join state holds a bad row: %w", err)
	}
	if err := j.out.rb.Decoder(j.out.nLeft, j.out.nRight).Append(r); err != nil {
		return fmt.Errorf("operators: window join state holds a bad row: %w", err)
	}
	j.out.rb.EndRow()
	j.out.kinds = append(j.out.kinds, int8(types.Insert))
	return nil
}

func (j *WindowJoin) maybeFlush(out Collector) error {
	if j.out.len() >= joinBatchRows {
		return j.out.flush(out)
	}
	return nil
}

// LateRowsDropped returns how many rows of the left and of the right input
// were dropped because their window had fired (Flink's
// leftNumLateRecordsDropped and rightNumLateRecordsDropped). The counts
// are this subtask's since it opened.
func (j *WindowJoin) LateRowsDropped() (left, right int64) { return j.late[0], j.late[1] }

// EndInput does nothing: MaxWatermark, which comes before the end of the
// last input, has fired every window.
func (j *WindowJoin) EndInput(int, Collector) error { return nil }

// Close releases the builders. It is safe after a failed Open.
func (j *WindowJoin) Close() error {
	for _, o := range []*joinOutput{j.cand, j.out} {
		if o != nil {
			o.release()
		}
	}
	j.cand, j.out = nil, nil
	j.groups, j.pairs = nil, nil
	j.be = state.Namespace{}
	return nil
}

// StateStats reports the join state's cache and spill counters; valid
// between Open and Close.
func (j *WindowJoin) StateStats() state.Stats { return j.be.Backend().Stats() }

// UsesKeyedState reports that the operator keeps keyed state.
func (*WindowJoin) UsesKeyedState() bool { return true }
