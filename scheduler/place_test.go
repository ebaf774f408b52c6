package scheduler

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/braidflow/braid/jobgraph"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
)

// TestPlace runs testdata/place.txt. Each "place" case lists task managers
// ("tm <id> slots=<n> [used=<n>]") and vertices ("vertex <id> <name>
// p=<parallelism>") and expects one line per vertex with the task manager of
// each subtask, or the error. Rewrite with -rewrite.
func TestPlace(t *testing.T) {
	datadriven.RunTest(t, "testdata/place.txt", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "place":
			tms, graph := parseCase(t, d.Input)
			placements, err := Place(graph, tms)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			checkPlacements(t, graph, tms, placements)
			return formatPlacements(graph, placements)
		case "default-parallelism":
			tms, _ := parseCase(t, d.Input)
			return fmt.Sprintf("%d\n", DefaultParallelism(tms))
		default:
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		}
	})
}

// TestSlotPool runs testdata/slotpool.txt against one pool per file:
// "add id=<id> slots=<n>", "remove id=<id>", "schedule job=<id>" (vertices
// as input), "release job=<id>" and "snapshot".
func TestSlotPool(t *testing.T) {
	pool := NewSlotPool()
	datadriven.RunTest(t, "testdata/slotpool.txt", func(t *testing.T, d *datadriven.TestData) string {
		var out strings.Builder
		switch d.Cmd {
		case "add":
			var id string
			var slots int
			d.ScanArgs(t, "id", &id)
			d.ScanArgs(t, "slots", &slots)
			pool.Add(id, id+":9000", slots)
		case "remove":
			var id string
			d.ScanArgs(t, "id", &id)
			fmt.Fprintf(&out, "affected jobs: %v\n", pool.Remove(id))
		case "schedule", "place-allocate":
			var job string
			d.ScanArgs(t, "job", &job)
			_, graph := parseCase(t, d.Input)
			var placements []*braidv1.Placement
			var err error
			if d.Cmd == "schedule" {
				placements, err = pool.Schedule(job, graph)
			} else {
				// The two-step path the job manager may take.
				placements, err = Place(graph, pool.Snapshot())
				if err == nil {
					err = pool.Allocate(job, placements)
				}
			}
			if err != nil {
				fmt.Fprintf(&out, "error: %v\n", err)
				break
			}
			out.WriteString(formatPlacements(graph, placements))
		case "allocate":
			// Input lines: "<vertex> <subtask> <task manager>".
			var job string
			d.ScanArgs(t, "job", &job)
			var placements []*braidv1.Placement
			for _, line := range nonEmptyLines(d.Input) {
				f := strings.Fields(line)
				placements = append(placements, &braidv1.Placement{
					Vertex: int32(atoi(t, f[0])), Subtask: int32(atoi(t, f[1])), TaskManagerId: f[2],
				})
			}
			if err := pool.Allocate(job, placements); err != nil {
				fmt.Fprintf(&out, "error: %v\n", err)
			}
		case "release":
			var job string
			d.ScanArgs(t, "job", &job)
			pool.Release(job)
		case "snapshot":
		default:
			t.Fatalf("unknown command %q", d.Cmd)
		}
		for _, tm := range pool.Snapshot() {
			fmt.Fprintf(&out, "%s: %d/%d used\n", tm.ID, tm.Used, tm.Slots)
		}
		fmt.Fprintf(&out, "jobs: %v\n", pool.Jobs())
		return out.String()
	})
}

func parseCase(t *testing.T, input string) ([]TaskManagerSlots, *jobgraph.Graph) {
	t.Helper()
	var tms []TaskManagerSlots
	graph := &jobgraph.Graph{JobID: "job"}
	for _, line := range nonEmptyLines(input) {
		f := strings.Fields(line)
		switch f[0] {
		case "tm":
			tm := TaskManagerSlots{ID: f[1], Address: f[1] + ":9000"}
			for _, kv := range f[2:] {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "slots":
					tm.Slots = atoi(t, v)
				case "used":
					tm.Used = atoi(t, v)
				default:
					t.Fatalf("bad tm field %q", kv)
				}
			}
			tms = append(tms, tm)
		case "vertex":
			p, ok := strings.CutPrefix(f[3], "p=")
			if !ok {
				t.Fatalf("bad vertex line %q", line)
			}
			graph.Vertices = append(graph.Vertices, &jobgraph.Vertex{
				ID: atoi(t, f[1]), Name: f[2], Parallelism: atoi(t, p),
			})
		default:
			t.Fatalf("bad line %q", line)
		}
	}
	return tms, graph
}

func formatPlacements(graph *jobgraph.Graph, placements []*braidv1.Placement) string {
	names := map[int32]string{}
	for _, v := range graph.Vertices {
		names[int32(v.ID)] = v.Name
	}
	var b strings.Builder
	last := int32(-1)
	for _, p := range placements {
		if p.Vertex != last {
			if last != -1 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "%d %s:", p.Vertex, names[p.Vertex])
			last = p.Vertex
		}
		fmt.Fprintf(&b, " %s", p.TaskManagerId)
	}
	b.WriteByte('\n')
	return b.String()
}

// checkPlacements asserts the invariants every placement must keep,
// whatever the expected output says: each subtask exactly once, in order,
// subtask i of every vertex on one task manager, addresses filled in, no
// task manager over its free slots.
func checkPlacements(t *testing.T, graph *jobgraph.Graph, tms []TaskManagerSlots, placements []*braidv1.Placement) {
	t.Helper()
	addr := map[string]string{}
	free := map[string]int{}
	for _, tm := range tms {
		addr[tm.ID] = tm.Address
		free[tm.ID] = tm.Free()
	}
	want := 0
	for _, v := range graph.Vertices {
		want += v.Parallelism
	}
	if len(placements) != want {
		t.Fatalf("%d placements for %d subtasks", len(placements), want)
	}
	slotOf := map[int32]string{}
	seen := map[[2]int32]bool{}
	for _, p := range placements {
		key := [2]int32{p.Vertex, p.Subtask}
		if seen[key] {
			t.Fatalf("subtask %v placed twice", key)
		}
		seen[key] = true
		if p.Address != addr[p.TaskManagerId] {
			t.Fatalf("placement %v has address %q", p, p.Address)
		}
		if tm, ok := slotOf[p.Subtask]; ok && tm != p.TaskManagerId {
			t.Fatalf("subtask index %d split over %s and %s", p.Subtask, tm, p.TaskManagerId)
		}
		slotOf[p.Subtask] = p.TaskManagerId
	}
	for tm, n := range slotsPerTaskManager(placements) {
		if n > free[tm] {
			t.Fatalf("task manager %s given %d slots, %d free", tm, n, free[tm])
		}
	}
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
