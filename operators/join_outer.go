package operators

import (
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

func init() {
	RegisterOperator(jobgraph.KindJoinOuter, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.JoinSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewOuterJoin(*s)
	})
}

// OuterJoin is the regular streaming LEFT, RIGHT or FULL OUTER JOIN of two
// changelogs on equality keys and an optional residual condition (any
// predicate over both rows, including one on the preserved side alone), with
// Flink's changelog (StreamingJoinOperator):
//
//   - a row of an outer side with no match emits itself padded with NULLs
//     (+I), and its retraction retracts that (-D);
//   - when the first match of an outer row arrives, its padded row is
//     retracted (-D) before the joined row is inserted (+I);
//   - when the last match of an outer row is retracted, the joined row is
//     retracted and the padded row comes back (+I).
//
// Joined rows are inserted as +I. A retraction from an outer side retracts
// its joined rows with -D; one from the inner side keeps its kind (-U or
// -D). A row whose key has a NULL never matches: an outer one is emitted
// padded. A retraction of a row the join does not hold (it never arrived, or
// its state expired) emits nothing.
//
// Whether an outer row has a match: without a residual every row of a key
// matches every row of the other side under that key, so it is whether the
// other side holds a row for the key, and is not stored. With a residual each
// distinct row of an outer side has its number of matches (Flink's
// numOfAssociations) in a second multiset, "left-matches" or
// "right-matches": row -> count, absent when 0.
//
// Cost: adding or retracting a row touches its own key's state in O(1)
// (indexed lookups, never a scan of the key's rows), plus, for each row of
// the other side under the key, one residual evaluation (batched) and, for a
// match, its output rows and one count update. The other side's state does
// not change while a batch of one input is processed, so the residual is
// evaluated for many input rows at once.
type OuterJoin struct {
	spec     jobgraph.JoinSpec
	outer    [2]bool
	sides    [2]*joinSide
	matches  [2]*state.MultisetState // nil unless the side is outer and there is a residual
	residual *expr.Filter
	cand     *joinOutput // pairs waiting for the residual
	candOf   []match     // the pair behind each row of cand
	out      *joinOutput
	be       state.Namespace
	maxPar   int

	// found holds the matches of the input rows not yet applied, in input
	// order; their other-side rows are copied into arena.
	found []match
	arena []byte
	sel   []int32
}

// match is a row of the other side matching input row `row`: its encoding
// is arena[off:end] and it occurs count times.
type match struct {
	row      int32
	off, end int32
	count    int64
}

var _ StatefulOperator = (*OuterJoin)(nil)

// NewOuterJoin checks spec and returns an unopened join.
func NewOuterJoin(spec jobgraph.JoinSpec) (*OuterJoin, error) {
	if err := checkJoinSpec(&spec); err != nil {
		return nil, err
	}
	if !spec.OuterLeft && !spec.OuterRight {
		return nil, fmt.Errorf("operators: an outer join needs an outer side")
	}
	return &OuterJoin{spec: spec, outer: [2]bool{spec.OuterLeft, spec.OuterRight}}, nil
}

// Open opens the join's state at ctx.StateDir and compiles the residual.
func (j *OuterJoin) Open(ctx *Context) error {
	be, maxPar, err := ctx.Keyed()
	if err != nil {
		return err
	}
	j.maxPar = maxPar
	j.be = be
	ttl := [2]time.Duration{time.Duration(j.spec.LeftTTLMs) * time.Millisecond, time.Duration(j.spec.RightTTLMs) * time.Millisecond}
	j.sides[0] = newJoinSide(j.spec.LeftSchema, j.spec.LeftKeys, be.Multiset("left"))
	j.sides[1] = newJoinSide(j.spec.RightSchema, j.spec.RightKeys, be.Multiset("right"))
	if j.spec.Residual != nil {
		if j.residual, err = expr.CompileFilter(j.spec.Residual, ctx.Env()); err != nil {
			return fmt.Errorf("operators: join condition: %w", err)
		}
		j.cand = newJoinOutput(j.spec.OutputSchema, len(j.spec.LeftSchema), nil)
		for s, name := range []string{"left-matches", "right-matches"} {
			if j.outer[s] {
				// NB: a count is written whenever its row is, so under a TTL
				// it never expires before the row.
				j.matches[s] = be.Multiset(name)
				j.matches[s].SetTTL(ttl[s], ctx.Now)
			}
		}
	}
	for s := range j.sides {
		j.sides[s].state.SetTTL(ttl[s], ctx.Now)
	}
	j.out = newJoinOutput(j.spec.OutputSchema, len(j.spec.LeftSchema), (*expr.Filter)(nil))
	return nil
}

