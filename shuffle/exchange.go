package shuffle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/types"
)

// DefaultRegisterTimeout is how long a sender waits for its target subtask
// to register its inbox.
const DefaultRegisterTimeout = 30 * time.Second

// SubtaskKey names one subtask of one job.
type SubtaskKey struct {
	JobID   string
	Vertex  int
	Subtask int
}

// ExchangeOptions configure an Exchange. Zero values take defaults.
type ExchangeOptions struct {
	Logger *zap.Logger
	// RegisterTimeout bounds the wait for a target inbox to be registered.
	RegisterTimeout time.Duration
	// Pool dials remote task managers; the Exchange owns it (Close closes it).
	Pool *ConnPool
}

// Exchange is a task manager's registry of the inboxes of its deployed
// subtasks, and its DataService server. A subtask registers its Inbox under
// its SubtaskKey before it starts; local Outboxes and remote Exchange
// streams then find their channel there.
type Exchange struct {
	braidv1.UnimplementedDataServiceServer

	log     *zap.Logger
	timeout time.Duration
	pool    *ConnPool

	mu struct {
		sync.Mutex
		inboxes map[SubtaskKey]*Inbox
		// changed is closed, and replaced, whenever an inbox registers.
		changed chan struct{}
	}
}

var _ braidv1.DataServiceServer = (*Exchange)(nil)

// NewExchange returns an empty registry.
func NewExchange(opts ExchangeOptions) *Exchange {
	x := &Exchange{log: opts.Logger, timeout: opts.RegisterTimeout, pool: opts.Pool}
	if x.log == nil {
		x.log = zap.NewNop()
	}
	if x.timeout <= 0 {
		x.timeout = DefaultRegisterTimeout
	}
	if x.pool == nil {
		x.pool = NewConnPool()
	}
	x.mu.inboxes = map[SubtaskKey]*Inbox{}
	x.mu.changed = make(chan struct{})
	return x
}

// Pool returns the connection pool for remote sends.
func (x *Exchange) Pool() *ConnPool { return x.pool }

// Register makes in reachable under key. It fails if key is taken.
func (x *Exchange) Register(key SubtaskKey, in *Inbox) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, ok := x.mu.inboxes[key]; ok {
		return fmt.Errorf("shuffle: subtask %+v already registered", key)
	}
	x.mu.inboxes[key] = in
	close(x.mu.changed)
	x.mu.changed = make(chan struct{})
	return nil
}

// Unregister removes key's inbox, if in is still the one registered, and
// closes it: its senders fail with ErrInboxClosed.
func (x *Exchange) Unregister(key SubtaskKey, in *Inbox) {
	x.mu.Lock()
	if x.mu.inboxes[key] == in {
		delete(x.mu.inboxes, key)
	}
	x.mu.Unlock()
	in.Close()
}

// UnregisterJob removes and closes every inbox of a job, as when the job is
// cancelled or ends.
func (x *Exchange) UnregisterJob(jobID string) {
	var closing []*Inbox
	x.mu.Lock()
	for k, in := range x.mu.inboxes {
		if k.JobID == jobID {
			closing = append(closing, in)
			delete(x.mu.inboxes, k)
		}
	}
	x.mu.Unlock()
	for _, in := range closing {
		in.Close()
	}
}

// Close closes the connection pool. Registered inboxes are left alone.
func (x *Exchange) Close() error { return x.pool.Close() }

// lookup waits until key is registered, up to the register timeout.
func (x *Exchange) lookup(ctx context.Context, key SubtaskKey) (*Inbox, error) {
	timer := time.NewTimer(x.timeout)
	defer timer.Stop()
	for {
		x.mu.Lock()
		in, ok := x.mu.inboxes[key]
		changed := x.mu.changed
		x.mu.Unlock()
		if ok {
			return in, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timer.C:
			return nil, fmt.Errorf("shuffle: subtask %+v not registered within %v", key, x.timeout)
		}
	}
}

