package shuffle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/braidflow/braid/types"
)

// ErrInboxClosed is returned to senders and to Next once an Inbox is closed,
// for instance because its job was cancelled.
var ErrInboxClosed = errors.New("shuffle: inbox closed")

// DefaultChannelCapacity is the number of events an Inbox buffers per
// channel unless told otherwise.
const DefaultChannelCapacity = 4

// ChannelSpec names one input channel of an Inbox: the upstream subtask that
// feeds it and the logical input (0, or 0/1 for a join) it belongs to.
type ChannelSpec struct {
	Input         int
	SourceVertex  int
	SourceSubtask int
}

// Inbox merges the input channels of one consuming subtask. Each channel has
// exactly one sender (a local Outbox or a remote Exchange stream) and a
// bounded queue: a sender blocks while its queue is full, which is how
// backpressure reaches upstream. Next returns events in arrival order; the
// order within a channel is the order they were sent.
//
// Next is called from one goroutine. Sends may come from any goroutines,
// one per channel.
type Inbox struct {
	numInputs int
	chans     []*inboxChannel
	byKey     map[ChannelSpec]*inboxChannel
	// ready holds the index of a channel once per event queued on it. Its
	// capacity is the sum of the channel capacities, so a send to it never
	// blocks: every index in it has an event in that channel's queue.
	ready chan int

	done      chan struct{}
	closeOnce sync.Once
	// failure, set before done closes, is why a channel closed the inbox
	// (inboxChannel.fail); nil when Close did.
	failure error
	// wake carries Wake's signal to Next.
	wake chan struct{}

	// Consumer state, owned by the goroutine calling Next.
	open    []int // per input: channels whose data has not ended
	pending []int // inputs whose end is yet to be reported
	live    int   // channels not yet closed
	stopped bool  // a channel closed with EventStop before its data ended
	// blocked marks channels held back by Block (barrier alignment);
	// deferred holds, in arrival order, the ready indices taken for
	// blocked channels, whose events wait in their queues.
	blocked  []bool
	deferred []int
	// channelEnds makes Next return each channel's end (ReportChannelEnds).
	channelEnds bool
}

type inboxChannel struct {
	in   *Inbox
	idx  int
	spec ChannelSpec
	q    chan Event
	// Consumer side: the channel's data ended; the channel closed.
	dataEnded bool
	ended     bool

	mu       sync.Mutex
	attached bool
}

// NewInbox returns an inbox with numInputs logical inputs fed by channels.
// capacity is the number of events buffered per channel (at least 1;
// DefaultChannelCapacity when 0). An input with no channels ends at once.
func NewInbox(numInputs int, channels []ChannelSpec, capacity int) (*Inbox, error) {
	if capacity <= 0 {
		capacity = DefaultChannelCapacity
	}
	in := &Inbox{
		numInputs: numInputs,
		byKey:     make(map[ChannelSpec]*inboxChannel, len(channels)),
		ready:     make(chan int, capacity*len(channels)),
		done:      make(chan struct{}),
		wake:      make(chan struct{}, 1),
		open:      make([]int, numInputs),
		live:      len(channels),
	}
	for i, c := range channels {
		if c.Input < 0 || c.Input >= numInputs {
			return nil, fmt.Errorf("shuffle: channel %+v: input out of range [0, %d)", c, numInputs)
		}
		if _, dup := in.byKey[c]; dup {
			return nil, fmt.Errorf("shuffle: duplicate channel %+v", c)
		}
		ch := &inboxChannel{in: in, idx: i, spec: c, q: make(chan Event, capacity)}
		in.chans = append(in.chans, ch)
		in.byKey[c] = ch
		in.open[c.Input]++
	}
	in.blocked = make([]bool, len(in.chans))
	for i, n := range in.open {
		if n == 0 {
			in.pending = append(in.pending, i)
		}
	}
	return in, nil
}

