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
	RegisterOperator(jobgraph.KindJoinInner, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.JoinSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewInnerJoin(*s)
	})
}

// joinBatchRows is the most rows a join puts in one output batch.
const joinBatchRows = 4096

// InnerJoin is the regular streaming INNER JOIN of two changelogs on
// equality keys, as Flink runs it: each input row updates its own side's
// state (+I/+U add the row, -U/-D retract it), then probes the other side's
// state under the same key and emits one joined row (left columns, then
// right columns) per matching row occurrence, with the input row's kind. A
// row with a NULL key column never matches and is not stored. Output is
// emitted during Process; EndInput has nothing to flush.
type InnerJoin struct {
	spec   jobgraph.JoinSpec
	sides  [2]*joinSide
	out    *joinOutput
	be     state.Namespace
	maxPar int
}

var _ StatefulOperator = (*InnerJoin)(nil)

// NewInnerJoin checks spec and returns an unopened join.
func NewInnerJoin(spec jobgraph.JoinSpec) (*InnerJoin, error) {
	if err := checkJoinSpec(&spec); err != nil {
		return nil, err
	}
	return &InnerJoin{spec: spec}, nil
}

// checkJoinSpec validates the key columns and fills in a missing output
// schema with the left columns followed by the right columns.
func checkJoinSpec(spec *jobgraph.JoinSpec) error {
	if len(spec.LeftKeys) != len(spec.RightKeys) {
		return fmt.Errorf("operators: join has %d left keys and %d right keys", len(spec.LeftKeys), len(spec.RightKeys))
	}
	for i := range spec.LeftKeys {
		l, r := spec.LeftKeys[i], spec.RightKeys[i]
		if l < 0 || l >= len(spec.LeftSchema) || r < 0 || r >= len(spec.RightSchema) {
			return fmt.Errorf("operators: join key %d (%d = %d) is out of range", i, l, r)
		}
		lt, rt := spec.LeftSchema[l].Type.ArrowType(), spec.RightSchema[r].Type.ArrowType()
		if !arrow.TypeEqual(lt, rt) {
			return fmt.Errorf("operators: join key %d compares %v with %v; the planner must cast keys to one type",
				i, spec.LeftSchema[l].Type, spec.RightSchema[r].Type)
		}
	}
	all := append(append(types.Schema{}, spec.LeftSchema...), spec.RightSchema...)
	if spec.OutputSchema == nil {
		spec.OutputSchema = all
	}
	if len(spec.OutputSchema) != len(all) {
		return fmt.Errorf("operators: join output has %d columns, inputs %d", len(spec.OutputSchema), len(all))
	}
	for i, f := range spec.OutputSchema {
		if !arrow.TypeEqual(f.Type.ArrowType(), all[i].Type.ArrowType()) {
			return fmt.Errorf("operators: join output column %q is %v, input column is %v", f.Name, f.Type, all[i].Type)
		}
	}
	return nil
}

// Open opens the join's state at ctx.StateDir and compiles the residual.
func (j *InnerJoin) Open(ctx *Context) error {
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
	var residual *expr.Filter
	if j.spec.Residual != nil {
		var err error
		if residual, err = expr.CompileFilter(j.spec.Residual, ctx.Env()); err != nil {
			return fmt.Errorf("operators: join condition: %w", err)
		}
	}
	j.out = newJoinOutput(j.spec.OutputSchema, len(j.spec.LeftSchema), residual)
	return nil
}

