package scheduler

import (
	"fmt"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/braidflow/braid/jobgraph"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func graphOf(parallelism ...int) *jobgraph.Graph {
	g := &jobgraph.Graph{}
	for i, p := range parallelism {
		g.Vertices = append(g.Vertices, &jobgraph.Vertex{ID: i + 1, Name: fmt.Sprintf("v%d", i+1), Parallelism: p})
	}
	return g
}

// TestSlotPoolConcurrentSchedule: many jobs racing for too few slots never
// over-book a task manager, and releasing them all frees every slot.
func TestSlotPoolConcurrentSchedule(t *testing.T) {
	pool := NewSlotPool()
	pool.Add("a", "a:1", 5)
	pool.Add("b", "b:1", 3)
	const jobs = 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := map[string]bool{}
	for i := range jobs {
		wg.Go(func() {
			id := fmt.Sprintf("j%d", i)
			if _, err := pool.Schedule(id, graphOf(1, 1+i%3)); err == nil {
				mu.Lock()
				won[id] = true
				mu.Unlock()
			}
			// Interleave snapshots with the scheduling.
			for _, tm := range pool.Snapshot() {
				if tm.Used > tm.Slots || tm.Used < 0 {
					t.Errorf("task manager %s has %d of %d slots used", tm.ID, tm.Used, tm.Slots)
				}
			}
		})
	}
	wg.Wait()
	used := 0
	for _, tm := range pool.Snapshot() {
		used += tm.Used
	}
	if used == 0 || used > 8 || len(won) != len(pool.Jobs()) {
		t.Fatalf("used=%d won=%d jobs=%v", used, len(won), pool.Jobs())
	}
	for id := range won {
		pool.Release(id)
	}
	for _, tm := range pool.Snapshot() {
		if tm.Used != 0 {
			t.Fatalf("after release %s has %d used", tm.ID, tm.Used)
		}
	}
}

func BenchmarkPlace(b *testing.B) {
	tms := make([]TaskManagerSlots, 16)
	for i := range tms {
		tms[i] = TaskManagerSlots{ID: fmt.Sprintf("tm-%02d", i), Address: "x", Slots: 8}
	}
	g := graphOf(64, 64, 32, 1)
	for b.Loop() {
		if _, err := Place(g, tms); err != nil {
			b.Fatal(err)
		}
	}
}
