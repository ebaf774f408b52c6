package operators

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

func init() {
	RegisterOperator(jobgraph.KindCalc, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.CalcSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewCalc(*s)
	})
}

// Calc filters rows, then computes the output columns: Flink's Calc. Each
// output row keeps its input row's kind, so it works on any changelog.
// It is stateless: Process emits at most one batch per input batch (none
// when every row is filtered out) and EndInput has nothing to flush.
type Calc struct {
	spec   jobgraph.CalcSpec
	filter *expr.Filter
	projs  []*expr.Evaluator
	schema *arrow.Schema
	sel    []int32
	// wm is the input watermark, which CURRENT_WATERMARK reads.
	wm int64
}

var (
	_ Operator         = (*Calc)(nil)
	_ WatermarkHandler = (*Calc)(nil)
)

// NewCalc checks spec (its expressions must compile) and returns an
// unopened Calc.
func NewCalc(spec jobgraph.CalcSpec) (*Calc, error) {
	c := &Calc{spec: spec, wm: MinWatermark}
	if len(spec.OutputSchema) != len(spec.Projections) {
		return nil, fmt.Errorf("operators: calc has %d projections but %d output columns", len(spec.Projections), len(spec.OutputSchema))
	}
	if err := c.compile(nil); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Calc) compile(env *expr.Env) error {
	c.filter = nil
	if c.spec.Filter != nil {
		f, err := expr.CompileFilter(c.spec.Filter, env)
		if err != nil {
			return fmt.Errorf("operators: calc filter: %w", err)
		}
		c.filter = f
	}
	c.projs = make([]*expr.Evaluator, len(c.spec.Projections))
	for i, p := range c.spec.Projections {
		ev, err := expr.Compile(p, env)
		if err != nil {
			return fmt.Errorf("operators: calc projection %d: %w", i, err)
		}
		if !arrow.TypeEqual(ev.Type().ArrowType(), c.spec.OutputSchema[i].Type.ArrowType()) {
			return fmt.Errorf("operators: calc projection %d is %v but output column %q is %v",
				i, ev.Type(), c.spec.OutputSchema[i].Name, c.spec.OutputSchema[i].Type)
		}
		c.projs[i] = ev
	}
	c.schema = c.spec.OutputSchema.ArrowSchema()
	return nil
}

// Open recompiles the expressions in the session's time zone
// (ctx.TimeZone), with CURRENT_WATERMARK reading the calc's input
// watermark.
func (c *Calc) Open(ctx *Context) error {
	env := ctx.Env()
	env.Watermark = func() (int64, bool) { return c.wm, c.wm != MinWatermark }
	return c.compile(env)
}

// ProcessWatermark keeps wm for CURRENT_WATERMARK and forwards it.
func (c *Calc) ProcessWatermark(wm int64, out Collector) error {
	c.wm = wm
	return EmitWatermark(out, wm)
}

// Process filters b, computes the projections over the remaining rows and
// emits them with their row kinds. b is borrowed.
func (c *Calc) Process(_ int, b types.Batch, out Collector) error {
	n := b.NumRows()
	if n == 0 {
		return nil
	}
	in := b
	kinds := b.Kinds()
	if c.filter != nil {
		sel, err := c.filter.Select(b, c.sel)
		if err != nil {
			return err
		}
		c.sel = sel
		if len(sel) == 0 {
			return nil
		}
		if len(sel) < n {
			if in, err = c.take(b, sel); err != nil {
				return err
			}
			defer in.Release()
			kinds = in.Kinds()
		}
	}
	cols := make([]arrow.Array, len(c.projs))
	defer func() {
		for _, col := range cols {
			if col != nil {
				col.Release()
			}
		}
	}()
	for i, p := range c.projs {
		col, err := p.Eval(in)
		if err != nil {
			return err
		}
		cols[i] = col
	}
	ob := types.NewBatch(c.schema, cols, kinds)
	defer ob.Release()
	return out.Emit(ob)
}

// take builds the batch of b's rows sel (input schema), kinds included.
func (c *Calc) take(b types.Batch, sel []int32) (types.Batch, error) {
	cols := make([]arrow.Array, b.NumCols())
	defer func() {
		for _, col := range cols {
			if col != nil {
				col.Release()
			}
		}
	}()
	for i := range cols {
		t := c.columnType(i, b)
		col, err := expr.Take(b.Column(i), t, sel)
		if err != nil {
			return types.Batch{}, err
		}
		cols[i] = col
	}
	kinds := b.Kinds()
	k := make([]int8, len(sel))
	for i, j := range sel {
		k[i] = kinds[j]
	}
	return types.NewBatch(b.Rec.Schema(), cols, k), nil
}

// columnType is the SQL type of input column i: from the spec, or from the
// batch's own metadata when the spec has no input schema.
func (c *Calc) columnType(i int, b types.Batch) types.DataType {
	if i < len(c.spec.InputSchema) {
		return c.spec.InputSchema[i].Type
	}
	if s, err := types.SchemaFromArrow(b.Rec.Schema()); err == nil && i < len(s) {
		return s[i].Type
	}
	return types.DataType{Kind: types.KindNull}
}

// EndInput does nothing: Calc holds no rows.
func (c *Calc) EndInput(int, Collector) error { return nil }

// Close releases nothing; it exists for the Operator contract.
func (c *Calc) Close() error { return nil }
