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

// control takes the source subtask's pending checkpoint triggers and
// delivers pending notices. It runs on the subtask's goroutine between
// batches.
func (r *run) control() error {
	for {
		select {
		case id := <-r.s.triggers:
			if err := r.checkpoint(id); err != nil {
				return err
			}
		default:
			return r.drainNotices()
		}
	}
}

// drainNotices tells every Checkpointer of the chain about the checkpoints
// that completed or were aborted since the last call.
func (r *run) drainNotices() error {
	for {
		var n notice
		select {
		case n = <-r.s.notices:
		default:
			return nil
		}
		if !n.completed && r.aligner != nil {
			if err := r.align(r.aligner.Abort(n.id)); err != nil {
				return err
			}
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