// Process updates input's side with b and emits the changes of the join.
// It borrows b.
func (j *OuterJoin) Process(input int, b types.Batch, out Collector) error {
	if input != 0 && input != 1 {
		return fmt.Errorf("operators: join has no input %d", input)
	}
	n := b.NumRows()
	if n == 0 {
		return nil
	}
	cols := b.Rec.Columns()[:b.NumCols()]
	j.sides[input].bind(cols, n)
	kinds := b.Kinds()
	// Rows [lo, i] have their matches found; they are applied in order once
	// enough pairs are pending.
	lo := 0
	for i := 0; i < n; i++ {
		if err := j.findMatches(input, cols, i); err != nil {
			return err
		}
		if j.pending() < joinBatchRows && i < n-1 {
			continue
		}
		if err := j.testPairs(); err != nil {
			return err
		}
		if err := j.apply(input, cols, kinds, lo, i+1, out); err != nil {
			return err
		}
		lo = i + 1
	}
	return j.out.flush(out)
}

// pending is the number of matches and pairs found and not yet applied.
func (j *OuterJoin) pending() int {
	n := len(j.found)
	if j.cand != nil {
		n += j.cand.len()
	}
	return n
}

// findMatches adds the rows of the other side under row i's key to found,
// or, with a residual, to the pairs it must test.
func (j *OuterJoin) findMatches(input int, cols []arrow.Array, i int) error {
	kg, key, ok := j.sides[input].keyAt(i, j.maxPar)
	if !ok {
		return nil
	}
	rows, err := j.sides[1-input].state.Get(kg, key)
	if err != nil {
		return err
	}
	for _, r := range rows {
		// NB: rows belong to the state; they are copied before it is called
		// again.
		off := int32(len(j.arena))
		j.arena = append(j.arena, r.Row...)
		m := match{row: int32(i), off: off, end: int32(len(j.arena)), count: r.Count}
		if j.residual == nil {
			j.found = append(j.found, m)
			continue
		}
		if err := j.cand.appendJoined(input, cols, i, r.Row, int8(types.Insert)); err != nil {
			return err
		}
		j.candOf = append(j.candOf, m)
		if j.cand.len() >= joinBatchRows {
			if err := j.testPairs(); err != nil {
				return err
			}
		}
	}
	return nil
}

// testPairs evaluates the residual on the pending pairs and moves those that
// satisfy it to found.
func (j *OuterJoin) testPairs() error {
	if j.cand == nil || j.cand.len() == 0 {
		return nil
	}
	b := takeBatch(j.cand.schema, j.cand.rb, &j.cand.kinds)
	j.cand.rb.Reserve(joinBatchRows)
	var err error
	j.sel, err = j.residual.Select(b, j.sel)
	b.Release()
	if err != nil {
		return err
	}
	for _, s := range j.sel {
		j.found = append(j.found, j.candOf[s])
	}
	j.candOf = j.candOf[:0]
	return nil
}

// apply updates the state with input rows [lo, hi), whose matches are in
// found, and emits their changes.
func (j *OuterJoin) apply(input int, cols []arrow.Array, kinds []int8, lo, hi int, out Collector) error {
	f := 0
	for i := lo; i < hi; i++ {
		g := f
		for g < len(j.found) && int(j.found[g].row) == i {
			g++
		}
		if err := j.applyRow(input, cols, i, kinds[i], j.found[f:g], out); err != nil {
			return err
		}
		f = g
	}
	j.found, j.arena = j.found[:0], j.arena[:0]
	return nil
}

// applyRow updates input's side with row i and emits its changes; ms are
// the rows of the other side it matches.
func (j *OuterJoin) applyRow(input int, cols []arrow.Array, i int, kind int8, ms []match, out Collector) error {
	own := j.sides[input]
	ownOuter, otherOuter := j.outer[input], j.outer[1-input]
	accumulate := types.RowKind(kind).IsAccumulate()
	kg, key, ok := own.keyAt(i, j.maxPar)
	if !ok {
		if ownOuter {
			j.out.appendPadded(input, cols, i, paddedKind(accumulate))
		}
		return j.maybeFlush(out)
	}
	row := own.rowAt(cols, i)
	var n int64
	for _, m := range ms {
		n += m.count
	}
	if accumulate {
		return j.addRow(input, cols, i, kg, key, row, n, ms, out)
	}
	have, err := own.state.Count(kg, key, row)
	if err != nil || have == 0 {
		return err
	}
	if err := own.state.Add(kg, key, row, -1); err != nil {
		return err
	}
	if err := j.setMatches(input, kg, key, row, n, have > 1); err != nil {
		return err
	}
	ownEmpty, err := j.emptyWithoutResidual(input, kg, key)
	if err != nil {
		return err
	}
	if n == 0 && ownOuter {
		j.out.appendPadded(input, cols, i, int8(types.Delete))
	}
	joinedKind := kind
	if ownOuter {
		joinedKind = int8(types.Delete)
	}
	for _, m := range ms {
		stored := j.arena[m.off:m.end]
		// The other row's padded row comes back when this was its last
		// match.
		padded, err := j.bumpMatches(1-input, kg, key, stored, -1, 1, ownEmpty)
		if err != nil {
			return err
		}
		for c := int64(0); c < m.count; c++ {
			if err := j.out.appendJoined(input, cols, i, stored, joinedKind); err != nil {
				return err
			}
			if otherOuter && padded {
				if err := j.out.appendStoredPadded(1-input, stored, int8(types.Insert)); err != nil {
					return err
				}
			}
			if err := j.maybeFlush(out); err != nil {
				return err
			}
		}
	}
	return j.maybeFlush(out)
}

