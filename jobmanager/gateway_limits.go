package jobmanager

import (
	"context"
	"errors"
	"net"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/braidflow/braid/internal/clientauth"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/planner"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// The gateway's limits (Limits): sessions per client and in all, their
// size and idleness, and the planner's and the slot queue's timeouts.

// sessionClient names the client a session counts against for
// Limits.SessionsPerClient: the authenticated principal ("principal
// alice"), or, when clients are not authenticated (every caller the
// anonymous admin), the host of the caller's address ("host 10.0.0.7").
// NB: clients behind one proxy or NAT share a host, and so the cap.
func sessionClient(ctx context.Context) string {
	if p, ok := clientauth.FromContext(ctx); ok && p != clientauth.Anonymous {
		return "principal " + p.Name
	}
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return "host unknown"
	}
	addr := p.Addr.String()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return "host " + host
	}
	return "host " + addr
}

// dropLocked forgets session s; g.mu is held. A statement it still runs
// goes on to its end.
func (g *SQLGateway) dropLocked(s *session) {
	delete(g.mu.sessions, s.id)
	if g.mu.clients[s.client]--; g.mu.clients[s.client] <= 0 {
		delete(g.mu.clients, s.client)
	}
}

// startReaper closes idle sessions every SessionCheckInterval until the
// job manager closes.
func (g *SQLGateway) startReaper() {
	jm := g.jm
	if jm.ctx == nil {
		return // not started: nothing to serve, nothing to reap
	}
	jm.wg.Add(1)
	go func() {
		defer jm.wg.Done()
		t := time.NewTicker(g.limits.SessionCheckInterval)
		defer t.Stop()
		for {
			select {
			case <-jm.ctx.Done():
				return
			case now := <-t.C:
				g.expire(now)
			}
		}
	}()
}

// expire closes the sessions idle for longer than SessionIdleTimeout at
// now, and forgets sessions that expired more than a timeout ago.
func (g *SQLGateway) expire(now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for id, at := range g.mu.expired {
		if now.Sub(at) > g.limits.SessionIdleTimeout {
			delete(g.mu.expired, id)
		}
	}
	for _, s := range g.mu.sessions {
		if s.running == 0 && now.Sub(s.lastUsed) > g.limits.SessionIdleTimeout {
			g.dropLocked(s)
			// NB: bounded by SessionMaxNum per timeout.
			g.mu.expired[s.id] = now
			g.log.Info("session expired", zap.String("session", s.id), zap.Duration("idle", now.Sub(s.lastUsed)))
		}
	}
}

// checkTemporaryRoom refuses a new temporary table or view, at pos, in a
// session that holds SessionMaxTemporary of them.
func (x *execution) checkTemporaryRoom(pos ast.Pos) error {
	if n := x.s.temp.NumTables(); n >= x.g.limits.SessionMaxTemporary {
		return status.Error(codes.ResourceExhausted, userErr(pos,
			"this session holds %d temporary tables and views, the limit per session (--session-max-temporary = %d); drop one first", n, x.g.limits.SessionMaxTemporary).Error())
	}
	return nil
}

// checkSessionSize refuses session options over SessionMaxOptions or
// SessionMaxBytes.
func (g *SQLGateway) checkSessionSize(config map[string]string) error {
	if len(config) > g.limits.SessionMaxOptions {
		return g.optionsExhausted(len(config))
	}
	n := 0
	for k, v := range config {
		n += len(k) + len(v)
	}
	if n > g.limits.SessionMaxBytes {
		return status.Errorf(codes.ResourceExhausted,
			"the session's options would take %d bytes (keys and values), over the limit of %d bytes per session (--session-max-bytes)", n, g.limits.SessionMaxBytes)
	}
	return nil
}

func (g *SQLGateway) optionsExhausted(n int) error {
	return status.Errorf(codes.ResourceExhausted,
		"the session would hold %d options, over the limit of %d per session (--session-max-options)", n, g.limits.SessionMaxOptions)
}

// plan runs plan under ctx bounded by the planner timeout
// (braid.planner.timeout), and says which of the two stopped it.
func (x *execution) plan(ctx context.Context, plan func(context.Context) (*planner.Plan, error)) (*planner.Plan, error) {
	timeout := x.g.limits.PlannerTimeout
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p, err := plan(pctx)
	switch {
	case err == nil:
		return p, nil
	case ctx.Err() != nil:
		return nil, status.Error(codes.Canceled, "statement cancelled while it was planned")
	case errors.Is(err, context.DeadlineExceeded) && pctx.Err() != nil:
		return nil, status.Errorf(codes.DeadlineExceeded, "planning the statement took longer than braid.planner.timeout (%s) and was stopped; simplify the query", timeout)
	}
	return nil, err
}

// slotTimeout is how long the session's jobs wait for slots: its
// slot.request.timeout, else the cluster's.
func (x *execution) slotTimeout() time.Duration {
	if v, ok := x.s.config[jobgraph.OptSlotRequestTimeout]; ok {
		if d, err := types.ParseDuration(v); err == nil && d > 0 {
			return d
		}
	}
	return x.g.limits.SlotRequestTimeout
}