// NumInputs returns the number of logical inputs.
func (in *Inbox) NumInputs() int { return in.numInputs }

// Channels returns the channel specs, in channel index order.
func (in *Inbox) Channels() []ChannelSpec {
	out := make([]ChannelSpec, len(in.chans))
	for i, c := range in.chans {
		out[i] = c.spec
	}
	return out
}

// Next blocks until an event arrives and returns it with its logical input.
// Batches, watermarks and barriers are returned as they arrive; a channel's
// end of data (EventEndOfData, or EventEndOfInput without it) is not
// returned itself: once the data of every channel of an input has ended,
// Next returns one EventEndOfInput for that input. After every channel has
// closed (and every ended input was reported) Next returns io.EOF; if a
// channel closed with EventStop, Stopped is then true and the inputs it
// belongs to never end. It returns ctx.Err() when ctx is done and
// ErrInboxClosed after Close. The caller owns returned batches.
// Once a remote sender sent data Braid does not accept, Next returns that
// error, which names the channel.
//
// A channel that sends a batch or a watermark after its end of data, or
// anything after it closed, fails Next.
//
// Events of a blocked channel (see Block) stay queued, so its sender feels
// backpressure, until the channel is unblocked. After Wake, Next returns
// one EventWakeup (Channel -1) as soon as it has no ready event to return.
func (in *Inbox) Next(ctx context.Context) (int, Event, error) {
	for {
		if len(in.pending) > 0 {
			i := in.pending[0]
			in.pending = in.pending[1:]
			return i, Event{Kind: EventEndOfInput}, nil
		}
		if in.live == 0 {
			return 0, Event{}, io.EOF
		}
		if idx, ok := in.takeDeferred(); ok {
			if input, ev, ret, err := in.receive(idx); ret || err != nil {
				return input, ev, err
			}
			continue
		}
		select {
		case idx := <-in.ready:
			if in.blocked[idx] {
				in.deferred = append(in.deferred, idx)
				continue
			}
			if input, ev, ret, err := in.receive(idx); ret || err != nil {
				return input, ev, err
			}
		case <-in.wake:
			return 0, Event{Kind: EventWakeup, Channel: -1}, nil
		case <-ctx.Done():
			return 0, Event{}, ctx.Err()
		case <-in.done:
			if in.failure != nil {
				return 0, Event{}, in.failure
			}
			return 0, Event{}, ErrInboxClosed
		}
	}
}

// takeDeferred removes and returns the first deferred index whose channel
// is no longer blocked.
func (in *Inbox) takeDeferred() (int, bool) {
	for i, idx := range in.deferred {
		if !in.blocked[idx] {
			in.deferred = append(in.deferred[:i], in.deferred[i+1:]...)
			return idx, true
		}
	}
	return 0, false
}

// receive takes the event of channel idx whose ready index was taken. ret
// is false for the events Next does not return itself (a channel's end of
// data, and its close unless channel ends are reported).
func (in *Inbox) receive(idx int) (input int, ev Event, ret bool, err error) {
	ch := in.chans[idx]
	ev = <-ch.q // present: see ready
	ev.Channel = idx
	if ch.ended {
		ev.Batch.Release()
		return 0, Event{}, false, fmt.Errorf("shuffle: %s after end-of-input on channel %+v", ev.Kind, ch.spec)
	}
	switch ev.Kind {
	case EventBatch, EventWatermark, EventIdle:
		if ch.dataEnded {
			ev.Batch.Release()
			return 0, Event{}, false, fmt.Errorf("shuffle: %s after end-of-data on channel %+v", ev.Kind, ch.spec)
		}
	case EventEndOfData:
		if ch.dataEnded {
			return 0, Event{}, false, fmt.Errorf("shuffle: end-of-data twice on channel %+v", ch.spec)
		}
		in.endData(ch)
		return 0, Event{}, false, nil
	case EventEndOfInput, EventStop:
		ch.ended = true
		in.live--
		if !ch.dataEnded {
			if ev.Kind == EventStop {
				in.stopped = true
			} else {
				in.endData(ch)
			}
		}
		if in.channelEnds {
			return ch.spec.Input, Event{Kind: EventChannelEnd, Channel: idx}, true, nil
		}
		return 0, Event{}, false, nil
	}
	return ch.spec.Input, ev, true, nil
}

