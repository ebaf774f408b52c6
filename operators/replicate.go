package operators

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

func init() {
	RegisterOperator(jobgraph.KindReplicate, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.ReplicateSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewReplicate(*s)
	})
}

// replicateBatchRows bounds the rows of one output batch: a row whose count
// is in the millions leaves in many batches rather than one huge one.
const replicateBatchRows = 4096

// Replicate emits each input row as many times as its count column says,
// with the row's own kind, and drops the count column: Flink's
// $REPLICATE_ROWS$ table function under INTERSECT ALL and EXCEPT ALL. It is
// stateless, so it works on any changelog: an aggregate's -U (row, 3) then
// +U (row, 2) becomes three -U copies and two +U copies, which nets one
// copy fewer downstream. EndInput has nothing to flush.
type Replicate struct {
	spec   jobgraph.ReplicateSpec
	schema *arrow.Schema
	keep   []int
	sel    []int32
}

var _ Operator = (*Replicate)(nil)

// NewReplicate checks spec and returns an unopened Replicate.
func NewReplicate(spec jobgraph.ReplicateSpec) (*Replicate, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("operators: replicate: %w", err)
	}
	r := &Replicate{spec: spec}
	var out types.Schema
	for i, f := range spec.Schema {
		if i != spec.Count {
			r.keep = append(r.keep, i)
			out = append(out, f)
		}
	}
	r.schema = out.ArrowSchema()
	return r, nil
}

// Open does nothing: Replicate holds no state.
func (r *Replicate) Open(*Context) error { return nil }

// Process emits the copies of b's rows, in b's order, in batches of at most
// replicateBatchRows rows. b is borrowed.
func (r *Replicate) Process(_ int, b types.Batch, out Collector) error {
	counts, ok := b.Column(r.spec.Count).(*array.Int64)
	if !ok {
		return fmt.Errorf("operators: replicate count column is %s, not int64", b.Column(r.spec.Count).DataType())
	}
	r.sel = r.sel[:0]
	for i := 0; i < b.NumRows(); i++ {
		if counts.IsNull(i) {
			continue
		}
		for n := counts.Value(i); n > 0; n-- {
			r.sel = append(r.sel, int32(i))
			if len(r.sel) == replicateBatchRows {
				if err := r.emit(b, out); err != nil {
					return err
				}
				r.sel = r.sel[:0]
			}
		}
	}
	if len(r.sel) == 0 {
		return nil
	}
	return r.emit(b, out)
}

// emit sends b's rows r.sel, without the count column.
func (r *Replicate) emit(b types.Batch, out Collector) error {
	cols := make([]arrow.Array, len(r.keep))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, c := range r.keep {
		col, err := expr.Take(b.Column(c), r.spec.Schema[c].Type, r.sel)
		if err != nil {
			return err
		}
		cols[i] = col
	}
	kinds := b.Kinds()
	k := make([]int8, len(r.sel))
	for i, j := range r.sel {
		k[i] = kinds[j]
	}
	ob := types.NewBatch(r.schema, cols, k)
	defer ob.Release()
	return out.Emit(ob)
}

// EndInput does nothing: Replicate holds no rows.
func (r *Replicate) EndInput(int, Collector) error { return nil }

// Close releases nothing; it exists for the Operator contract.
func (r *Replicate) Close() error { return nil }
