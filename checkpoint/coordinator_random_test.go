package checkpoint

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestCoordinatorRandom drives coordinators with random event sequences,
// with tasks that upload the way Uploader does (new SSTs under fresh keys,
// reusing only the SSTs of the last checkpoint they were notified
// complete), and checks the coordinator's promises against a model:
//
//   - no key of a retained checkpoint or savepoint, and no manifest of one,
//     is ever deleted;
//   - the etcd pointer of a savepoint is never deleted;
//   - nothing is deleted for a checkpoint whose commit outcome is unknown;
//   - ids increase;
//   - every retained checkpoint can be restored: all its keys exist, even
//     when completion notices reach the tasks late.
func TestCoordinatorRandom(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runRandom(t, seed) })
	}
}

func runRandom(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	tasks := []TaskID{{0, 0}, {0, 1}, {1, 0}}
	cfg := Config{
		Interval:        10 * time.Second,
		Timeout:         time.Duration(20+rng.IntN(40)) * time.Second,
		MaxConcurrent:   1 + rng.IntN(3),
		NumRetained:     1 + rng.IntN(3),
		TolerableFailed: -1,
	}
	now := time.Unix(0, 0)
	c := NewCoordinator(cfg, tasks, tasks[:1], nil, now)

	stored := map[string]bool{} // keys in storage
	// Each task's view: name -> key of the SSTs of the last checkpoint it
	// was notified complete; and its local SST names.
	confirmed := map[TaskID]map[string]string{}
	inbox := map[TaskID][]map[string]string{}
	local := map[TaskID][]string{}
	handles := map[int64]map[TaskID][]string{} // what each task uploaded per checkpoint
	nextSST := 0
	unknown := map[int64]bool{}
	committing := map[int64]bool{}
	savepoints := map[int64]bool{}
	var lastID int64
	for _, tk := range tasks {
		confirmed[tk] = map[string]string{}
	}

	retainedKeys := func() map[string]bool {
		m := map[string]bool{}
		for _, r := range c.Retained() {
			m[r.ManifestKey] = true
			for _, k := range r.Keys {
				m[k] = true
			}
		}
		return m
	}
	apply := func(acts []Action) {
		for _, a := range acts {
			switch a := a.(type) {
			case Trigger:
				if a.ID <= lastID {
					t.Fatalf("id %d after %d", a.ID, lastID)
				}
				lastID = a.ID
				if a.Savepoint {
					savepoints[a.ID] = true
				}
			case CommitManifest:
				stored[a.ManifestKey] = true
				committing[a.ID] = true
			case Notify:
				delete(committing, a.ID)
				if a.Completed {
					for tk, keys := range handles[a.ID] {
						if savepoints[a.ID] {
							continue
						}
						m := map[string]string{}
						for _, k := range keys {
							if strings.HasPrefix(k, "shared/") {
								m[k[strings.LastIndex(k, "/")+1:]] = k
							}
						}
						inbox[tk] = append(inbox[tk], m)
					}
				}
			case Delete:
				keep := retainedKeys()
				for _, id := range a.Checkpoints {
					if savepoints[id] {
						t.Fatalf("%v: deletes savepoint %d", a, id)
					}
				}
				for _, k := range a.Keys {
					if keep[k] {
						t.Fatalf("%v: deletes %s, which a retained checkpoint references", a, k)
					}
					delete(stored, k)
				}
				for _, p := range a.Prefixes {
					for k := range stored {
						if strings.HasPrefix(k, p) {
							if keep[k] {
								t.Fatalf("%v: deletes %s, which a retained checkpoint references", a, k)
							}
							delete(stored, k)
						}
					}
				}
				for id := range unknown {
					for _, k := range a.Keys {
						if strings.HasPrefix(k, Dir(id, savepoints[id])+"/") {
							t.Fatalf("%v: deletes %s of checkpoint %d, whose commit outcome is unknown", a, k, id)
						}
					}
				}
			}
		}
		for k := range retainedKeys() {
			if !stored[k] {
				t.Fatalf("retained key %s is not in storage", k)
			}
		}
	}

	for step := 0; step < 300; step++ {
		now = now.Add(time.Duration(rng.IntN(6)) * time.Second)
		// Completion notices reach each task late, in order.
		for tk, q := range inbox {
			for len(q) > 0 && rng.IntN(3) == 0 {
				confirmed[tk], q = q[0], q[1:]
			}
			inbox[tk] = q
		}
		pend := c.Pending()
		switch r := rng.IntN(100); {
		case r < 30:
			apply(c.Tick(now))
		case r < 33:
			_, acts := c.TriggerSavepoint(now, false)
			apply(acts)
		case r < 75 && len(pend) > 0:
			id := pend[rng.IntN(len(pend))]
			tk := tasks[rng.IntN(len(tasks))]
			// Pebble: compact away some SSTs, flush a new one.
			var files []string
			for _, n := range local[tk] {
				if rng.IntN(4) > 0 {
					files = append(files, n)
				}
			}
			nextSST++
			files = append(files, fmt.Sprintf("%06d.sst", nextSST))
			local[tk] = files
			var keys []string
			for _, n := range files {
				if k, ok := confirmed[tk][n]; ok && !savepoints[id] {
					keys = append(keys, k)
					continue
				}
				k := fmt.Sprintf("%s/%d-%d/%s", Dir(id, true), tk.Vertex, tk.Subtask, n)
				if !savepoints[id] {
					k = fmt.Sprintf("shared/%d-%d-%d/%s", tk.Vertex, tk.Subtask, id, n)
				}
				stored[k] = true
				keys = append(keys, k)
			}
			priv := fmt.Sprintf("%s/%d-%d/MANIFEST", Dir(id, savepoints[id]), tk.Vertex, tk.Subtask)
			stored[priv] = true
			keys = append(keys, priv)
			if handles[id] == nil {
				handles[id] = map[TaskID][]string{}
			}
			if _, acked := handles[id][tk]; !acked {
				handles[id][tk] = keys
			}
			h := &BackendHandle{}
			for _, k := range keys {
				h.Files = append(h.Files, FileRef{Name: k[strings.LastIndex(k, "/")+1:], Key: k})
			}
			apply(c.Ack(id, tk, SubtaskState{Backend: h}, now))
		case r < 80 && len(pend) > 0:
			apply(c.Decline(pend[rng.IntN(len(pend))], tasks[rng.IntN(len(tasks))], "random", now))
		case r < 100:
			for id := range committing {
				switch rng.IntN(6) {
				case 0:
					unknown[id] = true
					apply(c.CommitFailed(id, errors.New("timeout"), true, now))
				case 1:
					delete(unknown, id)
					apply(c.CommitFailed(id, errors.New("lost leadership"), false, now))
				default:
					delete(unknown, id)
					apply(c.Committed(id, now))
				}
				break
			}
		}
	}
}
