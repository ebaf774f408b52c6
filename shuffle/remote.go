package shuffle

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"google.golang.org/grpc"

	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/types"
)

// remoteChannel sends one channel over a DataService.Exchange stream.
//
// The producing goroutine encodes batches with one ipc.Writer (schema once)
// into the current buffer, taken from a fixed set of InFlight buffers. A full
// buffer (CoalesceBytes) is queued to the channel's sender goroutine, which
// writes it to the stream and returns it to the free set. So at most
// InFlight encoded messages exist per channel, and when the receiver does
// not read, gRPC flow control blocks the sender goroutine, the free set runs
// dry and the producer blocks. A buffer that stays partly filled is flushed
// after Linger by a timer.
type remoteChannel struct {
	pool     *ConnPool
	addr     string
	header   *braidv1.ChannelHeader
	coalesce int
	linger   time.Duration
	rows     *atomic.Int64

	// ctx is the stream's context; cancel aborts the stream and unblocks
	// everything waiting on the channel.
	ctx    context.Context
	cancel context.CancelFunc
	stream grpc.ClientStreamingClient[braidv1.DataMessage, braidv1.ExchangeAck]

	free       chan *bytes.Buffer
	out        chan outMsg
	senderDone chan struct{}
	sendErr    error // set before senderDone closes

	mu struct {
		sync.Mutex
		opened bool
		closed bool
		w      *ipc.Writer
		sink   bufferSink
		cur    *bytes.Buffer
		armed  bool // linger timer pending
	}
}

type outMsg struct {
	buf *bytes.Buffer // encoded batches, or nil for ev
	ev  Event
}

// bufferSink is the ipc.Writer's destination, pointed at the current buffer.
type bufferSink struct{ buf *bytes.Buffer }

func (s *bufferSink) Write(p []byte) (int, error) { return s.buf.Write(p) }

func newRemoteChannel(pool *ConnPool, addr string, h *braidv1.ChannelHeader, spec OutboxSpec) *remoteChannel {
	c := &remoteChannel{
		pool: pool, addr: addr, header: h,
		coalesce: spec.CoalesceBytes, linger: spec.Linger, rows: spec.RemoteRows,
		free:       make(chan *bytes.Buffer, spec.InFlight),
		out:        make(chan outMsg, spec.InFlight),
		senderDone: make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	for i := 0; i < spec.InFlight; i++ {
		c.free <- new(bytes.Buffer)
	}
	return c
}

// openLocked starts the stream and its sender goroutine.
func (c *remoteChannel) openLocked() error {
	if c.mu.opened {
		return nil
	}
	if err := c.ctx.Err(); err != nil {
		return err
	}
	conn, err := c.pool.Get(c.addr)
	if err != nil {
		return err
	}
	stream, err := braidv1.NewDataServiceClient(conn).Exchange(c.ctx)
	if err != nil {
		return err
	}
	if err := stream.Send(&braidv1.DataMessage{Payload: &braidv1.DataMessage_Header{Header: c.header}}); err != nil {
		return c.streamErr(stream, err)
	}
	c.stream = stream
	c.mu.opened = true
	c.mu.w = ipc.NewWriter(&c.mu.sink)
	go c.sender()
	return nil
}

// streamErr turns io.EOF from Send (the server ended the stream) into the
// server's status.
func (c *remoteChannel) streamErr(stream grpc.ClientStreamingClient[braidv1.DataMessage, braidv1.ExchangeAck], err error) error {
	if errors.Is(err, io.EOF) {
		if _, rerr := stream.CloseAndRecv(); rerr != nil {
			return rerr
		}
	}
	return err
}

// sender writes queued messages to the stream until out is closed or the
// stream fails.
func (c *remoteChannel) sender() {
	defer close(c.senderDone)
	data := &braidv1.DataMessage_ArrowIpc{}
	msg := &braidv1.DataMessage{}
	for {
		var m outMsg
		var ok bool
		select {
		case m, ok = <-c.out:
		case <-c.ctx.Done():
			c.sendErr = c.ctx.Err()
			return
		}
		if !ok {
			return
		}
		if m.buf != nil {
			data.ArrowIpc = m.buf.Bytes()
			msg.Payload = data
		} else {
			msg.Payload = &braidv1.DataMessage_Event{Event: eventToProto(m.ev)}
		}
		// NB: Send marshals msg before returning, so the buffer is free again.
		err := c.stream.Send(msg)
		if m.buf != nil {
			data.ArrowIpc = nil
			c.free <- m.buf
		}
		if err != nil {
			c.sendErr = c.streamErr(c.stream, err)
			return
		}
	}
}

func (c *remoteChannel) send(ctx context.Context, b types.Batch) error {
	stop := context.AfterFunc(ctx, c.cancel)
	defer stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.openLocked(); err != nil {
		return c.callErr(ctx, err)
	}
	if c.mu.cur == nil {
		select {
		case buf := <-c.free:
			buf.Reset()
			c.mu.cur = buf
			c.mu.sink.buf = buf
		case <-c.senderDone:
			return c.callErr(ctx, c.sendErr)
		}
	}
	if err := c.mu.w.Write(b.Rec); err != nil {
		return err
	}
	if c.rows != nil {
		c.rows.Add(int64(b.NumRows()))
	}
	if c.mu.cur.Len() >= c.coalesce {
		return c.callErr(ctx, c.flushLocked())
	}
	if !c.mu.armed {
		c.mu.armed = true
		time.AfterFunc(c.linger, c.lingerFlush)
	}
	return nil
}

// event flushes the batches encoded so far and queues ev behind them.
func (c *remoteChannel) event(ctx context.Context, ev Event) error {
	stop := context.AfterFunc(ctx, c.cancel)
	defer stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return errors.New("shuffle: event on closed channel")
	}
	if err := c.openLocked(); err != nil {
		return c.callErr(ctx, err)
	}
	if err := c.flushLocked(); err != nil {
		return c.callErr(ctx, err)
	}
	select {
	case c.out <- outMsg{ev: ev}:
		return nil
	case <-c.senderDone:
		return c.callErr(ctx, c.sendErr)
	}
}