// endData records the end of ch's data; the last channel of an input to
// end its data ends the input.
func (in *Inbox) endData(ch *inboxChannel) {
	ch.dataEnded = true
	if in.open[ch.spec.Input]--; in.open[ch.spec.Input] == 0 {
		in.pending = append(in.pending, ch.spec.Input)
	}
}

// Stopped reports whether a channel closed with EventStop before its data
// ended: the upstream job stopped at a savepoint. Meaningful once Next
// returned io.EOF.
func (in *Inbox) Stopped() bool { return in.stopped }

// ReportChannelEnds makes Next return an EventChannelEnd when a channel
// ends, before its input's EventEndOfInput (barrier alignment needs to know
// which channels can send no barrier). Call it before the first Next.
func (in *Inbox) ReportChannelEnds() { in.channelEnds = true }

// Block holds back the events of channel ch (an index into Channels) until
// Unblock: Next leaves them queued. Barrier alignment blocks each channel
// whose barrier arrived. Called from Next's goroutine.
func (in *Inbox) Block(ch int) { in.blocked[ch] = true }

// Unblock lets Next return channel ch's events again, the held-back ones
// first.
func (in *Inbox) Unblock(ch int) { in.blocked[ch] = false }

// Wake makes a Next that is waiting (or the next call) return an
// EventWakeup, so its caller can act on something other than input (a
// checkpoint notice). Safe from any goroutine; wakes coalesce.
func (in *Inbox) Wake() {
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

// Close fails pending and future sends with ErrInboxClosed and releases the
// batches still queued. It is idempotent and may be called from any
// goroutine, concurrently with Next (which then returns ErrInboxClosed or,
// at most, events already queued).
func (in *Inbox) Close() {
	in.closeOnce.Do(func() { close(in.done) })
	for {
		select {
		case idx := <-in.ready:
			ev := <-in.chans[idx].q
			ev.Batch.Release()
		default:
			for _, idx := range in.deferred {
				ev := <-in.chans[idx].q
				ev.Batch.Release()
			}
			in.deferred = nil
			return
		}
	}
}

// channel returns the channel for spec and marks it attached: a channel takes
// one sender only.
func (in *Inbox) attach(spec ChannelSpec) (*inboxChannel, error) {
	ch, ok := in.byKey[spec]
	if !ok {
		return nil, fmt.Errorf("shuffle: no input channel %+v", spec)
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.attached {
		return nil, fmt.Errorf("shuffle: input channel %+v already has a sender", spec)
	}
	ch.attached = true
	return ch, nil
}

// fail closes the inbox because the channel's sender broke the protocol,
// so that the channel can neither go on nor end: Next returns err, naming
// the channel and the sender's address, where it would return
// ErrInboxClosed. Senders fail as after Close, which still releases the
// queued batches. Only the first failure or Close counts. Safe from any
// goroutine.
func (ch *inboxChannel) fail(err error, from string) {
	ch.in.closeOnce.Do(func() {
		ch.in.failure = types.WithClass(fmt.Errorf("%w (input channel %+v, from %s)", err, ch.spec, from), types.ClassInternal)
		close(ch.in.done)
	})
}

// put queues ev, blocking while the channel is full. On error the caller
// still owns ev's batch.
func (ch *inboxChannel) put(ctx context.Context, ev Event) error {
	select {
	case ch.q <- ev:
	case <-ctx.Done():
		return ctx.Err()
	case <-ch.in.done:
		return ErrInboxClosed
	}
	ch.in.ready <- ch.idx
	return nil
}