// Process updates input's side with b and emits b's matches on the other
// side. It borrows b.
func (j *InnerJoin) Process(input int, b types.Batch, out Collector) error {
	if input != 0 && input != 1 {
		return fmt.Errorf("operators: join has no input %d", input)
	}
	n := b.NumRows()
	if n == 0 {
		return nil
	}
	own, other := j.sides[input], j.sides[1-input]
	cols := b.Rec.Columns()[:b.NumCols()]
	own.bind(cols, n)
	kinds := b.Kinds()
	for i := 0; i < n; i++ {
		kg, key, ok := own.keyAt(i, j.maxPar)
		if !ok {
			continue
		}
		kind := kinds[i]
		delta := int64(1)
		if types.RowKind(kind).IsRetract() {
			delta = -1
		}
		if err := own.state.Add(kg, key, own.rowAt(cols, i), delta); err != nil {
			return err
		}
		matches, err := other.state.Get(kg, key)
		if err != nil {
			return err
		}
		for _, m := range matches {
			for c := int64(0); c < m.Count; c++ {
				if err := j.out.appendJoined(input, cols, i, m.Row, kind); err != nil {
					return err
				}
				if j.out.len() >= joinBatchRows {
					if err := j.out.flush(out); err != nil {
						return err
					}
				}
			}
		}
	}
	return j.out.flush(out)
}

// EndInput does nothing: an inner join emits as rows arrive.
func (j *InnerJoin) EndInput(input int, out Collector) error { return nil }

// Close flushes the state to Pebble and closes it. It is safe after a failed
// Open.
func (j *InnerJoin) Close() error {
	if j.out != nil {
		j.out.release()
		j.out = nil
	}
	j.be = state.Namespace{}
	return nil
}

// joinSide is one input of a regular join: its layout, its key columns and
// its multiset state of rows per key. Outer joins reuse it.
type joinSide struct {
	schema types.Schema
	keys   []int
	keyEnc *types.RowEncoder
	rowEnc *types.RowEncoder
	state  *state.MultisetState

	keyCols []arrow.Array
	hashes  []uint64
	keyBuf  []byte
	rowBuf  []byte
}

func newJoinSide(s types.Schema, keys []int, st *state.MultisetState) *joinSide {
	ks := make(types.Schema, len(keys))
	for i, k := range keys {
		ks[i] = s[k]
	}
	return &joinSide{schema: s, keys: keys, keyEnc: types.NewRowEncoder(ks), rowEnc: types.NewRowEncoder(s),
		state: st, keyCols: make([]arrow.Array, len(keys))}
}

// bind points the side at the columns of a batch of n rows and hashes its
// keys.
func (s *joinSide) bind(cols []arrow.Array, n int) {
	for i, k := range s.keys {
		s.keyCols[i] = cols[k]
	}
	if cap(s.hashes) < n {
		s.hashes = make([]uint64, n)
	}
	s.hashes = s.hashes[:n]
	types.HashColumns(s.keyCols, s.hashes)
}

// keyAt returns the key group and encoded key of row i of the bound batch;
// ok is false when a key column is NULL. The key is valid until the next
// call.
func (s *joinSide) keyAt(i, maxPar int) (kg int, key []byte, ok bool) {
	if types.AnyNull(s.keyCols, i) {
		return 0, nil, false
	}
	s.keyBuf = s.keyEnc.EncodeKey(s.keyBuf[:0], s.keyCols, i)
	return types.KeyGroupForHash(s.hashes[i], maxPar), s.keyBuf, true
}

// rowAt encodes row i of cols; the bytes are valid until the next call.
func (s *joinSide) rowAt(cols []arrow.Array, i int) []byte {
	s.rowBuf = s.rowEnc.AppendRow(s.rowBuf[:0], cols, i)
	return s.rowBuf
}

// joinOutput builds the joined rows of a regular join into Arrow columns and
// emits them in batches, keeping only rows that pass the residual condition.
type joinOutput struct {
	schema   *arrow.Schema
	rb       *types.RowBuilder
	nLeft    int
	nRight   int
	kinds    []int8
	residual *expr.Filter
	sel      []int32
}

func newJoinOutput(s types.Schema, nLeft int, residual *expr.Filter) *joinOutput {
	o := &joinOutput{schema: s.ArrowSchema(), rb: types.NewRowBuilder(nil, s), nLeft: nLeft,
		nRight: len(s) - nLeft, residual: residual}
	o.rb.Reserve(joinBatchRows)
	return o
}