// addRow is applyRow for an accumulating row (+I or +U).
func (j *OuterJoin) addRow(input int, cols []arrow.Array, i, kg int, key, row []byte, n int64, ms []match, out Collector) error {
	own := j.sides[input]
	ownOuter, otherOuter := j.outer[input], j.outer[1-input]
	ownEmpty, err := j.emptyWithoutResidual(input, kg, key)
	if err != nil {
		return err
	}
	for _, m := range ms {
		stored := j.arena[m.off:m.end]
		// The other row's padded row goes when this is its first match.
		padded, err := j.bumpMatches(1-input, kg, key, stored, 1, 0, ownEmpty)
		if err != nil {
			return err
		}
		for c := int64(0); c < m.count; c++ {
			if otherOuter && padded {
				if err := j.out.appendStoredPadded(1-input, stored, int8(types.Delete)); err != nil {
					return err
				}
			}
			if err := j.out.appendJoined(input, cols, i, stored, int8(types.Insert)); err != nil {
				return err
			}
			if err := j.maybeFlush(out); err != nil {
				return err
			}
		}
	}
	if n == 0 && ownOuter {
		j.out.appendPadded(input, cols, i, int8(types.Insert))
	}
	// NB: key and row are own's buffers, still valid: nothing above encoded
	// another row of this side.
	if err := own.state.Add(kg, key, row, 1); err != nil {
		return err
	}
	if err := j.setMatches(input, kg, key, row, n, true); err != nil {
		return err
	}
	return j.maybeFlush(out)
}

// emptyWithoutResidual reports, for a join without a residual whose other
// side is outer, whether input's side holds no row under key (then the
// other side's rows under key are padded). It looks at one entry's length,
// not at its rows.
func (j *OuterJoin) emptyWithoutResidual(input, kg int, key []byte) (bool, error) {
	if !j.outer[1-input] || j.residual != nil {
		return false, nil
	}
	rows, err := j.sides[input].state.Get(kg, key)
	return len(rows) == 0, err
}

// bumpMatches adds delta to the number of matches of row `stored` of side s
// and reports whether it was `was` before (the row's padded row changes).
// Without a residual there are no counts: it returns noResidual.
func (j *OuterJoin) bumpMatches(s, kg int, key, stored []byte, delta, was int64, noResidual bool) (bool, error) {
	ms := j.matches[s]
	if ms == nil {
		return noResidual, nil
	}
	c, err := ms.Count(kg, key, stored)
	if err != nil {
		return false, err
	}
	return c == was, ms.Add(kg, key, stored, delta)
}

// setMatches records that row, of input's side, matches n rows of the other
// side (nothing without a residual or when the side is inner). held tells
// the row is still in the state: its count is then written even when
// unchanged, so that it lives as long as the row under a TTL.
func (j *OuterJoin) setMatches(input, kg int, key, row []byte, n int64, held bool) error {
	ms := j.matches[input]
	if ms == nil {
		return nil
	}
	cur, err := ms.Count(kg, key, row)
	if err != nil {
		return err
	}
	if !held {
		n = 0
	}
	if cur == n && n > 0 {
		// Refresh the count's write time.
		if err := ms.Add(kg, key, row, 1); err != nil {
			return err
		}
		return ms.Add(kg, key, row, -1)
	}
	return ms.Add(kg, key, row, n-cur)
}

// paddedKind is the kind of a NULL-padded row: it is inserted for an
// accumulating input row and deleted for a retracting one.
func paddedKind(accumulate bool) int8 {
	if accumulate {
		return int8(types.Insert)
	}
	return int8(types.Delete)
}

func (j *OuterJoin) maybeFlush(out Collector) error {
	if j.out.len() >= joinBatchRows {
		return j.out.flush(out)
	}
	return nil
}

// EndInput does nothing: the join emits as rows arrive.
func (j *OuterJoin) EndInput(int, Collector) error { return nil }

// Close closes the state. It is safe after a failed Open.
func (j *OuterJoin) Close() error {
	for _, o := range []*joinOutput{j.out, j.cand} {
		if o != nil {
			o.release()
		}
	}
	j.out, j.cand = nil, nil
	j.be = state.Namespace{}
	return nil
}

// UsesKeyedState reports that the operator keeps keyed state.
func (*OuterJoin) UsesKeyedState() bool { return true }
