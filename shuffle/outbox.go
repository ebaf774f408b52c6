package shuffle

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/types"
)

// Target says where one subtask of the target vertex runs.
type Target struct {
	// Local is true when the subtask runs on this task manager.
	Local bool
	// Address is the DataService address of the task manager running it,
	// used when Local is false.
	Address string
}

// OutboxSpec describes one outgoing edge of one producing subtask.
type OutboxSpec struct {
	JobID         string
	SourceVertex  int
	SourceSubtask int
	TargetVertex  int
	TargetInput   int
	Partitioning  types.Partitioning
	// KeyColumns are hashed into key groups on HASH edges.
	KeyColumns     []int
	MaxParallelism int
	// Targets has one entry per subtask of the target vertex.
	Targets []Target
	// RemoteRows, when set, counts the rows sent to remote channels.
	RemoteRows *atomic.Int64
	// Remote channel tuning; zero values take defaults.
	CoalesceBytes int           // flush the encode buffer once it holds this much
	Linger        time.Duration // flush a non-empty buffer after this long
	InFlight      int           // encoded messages queued per remote channel
}

// Outbox sends a producing subtask's output over one edge. It partitions
// each batch and hands the parts to the edge's channels: local ones go
// straight into the target's Inbox, remote ones are encoded as Arrow IPC on a
// DataService.Exchange stream. Every channel is bounded, so Send blocks while
// a target is not keeping up.
//
// An Outbox is used from one goroutine: Send any number of times, then
// Close (or Abort on failure); a job that checkpoints sends EndOfData
// between the two, so barriers can still pass after its data ended, and a
// job stopped at a savepoint closes with Stop. Channels are opened on first
// use.
type Outbox struct {
	spec      OutboxSpec
	part      *Partitioner
	targets   []int // target subtasks, indexed by the partitioner's target
	chans     []outChannel
	closed    bool
	dataEnded bool
}

// outChannel is one channel of an Outbox.
type outChannel interface {
	// send borrows b.
	send(ctx context.Context, b types.Batch) error
	// event sends a watermark or barrier after the batches sent so far.
	event(ctx context.Context, ev Event) error
	// close sends last (EventEndOfInput or EventStop) and waits until the
	// target has it queued.
	close(ctx context.Context, last EventKind) error
	// abort tears the channel down without end-of-input.
	abort()
}

// NewOutbox returns the outbox of spec. x resolves local targets and dials
// remote ones.
func NewOutbox(x *Exchange, spec OutboxSpec) (*Outbox, error) {
	n := len(spec.Targets)
	if spec.MaxParallelism == 0 {
		spec.MaxParallelism = types.DefaultMaxParallelism
	}
	part, err := NewPartitioner(spec.Partitioning, n, spec.KeyColumns, spec.MaxParallelism)
	if err != nil {
		return nil, err
	}
	if spec.CoalesceBytes <= 0 {
		spec.CoalesceBytes = 64 << 10
	}
	if spec.Linger <= 0 {
		spec.Linger = 5 * time.Millisecond
	}
	if spec.InFlight <= 0 {
		spec.InFlight = 4
	}
	o := &Outbox{spec: spec, part: part, targets: Targets(spec.Partitioning, spec.SourceSubtask, n)}
	for _, t := range o.targets {
		h := &braidv1.ChannelHeader{
			JobId: spec.JobID, SourceVertex: int32(spec.SourceVertex), SourceSubtask: int32(spec.SourceSubtask),
			TargetVertex: int32(spec.TargetVertex), TargetInput: int32(spec.TargetInput), TargetSubtask: int32(t),
		}
		if spec.Targets[t].Local {
			o.chans = append(o.chans, &localChannel{x: x, header: h})
			continue
		}
		if spec.Targets[t].Address == "" {
			return nil, fmt.Errorf("shuffle: remote target subtask %d of vertex %d has no address", t, spec.TargetVertex)
		}
		o.chans = append(o.chans, newRemoteChannel(x.pool, spec.Targets[t].Address, h, spec))
	}
	return o, nil
}

// Send partitions b and sends each part to its target. It borrows b. It
// blocks while a target channel is full and returns ctx.Err() if ctx ends
// first; after an error the Outbox should be aborted.
func (o *Outbox) Send(ctx context.Context, b types.Batch) error {
	if err := o.checkData("send"); err != nil {
		return err
	}
	return o.part.Partition(b, func(t int, part types.Batch) error {
		return o.chans[t].send(ctx, part)
	})
}

