package client

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidflow/braid/internal/leaderhint"
	"github.com/braidflow/braid/internal/msgsize"
)

// leaderConn sends each call to the leading job manager among several
// (highly available ones). A standby answers codes.Unavailable naming the
// leader (internal/leaderhint): the call is sent again there, and later
// calls go there first. A job manager that cannot be dialled is skipped for
// the next endpoint. Only calls that never reached a leader are sent again,
// so a call runs at most once.
type leaderConn struct {
	endpoints []string
	// opts are added to every connection's options: the transport
	// credentials (plain text or WithTLS), WithToken.
	opts []grpc.DialOption

	mu struct {
		sync.Mutex
		cur   string
		conns map[string]*grpc.ClientConn
	}
}

var _ grpc.ClientConnInterface = (*leaderConn)(nil)

func newLeaderConn(endpoints []string, first string, opts ...grpc.DialOption) *leaderConn {
	l := &leaderConn{endpoints: endpoints, opts: opts}
	l.mu.cur = first
	l.mu.conns = map[string]*grpc.ClientConn{}
	return l
}

func (l *leaderConn) current() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.cur
}

func (l *leaderConn) conn(addr string) (*grpc.ClientConn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.mu.conns[addr]; ok {
		return c, nil
	}
	c, err := grpc.NewClient(addr, append(msgsize.ClientDialOptions(), l.opts...)...)
	if err != nil {
		return nil, unreachable(addr, err)
	}
	l.mu.conns[addr] = c
	return c, nil
}

// redirect returns where to send a call again that failed at addr with
// err after tries attempts; ok is false when it must not be sent again.
func (l *leaderConn) redirect(addr string, err error, tries int) (next string, ok bool) {
	if tries > 2*len(l.endpoints)+2 {
		return "", false
	}
	if leader, isHint := leaderhint.Parse(err); isHint {
		if leader == "" || leader == addr {
			leader = l.after(addr) // no leader yet, or it is taking over
		}
		l.setCurrent(leader)
		return leader, true
	}
	if len(l.endpoints) > 1 && notDialled(err) {
		next = l.after(addr)
		l.setCurrent(next)
		return next, true
	}
	return "", false
}

// after returns the endpoint after addr in the list (the first when addr
// is not in it).
func (l *leaderConn) after(addr string) string {
	for i, e := range l.endpoints {
		if e == addr {
			return l.endpoints[(i+1)%len(l.endpoints)]
		}
	}
	return l.endpoints[0]
}

func (l *leaderConn) setCurrent(addr string) {
	l.mu.Lock()
	l.mu.cur = addr
	l.mu.Unlock()
}

// notDialled reports whether err says the call never reached a server.
func notDialled(err error) bool {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.Unavailable {
		return false
	}
	m := st.Message()
	return strings.Contains(m, "Error while dialing") || strings.Contains(m, "connection refused")
}

func (l *leaderConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	addr := l.current()
	for tries := 0; ; tries++ {
		c, err := l.conn(addr)
		if err == nil {
			err = c.Invoke(ctx, method, args, reply, opts...)
		}
		if err == nil || ctx.Err() != nil {
			return err
		}
		next, ok := l.redirect(addr, err, tries)
		if !ok {
			return err
		}
		addr = next
	}
}

// NewStream opens a stream on the current endpoint. A server stream (one
// request, as Execute) follows the leader until its first answer; other
// streams do not.
func (l *leaderConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	addr := l.current()
	c, err := l.conn(addr)
	if err != nil {
		return nil, err
	}
	s, err := c.NewStream(ctx, desc, method, opts...)
	if err != nil || desc.ClientStreams {
		return s, err
	}
	return &followStream{ClientStream: s, l: l, ctx: ctx, desc: desc, method: method, opts: opts, addr: addr}, nil
}

// followStream is a server stream that, when its first receive fails with
// a standby's answer, is opened again at the leader with the same request.
type followStream struct {
	grpc.ClientStream
	l        *leaderConn
	ctx      context.Context
	desc     *grpc.StreamDesc
	method   string
	opts     []grpc.CallOption
	addr     string
	req      any
	received bool
	tries    int
}

func (s *followStream) SendMsg(m any) error {
	s.req = m
	return s.ClientStream.SendMsg(m)
}

func (s *followStream) RecvMsg(m any) error {
	for {
		err := s.ClientStream.RecvMsg(m)
		if err == nil || s.received || errors.Is(err, io.EOF) || s.req == nil || s.ctx.Err() != nil {
			s.received = s.received || err == nil
			return err
		}
		next, ok := s.l.redirect(s.addr, err, s.tries)
		if !ok {
			return err
		}
		s.tries++
		c, cerr := s.l.conn(next)
		if cerr != nil {
			return err
		}
		inner, serr := c.NewStream(s.ctx, s.desc, s.method, s.opts...)
		if serr != nil {
			return serr
		}
		s.ClientStream, s.addr = inner, next
		if err := inner.SendMsg(s.req); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if err := inner.CloseSend(); err != nil {
			return err
		}
	}
}

func (l *leaderConn) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for addr, c := range l.mu.conns {
		errs = append(errs, c.Close())
		delete(l.mu.conns, addr)
	}
	return errors.Join(errs...)
}
