package operators

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

func init() {
	RegisterOperator(jobgraph.KindGroupAggregate, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.GroupAggSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewGroupAgg(*s)
	})
}

// GroupAgg is Flink's streaming GroupAggregate (GroupAggFunction without
// mini-batch): for every input row it updates its group's accumulators
// (+I/+U accumulate, -U/-D retract) and emits the group's change:
//
//   - the group's first row emits +I of the result;
//   - a changed result emits -U of the old result, then +U of the new one;
//   - an unchanged result emits nothing, unless the state has a TTL (then
//     -U/+U, as Flink's does);
//   - when the group's row count (rows accumulated minus rows retracted)
//     reaches 0, it emits -D of the last result and drops the group's state;
//   - a retraction for a group without state is ignored.
//
// NULL is a group key like any other value. Output rows are the key
// columns, then the aggregates, built into batches of up to 4096 rows that
// are emitted before Process returns; EndInput has nothing to flush.
//
// An aggregate with a FILTER sees only the rows (accumulated or retracted)
// whose filter column is TRUE; a DISTINCT aggregate sees a value when it
// enters or leaves its distinct view (see distinctView).
//
// State, per group key: the row count and the accumulators, compactly
// encoded in a ValueState (with the write time when there is a TTL); for
// MIN and MAX over a retracting input, every value with its count in a
// MultisetState per aggregate; for LISTAGG, FIRST_VALUE and LAST_VALUE over
// a retracting input, every live value under its arrival number in a
// MultisetState per aggregate (one entry per value); per distinct view, a
// count per (group, value) in a ValueState.
type GroupAgg struct {
	spec   jobgraph.GroupAggSpec
	aggs   []*aggFunc
	views  []*distinctView
	steps  []int // per view, what the current row did to it (distinctView.step)
	nKeys  int
	be     state.Namespace
	accs   *state.ValueState
	maxPar int
	ttlMs  int64
	now    func() time.Time

	keyEnc  *types.RowEncoder
	keyCols []arrow.Array
	hashes  []uint64
	keyBuf  []byte
	accBuf  []byte
	valBuf  []byte
	prevOut []byte
	newOut  []byte
	acc     []aggAcc

	schema *arrow.Schema
	rb     *types.RowBuilder
	kinds  []int8
}

var _ StatefulOperator = (*GroupAgg)(nil)

// NewGroupAgg checks spec and returns an unopened operator.
func NewGroupAgg(spec jobgraph.GroupAggSpec) (*GroupAgg, error) {
	nk := len(spec.Keys)
	if len(spec.OutputSchema) != nk+len(spec.Aggs) {
		return nil, fmt.Errorf("operators: group aggregate has %d keys and %d aggregates but %d output columns",
			nk, len(spec.Aggs), len(spec.OutputSchema))
	}
	for i, k := range spec.Keys {
		if k < 0 || k >= len(spec.InputSchema) {
			return nil, fmt.Errorf("operators: group key column %d is out of range", k)
		}
		if !arrow.TypeEqual(spec.InputSchema[k].Type.ArrowType(), spec.OutputSchema[i].Type.ArrowType()) {
			return nil, fmt.Errorf("operators: group key %d is %v but output column %q is %v",
				i, spec.InputSchema[k].Type, spec.OutputSchema[i].Name, spec.OutputSchema[i].Type)
		}
	}
	g := &GroupAgg{spec: spec, nKeys: nk}
	for i, call := range spec.Aggs {
		f, err := newAggFunc(call, spec.InputSchema, spec.OutputSchema[nk+i].Type)
		if err != nil {
			return nil, err
		}
		g.aggs = append(g.aggs, f)
	}
	g.views = buildViews(spec.Aggs, g.aggs, spec.InputSchema)
	g.steps = make([]int, len(g.views))
	return g, nil
}