// attach finds the inbox channel a sender feeds, waiting for its registration.
func (x *Exchange) attach(ctx context.Context, h *braidv1.ChannelHeader) (*inboxChannel, error) {
	key := SubtaskKey{JobID: h.JobId, Vertex: int(h.TargetVertex), Subtask: int(h.TargetSubtask)}
	in, err := x.lookup(ctx, key)
	if err != nil {
		return nil, err
	}
	return in.attach(ChannelSpec{Input: int(h.TargetInput), SourceVertex: int(h.SourceVertex), SourceSubtask: int(h.SourceSubtask)})
}

// Exchange serves one channel from a remote upstream subtask: the header,
// then Arrow IPC bytes and control events, ending with end-of-input. It
// reads the next message only once the previous event is queued in the
// inbox, so a full inbox stops the sender through gRPC flow control.
func (x *Exchange) Exchange(stream grpc.ClientStreamingServer[braidv1.DataMessage, braidv1.ExchangeAck]) error {
	ctx := stream.Context()
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	h := first.GetHeader()
	if h == nil {
		return status.Error(codes.InvalidArgument, "shuffle: first exchange message is not a channel header")
	}
	if err := checkHeader(h); err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	ch, err := x.attach(ctx, h)
	if err != nil {
		if ctx.Err() != nil {
			return status.FromContextError(ctx.Err()).Err()
		}
		return status.Error(codes.NotFound, err.Error())
	}
	err = x.serve(ctx, stream, ch)
	if err == nil {
		return stream.SendAndClose(&braidv1.ExchangeAck{})
	}
	var bad *badStreamError
	switch {
	case errors.As(err, &bad):
		// NB: the channel can neither go on nor end, and takes no other
		// sender: its subtask fails rather than wait for it forever. After
		// end-of-input the channel's input is whole, and the subtask goes on.
		if !errors.Is(err, errAfterEnd) {
			ch.fail(err, peerAddr(ctx))
		}
	case errors.Is(err, ErrInboxClosed):
		return status.Error(codes.Aborted, err.Error())
	case ctx.Err() != nil:
		return status.FromContextError(ctx.Err()).Err()
	}
	fields := []zap.Field{zap.String("job", h.JobId), zap.Int32("source_vertex", h.SourceVertex),
		zap.Int32("source_subtask", h.SourceSubtask), zap.Int32("target_vertex", h.TargetVertex),
		zap.Int32("target_subtask", h.TargetSubtask), zap.String("peer", peerAddr(ctx)), zap.Error(err)}
	var u *uncheckedError
	if errors.As(err, &u) && u.stack != nil {
		fields = append(fields, zap.ByteString("stack", u.stack))
	}
	x.log.Warn("exchange stream failed", fields...)
	if bad != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Error(codes.Internal, err.Error())
}

// maxChannelIndex bounds the vertex ids, inputs and subtask indexes of a
// ChannelHeader: jobgraph caps parallelism at 1<<15, and a job has far
// fewer vertices or inputs.
const maxChannelIndex = 1 << 15

// maxJobIDLen bounds the job id of a ChannelHeader; Braid's are 16 hex
// digits.
const maxJobIDLen = 256

// checkHeader refuses a channel header no Braid sender writes. Its indexes
// only ever key maps, but a negative or huge one names a subtask that
// cannot exist, and would hold the stream for the register timeout.
func checkHeader(h *braidv1.ChannelHeader) error {
	if len(h.JobId) > maxJobIDLen {
		return fmt.Errorf("shuffle: channel header: job id of %d bytes (limit %d)", len(h.JobId), maxJobIDLen)
	}
	for _, f := range []struct {
		name string
		v    int32
	}{
		{"source vertex", h.SourceVertex}, {"source subtask", h.SourceSubtask},
		{"target vertex", h.TargetVertex}, {"target input", h.TargetInput}, {"target subtask", h.TargetSubtask},
	} {
		if f.v < 0 || f.v >= maxChannelIndex {
			return fmt.Errorf("shuffle: channel header of job %q: %s %d out of range [0, %d)", h.JobId, f.name, f.v, maxChannelIndex)
		}
	}
	return nil
}

// badStreamError marks a failure caused by what the peer sent: bytes, an
// event or a message order that Braid's own sender never produces. The
// stream fails with InvalidArgument and the receiving subtask with it.
type badStreamError struct{ err error }

