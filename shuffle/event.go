package shuffle

import (
	"fmt"

	"github.com/braidflow/braid/types"
)

// EventKind says what an Event carries.
type EventKind uint8

const (
	// EventBatch carries a data batch.
	EventBatch EventKind = iota
	// EventEndOfInput is the last event of a channel; without an earlier
	// EventEndOfData it also ends the channel's data. An Inbox reports it
	// once per logical input, after the data of every channel of that
	// input has ended.
	EventEndOfInput
	// EventWatermark carries an event-time watermark in Value.
	EventWatermark
	// EventBarrier carries a checkpoint barrier whose id is Value.
	EventBarrier
	// EventWakeup is returned by Inbox.Next after Inbox.Wake; it carries
	// nothing and comes from no channel.
	EventWakeup
	// EventChannelEnd reports that channel Channel ended; Inbox.Next returns
	// it only after ReportChannelEnds.
	EventChannelEnd
	// EventEndOfData says the sender's data ended: no batch or watermark
	// follows on the channel, barriers may, and EventEndOfInput closes it.
	// A job that checkpoints keeps its channels open after its data ended
	// so that the final checkpoint's barriers can pass. Inbox.Next does not
	// return it; it counts towards its input's EventEndOfInput.
	EventEndOfData
	// EventStop closes a channel whose data did not end: the job stopped
	// at a savepoint (stop-with-savepoint), so the receiver must not
	// flush. Inbox.Next does not return it; the input it belongs to never
	// reports EventEndOfInput, and Stopped says so.
	EventStop
	// EventIdle carries the sender's idleness in Value: 1 when its source
	// saw no data for table.exec.source.idle-timeout, so the receiver
	// leaves the channel out of its input watermark; 0 when it is active
	// again (sent before its next batch).
	EventIdle
)

func (k EventKind) String() string {
	switch k {
	case EventBatch:
		return "batch"
	case EventEndOfInput:
		return "end-of-input"
	case EventWatermark:
		return "watermark"
	case EventBarrier:
		return "barrier"
	case EventWakeup:
		return "wakeup"
	case EventChannelEnd:
		return "channel-end"
	case EventEndOfData:
		return "end-of-data"
	case EventStop:
		return "stop"
	case EventIdle:
		return "idle"
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event is one item of a channel. The receiver of an EventBatch owns one
// reference to Batch and must Release it.
type Event struct {
	Kind  EventKind
	Batch types.Batch
	// Value is the watermark (milliseconds), the checkpoint id, or the
	// idleness (1 idle, 0 active).
	Value int64
	// Channel is the index, within the receiving Inbox, of the channel the
	// event came from (the order of the ChannelSpecs given to NewInbox).
	// Inbox.Next sets it; senders leave it zero.
	Channel int
}
