package runtime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"go.uber.org/zap"

	"github.com/braidflow/braid/operators"
)

// errStopped unwinds a source's Run once the stop-with-savepoint it took
// completed: the subtask ends without flushing.
var errStopped = errors.New("runtime: stopped at a savepoint")

// control takes the source subtask's pending checkpoint triggers and
// delivers pending notices. It runs on the subtask's goroutine between
// batches. After a stop trigger it pauses the source until that
// checkpoint's outcome, and returns errStopped once it completed.
func (r *run) control() error {
	for {
		select {
		case t := <-r.s.triggers:
			if err := r.checkpoint(t.id); err != nil {
				return err
			}
			if t.stop {
				if err := r.pause(t.id); err != nil {
					return err
				}
			}
		default:
			return r.drainNotices()
		}
	}
}

// pause holds a source that took stop-with-savepoint id: it emits nothing,
// takes later triggers, and hears notices until id's outcome. It returns
// errStopped when id completed and nil (resume) when it was aborted.
func (r *run) pause(id int64) error {
	for {
		select {
		case t := <-r.s.triggers:
			if err := r.checkpoint(t.id); err != nil {
				return err
			}
		case n := <-r.s.notices:
			if err := r.handleNotice(n); err != nil {
				return err
			}
			if n.id == id {
				if n.completed {
					return errStopped
				}
				return nil
			}
		case <-r.ctx.Done():
			return r.ctx.Err()
		}
	}
}

// awaitFinal waits, once the subtask's data ended or it stopped, until a
// checkpoint that it snapshotted after the last data it processed has
// completed (finalReady): from then on it can finish, since a restore
// from that checkpoint replays nothing into it. A source keeps taking
// triggers meanwhile; a subtask with inputs takes its barriers in consume
// and waits here only once every channel closed, so it returns at once
// when it holds no such snapshot (its upstream closed without a final
// checkpoint, which only a job without checkpoints does).
func (r *run) awaitFinal() error {
	if !r.s.IsSource() && r.lastSnapSeq != r.seq {
		if r.s.octx.Checkpointing {
			r.s.log.Warn("inputs closed without a final checkpoint; finishing without one")
		}
		return nil
	}
	for !r.finalReady() {
		var triggers <-chan trigger
		if r.s.IsSource() {
			triggers = r.s.triggers
		}
		select {
		case t := <-triggers:
			if err := r.checkpoint(t.id); err != nil {
				return err
			}
		case n := <-r.s.notices:
			if err := r.handleNotice(n); err != nil {
				return err
			}
		case <-r.ctx.Done():
			return r.ctx.Err()
		}
	}
	return nil
}

// finalReady reports whether a completed checkpoint holds the subtask as
// it is now: its snapshot was taken after the last data it processed.
func (r *run) finalReady() bool { return r.doneSeq == r.seq }

// drainNotices tells every Checkpointer of the chain about the checkpoints
// that completed or were aborted since the last call.
func (r *run) drainNotices() error {
	for {
		select {
		case n := <-r.s.notices:
			if err := r.handleNotice(n); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// handleNotice tells every Checkpointer of the chain about one outcome.
func (r *run) handleNotice(n notice) error {
	if !n.completed && r.aligner != nil {
		if err := r.align(r.aligner.Abort(n.id)); err != nil {
			return err
		}
	}
	if n.completed {
		r.completed(n.id)
	}
	for _, cp := range r.checkpointers() {
		var err error
		if n.completed {
			err = cp.NotifyCheckpointComplete(n.id)
		} else {
			err = cp.NotifyCheckpointAborted(n.id)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// completed records that checkpoint id completed: the data position its
// snapshot was taken at (and any earlier one's) is now safe.
func (r *run) completed(id int64) {
	for sid, seq := range r.snapSeq {
		if sid <= id {
			r.doneSeq = max(r.doneSeq, seq)
			delete(r.snapSeq, sid)
		}
	}
}

// checkpointers returns the chain's operators (source first) that take
// part in checkpoints, with their uids.
func (r *run) checkpointers() []operators.Checkpointer {
	var out []operators.Checkpointer
	if cp, ok := r.src.(operators.Checkpointer); ok && r.srcOpen {
		out = append(out, cp)
	}
	for _, op := range r.ops[:r.opened] {
		if cp, ok := op.(operators.Checkpointer); ok {
			out = append(out, cp)
		}
	}
	return out
}

// checkpoint takes checkpoint id at this point of the stream: every
// operator's SnapshotState in chain order, then a Pebble checkpoint of the
// keyed state, then the barrier goes out on every edge and the snapshot to
// the handler (which uploads it and acknowledges). A snapshot that fails is
// declined, and the barrier still goes downstream so the rest of the job
// does not wait for it; a backend that cannot be written fails the subtask.
func (r *run) checkpoint(id int64) error {
	h := r.s.task.Checkpoints
	if h == nil {
		return errors.New("runtime: received a checkpoint barrier, but the job takes no checkpoints")
	}
	snap, serr := r.snapshot(id)
	for _, o := range r.outboxes {
		if err := o.SendBarrier(r.ctx, id); err != nil {
			return err
		}
	}
	if serr != nil {
		r.s.log.Warn("checkpoint declined", zap.Int64("checkpoint", id), zap.Error(serr))
		h.Decline(id, serr)
		var fatal *backendError
		if errors.As(serr, &fatal) {
			return serr
		}
		return nil
	}
	if r.snapSeq == nil {
		r.snapSeq = map[int64]int64{}
	}
	r.snapSeq[id] = r.seq
	r.lastSnapSeq = r.seq
	h.Snapshot(snap)
	return nil
}

// backendError marks a failure of the keyed state itself: the subtask
// cannot go on.
type backendError struct{ err error }

func (e *backendError) Error() string { return e.err.Error() }
func (e *backendError) Unwrap() error { return e.err }

func (r *run) snapshot(id int64) (Snapshot, error) {
	snap := Snapshot{ID: id, Operators: map[string][]byte{}}
	i := 0
	if r.src != nil {
		if cp, ok := r.src.(operators.Checkpointer); ok {
			b, err := cp.SnapshotState(id)
			if err != nil {
				return snap, fmt.Errorf("checkpoint %d: source %s: %w", id, r.uids[0], err)
			}
			snap.Operators[r.uids[0]] = b
		}
		i = 1
	}
	for _, op := range r.ops {
		if cp, ok := op.(operators.Checkpointer); ok {
			b, err := cp.SnapshotState(id)
			if err != nil {
				return snap, fmt.Errorf("checkpoint %d: operator %s: %w", id, r.uids[i], err)
			}
			snap.Operators[r.uids[i]] = b
		}
		i++
	}
	if r.be == nil {
		return snap, nil
	}
	dir := filepath.Join(r.s.task.StateDir, "checkpoints", strconv.FormatInt(id, 10))
	if err := os.RemoveAll(dir); err != nil {
		return snap, fmt.Errorf("checkpoint %d: %w", id, err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return snap, fmt.Errorf("checkpoint %d: %w", id, err)
	}
	if err := r.be.Checkpoint(dir); err != nil {
		return snap, &backendError{fmt.Errorf("checkpoint %d: %w", id, err)}
	}
	snap.BackendDir = dir
	return snap, nil
}
