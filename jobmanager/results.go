package jobmanager

import (
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	braidv1 "github.com/braidflow/braid/proto/braid/v1"
)

// pushResult takes one chunk of a collect sink's stream; first says no
// chunk with data came before on that stream. Without checkpoints the
// chunk goes straight to the handler; with them it is held until a
// checkpoint covers it (see resultBuffer), and what became ready goes to
// the handler. It returns a gRPC status error for the sink: Aborted for a
// chunk of a superseded attempt, and otherwise an error after which the
// job has ended.
func (j *Job) pushResult(c *braidv1.ResultChunk, first bool) error {
	if j.held == nil {
		if err := j.deliver(c.ArrowIpc, c.End); err != nil {
			return j.consumerFailed(err)
		}
		return nil
	}
	j.heldMu.Lock()
	err := j.held.accept(c.Attempt, c.ArrowIpc, c.CheckpointId, c.End, first)
	j.heldMu.Unlock()
	switch {
	case errors.Is(err, errStaleAttempt):
		return status.Errorf(codes.Aborted, "attempt %d of job %s was superseded", c.Attempt, j.id)
	case err != nil:
		msg := "results of the query: " + err.Error()
		j.finish(StatusFailed, msg)
		return status.Error(codes.FailedPrecondition, msg)
	}
	// NB: releasing here, on the sink's stream, holds the sink back while
	// the client is slow.
	if err := j.releaseResults(); err != nil {
		return j.consumerFailed(err)
	}
	return nil
}

// consumerFailed cancels the job after the result handler failed with err.
func (j *Job) consumerFailed(err error) error {
	j.finish(StatusCanceled, "result consumer failed: "+err.Error())
	return status.Error(codes.Canceled, "results are no longer wanted: "+err.Error())
}

// releaseResults hands the held results that a checkpoint covers to the
// handler.
func (j *Job) releaseResults() error {
	j.resultsMu.Lock()
	defer j.resultsMu.Unlock()
	if j.resultsEnded {
		return nil
	}
	j.heldMu.Lock()
	out := j.held.take(false)
	j.heldMu.Unlock()
	for _, b := range out {
		if err := j.results(b, false); err != nil {
			return err
		}
	}
	return nil
}

// releaseLater releases the ready results on a goroutine of its own, so a
// slow client never holds up the caller (the checkpoint loop, a restart).
func (j *Job) releaseLater() {
	j.jm.wg.Add(1)
	go func() {
		defer j.jm.wg.Done()
		if err := j.releaseResults(); err != nil {
			_ = j.consumerFailed(err)
		}
	}()
}

// checkpointCompleted tells the job that checkpoint id completed: its
// pointer is committed in etcd, so no attempt will replay what came before
// its barrier. The checkpoint run calls it; it does not block.
func (j *Job) checkpointCompleted(id int64) {
	if j.held == nil {
		return
	}
	j.heldMu.Lock()
	ready := j.held.complete(id)
	j.heldMu.Unlock()
	if ready {
		j.releaseLater()
	}
}

// restartResults prepares the held results for attempt, which resumes from
// checkpoint restoreID (0: from the start): what a failed attempt sent after
// that checkpoint is dropped. An error means the client cannot get each
// row exactly once; the job must fail.
func (j *Job) restartResults(attempt int32, restoreID int64) error {
	if j.held == nil {
		return nil
	}
	j.heldMu.Lock()
	err := j.held.restart(attempt, restoreID)
	ready := j.held.ready > 0
	j.heldMu.Unlock()
	if err != nil {
		return err
	}
	if ready {
		j.releaseLater()
	}
	return nil
}
