package connectors

import (
	"errors"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

func init() {
	operators.RegisterOperator(jobgraph.KindCollect, func(spec jobgraph.Spec) (operators.Operator, error) {
		if _, err := operators.SpecAs[*jobgraph.CollectSpec](spec); err != nil {
			return nil, err
		}
		return &CollectSink{}, nil
	})
}

// CollectSink hands every input batch, row kinds included, to the subtask's
// operators.ResultWriter, and closes the writer when its input ends; that
// close is the client's end of this subtask's results. The writer borrows
// each batch. It emits nothing.
//
// In a job that checkpoints, the sink marks each checkpoint's barrier in
// the result stream, and the job manager holds the rows after the last
// completed checkpoint back from the client. A restarted sink resumes
// from a checkpoint with a new stream: it keeps no state of its own, since
// the rows it wrote after that checkpoint were never released.
type CollectSink struct {
	w      operators.ResultWriter
	closed bool
}

var (
	_ operators.Operator     = (*CollectSink)(nil)
	_ operators.Checkpointer = (*CollectSink)(nil)
)

// Open implements operators.Operator. It fails if the context carries no
// ResultWriter.
func (s *CollectSink) Open(ctx *operators.Context) error {
	if ctx.Results == nil {
		return errors.New("collect sink: the task has no result writer")
	}
	s.w = ctx.Results
	return nil
}

// Process implements operators.Operator.
func (s *CollectSink) Process(_ int, b types.Batch, _ operators.Collector) error {
	if b.NumRows() == 0 {
		return nil
	}
	return s.w.Write(b)
}

// EndInput implements operators.Operator: it closes the result writer.
func (s *CollectSink) EndInput(int, operators.Collector) error {
	if s.closed {
		return nil
	}
	s.closed = true
	return s.w.Close()
}

// Close implements operators.Operator. A sink closed before its input ended
// (a cancelled or failed job) leaves the writer open, so the client does not
// mistake a partial result for a complete one; the task reports the failure.
func (s *CollectSink) Close() error { return nil }

// SnapshotState implements operators.Checkpointer: it marks the barrier in
// the result stream. Its operator state is empty.
func (s *CollectSink) SnapshotState(id int64) ([]byte, error) {
	if s.closed {
		return nil, nil
	}
	return nil, s.w.Checkpoint(id)
}

// NotifyCheckpointComplete implements operators.Checkpointer. The job
// manager, not the sink, releases the rows a checkpoint covers.
func (s *CollectSink) NotifyCheckpointComplete(int64) error { return nil }

// NotifyCheckpointAborted implements operators.Checkpointer.
func (s *CollectSink) NotifyCheckpointAborted(int64) error { return nil }
