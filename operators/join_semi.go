package operators

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

func init() {
	RegisterOperator(jobgraph.KindJoinSemi, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.SemiJoinSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewSemiJoin(*s)
	})
}

// SemiJoin is the streaming semi join (EXISTS, IN) or anti join (NOT
// EXISTS, NOT IN) of two changelogs, with the changelog of Flink's
// StreamingSemiAntiJoinOperator. Its output is left rows only:
//
//   - a left row is emitted, with its own kind, when it has a match (semi)
//     or none (anti); so is its retraction;
//   - a right row that gives a left row its first match emits that left
//     row with the right row's kind (semi) or -D (anti); the retraction of
//     its last match emits it with the retraction's kind (semi) or +I
//     (anti).
//
// A row with a NULL key never matches. Without a residual condition every
// right row under a key matches every left row under it, so the right side
// keeps only a row count per key and a right row reads the left rows of
// its key only when that count moves between 0 and 1. With a residual the
// right side keeps its rows and each left row is stored with its number of
// matches, prefixed to the encoded row.
type SemiJoin struct {
	spec   jobgraph.SemiJoinSpec
	left   *joinSide
	right  *joinSide
	be     state.Namespace
	maxPar int

	nLeft     int
	outSchema *arrow.Schema
	out       *types.RowBuilder
	outKinds  []int8

	// With a residual: the candidate pairs (left columns, then right ones)
	// of one input row, the residual over them, and the left rows of a key
	// copied out of the state.
	residual    *expr.Filter
	pairSchema  *arrow.Schema
	pairs       *types.RowBuilder
	pairKinds   []int8
	pairCounts  []int64
	sel         []int32
	stored      []state.MultisetRow
	storedBytes []byte
	assocBuf    []byte
}

var _ StatefulOperator = (*SemiJoin)(nil)

// countRow is the one row of the right side's per-key count (no residual).
var countRow = []byte{0}

// assocWidth is the width of the match count before a stored left row.
const assocWidth = 8

// NewSemiJoin checks spec and returns an unopened join.
func NewSemiJoin(spec jobgraph.SemiJoinSpec) (*SemiJoin, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("operators: semi join: %w", err)
	}
	for i := range spec.LeftKeys {
		lt, rt := spec.LeftSchema[spec.LeftKeys[i]].Type, spec.RightSchema[spec.RightKeys[i]].Type
		if !arrow.TypeEqual(lt.ArrowType(), rt.ArrowType()) {
			return nil, fmt.Errorf("operators: semi join key %d compares %v with %v; the planner must cast keys to one type", i, lt, rt)
		}
	}
	return &SemiJoin{spec: spec, nLeft: len(spec.LeftSchema)}, nil
}

// Open opens the join's state and compiles the residual.
func (j *SemiJoin) Open(ctx *Context) error {
	be, maxPar, err := ctx.Keyed()
	if err != nil {
		return err
	}
	j.be, j.maxPar = be, maxPar
	j.left = newJoinSide(j.spec.LeftSchema, j.spec.LeftKeys, be.Multiset("left"))
	j.right = newJoinSide(j.spec.RightSchema, j.spec.RightKeys, be.Multiset("right"))
	j.left.state.SetTTL(time.Duration(j.spec.LeftTTLMs)*time.Millisecond, ctx.Now)
	j.right.state.SetTTL(time.Duration(j.spec.RightTTLMs)*time.Millisecond, ctx.Now)
	j.outSchema = j.spec.LeftSchema.ArrowSchema()
	j.out = types.NewRowBuilder(nil, j.spec.LeftSchema)
	j.out.Reserve(joinBatchRows)
	if j.spec.Residual != nil {
		if j.residual, err = expr.CompileFilter(j.spec.Residual, ctx.Env()); err != nil {
			return fmt.Errorf("operators: semi join condition: %w", err)
		}
		all := append(append(types.Schema{}, j.spec.LeftSchema...), j.spec.RightSchema...)
		j.pairSchema = all.ArrowSchema()
		j.pairs = types.NewRowBuilder(nil, all)
	}
	return nil
}

// Process updates input's side with b and emits the left rows whose
// output changes. It borrows b.
func (j *SemiJoin) Process(input int, b types.Batch, out Collector) error {
	n := b.NumRows()
	if n == 0 {
		return nil
	}
	cols := b.Rec.Columns()[:b.NumCols()]
	kinds := b.Kinds()
	var err error
	switch input {
	case 0:
		err = j.processLeft(cols, kinds, n, out)
	case 1:
		err = j.processRight(cols, kinds, n, out)
	default:
		return fmt.Errorf("operators: semi join has no input %d", input)
	}
	if err != nil {
		return err
	}
	return j.flush(out)
}

