package operators

import (
	"encoding/binary"
	"fmt"
)

// watermarkState is the current watermark of an operator that decides
// lateness by it (a window aggregate drops rows for fired windows, an
// interval join does not store expired rows, a temporal join joins rows at
// or behind it), checkpointed as its operator state.
//
// Flink does not checkpoint watermarks: a restored operator starts at
// MinWatermark until its inputs send one again. Until then it would take
// rows the uninterrupted run dropped as late (a window that fired would get
// a second result, an interval join would store and match a row it had
// padded), and the replayed watermarks can lag the checkpointed one (a
// restarted watermark assigner has forgotten the timestamps it saw). So a
// restored operator resumes at the watermark it had at the checkpoint and,
// as before, ignores watermarks not above it: on the same replayed input it
// accepts, drops and fires exactly what an uninterrupted run does.
//
// NB: when a job resumes at another parallelism the operator takes the
// lowest of the old subtasks' watermarks. Every subtask of a hashed
// exchange sees the same watermarks in the same place relative to the
// barrier, so they are equal unless an idle input was excluded in some
// subtasks and not others; then the lowest is the safe choice (a late row
// is kept, never a timely one dropped).
//
// An operator embeds watermarkState (its wm is the operator's watermark),
// which makes it a Checkpointer, and calls restoreWatermark at Open.
type watermarkState struct {
	wm int64
}

// restoreWatermark sets wm to the watermark the operator had at the checkpoint r
// resumes from, or MinWatermark for a fresh start.
func (s *watermarkState) restoreWatermark(r Restore) error {
	s.wm = MinWatermark
	if r.ID == 0 {
		return nil
	}
	for i, b := range r.State {
		if len(b) == 0 {
			// A subtask that never snapshotted its watermark: stay at the minimum.
			s.wm = MinWatermark
			return nil
		}
		if len(b) != 8 {
			return fmt.Errorf("operators: checkpoint %d holds a bad watermark state (%d bytes) for subtask %d", r.ID, len(b), i)
		}
		wm := int64(binary.BigEndian.Uint64(b))
		if i == 0 || wm < s.wm {
			s.wm = wm
		}
	}
	return nil
}

// SnapshotState returns the current watermark as the operator state.
func (s *watermarkState) SnapshotState(int64) ([]byte, error) {
	return binary.BigEndian.AppendUint64(nil, uint64(s.wm)), nil
}

// NotifyCheckpointComplete does nothing: the operator commits nothing.
func (*watermarkState) NotifyCheckpointComplete(int64) error { return nil }

// NotifyCheckpointAborted does nothing.
func (*watermarkState) NotifyCheckpointAborted(int64) error { return nil }
