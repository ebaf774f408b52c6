package taskmanager

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/grpc"

	"github.com/braidflow/braid/internal/leaderhint"
)

// jmLink is the task manager's way to the leading job manager among the
// configured ones (Config.JobManager lists one or several). It keeps one
// connection per address and follows the leader a standby names (see
// internal/leaderhint); otherwise it tries the configured addresses in turn.
type jmLink struct {
	addrs []string
	opts  []grpc.DialOption // how to dial a job manager

	mu struct {
		sync.Mutex
		// cur is the address calls go to; next indexes the configured
		// address tried after cur fails.
		cur   string
		next  int
		conns map[string]*grpc.ClientConn
	}
}

// splitAddrs splits a comma-separated address list, dropping empty items.
func splitAddrs(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func newJMLink(list string, opts ...grpc.DialOption) (*jmLink, error) {
	l := &jmLink{addrs: splitAddrs(list), opts: opts}
	if len(l.addrs) == 0 {
		return nil, errors.New("taskmanager: no job manager address")
	}
	l.mu.conns = map[string]*grpc.ClientConn{}
	l.mu.cur, l.mu.next = l.addrs[0], 1%len(l.addrs)
	if _, err := l.conn(); err != nil {
		return nil, err
	}
	return l, nil
}

// current returns the address calls go to.
func (l *jmLink) current() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.cur
}

var _ grpc.ClientConnInterface = (*jmLink)(nil)

// Invoke calls method on the current job manager.
func (l *jmLink) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	c, err := l.conn()
	if err != nil {
		return err
	}
	return c.Invoke(ctx, method, args, reply, opts...)
}

// NewStream opens a stream to the current job manager.
func (l *jmLink) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	c, err := l.conn()
	if err != nil {
		return nil, err
	}
	return c.NewStream(ctx, desc, method, opts...)
}

// conn returns the connection to the current address.
func (l *jmLink) conn() (*grpc.ClientConn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.mu.conns[l.mu.cur]
	if !ok {
		var err error
		c, err = grpc.NewClient(l.mu.cur, l.opts...)
		if err != nil {
			return nil, fmt.Errorf("taskmanager: job manager address %q: %w", l.mu.cur, err)
		}
		l.mu.conns[l.mu.cur] = c
	}
	return c, nil
}

// failed moves on after a call to the current address failed with err:
// to the leader err names, else to the next configured address. It
// reports whether the address changed.
func (l *jmLink) failed(err error) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	prev := l.mu.cur
	if leader, ok := leaderhint.Parse(err); ok && leader != "" && leader != prev {
		l.mu.cur = leader
		return true
	}
	l.mu.cur = l.addrs[l.mu.next]
	l.mu.next = (l.mu.next + 1) % len(l.addrs)
	return l.mu.cur != prev
}

// several reports whether more than one job manager is configured.
func (l *jmLink) several() bool { return len(l.addrs) > 1 }

func (l *jmLink) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for addr, c := range l.mu.conns {
		errs = append(errs, c.Close())
		delete(l.mu.conns, addr)
	}
	return errors.Join(errs...)
}
