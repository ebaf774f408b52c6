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
	operators.RegisterSource(jobgraph.KindValues, func(spec jobgraph.Spec) (operators.Source, error) {
		s, err := operators.SpecAs[*jobgraph.ValuesSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewValuesSource(*s)
	})
}

// maxBatchRows is the most rows a connector puts in one batch unless the
// session's braid.exec.source.batch-size sets another size.
const maxBatchRows = 4096

// batchRows is the most rows a source puts in one batch: the session's
// braid.exec.source.batch-size when set, else def.
func batchRows(ctx *operators.Context, def int) int {
	if ctx.SourceBatchRows > 0 {
		return ctx.SourceBatchRows
	}
	return def
}

// ValuesSource emits the constant rows of an INSERT ... VALUES as +I rows,
// in order, in batches of up to maxBatchRows, from subtask 0 only; other
// subtasks end at once. It is bounded: Run returns nil after the last row.
//
// Its position (SnapshotState) is the index of the next row to emit.
// Restored, subtask 0 resumes at that row; at another parallelism it takes
// old subtask 0's position, the only one that emitted.
type ValuesSource struct {
	spec    jobgraph.ValuesSpec
	schema  *arrow.Schema
	subtask int
	env     *expr.Env
	// next is the index of the next row to emit.
	next int
	// batch is the most rows per batch.
	batch int
}

var (
	_ operators.Source       = (*ValuesSource)(nil)
	_ operators.Checkpointer = (*ValuesSource)(nil)
)

// valuesPosition is a ValuesSource's position.
type valuesPosition struct {
	V    int `json:"v"`
	Next int `json:"next"`
}

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

// Open implements operators.Source. It restores the position from
// ctx.Restore.
func (s *ValuesSource) Open(ctx *operators.Context) error {
	s.subtask = ctx.Subtask
	s.env = ctx.Env()
	s.next = 0
	s.batch = batchRows(ctx, maxBatchRows)
	if r := ctx.Restore; r.ID != 0 && s.subtask == 0 && len(r.State) > 0 && len(r.State[0]) > 0 {
		var pos valuesPosition
		if err := decodePosition("values", r.State[0], &pos, &pos.V); err != nil {
			return err
		}
		if pos.Next < 0 || pos.Next > len(s.spec.Rows) {
			return fmt.Errorf("values: checkpointed position %d is outside the %d rows", pos.Next, len(s.spec.Rows))
		}
		s.next = pos.Next
	}
	return nil
}

// Run implements operators.Source.
func (s *ValuesSource) Run(ctx context.Context, out operators.Collector) error {
	if s.subtask != 0 {
		return nil
	}
	for s.next < len(s.spec.Rows) {
		if err := ctx.Err(); err != nil {
			return err
		}
		to := min(s.next+max(s.batch, 1), len(s.spec.Rows))
		b, err := s.build(s.spec.Rows[s.next:to])
		if err != nil {
			return err
		}
		// The position moves first: a checkpoint taken inside Emit counts b.
		s.next = to
		err = out.Emit(b)
		b.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// SnapshotState implements operators.Checkpointer: the next row's index.
func (s *ValuesSource) SnapshotState(int64) ([]byte, error) {
	return encodePosition(valuesPosition{V: positionVersion, Next: s.next})
}

// NotifyCheckpointComplete implements operators.Checkpointer; it does
// nothing.
func (s *ValuesSource) NotifyCheckpointComplete(int64) error { return nil }

// NotifyCheckpointAborted implements operators.Checkpointer; it does
// nothing.
func (s *ValuesSource) NotifyCheckpointAborted(int64) error { return nil }

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