// callErr reports the caller's context error in preference to the stream
// error it caused. Any other failure to reach or stream to the receiving
// task manager is a lost peer.
func (c *remoteChannel) callErr(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil && types.ClassOf(err) == types.ClassUnknown {
		return types.WithClass(err, types.ClassLostPeer)
	}
	return err
}

// flushLocked queues the current buffer, if any, to the sender.
func (c *remoteChannel) flushLocked() error {
	buf := c.mu.cur
	if buf == nil || buf.Len() == 0 {
		return nil
	}
	c.mu.cur = nil
	select {
	case c.out <- outMsg{buf: buf}:
		return nil
	case <-c.senderDone:
		return c.sendErr
	}
}

func (c *remoteChannel) lingerFlush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.armed = false
	if c.mu.closed {
		return
	}
	_ = c.flushLocked() // a failure surfaces on the next send or close
}

func (c *remoteChannel) close(ctx context.Context, last EventKind) error {
	stop := context.AfterFunc(ctx, c.cancel)
	defer stop()
	err := c.finish(last)
	if err == nil {
		<-c.senderDone
		err = c.sendErr
	}
	if err == nil {
		_, err = c.stream.CloseAndRecv()
	}
	c.cancel()
	c.mu.Lock()
	opened := c.mu.opened
	c.mu.Unlock()
	if opened {
		<-c.senderDone
	}
	return c.callErr(ctx, err)
}

// finish flushes, queues last (end-of-input or stop) and closes the
// sender's queue.
func (c *remoteChannel) finish(last EventKind) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return types.WithClass(errors.New("shuffle: channel closed twice"), types.ClassInternal)
	}
	c.mu.closed = true
	if err := c.openLocked(); err != nil {
		return err
	}
	if err := c.flushLocked(); err != nil {
		return err
	}
	select {
	case c.out <- outMsg{ev: Event{Kind: last}}:
	case <-c.senderDone:
		return c.sendErr
	}
	close(c.out)
	return nil
}

func (c *remoteChannel) abort() {
	c.cancel()
	c.mu.Lock()
	c.mu.closed = true
	opened := c.mu.opened
	c.mu.Unlock()
	if opened {
		<-c.senderDone
	}
}
