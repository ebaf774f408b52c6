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
	// EventEndOfInput is the last event of a channel. An Inbox reports it
	// once per logical input, after every channel of that input has ended.
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
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event is one item of a channel. The receiver of an EventBatch owns one
// reference to Batch and must Release it.
type Event struct {
	Kind  EventKind
	Batch types.Batch
	// Value is the watermark (milliseconds) or the checkpoint id.
	Value int64
	// Channel is the index, within the receiving Inbox, of the channel the
	// event came from (the order of the ChannelSpecs given to NewInbox).
	// Inbox.Next sets it; senders leave it zero.
	Channel int
}
