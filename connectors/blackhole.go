package connectors

import (
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

func init() {
	operators.RegisterOperator(jobgraph.KindBlackhole, func(spec jobgraph.Spec) (operators.Operator, error) {
		if _, err := operators.SpecAs[*jobgraph.BlackholeSpec](spec); err != nil {
			return nil, err
		}
		return &BlackholeSink{}, nil
	})
}

// BlackholeSink discards its input, as Flink's blackhole connector does. It
// counts what it dropped, which benchmarks read.
type BlackholeSink struct {
	// Rows is the number of rows discarded so far.
	Rows int64
}

var _ operators.Operator = (*BlackholeSink)(nil)

// Open implements operators.Operator.
func (s *BlackholeSink) Open(*operators.Context) error { return nil }

// Process implements operators.Operator.
func (s *BlackholeSink) Process(_ int, b types.Batch, _ operators.Collector) error {
	s.Rows += int64(b.NumRows())
	return nil
}

// EndInput implements operators.Operator.
func (s *BlackholeSink) EndInput(int, operators.Collector) error { return nil }

// Close implements operators.Operator.
func (s *BlackholeSink) Close() error { return nil }