func (j *SemiJoin) processLeft(cols []arrow.Array, kinds []int8, n int, out Collector) error {
	j.left.bind(cols, n)
	for i := 0; i < n; i++ {
		kind := kinds[i]
		kg, key, ok := j.left.keyAt(i, j.maxPar)
		if !ok {
			if j.spec.Anti {
				j.emitColumns(cols, i, kind)
			}
			if err := j.maybeFlush(out); err != nil {
				return err
			}
			continue
		}
		matches, err := j.leftMatches(kg, key, cols, i)
		if err != nil {
			return err
		}
		if (matches > 0) != j.spec.Anti {
			j.emitColumns(cols, i, kind)
		}
		if err := j.storeLeft(kg, key, cols, i, matches, types.RowKind(kind).IsAccumulate()); err != nil {
			return err
		}
		if err := j.maybeFlush(out); err != nil {
			return err
		}
	}
	return nil
}

// leftMatches counts the right rows that match row i of cols, a left row
// under key.
func (j *SemiJoin) leftMatches(kg int, key []byte, cols []arrow.Array, i int) (int64, error) {
	rows, err := j.right.state.Get(kg, key)
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	if j.residual == nil {
		return rows[0].Count, nil
	}
	j.pairCounts = j.pairCounts[:0]
	for _, r := range rows {
		j.pairs.AppendColumns(0, cols, i)
		if err := j.pairs.Decoder(j.nLeft, len(j.spec.RightSchema)).Append(r.Row); err != nil {
			return 0, fmt.Errorf("operators: semi join state holds a bad row: %w", err)
		}
		j.pairs.EndRow()
		j.pairCounts = append(j.pairCounts, r.Count)
	}
	sel, err := j.evalPairs()
	if err != nil {
		return 0, err
	}
	var total int64
	for _, p := range sel {
		total += j.pairCounts[p]
	}
	return total, nil
}

// evalPairs evaluates the residual over the pairs built and returns the
// indexes of those that satisfy it, valid until the next call.
func (j *SemiJoin) evalPairs() ([]int32, error) {
	for range j.pairs.Len() {
		j.pairKinds = append(j.pairKinds, int8(types.Insert))
	}
	pb := takeBatch(j.pairSchema, j.pairs, &j.pairKinds)
	defer pb.Release()
	var err error
	j.sel, err = j.residual.Select(pb, j.sel)
	return j.sel, err
}

// storeLeft adds (accumulate) or retracts row i of cols under key. With a
// residual the stored row carries its number of matches.
func (j *SemiJoin) storeLeft(kg int, key []byte, cols []arrow.Array, i int, matches int64, accumulate bool) error {
	row := j.left.rowAt(cols, i)
	if j.residual == nil {
		delta := int64(1)
		if !accumulate {
			delta = -1
		}
		return j.left.state.Add(kg, key, row, delta)
	}
	if accumulate {
		return j.left.state.Add(kg, key, j.withAssoc(matches, row), 1)
	}
	// NB: the stored count may differ from matches when right rows have
	// expired (state TTL); find the row whatever its count.
	rows, err := j.left.state.Get(kg, key)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if bytes.Equal(r.Row[assocWidth:], row) {
			found := append(j.assocBuf[:0], r.Row...)
			j.assocBuf = found
			return j.left.state.Add(kg, key, found, -1)
		}
	}
	return nil
}

// withAssoc returns the stored form of a left row with n matches, valid
// until the next call.
func (j *SemiJoin) withAssoc(n int64, row []byte) []byte {
	j.assocBuf = binary.BigEndian.AppendUint64(j.assocBuf[:0], uint64(n))
	j.assocBuf = append(j.assocBuf, row...)
	return j.assocBuf
}

func (j *SemiJoin) processRight(cols []arrow.Array, kinds []int8, n int, out Collector) error {
	j.right.bind(cols, n)
	for i := 0; i < n; i++ {
		kg, key, ok := j.right.keyAt(i, j.maxPar)
		if !ok {
			continue
		}
		var err error
		if j.residual == nil {
			err = j.rightCounted(kg, key, kinds[i])
		} else {
			err = j.rightResidual(kg, key, cols, i, kinds[i])
		}
		if err != nil {
			return err
		}
		if err := j.maybeFlush(out); err != nil {
			return err
		}
	}
	return nil
}

// rightCounted applies a right row without a residual: only the key's row
// count moving between 0 and 1 changes the output.
func (j *SemiJoin) rightCounted(kg int, key []byte, kind int8) error {
	rows, err := j.right.state.Get(kg, key)
	if err != nil {
		return err
	}
	before := int64(0)
	if len(rows) > 0 {
		before = rows[0].Count
	}
	accumulate := types.RowKind(kind).IsAccumulate()
	delta := int64(1)
	if !accumulate {
		delta = -1
	}
	if err := j.right.state.Add(kg, key, countRow, delta); err != nil {
		return err
	}
	if (accumulate && before != 0) || (!accumulate && before != 1) {
		return nil
	}
	lrows, err := j.left.state.Get(kg, key)
	if err != nil {
		return err
	}
	emit := j.transitionKind(kind, accumulate)
	for _, r := range lrows {
		for c := int64(0); c < r.Count; c++ {
			if err := j.emitStored(r.Row, emit); err != nil {
				return err
			}
		}
	}
	return nil
}

