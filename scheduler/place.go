package scheduler

import (
	"fmt"
	"sort"

	"github.com/braidflow/braid/jobgraph"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
)

// TaskManagerSlots is a task manager's capacity as placement sees it: Slots
// in total, Used of them taken by running jobs.
type TaskManagerSlots struct {
	ID, Address string
	Slots, Used int
}

// Free returns the number of slots not in use (never negative).
func (t TaskManagerSlots) Free() int { return max(t.Slots-t.Used, 0) }

// maxDefaultParallelism caps DefaultParallelism: a small local cluster
// should not spread a simple query over every core.
const maxDefaultParallelism = 4

// DefaultParallelism returns the parallelism for a job that sets none:
// min(free slots, 4), and at least 1 so that planning can proceed (Place
// then reports a cluster with no free slots).
func DefaultParallelism(tms []TaskManagerSlots) int {
	free := 0
	for _, tm := range tms {
		free += tm.Free()
	}
	return max(min(free, maxDefaultParallelism), 1)
}

// JobSlots returns the number of slots graph needs: with slot sharing, one
// slot holds subtask i of every vertex, so it is the largest vertex
// parallelism.
func JobSlots(graph *jobgraph.Graph) int {
	p := 0
	for _, v := range graph.Vertices {
		p = max(p, v.Parallelism)
	}
	return p
}

// Place assigns every subtask of graph to a task manager. It is pure: tms is
// read, not changed, and the caller records the result (SlotPool.Allocate).
//
// Slot sharing is as in Flink: slot i holds subtask i of every vertex, so a
// job whose largest vertex parallelism is p takes p slots and subtasks that
// exchange data over forward edges sit in one process. The p slots are taken
// round robin over the task managers, most free slots first (ties by id), so
// a parallel operator spreads over all of them. Place fails when a vertex
// has a parallelism below 1, when task manager ids repeat, or when fewer than
// p slots are free; the error names what is needed and what is free.
//
// Placements are ordered by vertex id, then subtask index.
func Place(graph *jobgraph.Graph, tms []TaskManagerSlots) ([]*braidv1.Placement, error) {
	if graph == nil || len(graph.Vertices) == 0 {
		return nil, fmt.Errorf("scheduler: job has no vertices")
	}
	for _, v := range graph.Vertices {
		if v.Parallelism < 1 {
			return nil, fmt.Errorf("scheduler: vertex %d (%s) has parallelism %d; it must be at least 1",
				v.ID, v.Name, v.Parallelism)
		}
	}
	slots, err := takeSlots(JobSlots(graph), tms)
	if err != nil {
		return nil, err
	}
	vertices := append([]*jobgraph.Vertex(nil), graph.Vertices...)
	sort.SliceStable(vertices, func(a, b int) bool { return vertices[a].ID < vertices[b].ID })
	var out []*braidv1.Placement
	for _, v := range vertices {
		for i := range v.Parallelism {
			tm := slots[i]
			out = append(out, &braidv1.Placement{
				Vertex:        int32(v.ID),
				Subtask:       int32(i),
				TaskManagerId: tm.ID,
				Address:       tm.Address,
			})
		}
	}
	return out, nil
}

// takeSlots picks n slots round robin over tms, most free first, and returns
// the task manager holding each slot in slot order.
func takeSlots(n int, tms []TaskManagerSlots) ([]TaskManagerSlots, error) {
	order := make([]TaskManagerSlots, 0, len(tms))
	seen := make(map[string]bool, len(tms))
	free := 0
	for _, tm := range tms {
		if seen[tm.ID] {
			return nil, fmt.Errorf("scheduler: task manager %q listed twice", tm.ID)
		}
		seen[tm.ID] = true
		if tm.Free() > 0 {
			order = append(order, tm)
			free += tm.Free()
		}
	}
	if free < n {
		return nil, &InsufficientSlotsError{Need: n, Free: free, Total: totalSlots(tms), TaskManagers: len(tms)}
	}
	sort.Slice(order, func(a, b int) bool {
		if fa, fb := order[a].Free(), order[b].Free(); fa != fb {
			return fa > fb
		}
		return order[a].ID < order[b].ID
	})
	left := make([]int, len(order))
	for i, tm := range order {
		left[i] = tm.Free()
	}
	out := make([]TaskManagerSlots, 0, n)
	for len(out) < n {
		for i := range order {
			if len(out) == n {
				break
			}
			if left[i] > 0 {
				left[i]--
				out = append(out, order[i])
			}
		}
	}
	return out, nil
}

func totalSlots(tms []TaskManagerSlots) int {
	n := 0
	for _, tm := range tms {
		n += tm.Slots
	}
	return n
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