func (o *joinOutput) len() int { return o.rb.Len() }

// appendJoined appends the row made of row i of cols (from input `input`)
// and the encoded row `stored` of the other side.
func (o *joinOutput) appendJoined(input int, cols []arrow.Array, i int, stored []byte, kind int8) error {
	var err error
	if input == 0 {
		o.rb.AppendColumns(0, cols, i)
		err = o.rb.Decoder(o.nLeft, o.nRight).Append(stored)
	} else {
		err = o.rb.Decoder(0, o.nLeft).Append(stored)
		o.rb.AppendColumns(o.nLeft, cols, i)
	}
	if err != nil {
		return fmt.Errorf("operators: join state holds a bad row: %w", err)
	}
	o.rb.EndRow()
	o.kinds = append(o.kinds, kind)
	return nil
}

// appendPadded appends row i of cols from input `input` with NULLs for the
// other side's columns (for outer joins).
func (o *joinOutput) appendPadded(input int, cols []arrow.Array, i int, kind int8) {
	if input == 0 {
		o.rb.AppendColumns(0, cols, i)
		o.rb.AppendNulls(o.nLeft, o.nRight)
	} else {
		o.rb.AppendNulls(0, o.nLeft)
		o.rb.AppendColumns(o.nLeft, cols, i)
	}
	o.rb.EndRow()
	o.kinds = append(o.kinds, kind)
}

// appendStoredPadded appends the encoded row `stored` of input `input` with
// NULLs for the other side's columns.
func (o *joinOutput) appendStoredPadded(input int, stored []byte, kind int8) error {
	var err error
	if input == 0 {
		err = o.rb.Decoder(0, o.nLeft).Append(stored)
		o.rb.AppendNulls(o.nLeft, o.nRight)
	} else {
		o.rb.AppendNulls(0, o.nLeft)
		err = o.rb.Decoder(o.nLeft, o.nRight).Append(stored)
	}
	if err != nil {
		return fmt.Errorf("operators: join state holds a bad row: %w", err)
	}
	o.rb.EndRow()
	o.kinds = append(o.kinds, kind)
	return nil
}

// flush emits the rows built so far, if any, as one batch.
func (o *joinOutput) flush(out Collector) error {
	if o.rb.Len() == 0 {
		return nil
	}
	b := takeBatch(o.schema, o.rb, &o.kinds)
	o.rb.Reserve(joinBatchRows)
	if o.residual != nil {
		var err error
		if b, err = o.filter(b); err != nil {
			return err
		}
		if b.NumRows() == 0 {
			b.Release()
			return nil
		}
	}
	err := out.Emit(b)
	b.Release()
	return err
}

// filter keeps the rows of b that satisfy the residual condition. It takes
// b's reference and returns one it owns.
func (o *joinOutput) filter(b types.Batch) (types.Batch, error) {
	var err error
	o.sel, err = o.residual.Select(b, o.sel)
	if err != nil {
		b.Release()
		return types.Batch{}, err
	}
	if len(o.sel) == b.NumRows() {
		return b, nil
	}
	cols := b.Rec.Columns()[:b.NumCols()]
	kinds := b.Kinds()
	for _, i := range o.sel {
		o.rb.AppendColumns(0, cols, int(i))
		o.rb.EndRow()
		o.kinds = append(o.kinds, kinds[i])
	}
	nb := takeBatch(o.schema, o.rb, &o.kinds)
	b.Release()
	return nb, nil
}

func (o *joinOutput) release() { o.rb.Release() }

// StateStats reports the join state's cache and spill counters; valid
// between Open and Close.
func (j *InnerJoin) StateStats() state.Stats { return j.be.Backend().Stats() }

// UsesKeyedState reports that the operator keeps keyed state.
func (*InnerJoin) UsesKeyedState() bool { return true }
