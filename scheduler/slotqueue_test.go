package scheduler

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
)

func granted(r *SlotRequest) bool {
	select {
	case <-r.Ready():
		return true
	default:
		return false
	}
}

// TestSlotQueueFIFO: a job that lacks slots waits instead of failing;
// freed slots go to the head of the queue first, even when a smaller job
// behind it would fit; a task manager joining serves the queue too.
func TestSlotQueueFIFO(t *testing.T) {
	pool := NewSlotPool()
	pool.Add("a", "a:1", 2)
	pool.Add("b", "b:1", 2)
	first, err := pool.Request("first", graphOf(3))
	if err != nil || !granted(first) {
		t.Fatalf("first: granted %v, %v", granted(first), err)
	}
	big, err := pool.Request("big", graphOf(4))
	if err != nil || granted(big) {
		t.Fatalf("big: granted %v, %v; want it queued", granted(big), err)
	}
	small, err := pool.Request("small", graphOf(1))
	if err != nil || granted(small) {
		t.Fatalf("small: granted %v, %v; want it queued behind big although a slot is free", granted(small), err)
	}
	if w := pool.Waiting(); len(w) != 2 || w[0] != (WaitingJob{"big", 4}) || w[1] != (WaitingJob{"small", 1}) {
		t.Fatalf("waiting %+v", w)
	}
	pool.Release("first")
	if !granted(big) || granted(small) {
		t.Fatalf("after release: big %v small %v; want big only", granted(big), granted(small))
	}
	if free, total := pool.Free(); free != 0 || total != 4 {
		t.Fatalf("free %d of %d", free, total)
	}
	pool.Add("c", "c:1", 1)
	if !granted(small) {
		t.Fatal("a new task manager's slot did not serve the queue")
	}
	if pl, err := small.Placements(); err != nil || len(pl) != 1 || pl[0].TaskManagerId != "c" {
		t.Fatalf("small placed at %v, %v", pl, err)
	}
	if len(pool.Waiting()) != 0 {
		t.Fatalf("waiting %+v", pool.Waiting())
	}
}

// TestSlotQueueWithdraw: a withdrawn request leaves the queue and lets the
// one behind it be served; withdrawing a granted one gives its slots back.
func TestSlotQueueWithdraw(t *testing.T) {
	pool := NewSlotPool()
	pool.Add("a", "a:1", 2)
	held, _ := pool.Request("held", graphOf(1))
	big, _ := pool.Request("big", graphOf(2))
	small, _ := pool.Request("small", graphOf(1))
	if !granted(held) || granted(big) || granted(small) {
		t.Fatal("unexpected grants")
	}
	pool.Withdraw(big)
	if !granted(small) || granted(big) {
		t.Fatalf("after withdrawing big: small %v big %v", granted(small), granted(big))
	}
	pool.Withdraw(big) // idempotent
	pool.Withdraw(small)
	pool.Withdraw(held)
	if free, _ := pool.Free(); free != 2 || len(pool.Jobs()) != 0 {
		t.Fatalf("free %d, jobs %v after withdrawing everything", free, pool.Jobs())
	}
}

// TestSlotQueueBadGraph: a graph that cannot be placed whatever is free
// fails at once instead of waiting.
func TestSlotQueueBadGraph(t *testing.T) {
	pool := NewSlotPool()
	pool.Add("a", "a:1", 1)
	pool.Request("held", graphOf(1))
	if _, err := pool.Request("bad", graphOf(0)); err == nil {
		t.Fatal("a vertex of parallelism 0 was queued")
	}
	r, err := pool.Request("short", graphOf(3))
	if err != nil || granted(r) {
		t.Fatalf("short: %v", err)
	}
	var short *InsufficientSlotsError
	if _, err := Place(graphOf(3), pool.Snapshot()); !errors.As(err, &short) || short.Need != 3 || short.Free != 0 || short.Total != 1 {
		t.Fatalf("Place: %v", err)
	}
}

// TestSlotQueueConcurrent: many jobs requesting and withdrawing at once
// never over-book a task manager, and every one is served in the end.
func TestSlotQueueConcurrent(t *testing.T) {
	pool := NewSlotPool()
	pool.Add("a", "a:1", 3)
	pool.Add("b", "b:1", 2)
	var wg sync.WaitGroup
	var mu sync.Mutex
	running := 0
	for i := range 50 {
		wg.Go(func() {
			need := 1 + i%4
			r, err := pool.Request(fmt.Sprintf("j%d", i), graphOf(need))
			if err != nil {
				t.Error(err)
				return
			}
			<-r.Ready()
			mu.Lock()
			running += need
			if running > 5 {
				t.Errorf("%d slots in use of 5", running)
			}
			for _, tm := range pool.Snapshot() {
				if tm.Used > tm.Slots {
					t.Errorf("task manager %s over-booked: %+v", tm.ID, tm)
				}
			}
			mu.Unlock()
			runtime.Gosched()
			mu.Lock()
			running -= need
			mu.Unlock()
			pool.Withdraw(r)
		})
	}
	wg.Wait()
	if free, _ := pool.Free(); free != 5 {
		t.Fatalf("%d slots free at the end", free)
	}
}

// TestRestartGoesFirst: a restarting job whose Schedule found too few
// slots has them withheld from the queue, so new jobs do not starve it;
// Forget (the job ended) gives them to the queue.
func TestRestartGoesFirst(t *testing.T) {
	pool := NewSlotPool()
	pool.Add("a", "a:1", 2)
	other, _ := pool.Request("other", graphOf(1))
	if _, err := pool.Schedule("restarting", graphOf(2)); err == nil {
		t.Fatal("a restart of 2 slots scheduled with 1 free")
	}
	fresh, _ := pool.Request("fresh", graphOf(1))
	if granted(fresh) {
		t.Fatal("a new job took a slot withheld for a restarting job")
	}
	pool.Withdraw(other)
	if granted(fresh) {
		t.Fatal("a new job took the slots the restarting job waits for")
	}
	if _, err := pool.Schedule("restarting", graphOf(2)); err != nil {
		t.Fatalf("the restart after slots freed: %v", err)
	}
	pool.Forget("restarting")
	if !granted(fresh) {
		t.Fatal("the queue was not served once the restarting job ended")
	}
	// A restart that is forgotten while it waits stops withholding.
	pool.Schedule("gone", graphOf(2))
	next, _ := pool.Request("next", graphOf(1))
	if granted(next) {
		t.Fatal("withheld slot granted")
	}
	pool.Forget("gone")
	if !granted(next) {
		t.Fatal("Forget of a waiting restart did not serve the queue")
	}
}
