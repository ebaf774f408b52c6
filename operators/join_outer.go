package operators

import (
	"bytes"
	"fmt"
	"time"

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
// changelogs on equality keys, with Flink's changelog:
//
//   - a row of an outer side with no match emits itself padded with NULLs
//     (+I), and its retraction retracts that (-D);
//   - when the first match of an outer row arrives, its padded row is
//     retracted (-D) before the joined rows are emitted;
//   - when the last match of an outer row is retracted, the joined row is
//     retracted with the input's kind and the padded row comes back (+I).
//
// Joined rows carry the input row's kind, as in the inner join. A row whose
// key has a NULL never matches: an outer one is emitted padded. Without a
// residual condition every row of a key matches every row of the other side
// under that key, so a row's number of matches is the other side's row count
// for the key and need not be stored.
type OuterJoin struct {
	spec   jobgraph.JoinSpec
	outer  [2]bool
	sides  [2]*joinSide
	out    *joinOutput
	be     state.Namespace
	maxPar int
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
	if spec.Residual != nil {
		return nil, fmt.Errorf("operators: outer joins with a non-equality condition are not supported yet")
	}
	return &OuterJoin{spec: spec, outer: [2]bool{spec.OuterLeft, spec.OuterRight}}, nil
}

// Open opens the join's state at ctx.StateDir.
func (j *OuterJoin) Open(ctx *Context) error {
	be, maxPar, err := ctx.Keyed()
	if err != nil {
		return err
	}
	j.maxPar = maxPar
	j.be = be
	j.sides[0] = newJoinSide(j.spec.LeftSchema, j.spec.LeftKeys, be.Multiset("left"))
	j.sides[1] = newJoinSide(j.spec.RightSchema, j.spec.RightKeys, be.Multiset("right"))
	j.sides[0].state.SetTTL(time.Duration(j.spec.LeftTTLMs)*time.Millisecond, ctx.Now)
	j.sides[1].state.SetTTL(time.Duration(j.spec.RightTTLMs)*time.Millisecond, ctx.Now)
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
	own, other := j.sides[input], j.sides[1-input]
	ownOuter, otherOuter := j.outer[input], j.outer[1-input]
	cols := b.Rec.Columns()[:b.NumCols()]
	own.bind(cols, n)
	kinds := b.Kinds()
	for i := 0; i < n; i++ {
		kind := kinds[i]
		accumulate := types.RowKind(kind).IsAccumulate()
		kg, key, ok := own.keyAt(i, j.maxPar)
		if !ok {
			if ownOuter {
				j.out.appendPadded(input, cols, i, paddedKind(accumulate))
			}
			if err := j.maybeFlush(out); err != nil {
				return err
			}
			continue
		}
		row := own.rowAt(cols, i)
		// How many rows this side holds under key, before this one, and
		// whether this row is among them.
		ownRows, err := own.state.Get(kg, key)
		if err != nil {
			return err
		}
		ownBefore, present := int64(0), false
		for _, r := range ownRows {
			ownBefore += r.Count
			if bytes.Equal(r.Row, row) {
				present = true
			}
		}
		ownAfter := ownBefore + 1
		if !accumulate {
			ownAfter = ownBefore
			if present {
				ownAfter--
			}
		}
		matches, err := other.state.Get(kg, key)
		if err != nil {
			return err
		}
		if len(matches) == 0 {
			if ownOuter {
				j.out.appendPadded(input, cols, i, paddedKind(accumulate))
			}
		} else {
			for _, m := range matches {
				for c := int64(0); c < m.Count; c++ {
					// The other side's padded rows go when their first
					// match arrives and come back when their last one goes.
					if otherOuter && accumulate && ownBefore == 0 {
						if err := j.out.appendStoredPadded(1-input, m.Row, int8(types.Delete)); err != nil {
							return err
						}
					}
					if err := j.out.appendJoined(input, cols, i, m.Row, kind); err != nil {
						return err
					}
					if otherOuter && !accumulate && present && ownAfter == 0 {
						if err := j.out.appendStoredPadded(1-input, m.Row, int8(types.Insert)); err != nil {
							return err
						}
					}
				}
			}
		}
		delta := int64(1)
		if !accumulate {
			delta = -1
		}
		if err := own.state.Add(kg, key, row, delta); err != nil {
			return err
		}
		if err := j.maybeFlush(out); err != nil {
			return err
		}
	}
	return j.out.flush(out)
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
	if j.out != nil {
		j.out.release()
		j.out = nil
	}
	j.be = state.Namespace{}
	return nil
}

// UsesKeyedState reports that the operator keeps keyed state.
func (*OuterJoin) UsesKeyedState() bool { return true }