// transitionKind is the kind of a left row whose first match arrives
// (accumulate) or whose last match goes, by a right row of kind.
func (j *SemiJoin) transitionKind(kind int8, accumulate bool) int8 {
	switch {
	case !j.spec.Anti:
		return kind
	case accumulate:
		return int8(types.Delete)
	}
	return int8(types.Insert)
}

// rightResidual applies a right row with a residual: the left rows under
// its key that it matches change their number of matches.
func (j *SemiJoin) rightResidual(kg int, key []byte, cols []arrow.Array, i int, kind int8) error {
	accumulate := types.RowKind(kind).IsAccumulate()
	delta := int64(1)
	if !accumulate {
		delta = -1
	}
	if err := j.right.state.Add(kg, key, j.right.rowAt(cols, i), delta); err != nil {
		return err
	}
	lrows, err := j.left.state.Get(kg, key)
	if err != nil || len(lrows) == 0 {
		return err
	}
	// Copy the left rows out: the state is updated below.
	j.stored, j.storedBytes = j.stored[:0], j.storedBytes[:0]
	for _, r := range lrows {
		j.storedBytes = append(j.storedBytes, r.Row...)
		j.stored = append(j.stored, state.MultisetRow{Count: r.Count, WriteMs: int64(len(r.Row))})
	}
	off := 0
	for k := range j.stored {
		w := int(j.stored[k].WriteMs)
		j.stored[k].Row = j.storedBytes[off : off+w : off+w]
		off += w
		j.pairs.AppendColumns(j.nLeft, cols, i)
		if err := j.pairs.Decoder(0, j.nLeft).Append(j.stored[k].Row[assocWidth:]); err != nil {
			return fmt.Errorf("operators: semi join state holds a bad row: %w", err)
		}
		j.pairs.EndRow()
	}
	sel, err := j.evalPairs()
	if err != nil {
		return err
	}
	emit := j.transitionKind(kind, accumulate)
	for _, p := range sel {
		r := j.stored[p]
		assoc := int64(binary.BigEndian.Uint64(r.Row))
		next := assoc + delta
		if next < 0 {
			continue
		}
		if (accumulate && assoc == 0) || (!accumulate && assoc == 1) {
			for c := int64(0); c < r.Count; c++ {
				if err := j.emitStored(r.Row[assocWidth:], emit); err != nil {
					return err
				}
			}
		}
		if err := j.left.state.Add(kg, key, r.Row, -r.Count); err != nil {
			return err
		}
		if err := j.left.state.Add(kg, key, j.withAssoc(next, r.Row[assocWidth:]), r.Count); err != nil {
			return err
		}
	}
	return nil
}

func (j *SemiJoin) emitColumns(cols []arrow.Array, i int, kind int8) {
	j.out.AppendColumns(0, cols, i)
	j.out.EndRow()
	j.outKinds = append(j.outKinds, kind)
}

func (j *SemiJoin) emitStored(row []byte, kind int8) error {
	if err := j.out.Decoder(0, j.nLeft).Append(row); err != nil {
		return fmt.Errorf("operators: semi join state holds a bad row: %w", err)
	}
	j.out.EndRow()
	j.outKinds = append(j.outKinds, kind)
	return nil
}

func (j *SemiJoin) maybeFlush(out Collector) error {
	if j.out.Len() >= joinBatchRows {
		return j.flush(out)
	}
	return nil
}

func (j *SemiJoin) flush(out Collector) error {
	if j.out.Len() == 0 {
		return nil
	}
	b := takeBatch(j.outSchema, j.out, &j.outKinds)
	j.out.Reserve(joinBatchRows)
	err := out.Emit(b)
	b.Release()
	return err
}

// EndInput does nothing: the join emits as rows arrive.
func (j *SemiJoin) EndInput(int, Collector) error { return nil }

// Close releases the builders. It is safe after a failed Open.
func (j *SemiJoin) Close() error {
	if j.out != nil {
		j.out.Release()
		j.out = nil
	}
	if j.pairs != nil {
		j.pairs.Release()
		j.pairs = nil
	}
	j.be = state.Namespace{}
	return nil
}

// StateStats reports the join state's cache and spill counters; valid
// between Open and Close.
func (j *SemiJoin) StateStats() state.Stats { return j.be.Backend().Stats() }

// UsesKeyedState reports that the operator keeps keyed state.
func (*SemiJoin) UsesKeyedState() bool { return true }
