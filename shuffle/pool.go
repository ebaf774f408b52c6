package shuffle

import (
	"errors"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/braidflow/braid/internal/msgsize"
)

// Flow-control windows of exchange connections. Fixing them (rather than
// letting gRPC grow them by bandwidth estimation) bounds the bytes in flight
// per stream, so a receiver that stops reading stops its sender soon.
const (
	streamWindow = 1 << 20
	connWindow   = 8 << 20
	// maxMessage bounds one DataMessage, a coalesced group or one batch,
	// at both ends: a sender's Send of a larger batch fails with
	// ResourceExhausted, and the receiving decoder never holds more than
	// this of one stream's bytes (it refuses larger arrow_ipc payloads
	// itself, whatever the server's options).
	maxMessage = msgsize.Data
	// maxAck bounds what a sender accepts back: an empty ExchangeAck.
	maxAck = msgsize.DataAck
)

// ServerOptions are the grpc.Server options a task manager should use for
// the server that serves DataService: fixed flow-control windows and the
// message size limit of the data exchange.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.InitialWindowSize(streamWindow),
		grpc.InitialConnWindowSize(connWindow),
		grpc.MaxRecvMsgSize(maxMessage),
	}
}

// DialOptions are the client options ConnPool uses by default.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(streamWindow),
		grpc.WithInitialConnWindowSize(connWindow),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(maxMessage), grpc.MaxCallRecvMsgSize(maxAck)),
	}
}

// ConnPool keeps one grpc.ClientConn per remote task manager address; all
// channels to that task manager share it (gRPC multiplexes the streams).
type ConnPool struct {
	opts []grpc.DialOption
	mu   struct {
		sync.Mutex
		conns  map[string]*grpc.ClientConn
		closed bool
	}
}

// NewConnPool returns a pool dialing with opts (DialOptions() when none).
func NewConnPool(opts ...grpc.DialOption) *ConnPool {
	if len(opts) == 0 {
		opts = DialOptions()
	}
	p := &ConnPool{opts: opts}
	p.mu.conns = map[string]*grpc.ClientConn{}
	return p
}

// Get returns the connection to addr, creating it on first use. It does not
// block on the network: gRPC connects lazily.
func (p *ConnPool) Get(addr string) (*grpc.ClientConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed {
		return nil, errors.New("shuffle: connection pool closed")
	}
	if c, ok := p.mu.conns[addr]; ok {
		return c, nil
	}
	c, err := grpc.NewClient(addr, p.opts...)
	if err != nil {
		return nil, err
	}
	p.mu.conns[addr] = c
	return c, nil
}

// Close closes every connection; later Gets fail. Idempotent.
func (p *ConnPool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.closed = true
	var errs []error
	for addr, c := range p.mu.conns {
		errs = append(errs, c.Close())
		delete(p.mu.conns, addr)
	}
	return errors.Join(errs...)
}
