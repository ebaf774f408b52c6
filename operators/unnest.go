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
	RegisterOperator(jobgraph.KindUnnest, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.UnnestSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewUnnest(*s)
	})
}

// unnestBatchRows bounds the rows of one output batch: a row with a long
// array leaves in several batches rather than one huge one.
const unnestBatchRows = 4096

// Unnest joins each input row with the elements of its collection: Flink's
// correlate over UNNEST (CROSS JOIN UNNEST, LEFT JOIN UNNEST ... ON TRUE).
// Every output row keeps its input row's kind, so it works on any
// changelog: a -U of a row retracts exactly the rows its +I made. It is
// stateless; EndInput has nothing to flush.
type Unnest struct {
	spec    jobgraph.UnnestSpec
	coll    *expr.Evaluator
	width   int            // input columns
	elemRow types.DataType // the element columns as one ROW, for encoding
	rows    *types.RowBuilder
	schema  *arrow.Schema
	sel     []int32
	enc     []byte
	vals    []any
}

var _ Operator = (*Unnest)(nil)

// NewUnnest checks spec (its collection must compile and its output match
// the collection's element columns) and returns an unopened Unnest.
func NewUnnest(spec jobgraph.UnnestSpec) (*Unnest, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("operators: unnest: %w", err)
	}
	u := &Unnest{spec: spec, width: len(spec.InputSchema)}
	fields, ok := expr.UnnestFields(spec.Collection.Type, spec.Ordinality, spec.Outer)
	if !ok || len(spec.OutputSchema) != u.width+len(fields) {
		return nil, fmt.Errorf("operators: unnest: %d output columns for %d input and %d element columns",
			len(spec.OutputSchema), u.width, len(fields))
	}
	for i, f := range fields {
		if o := spec.OutputSchema[u.width+i].Type; !arrow.TypeEqual(o.ArrowType(), f.Type.ArrowType()) {
			return nil, fmt.Errorf("operators: unnest: element column %d is %v, the output says %v", i, f.Type, o)
		}
	}
	rt, err := types.NewRow(fields)
	if err != nil {
		return nil, fmt.Errorf("operators: unnest: %w", err)
	}
	u.elemRow = rt
	if err := u.compile(nil); err != nil {
		return nil, err
	}
	return u, nil
}

func (u *Unnest) compile(env *expr.Env) error {
	ev, err := expr.Compile(u.spec.Collection, env)
	if err != nil {
		return fmt.Errorf("operators: unnest collection: %w", err)
	}
	u.coll = ev
	u.schema = u.spec.OutputSchema.ArrowSchema()
	if u.rows != nil {
		u.rows.Release()
	}
	u.rows = types.NewRowBuilder(nil, u.spec.OutputSchema[u.width:])
	return nil
}

// Open recompiles the collection in the session's time zone.
func (u *Unnest) Open(ctx *Context) error { return u.compile(ctx.Env()) }

// Process emits, for each row of b in order, one row per element of its
// collection. b is borrowed.
func (u *Unnest) Process(_ int, b types.Batch, out Collector) error {
	if b.NumRows() == 0 {
		return nil
	}
	col, err := u.coll.Eval(b)
	if err != nil {
		return err
	}
	defer col.Release()
	cells, ok := col.(*array.Binary)
	if !ok {
		return fmt.Errorf("operators: unnest collection column is %s, not binary", col.DataType())
	}
	t := u.spec.Collection.Type
	u.sel = u.sel[:0]
	for i := 0; i < b.NumRows(); i++ {
		var keys, vals []any
		if cells.IsValid(i) {
			if keys, vals, err = types.DecodeComposite(t, cells.Value(i)); err != nil {
				return fmt.Errorf("operators: unnest: row %d: %w", i, err)
			}
		}
		emitted := 0
		for j := range vals {
			reps := int64(1)
			if t.IsMultiset() {
				reps = vals[j].(int64)
			}
			for r := int64(0); r < reps; r++ {
				if err := u.appendElem(t, keys, vals, j, i); err != nil {
					return err
				}
				emitted++
				if err := u.flushIfFull(b, out); err != nil {
					return err
				}
			}
		}
		if emitted == 0 && u.spec.Outer {
			u.rows.AppendNulls(0, len(u.spec.OutputSchema)-u.width)
			u.rows.EndRow()
			u.sel = append(u.sel, int32(i))
			if err := u.flushIfFull(b, out); err != nil {
				return err
			}
		}
	}
	return u.emit(b, out)
}

// appendElem appends element j of input row i's collection.
func (u *Unnest) appendElem(t types.DataType, keys, vals []any, j, i int) error {
	u.vals = u.vals[:0]
	switch {
	case t.IsMap():
		u.vals = append(u.vals, keys[j], vals[j])
	case t.IsMultiset():
		u.vals = append(u.vals, keys[j])
	case t.Elem().IsRow():
		e := t.Elem()
		if vals[j] == nil {
			for k := 0; k < e.NumFields(); k++ {
				u.vals = append(u.vals, nil)
			}
			break
		}
		_, fs, err := types.DecodeComposite(e, vals[j].([]byte))
		if err != nil {
			return fmt.Errorf("operators: unnest: row %d, element %d: %w", i, j+1, err)
		}
		u.vals = append(u.vals, fs...)
	default:
		u.vals = append(u.vals, vals[j])
	}
	if u.spec.Ordinality {
		u.vals = append(u.vals, int64(j+1))
	}
	u.enc = types.AppendComposite(u.enc[:0], u.elemRow, nil, u.vals)
	if err := u.rows.Decoder(0, len(u.vals)).Append(u.enc); err != nil {
		return err
	}
	u.rows.EndRow()
	u.sel = append(u.sel, int32(i))
	return nil
}

func (u *Unnest) flushIfFull(b types.Batch, out Collector) error {
	if len(u.sel) < unnestBatchRows {
		return nil
	}
	return u.emit(b, out)
}

// emit sends the rows gathered so far: b's rows u.sel with their element
// columns.
func (u *Unnest) emit(b types.Batch, out Collector) error {
	if len(u.sel) == 0 {
		return nil
	}
	cols := make([]arrow.Array, 0, len(u.spec.OutputSchema))
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for c := 0; c < u.width; c++ {
		col, err := expr.Take(b.Column(c), u.spec.InputSchema[c].Type, u.sel)
		if err != nil {
			return err
		}
		cols = append(cols, col)
	}
	cols = append(cols, u.rows.NewArrays()...)
	kinds := b.Kinds()
	k := make([]int8, len(u.sel))
	for i, j := range u.sel {
		k[i] = kinds[j]
	}
	u.sel = u.sel[:0]
	ob := types.NewBatch(u.schema, cols, k)
	defer ob.Release()
	return out.Emit(ob)
}

// EndInput does nothing: Unnest holds no rows.
func (u *Unnest) EndInput(int, Collector) error { return nil }

// Close releases the element builders.
func (u *Unnest) Close() error {
	if u.rows != nil {
		u.rows.Release()
		u.rows = nil
	}
	return nil
}
