package connectors

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
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

// NewValuesSource checks spec and returns its source. Each value is an
// expression over no columns (a literal, a CAST, a function of constants),
// evaluated when its batch is built.
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
	for c := range s.spec.Schema {
		col, err := s.evalColumn(rows, c)
		if err != nil {
			return types.Batch{}, err
		}
		cols[c] = col
	}
	return types.NewInsertBatch(s.schema, cols, len(rows)), nil
}

// Close implements operators.Source.
func (s *ValuesSource) Close() error { return nil }

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