// Open opens the operator's state at ctx.StateDir.
func (g *GroupAgg) Open(ctx *Context) error {
	be, maxPar, err := ctx.Keyed()
	if err != nil {
		return err
	}
	g.maxPar = maxPar
	g.be = be
	g.accs = be.Value("acc")
	g.ttlMs = g.spec.TTLMs
	g.now = ctx.Now
	if g.now == nil {
		g.now = time.Now
	}
	for i, f := range g.aggs {
		if (f.kind == aggMin || f.kind == aggMax) && g.spec.InputRetracts {
			f.values = be.Multiset(fmt.Sprintf("values%d", i))
			f.values.SetTTL(time.Duration(g.ttlMs)*time.Millisecond, g.now)
		}
		if f.keepsList() && g.spec.InputRetracts {
			f.list = be.Multiset(fmt.Sprintf("list%d", i))
			f.list.SetTTL(time.Duration(g.ttlMs)*time.Millisecond, g.now)
		}
	}
	openViews(g.views, be, false, g.ttlMs)
	ks := make(types.Schema, g.nKeys)
	for i, k := range g.spec.Keys {
		ks[i] = g.spec.InputSchema[k]
	}
	g.keyEnc = types.NewRowEncoder(ks)
	g.keyCols = make([]arrow.Array, g.nKeys)
	g.acc = make([]aggAcc, len(g.aggs))
	g.schema = g.spec.OutputSchema.ArrowSchema()
	g.rb = types.NewRowBuilder(nil, g.spec.OutputSchema)
	return nil
}

// Process applies the rows of b to their groups and emits the changes. It
// borrows b.
func (g *GroupAgg) Process(_ int, b types.Batch, out Collector) error {
	n := b.NumRows()
	if n == 0 {
		return nil
	}
	cols := b.Rec.Columns()[:b.NumCols()]
	for i, k := range g.spec.Keys {
		g.keyCols[i] = cols[k]
	}
	if cap(g.hashes) < n {
		g.hashes = make([]uint64, n)
	}
	g.hashes = g.hashes[:n]
	types.HashColumns(g.keyCols, g.hashes)
	var nowMs int64
	if g.ttlMs > 0 {
		nowMs = g.now().UnixMilli()
	}
	kinds := b.Kinds()
	for i := 0; i < n; i++ {
		if err := g.processRow(cols, i, types.RowKind(kinds[i]), nowMs); err != nil {
			return err
		}
		if g.rb.Len() >= joinBatchRows-1 {
			if err := g.flush(out); err != nil {
				return err
			}
		}
	}
	return g.flush(out)
}

