package jobmanager

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidflow/braid/internal/clientauth"
	"github.com/braidflow/braid/jobgraph"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
)

// slotWaits are the jobs waiting in the slot pool's queue, so that ListJobs
// and DescribeJob show them and CancelJob can take them out.
type slotWaits struct {
	mu   sync.Mutex
	jobs map[string]*slotWait
}

type slotWait struct {
	name    string
	owner   string // the principal that submitted the job (roles.go)
	startMs int64
	need    int
	timeout time.Duration
	cancel  context.CancelCauseFunc
}

// errCanceledWhileWaiting is the cause of a wait that CancelJob ended.
var errCanceledWhileWaiting = errors.New("canceled by user while waiting for slots")

// reserveSlots places graph and allocates its slots, waiting in the pool's
// FIFO queue for at most timeout while too few are free. It returns when
// the slots are allocated; when ctx ends, the job is canceled (CancelJob)
// or the timeout passes, the job leaves the queue and the error says why.
// The timeout's error is ResourceExhausted and names the job, the slots it
// needs, those free and the timeout.
func (jm *JobManager) reserveSlots(ctx context.Context, graph *jobgraph.Graph, timeout time.Duration) ([]*braidv1.Placement, error) {
	req, err := jm.pool.Request(graph.JobID, graph)
	if err != nil {
		return nil, err
	}
	select {
	case <-req.Ready():
		return req.Placements()
	default:
	}
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w := &slotWait{name: graph.Name, owner: jobOwner(ctx), startMs: time.Now().UnixMilli(), need: req.Need(), timeout: timeout, cancel: cancel}
	jm.waits.add(graph.JobID, w)
	defer jm.waits.remove(graph.JobID)
	free, total := jm.pool.Free()
	jm.log.Info("job waits for slots", zap.String("job", graph.JobID), zap.Int("need", req.Need()),
		zap.Int("free", free), zap.Int("total", total), zap.Duration("timeout", timeout))
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-req.Ready():
		return req.Placements()
	case <-timer.C:
		jm.pool.Withdraw(req)
		free, total := jm.pool.Free()
		return nil, status.Errorf(codes.ResourceExhausted,
			"job %s could not get the %s it needs within slot.request.timeout (%s): %d of %d slots are free (other jobs hold or wait for the rest); "+
				"lower the job's parallelism, wait for jobs to end, add task managers, or raise slot.request.timeout",
			graph.JobID, slots(req.Need()), timeout, free, total)
	case <-wctx.Done():
		jm.pool.Withdraw(req)
		if cause := context.Cause(wctx); errors.Is(cause, errCanceledWhileWaiting) {
			return nil, status.Errorf(codes.Canceled, "job %s was canceled while it waited for %s", graph.JobID, slots(req.Need()))
		}
		return nil, status.Errorf(codes.Canceled, "job %s: the request went away while the job waited for %s", graph.JobID, slots(req.Need()))
	case <-jm.ctx.Done():
		jm.pool.Withdraw(req)
		return nil, status.Errorf(codes.Unavailable, "job %s: the job manager shut down while the job waited for slots", graph.JobID)
	}
}

func slots(n int) string {
	if n == 1 {
		return "1 slot"
	}
	return fmt.Sprintf("%d slots", n)
}

func (s *slotWaits) add(id string, w *slotWait) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.jobs == nil {
		s.jobs = map[string]*slotWait{}
	}
	s.jobs[id] = w
}

func (s *slotWaits) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.jobs, id)
}

// cancel ends the wait of job id; it reports whether the job was waiting.
func (s *slotWaits) cancel(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.jobs[id]
	if ok {
		w.cancel(errCanceledWhileWaiting)
	}
	return ok
}

func (w *slotWait) summary(id string) *braidv1.JobSummary {
	return &braidv1.JobSummary{JobId: id, Name: w.name, Status: StatusCreated, StartTimeUnixMs: w.startMs, Owner: w.owner,
		Error: fmt.Sprintf("waiting for %s (slot.request.timeout %s)", slots(w.need), w.timeout)}
}

// summary returns the summary of waiting job id, or nil when no job id
// that who may see waits.
func (s *slotWaits) summary(id string, who clientauth.Principal) *braidv1.JobSummary {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, ok := s.jobs[id]; ok && sees(who, w.owner) {
		return w.summary(id)
	}
	return nil
}

// summaries returns the waiting jobs who may see, by id.
func (s *slotWaits) summaries(who clientauth.Principal) []*braidv1.JobSummary {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*braidv1.JobSummary, 0, len(s.jobs))
	for id, w := range s.jobs {
		if sees(who, w.owner) {
			out = append(out, w.summary(id))
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].JobId < out[b].JobId })
	return out
}