func (e *badStreamError) Error() string { return e.err.Error() }
func (e *badStreamError) Unwrap() error { return e.err }

func badStreamf(format string, args ...any) error {
	return &badStreamError{err: fmt.Errorf("shuffle: "+format, args...)}
}

var errAfterEnd = errors.New("shuffle: exchange message after end-of-input")

// peerAddr names the sender of a stream for errors and logs.
func peerAddr(ctx context.Context) string {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		return p.Addr.String()
	}
	return "unknown peer"
}

func (x *Exchange) serve(ctx context.Context, stream grpc.ClientStreamingServer[braidv1.DataMessage, braidv1.ExchangeAck], ch *inboxChannel) error {
	var dec decoder
	defer dec.release()
	ended := false
	for {
		m, err := stream.Recv()
		if err == io.EOF {
			if !ended {
				return badStreamf("exchange stream closed before end-of-input")
			}
			return nil
		}
		if err != nil {
			return err
		}
		if ended {
			return &badStreamError{err: errAfterEnd}
		}
		switch p := m.Payload.(type) {
		case *braidv1.DataMessage_ArrowIpc:
			if err := dec.feed(p.ArrowIpc, func(b types.Batch) error { return ch.put(ctx, Event{Kind: EventBatch, Batch: b}) }); err != nil {
				return err
			}
		case *braidv1.DataMessage_Event:
			ev, err := eventFromProto(p.Event)
			if err != nil {
				return &badStreamError{err: err}
			}
			if err := ch.put(ctx, ev); err != nil {
				return err
			}
			ended = ev.Kind == EventEndOfInput || ev.Kind == EventStop
		default:
			return badStreamf("unexpected exchange message %T", m.Payload)
		}
	}
}

func eventFromProto(e *braidv1.ControlEvent) (Event, error) {
	switch e.Kind {
	case braidv1.ControlEvent_KIND_END_OF_INPUT:
		return Event{Kind: EventEndOfInput}, nil
	case braidv1.ControlEvent_KIND_WATERMARK:
		return Event{Kind: EventWatermark, Value: e.Value}, nil
	case braidv1.ControlEvent_KIND_BARRIER:
		if e.Value <= 0 {
			return Event{}, fmt.Errorf("shuffle: barrier of checkpoint %d (checkpoint ids start at 1)", e.Value)
		}
		return Event{Kind: EventBarrier, Value: e.Value}, nil
	case braidv1.ControlEvent_KIND_END_OF_DATA:
		return Event{Kind: EventEndOfData}, nil
	case braidv1.ControlEvent_KIND_STOP:
		return Event{Kind: EventStop}, nil
	case braidv1.ControlEvent_KIND_IDLE:
		if e.Value != 0 && e.Value != 1 {
			return Event{}, fmt.Errorf("shuffle: idleness %d (1 idle, 0 active)", e.Value)
		}
		return Event{Kind: EventIdle, Value: e.Value}, nil
	}
	return Event{}, fmt.Errorf("shuffle: unknown control event %v", e.Kind)
}

func eventToProto(ev Event) *braidv1.ControlEvent {
	switch ev.Kind {
	case EventEndOfInput:
		return &braidv1.ControlEvent{Kind: braidv1.ControlEvent_KIND_END_OF_INPUT}
	case EventWatermark:
		return &braidv1.ControlEvent{Kind: braidv1.ControlEvent_KIND_WATERMARK, Value: ev.Value}
	case EventBarrier:
		return &braidv1.ControlEvent{Kind: braidv1.ControlEvent_KIND_BARRIER, Value: ev.Value}
	case EventEndOfData:
		return &braidv1.ControlEvent{Kind: braidv1.ControlEvent_KIND_END_OF_DATA}
	case EventStop:
		return &braidv1.ControlEvent{Kind: braidv1.ControlEvent_KIND_STOP}
	case EventIdle:
		return &braidv1.ControlEvent{Kind: braidv1.ControlEvent_KIND_IDLE, Value: ev.Value}
	}
	panic(fmt.Sprintf("shuffle: no control event for %v", ev.Kind))
}