// processRow applies row i to its group; it appends at most two rows.
func (g *GroupAgg) processRow(cols []arrow.Array, i int, kind types.RowKind, nowMs int64) error {
	retract := kind.IsRetract()
	kg := types.KeyGroupForHash(g.hashes[i], g.maxPar)
	g.keyBuf = g.keyEnc.EncodeKey(g.keyBuf[:0], g.keyCols, i)
	key := g.keyBuf
	stored, found, err := g.accs.Get(kg, key)
	if err != nil {
		return err
	}
	var rows int64
	if found {
		if rows, err = g.decode(stored, nowMs); err == errExpired {
			// NB: expired state is gone, as Flink's NeverReturnExpired has
			// it; drop what is left of it before the group starts over.
			found = false
			if err := g.dropGroup(kg, key); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
	}
	first := !found
	if first {
		if retract {
			return nil
		}
		for j := range g.acc {
			g.acc[j].reset()
		}
	} else {
		for j, f := range g.aggs {
			if f.list != nil && f.kind == aggListAgg {
				if err := f.loadList(&g.acc[j], kg, key); err != nil {
					return err
				}
			}
		}
		g.prevOut = g.appendOutput(g.prevOut[:0], rows)
	}
	if retract {
		rows--
	} else {
		rows++
	}
	for v, view := range g.views {
		if g.steps[v], err = view.step(cols, i, retract, kg, key, nowMs); err != nil {
			return err
		}
	}
	for j, f := range g.aggs {
		r := retract
		switch {
		case f.view >= 0:
			if g.steps[f.view] == 0 {
				continue
			}
			r = g.steps[f.view] < 0
		case !f.passes(cols, i):
			continue
		}
		var col arrow.Array
		if f.arg >= 0 {
			col = cols[f.arg]
		}
		if g.valBuf, err = f.accumulate(&g.acc[j], col, i, r, kg, key, g.valBuf); err != nil {
			return err
		}
	}
	if rows <= 0 {
		// The group's last row was retracted.
		if !first {
			if err := g.emit(i, g.prevOut, types.Delete); err != nil {
				return err
			}
		}
		return g.dropGroup(kg, key)
	}
	g.accBuf = g.encode(g.accBuf[:0], rows, nowMs)
	if err := g.accs.Put(kg, key, g.accBuf); err != nil {
		return err
	}
	g.newOut = g.appendOutput(g.newOut[:0], rows)
	if first {
		return g.emit(i, g.newOut, types.Insert)
	}
	if g.ttlMs == 0 && bytes.Equal(g.prevOut, g.newOut) {
		return nil
	}
	if err := g.emit(i, g.prevOut, types.UpdateBefore); err != nil {
		return err
	}
	return g.emit(i, g.newOut, types.UpdateAfter)
}

// dropGroup deletes a group's state.
func (g *GroupAgg) dropGroup(kg int, key []byte) error {
	for _, f := range g.aggs {
		if err := f.clearValues(kg, key); err != nil {
			return err
		}
	}
	return g.accs.Delete(kg, key)
}

var errExpired = fmt.Errorf("operators: expired")

// encode appends the group's state: its write time (with a TTL), its row
// count, then each accumulator.
func (g *GroupAgg) encode(dst []byte, rows, nowMs int64) []byte {
	if g.ttlMs > 0 {
		dst = binary.AppendUvarint(dst, uint64(nowMs))
	}
	dst = binary.AppendVarint(dst, rows)
	for j, f := range g.aggs {
		dst = f.appendAcc(dst, &g.acc[j])
	}
	return dst
}

// decode reads a group's state into g.acc and returns its row count, or
// errExpired when its time to live has passed.
func (g *GroupAgg) decode(src []byte, nowMs int64) (int64, error) {
	if g.ttlMs > 0 {
		written, w := binary.Uvarint(src)
		if w <= 0 {
			return 0, errBadAggState
		}
		if nowMs-int64(written) >= g.ttlMs {
			return 0, errExpired
		}
		src = src[w:]
	}
	rows, w := binary.Varint(src)
	if w <= 0 {
		return 0, errBadAggState
	}
	src = src[w:]
	var err error
	for j, f := range g.aggs {
		if src, err = f.decodeAcc(src, &g.acc[j]); err != nil {
			return 0, err
		}
	}
	if len(src) != 0 {
		return 0, errBadAggState
	}
	return rows, nil
}

// appendOutput appends the aggregates' results as one row of the row
// codec (a NULL bitmap, then the values), so that two results compare by
// their bytes and decode straight into the output columns.
func (g *GroupAgg) appendOutput(dst []byte, rows int64) []byte {
	start := len(dst)
	for j := 0; j < (len(g.aggs)+7)/8; j++ {
		dst = append(dst, 0)
	}
	for j, f := range g.aggs {
		var null bool
		if dst, null = f.appendResult(dst, &g.acc[j], rows); null {
			dst[start+j/8] |= 1 << (j % 8)
		}
	}
	return dst
}

// emit appends an output row: the key columns of input row i, then the
// encoded aggregate results.
func (g *GroupAgg) emit(i int, results []byte, kind types.RowKind) error {
	g.rb.AppendColumns(0, g.keyCols, i)
	if err := g.rb.Decoder(g.nKeys, len(g.aggs)).Append(results); err != nil {
		return fmt.Errorf("operators: group aggregate built a bad result row: %w", err)
	}
	g.rb.EndRow()
	g.kinds = append(g.kinds, int8(kind))
	return nil
}

func (g *GroupAgg) flush(out Collector) error {
	return emitBuilt(out, g.schema, g.rb, &g.kinds)
}

// EndInput has nothing to flush: changes are emitted as rows arrive.
func (g *GroupAgg) EndInput(int, Collector) error { return nil }

// Close flushes the state to Pebble and closes it. It is safe after a failed
// Open.
func (g *GroupAgg) Close() error {
	if g.rb != nil {
		g.rb.Release()
		g.rb = nil
	}
	g.be = state.Namespace{}
	return nil
}

// StateStats reports the state's cache and spill counters; valid between
// Open and Close.
func (g *GroupAgg) StateStats() state.Stats { return g.be.Backend().Stats() }

// UsesKeyedState reports that the operator keeps keyed state.
func (*GroupAgg) UsesKeyedState() bool { return true }
