package scheduler

import (
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/braidflow/braid/jobgraph"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
)

// SlotPool tracks the task managers' slots and which jobs use them. It holds
// no I/O: the job manager feeds it membership changes and records each
// job's placements. It is safe for concurrent use; the zero value is not
// usable, use NewSlotPool.
type SlotPool struct {
	mu struct {
		sync.Mutex
		tms map[string]*poolEntry
		// jobs maps a job to the slots it holds per task manager.
		jobs map[string]map[string]int
		// queue holds the requests waiting for slots, oldest first (see
		// Request).
		queue []*SlotRequest
		// restarting holds, by job, the slots of the restarting jobs whose
		// Schedule found too few free: the queue is not served from them
		// until the job is scheduled or forgotten (Forget).
		restarting map[string]int
	}
}

type poolEntry struct {
	address string
	slots   int
	used    int
}

// NewSlotPool returns an empty pool.
func NewSlotPool() *SlotPool {
	p := &SlotPool{}
	p.mu.tms = map[string]*poolEntry{}
	p.mu.jobs = map[string]map[string]int{}
	p.mu.restarting = map[string]int{}
	return p
}

// Add offers a task manager's slots. Adding a known id updates its address
// and slot count and keeps the jobs allocated on it (a re-registration), so
// Add is idempotent.
func (p *SlotPool) Add(id, address string, slots int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.mu.tms[id]; ok {
		e.address, e.slots = address, slots
	} else {
		p.mu.tms[id] = &poolEntry{address: address, slots: slots}
	}
	p.serveLocked()
}

// Remove forgets a task manager and returns the jobs, sorted, that had
// subtasks on it: they lost those subtasks and must fail over. Their
// allocations on other task managers stay until Release. Removing an
// unknown id returns nil.
func (p *SlotPool) Remove(id string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.mu.tms[id]; !ok {
		return nil
	}
	delete(p.mu.tms, id)
	var affected []string
	for job, per := range p.mu.jobs {
		if _, ok := per[id]; ok {
			delete(per, id)
			affected = append(affected, job)
		}
	}
	sort.Strings(affected)
	return affected
}

// Allocate records that jobID runs at placements, replacing an earlier
// allocation of the same job. Slots per task manager are counted as Place
// takes them: the number of distinct subtask indexes placed there. It fails,
// changing nothing, when a placement names an unknown task manager or a task
// manager would exceed its slots (another job took them since the
// Snapshot that placement was computed from).
func (p *SlotPool) Allocate(jobID string, placements []*braidv1.Placement) error {
	want := slotsPerTaskManager(placements)
	p.mu.Lock()
	defer p.mu.Unlock()
	prev := p.mu.jobs[jobID]
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		e, ok := p.mu.tms[id]
		if !ok {
			return fmt.Errorf("scheduler: job %s placed on unknown task manager %q", jobID, id)
		}
		if free := e.slots - (e.used - prev[id]); want[id] > free {
			return fmt.Errorf("scheduler: job %s needs %s on task manager %s, %d free", jobID, plural(want[id], "slot"), id, free)
		}
	}
	p.releaseLocked(jobID)
	for id, n := range want {
		p.mu.tms[id].used += n
	}
	p.mu.jobs[jobID] = want
	return nil
}

// Schedule places graph on the pool's free slots and allocates them for
// jobID in one step, so concurrent submissions cannot take the same slots.
// It does not wait: when too few slots are free it fails with an
// *InsufficientSlotsError, and the job's slots are withheld from the queue
// (Request) until a later Schedule of the job succeeds or Forget drops it.
// The job manager uses it to restart a job that held slots before, so a
// restarting job goes ahead of new jobs, as in Flink, and is not starved by
// them.
func (p *SlotPool) Schedule(jobID string, graph *jobgraph.Graph) ([]*braidv1.Placement, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.mu.restarting, jobID)
	placements, err := Place(graph, p.withheldLocked())
	var short *InsufficientSlotsError
	if errors.As(err, &short) {
		p.mu.restarting[jobID] = JobSlots(graph)
		p.serveLocked() // NB: withholding may have room left for the queue
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	p.allocateLocked(jobID, placements)
	p.serveLocked()
	return placements, nil
}

// Forget drops what the pool keeps for jobID once the job ended: its
// slots (as Release) and the slots withheld for its restart.
func (p *SlotPool) Forget(jobID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.mu.restarting, jobID)
	p.releaseLocked(jobID)
	p.serveLocked()
}

// withheldLocked is the snapshot with the restarting jobs' slots taken
// out of the free ones: what the queue may be served from.
func (p *SlotPool) withheldLocked() []TaskManagerSlots {
	tms := p.snapshotLocked()
	held := 0
	for _, n := range p.mu.restarting {
		held += n
	}
	for i := range tms {
		take := min(held, tms[i].Free())
		tms[i].Used += take
		held -= take
	}
	return tms
}

// allocateLocked gives jobID the slots of placements, which Place computed
// from the pool's current snapshot, replacing what it held.
func (p *SlotPool) allocateLocked(jobID string, placements []*braidv1.Placement) {
	p.releaseLocked(jobID)
	want := slotsPerTaskManager(placements)
	for id, n := range want {
		p.mu.tms[id].used += n
	}
	p.mu.jobs[jobID] = want
}

// Release frees every slot jobID holds and grants the queued requests the
// freed slots allow. Releasing an unknown job does nothing, so Release is
// idempotent.
func (p *SlotPool) Release(jobID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.releaseLocked(jobID)
	p.serveLocked()
}

func (p *SlotPool) releaseLocked(jobID string) {
	for id, n := range p.mu.jobs[jobID] {
		if e, ok := p.mu.tms[id]; ok {
			e.used -= n
		}
	}
	delete(p.mu.jobs, jobID)
}

// Snapshot returns every task manager with its slots in use, sorted by id.
// The result is the caller's.
func (p *SlotPool) Snapshot() []TaskManagerSlots {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.snapshotLocked()
}

func (p *SlotPool) snapshotLocked() []TaskManagerSlots {
	out := make([]TaskManagerSlots, 0, len(p.mu.tms))
	for id, e := range p.mu.tms {
		out = append(out, TaskManagerSlots{ID: id, Address: e.address, Slots: e.slots, Used: e.used})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}

// Jobs returns the ids of the jobs holding slots, sorted.
func (p *SlotPool) Jobs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.mu.jobs))
	for id := range p.mu.jobs {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// slotsPerTaskManager counts, per task manager, the distinct subtask indexes
// placed on it: with slot sharing each index is one slot.
func slotsPerTaskManager(placements []*braidv1.Placement) map[string]int {
	idx := map[string]map[int32]bool{}
	for _, pl := range placements {
		s := idx[pl.GetTaskManagerId()]
		if s == nil {
			s = map[int32]bool{}
			idx[pl.GetTaskManagerId()] = s
		}
		s[pl.GetSubtask()] = true
	}
	out := make(map[string]int, len(idx))
	for id, s := range idx {
		out[id] = len(s)
	}
	return out
}
