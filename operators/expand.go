package operators

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

func init() {
	RegisterOperator(jobgraph.KindExpand, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.ExpandSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewExpand(*s)
	})
}

// Expand emits each input batch once per grouping set: copy i with the
// set's columns NULL and a last column $e = i, each row with its own kind.
// It is Flink's Expand under GROUPING SETS, ROLLUP and CUBE. It is
// stateless, so it works on any changelog: a -D of a row becomes a -D in
// every set, which the aggregate after it retracts from each group.
type Expand struct {
	spec   jobgraph.ExpandSpec
	schema *arrow.Schema
	nulls  [][]bool // nulls[i][c]: column c is NULL in copy i
}

var _ Operator = (*Expand)(nil)

// NewExpand checks spec and returns an unopened Expand.
func NewExpand(spec jobgraph.ExpandSpec) (*Expand, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("operators: expand: %w", err)
	}
	e := &Expand{spec: spec, schema: spec.OutputSchema().ArrowSchema()}
	for _, set := range spec.Sets {
		n := make([]bool, len(spec.Schema))
		for _, c := range set {
			n[c] = true
		}
		e.nulls = append(e.nulls, n)
	}
	return e, nil
}

// Open does nothing: Expand holds no state.
func (e *Expand) Open(*Context) error { return nil }

// Process emits one copy of b per grouping set, in the sets' order. b is
// borrowed.
func (e *Expand) Process(_ int, b types.Batch, out Collector) error {
	n := b.NumRows()
	if n == 0 {
		return nil
	}
	kinds := b.Kinds()
	for i, nulls := range e.nulls {
		if err := e.emitCopy(b, n, int64(i), nulls, kinds, out); err != nil {
			return err
		}
	}
	return nil
}

func (e *Expand) emitCopy(b types.Batch, n int, id int64, nulls []bool, kinds []int8, out Collector) error {
	cols := make([]arrow.Array, 0, len(nulls)+1)
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for c, null := range nulls {
		if null {
			cols = append(cols, array.MakeArrayOfNull(memory.DefaultAllocator, e.schema.Field(c).Type, n))
			continue
		}
		col := b.Column(c)
		col.Retain()
		cols = append(cols, col)
	}
	ids := array.NewInt64Builder(memory.DefaultAllocator)
	ids.Reserve(n)
	for range n {
		ids.UnsafeAppend(id)
	}
	cols = append(cols, ids.NewArray())
	ids.Release()
	ob := types.NewBatch(e.schema, cols, kinds)
	defer ob.Release()
	return out.Emit(ob)
}

// EndInput does nothing: Expand holds no rows.
func (e *Expand) EndInput(int, Collector) error { return nil }

// Close releases nothing; it exists for the Operator contract.
func (e *Expand) Close() error { return nil }
