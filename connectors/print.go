package connectors

import (
	"io"
	"os"
	"strconv"

	"time"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

func init() {
	operators.RegisterOperator(jobgraph.KindPrint, func(spec jobgraph.Spec) (operators.Operator, error) {
		s, err := operators.SpecAs[*jobgraph.PrintSpec](spec)
		if err != nil {
			return nil, err
		}
		w := os.Stdout
		if s.StandardError {
			w = os.Stderr
		}
		return NewPrintSink(*s, w), nil
	})
}

// PrintSink writes each row to a writer (the task manager's standard output,
// or standard error with 'standard-error')
// as Flink's print connector does: "+I[1, foo, NULL]", after a prefix of
// "<identifier>:<subtask+1>> " where the identifier is the 'print-identifier'
// option and the subtask number appears only when the sink has several
// subtasks. Each batch is written with one Write call. It emits nothing.
type PrintSink struct {
	spec   jobgraph.PrintSpec
	w      io.Writer
	prefix string
	loc    *time.Location
	buf    []byte
}

var _ operators.Operator = (*PrintSink)(nil)

// NewPrintSink returns a print sink writing to w.
func NewPrintSink(spec jobgraph.PrintSpec, w io.Writer) *PrintSink {
	return &PrintSink{spec: spec, w: w}
}

// Open implements operators.Operator.
func (s *PrintSink) Open(ctx *operators.Context) error {
	s.prefix = printPrefix(s.spec.Identifier, ctx.Subtask, ctx.Parallelism)
	s.loc = ctx.TimeZone
	if s.loc == nil {
		s.loc = time.UTC
	}
	return nil
}

// printPrefix is Flink's PrintSinkOutputWriter prefix.
func printPrefix(id string, subtask, parallelism int) string {
	p := id
	if parallelism > 1 {
		if p != "" {
			p += ":"
		}
		p += strconv.Itoa(subtask + 1)
	}
	if p != "" {
		p += "> "
	}
	return p
}

// Process implements operators.Operator.
func (s *PrintSink) Process(_ int, b types.Batch, _ operators.Collector) error {
	n := b.NumRows()
	if n == 0 {
		return nil
	}
	s.buf = appendRows(s.buf[:0], s.prefix, s.spec.Schema, b, s.loc)
	_, err := s.w.Write(s.buf)
	return err
}

// appendRows formats every row of b as "<prefix><kind>[v1, v2, ...]\n".
func appendRows(dst []byte, prefix string, schema types.Schema, b types.Batch, loc *time.Location) []byte {
	kinds := b.Kinds()
	ncols := min(len(schema), b.NumCols())
	for r := range b.NumRows() {
		dst = append(dst, prefix...)
		dst = append(dst, types.RowKind(kinds[r]).String()...)
		dst = append(dst, '[')
		for c := 0; c < ncols; c++ {
			if c > 0 {
				dst = append(dst, ", "...)
			}
			v, isNull := types.FormatValue(b.Column(c), r, schema[c].Type, loc)
			if isNull {
				dst = append(dst, "NULL"...)
			} else {
				dst = append(dst, v...)
			}
		}
		dst = append(dst, "]\n"...)
	}
	return dst
}

// EndInput implements operators.Operator.
func (s *PrintSink) EndInput(int, operators.Collector) error { return nil }

// Close implements operators.Operator.
func (s *PrintSink) Close() error { return nil }
