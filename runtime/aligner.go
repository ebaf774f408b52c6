package runtime

import "fmt"

// BarrierAligner decides, for a subtask with several input channels, when
// a checkpoint's barrier has arrived on all of them. It is a pure state
// machine: the run loop feeds it barriers and channel ends, and performs
// the actions it returns (block a channel, snapshot, unblock, abort).
//
// In exactly-once mode a channel whose barrier arrived is blocked, so no
// batch after the barrier is processed before the snapshot (aligned
// checkpoints, as in Flink). In at-least-once mode nothing is blocked and
// the snapshot is taken when the last barrier arrives. An ended channel
// sends no more barriers and counts as aligned. A barrier of a newer
// checkpoint while an older one aligns aborts the older (an upstream
// subtask never sent its barrier: it declined or was not triggered).
type BarrierAligner struct {
	exactlyOnce bool
	ended       []bool
	seen        []bool
	// current is the checkpoint being aligned (0: none); last is the
	// highest checkpoint snapshotted or aborted here.
	current, last int64
}

// AlignKind says what an AlignAction asks for.
type AlignKind uint8

const (
	// AlignBlock holds back channel Channel.
	AlignBlock AlignKind = iota + 1
	// AlignSnapshot takes checkpoint ID's snapshot and forwards its
	// barrier.
	AlignSnapshot
	// AlignUnblockAll lets every channel flow again.
	AlignUnblockAll
	// AlignAbort gives checkpoint ID up (the subtask declines it).
	AlignAbort
)

// AlignAction is one step the run loop performs, in order.
type AlignAction struct {
	Kind    AlignKind
	Channel int
	ID      int64
}

func (a AlignAction) String() string {
	switch a.Kind {
	case AlignBlock:
		return fmt.Sprintf("block %d", a.Channel)
	case AlignSnapshot:
		return fmt.Sprintf("snapshot %d", a.ID)
	case AlignUnblockAll:
		return "unblock-all"
	case AlignAbort:
		return fmt.Sprintf("abort %d", a.ID)
	}
	return fmt.Sprintf("AlignKind(%d)", a.Kind)
}

// NewBarrierAligner aligns n channels.
func NewBarrierAligner(n int, exactlyOnce bool) *BarrierAligner {
	return &BarrierAligner{exactlyOnce: exactlyOnce, ended: make([]bool, n), seen: make([]bool, n)}
}

// Aligning returns the checkpoint being aligned, 0 for none.
func (a *BarrierAligner) Aligning() int64 { return a.current }

// Barrier records checkpoint id's barrier on channel ch.
func (a *BarrierAligner) Barrier(ch int, id int64) []AlignAction {
	if id <= a.last || (a.current != 0 && id < a.current) {
		return nil // stale: its checkpoint was taken or given up here
	}
	var acts []AlignAction
	if a.current != 0 && id > a.current {
		acts = append(acts, a.abort()...)
	}
	if a.current == 0 {
		a.current = id
		clear(a.seen)
	}
	if a.seen[ch] {
		return acts // a second barrier on one channel: ignore
	}
	a.seen[ch] = true
	if a.exactlyOnce {
		acts = append(acts, AlignAction{Kind: AlignBlock, Channel: ch})
	}
	return append(acts, a.complete()...)
}

// ChannelEnded records that channel ch ended.
func (a *BarrierAligner) ChannelEnded(ch int) []AlignAction {
	a.ended[ch] = true
	if a.current == 0 {
		return nil
	}
	return a.complete()
}

// Abort gives up checkpoint id if it is being aligned (the job manager
// aborted it), unblocking the channels.
func (a *BarrierAligner) Abort(id int64) []AlignAction {
	if a.current == 0 || a.current != id {
		if id > a.last && a.current == 0 {
			a.last = id
		}
		return nil
	}
	return a.abort()
}

func (a *BarrierAligner) abort() []AlignAction {
	id := a.current
	a.last, a.current = id, 0
	acts := []AlignAction{{Kind: AlignAbort, ID: id}}
	if a.exactlyOnce {
		acts = append(acts, AlignAction{Kind: AlignUnblockAll})
	}
	return acts
}

// complete snapshots the current checkpoint once every open channel
// delivered its barrier.
func (a *BarrierAligner) complete() []AlignAction {
	for i := range a.seen {
		if !a.seen[i] && !a.ended[i] {
			return nil
		}
	}
	id := a.current
	a.last, a.current = id, 0
	acts := []AlignAction{{Kind: AlignSnapshot, ID: id}}
	if a.exactlyOnce {
		acts = append(acts, AlignAction{Kind: AlignUnblockAll})
	}
	return acts
}
