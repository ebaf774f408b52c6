package scheduler

import (
	"errors"
	"fmt"

	"github.com/braidflow/braid/jobgraph"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
)

// SlotRequest is a job's place in the pool's queue for slots (see
// SlotPool.Request). It is granted once: Ready is closed when the pool has
// placed the job and allocated its slots, after which Placements returns
// them. A request that is never granted must be withdrawn
// (SlotPool.Withdraw), or it blocks every request behind it.
type SlotRequest struct {
	jobID string
	graph *jobgraph.Graph
	need  int
	ready chan struct{}
	// placements or err is set, under the pool's mu, just before ready
	// closes.
	placements []*braidv1.Placement
	err        error
}

// Ready is closed when the request is granted.
func (r *SlotRequest) Ready() <-chan struct{} { return r.ready }

// Placements returns where the job was placed, or why it cannot be placed
// (the task managers changed while it waited); valid once Ready is closed.
func (r *SlotRequest) Placements() ([]*braidv1.Placement, error) { return r.placements, r.err }

// Need returns the slots the job needs.
func (r *SlotRequest) Need() int { return r.need }

// WaitingJob is a request in the queue, as ListJobs shows it.
type WaitingJob struct {
	JobID string
	Need  int
}

// InsufficientSlotsError is Place's error when fewer slots are free than a
// job needs.
type InsufficientSlotsError struct {
	Need, Free, Total, TaskManagers int
}

func (e *InsufficientSlotsError) Error() string {
	return fmt.Sprintf("scheduler: job needs %s (its largest parallelism) but only %d of %d are free on %s",
		plural(e.Need, "slot"), e.Free, e.Total, plural(e.TaskManagers, "task manager"))
}

// Request asks for the slots graph needs, for jobID. When no earlier
// request waits and enough slots are free, it is granted at once (Ready is
// already closed); otherwise it joins the back of the queue, and requests
// are granted strictly in order as slots free up (Release) or task managers
// join (Add): a large job at the head is not overtaken by smaller ones
// behind it. A graph that cannot be placed for another reason than free
// slots fails at once, and nothing is queued.
//
// The caller waits on Ready with its own deadline and calls Withdraw when it
// gives up; Withdraw after a grant gives the slots back.
func (p *SlotPool) Request(jobID string, graph *jobgraph.Graph) (*SlotRequest, error) {
	r := &SlotRequest{jobID: jobID, graph: graph, need: JobSlots(graph), ready: make(chan struct{})}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.mu.queue {
		if w.jobID == jobID {
			return nil, fmt.Errorf("scheduler: job %s already waits for slots", jobID)
		}
	}
	if len(p.mu.queue) == 0 {
		ok, err := p.grantLocked(r)
		if err != nil {
			return nil, err
		}
		if ok {
			return r, nil
		}
	} else if _, err := Place(graph, unlimited(p.snapshotLocked())); err != nil {
		// NB: refuse a graph that no number of free slots would place now,
		// not after it waited its turn.
		return nil, err
	}
	p.mu.queue = append(p.mu.queue, r)
	return r, nil
}

// unlimited returns tms with every slot free, to check a graph's shape.
func unlimited(tms []TaskManagerSlots) []TaskManagerSlots {
	out := make([]TaskManagerSlots, len(tms))
	for i, tm := range tms {
		out[i] = TaskManagerSlots{ID: tm.ID, Address: tm.Address, Slots: 1 << 30}
	}
	return out
}

// grantLocked places r on the free slots and allocates them. It reports
// false, with no error, when too few are free.
func (p *SlotPool) grantLocked(r *SlotRequest) (bool, error) {
	placements, err := Place(r.graph, p.withheldLocked())
	var short *InsufficientSlotsError
	if errors.As(err, &short) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	p.allocateLocked(r.jobID, placements)
	r.placements = placements
	close(r.ready)
	return true, nil
}

// serveLocked grants the queued requests in order while slots allow. A
// request that cannot be placed at all any more is ended with the error.
func (p *SlotPool) serveLocked() {
	for len(p.mu.queue) > 0 {
		ok, err := p.grantLocked(p.mu.queue[0])
		if !ok && err == nil {
			return
		}
		r := p.mu.queue[0]
		p.mu.queue = p.mu.queue[1:]
		if err != nil {
			r.err = err
			close(r.ready)
		}
	}
}

// Withdraw takes r out of the queue, or, when it was already granted,
// releases the slots it got; either way the requests behind it are served.
// It is idempotent.
func (p *SlotPool) Withdraw(r *SlotRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, w := range p.mu.queue {
		if w == r {
			p.mu.queue = append(p.mu.queue[:i:i], p.mu.queue[i+1:]...)
			p.serveLocked()
			return
		}
	}
	select {
	case <-r.ready:
		if r.err == nil && p.mu.jobs[r.jobID] != nil {
			p.releaseLocked(r.jobID)
			p.serveLocked()
		}
	default:
	}
}

// Waiting returns the queued requests, head first.
func (p *SlotPool) Waiting() []WaitingJob {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]WaitingJob, len(p.mu.queue))
	for i, r := range p.mu.queue {
		out[i] = WaitingJob{JobID: r.jobID, Need: r.need}
	}
	return out
}

// Free returns the free slots and all slots of the live task managers.
func (p *SlotPool) Free() (free, total int) {
	for _, tm := range p.Snapshot() {
		free += tm.Free()
		total += tm.Slots
	}
	return free, total
}