// SendWatermark sends watermark wm (milliseconds) on every channel of the
// edge, after the batches sent before it. Keeping watermarks monotonic is
// the caller's job. It blocks and fails as Send does.
func (o *Outbox) SendWatermark(ctx context.Context, wm int64) error {
	if err := o.checkData("watermark"); err != nil {
		return err
	}
	for _, c := range o.chans {
		if err := c.event(ctx, Event{Kind: EventWatermark, Value: wm}); err != nil {
			return err
		}
	}
	return nil
}

// SendIdle tells every channel of the edge that the sender is idle (true)
// or active again (false). See EventIdle.
func (o *Outbox) SendIdle(ctx context.Context, idle bool) error {
	if err := o.checkData("idleness"); err != nil {
		return err
	}
	v := int64(0)
	if idle {
		v = 1
	}
	for _, c := range o.chans {
		if err := c.event(ctx, Event{Kind: EventIdle, Value: v}); err != nil {
			return err
		}
	}
	return nil
}

// SendBarrier sends the barrier of checkpoint id on every channel of the
// edge, after the batches sent before it. It blocks and fails as Send does.
func (o *Outbox) SendBarrier(ctx context.Context, id int64) error {
	if o.closed {
		return errors.New("shuffle: send on closed outbox")
	}
	for _, c := range o.chans {
		if err := c.event(ctx, Event{Kind: EventBarrier, Value: id}); err != nil {
			return err
		}
	}
	return nil
}

func (o *Outbox) checkData(what string) error {
	if o.closed {
		return fmt.Errorf("shuffle: %s on closed outbox", what)
	}
	if o.dataEnded {
		return fmt.Errorf("shuffle: %s after end of data", what)
	}
	return nil
}

// EndOfData sends end-of-data on every channel: no batch or watermark
// follows, barriers may, then Close. It blocks and fails as Send does.
// Idempotent.
func (o *Outbox) EndOfData(ctx context.Context) error {
	if o.closed {
		return errors.New("shuffle: end of data on closed outbox")
	}
	if o.dataEnded {
		return nil
	}
	o.dataEnded = true
	for _, c := range o.chans {
		if err := c.event(ctx, Event{Kind: EventEndOfData}); err != nil {
			return err
		}
	}
	return nil
}

// Close sends end-of-input on every channel, waiting until each target has
// it (remote targets acknowledge the whole stream); without an EndOfData
// before, it also ends the data. Idempotent.
func (o *Outbox) Close(ctx context.Context) error {
	return o.closeWith(ctx, EventEndOfInput)
}

// Stop closes every channel as Close does, but tells the targets that the
// data did not end: the job stopped at a savepoint and nothing may be
// flushed downstream. After EndOfData it is the same as Close.
func (o *Outbox) Stop(ctx context.Context) error {
	return o.closeWith(ctx, EventStop)
}

func (o *Outbox) closeWith(ctx context.Context, last EventKind) error {
	if o.closed {
		return nil
	}
	o.closed = true
	var errs []error
	for _, c := range o.chans {
		if err := c.close(ctx, last); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Abort tears every channel down without end-of-input; remote receivers see
// the stream cancelled. It waits for the Outbox's goroutines to exit.
// Idempotent, and harmless after Close.
func (o *Outbox) Abort() {
	o.closed = true
	for _, c := range o.chans {
		c.abort()
	}
}

// localChannel feeds an inbox on this task manager directly: no copy, no
// encoding.
type localChannel struct {
	x      *Exchange
	header *braidv1.ChannelHeader
	ch     *inboxChannel
}

func (c *localChannel) open(ctx context.Context) error {
	if c.ch != nil {
		return nil
	}
	ch, err := c.x.attach(ctx, c.header)
	if err != nil {
		return err
	}
	c.ch = ch
	return nil
}

func (c *localChannel) send(ctx context.Context, b types.Batch) error {
	if err := c.open(ctx); err != nil {
		return err
	}
	b.Retain()
	if err := c.ch.put(ctx, Event{Kind: EventBatch, Batch: b}); err != nil {
		b.Release()
		return err
	}
	return nil
}

func (c *localChannel) event(ctx context.Context, ev Event) error {
	if err := c.open(ctx); err != nil {
		return err
	}
	return c.ch.put(ctx, ev)
}

func (c *localChannel) close(ctx context.Context, last EventKind) error {
	if err := c.open(ctx); err != nil {
		return err
	}
	return c.ch.put(ctx, Event{Kind: last})
}

func (c *localChannel) abort() {}
