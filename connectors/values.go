package connectors

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

func init() {
	operators.RegisterSource(jobgraph.KindValues, func(config []byte) (operators.Source, error) {
		var spec jobgraph.ValuesSpec
		if err := jobgraph.DecodeSpec(config, &spec); err != nil {
			return nil, err
		}
		return NewValuesSource(spec)
	})
}

// maxBatchRows is the most rows a connector puts in one batch.
const maxBatchRows = 4096

// ValuesSource emits the constant rows of an INSERT ... VALUES as +I rows,
// in order, in batches of up to maxBatchRows, from subtask 0 only; other
// subtasks end at once. It is bounded: Run returns nil after the last row.
type ValuesSource struct {
	spec    jobgraph.ValuesSpec
	schema  *arrow.Schema
	subtask int
	env     *expr.Env
}

var _ operators.Source = (*ValuesSource)(nil)

// NewValuesSource checks spec and returns its source. Literals are copied
// into the batch directly; any other expression (a CAST, a function of
// constants) is evaluated once per row when the batch is built.
func NewValuesSource(spec jobgraph.ValuesSpec) (*ValuesSource, error) {
	for r, row := range spec.Rows {
		if len(row) != len(spec.Schema) {
			return nil, fmt.Errorf("values: row %d has %d values, schema has %d columns", r+1, len(row), len(spec.Schema))
		}
		for c, e := range row {
			if e == nil {
				return nil, fmt.Errorf("values: row %d, column %s has no expression", r+1, spec.Schema[c].Name)
			}
		}
	}
	return &ValuesSource{spec: spec, schema: spec.Schema.ArrowSchema(), env: &expr.Env{Location: time.UTC, Now: time.Now}}, nil
}

// Open implements operators.Source.
func (s *ValuesSource) Open(ctx *operators.Context) error {
	s.subtask = ctx.Subtask
	env, err := expr.EnvFromConfig(ctx.Config)
	if err != nil {
		return err
	}
	s.env = env
	return nil
}

// Run implements operators.Source.
func (s *ValuesSource) Run(ctx context.Context, out operators.Collector) error {
	if s.subtask != 0 {
		return nil
	}
	for from := 0; from < len(s.spec.Rows); from += maxBatchRows {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := s.build(s.spec.Rows[from:min(from+maxBatchRows, len(s.spec.Rows))])
		if err != nil {
			return err
		}
		err = out.Emit(b)
		b.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *ValuesSource) build(rows [][]*expr.Expr) (types.Batch, error) {
	cols := make([]arrow.Array, len(s.spec.Schema))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for c, f := range s.spec.Schema {
		if !allLiterals(rows, c) {
			col, err := s.evalColumn(rows, c)
			if err != nil {
				return types.Batch{}, err
			}
			cols[c] = col
			continue
		}
		bld := array.NewBuilder(memory.DefaultAllocator, f.Type.ArrowType())
		bld.Reserve(len(rows))
		for r, row := range rows {
			if err := appendLiteral(bld, row[c].Value, f.Type); err != nil {
				bld.Release()
				return types.Batch{}, fmt.Errorf("values: row %d, column %s: %w", r+1, f.Name, err)
			}
		}
		cols[c] = bld.NewArray()
		bld.Release()
	}
	return types.NewInsertBatch(s.schema, cols, len(rows)), nil
}

// Close implements operators.Source.
func (s *ValuesSource) Close() error { return nil }

func allLiterals(rows [][]*expr.Expr, c int) bool {
	for _, row := range rows {
		if row[c].Op != expr.OpLiteral {
			return false
		}
	}
	return true
}

// evalColumn evaluates column c of every row against a one-row batch with
// no columns and concatenates the results.
func (s *ValuesSource) evalColumn(rows [][]*expr.Expr, c int) (arrow.Array, error) {
	f := s.spec.Schema[c]
	one := types.NewInsertBatch(types.Schema{}.ArrowSchema(), nil, 1)
	defer one.Release()
	parts := make([]arrow.Array, 0, len(rows))
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for r, row := range rows {
		ev, err := expr.Compile(row[c], s.env)
		if err != nil {
			return nil, fmt.Errorf("values: row %d, column %s: %w", r+1, f.Name, err)
		}
		a, err := ev.Eval(one)
		if err != nil {
			return nil, fmt.Errorf("values: row %d, column %s: %w", r+1, f.Name, err)
		}
		parts = append(parts, a)
	}
	return array.Concatenate(parts, memory.DefaultAllocator)
}

// appendLiteral appends a literal's value, in the Go form expr.Literal
// documents (or the plain JSON form of a number), to a builder of t's layout.
func appendLiteral(b array.Builder, v any, t types.DataType) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	bad := func() error { return fmt.Errorf("literal %v (%T) does not fit %v", v, v, t) }
	switch b := b.(type) {
	case *array.NullBuilder:
		b.AppendNull()
	case *array.BooleanBuilder:
		x, ok := v.(bool)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Int8Builder:
		x, ok := literalInt(v)
		if !ok || x < math.MinInt8 || x > math.MaxInt8 {
			return bad()
		}
		b.Append(int8(x))
	case *array.Int16Builder:
		x, ok := literalInt(v)
		if !ok || x < math.MinInt16 || x > math.MaxInt16 {
			return bad()
		}
		b.Append(int16(x))
	case *array.Int32Builder:
		x, ok := literalInt(v)
		if !ok || x < math.MinInt32 || x > math.MaxInt32 {
			return bad()
		}
		b.Append(int32(x))
	case *array.Int64Builder:
		x, ok := literalInt(v)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Float32Builder:
		x, ok := literalFloat(v)
		if !ok {
			return bad()
		}
		b.Append(float32(x))
	case *array.Float64Builder:
		x, ok := literalFloat(v)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Decimal128Builder:
		switch x := v.(type) {
		case decimal128.Num:
			b.Append(x)
		case string:
			n, err := decimal128.FromString(x, int32(t.Precision), int32(t.Scale))
			if err != nil {
				return bad()
			}
			b.Append(n)
		default:
			i, ok := literalInt(v)
			if !ok {
				return bad()
			}
			b.Append(decimal128.FromI64(i))
		}
	case *array.StringBuilder:
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.BinaryBuilder:
		switch x := v.(type) {
		case []byte:
			b.Append(x)
		case string:
			b.AppendString(x)
		default:
			return bad()
		}
	case *array.Date32Builder:
		x, ok := literalInt(v)
		if !ok {
			return bad()
		}
		b.Append(arrow.Date32(x))
	case *array.Time32Builder:
		x, ok := literalInt(v)
		if !ok {
			return bad()
		}
		b.Append(arrow.Time32(x))
	case *array.TimestampBuilder:
		x, ok := literalInt(v)
		if !ok {
			return bad()
		}
		b.Append(arrow.Timestamp(x))
	case *array.DurationBuilder:
		x, ok := literalInt(v)
		if !ok {
			return bad()
		}
		b.Append(arrow.Duration(x))
	default:
		return fmt.Errorf("no literal support for %v", t)
	}
	return nil
}

func literalInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int16:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint32:
		return int64(x), true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	case json.Number:
		i, err := x.Int64()
		return i, err == nil
	}
	return 0, false
}

func literalFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	if i, ok := literalInt(v); ok {
		return float64(i), true
	}
	return 0, false
}
