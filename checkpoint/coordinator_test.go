package checkpoint

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// TestCoordinator runs testdata/coordinator.txt. Commands:
//
//	new [interval=10s] [timeout=..] [min-pause=..] [max-concurrent=N]
//	    [tolerable=N] [retained=N] [next-id=N] tasks=(0/0,1/0) sources=(0/0)
//	    with one retained checkpoint per input line:
//	    id=N [savepoint] [keys=(a,b)]
//	tick t=15s
//	savepoint t=15s [stop]
//	ack id=N task=V/S t=15s [keys=(a,b)]
//	decline id=N task=V/S t=15s [reason=...]
//	committed id=N t=15s
//	commit-failed id=N t=15s [unknown]
//	finish task=V/S
//	source-ended task=V/S t=15s
//	state
//
// Times are offsets from a fixed start. Each command prints its actions,
// one a line, or "(none)".
func TestCoordinator(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var c *Coordinator
	datadriven.RunTest(t, "testdata/coordinator.txt", func(t *testing.T, d *datadriven.TestData) string {
		args := map[string][]string{}
		for _, a := range d.CmdArgs {
			args[a.Key] = a.Vals
		}
		at := func() time.Time {
			v, ok := args["t"]
			if !ok {
				d.Fatalf(t, "%s needs t=", d.Cmd)
			}
			return start.Add(duration(t, d, v[0]))
		}
		id := func() int64 {
			n, err := strconv.ParseInt(one(t, d, args, "id"), 10, 64)
			if err != nil {
				d.Fatalf(t, "id: %v", err)
			}
			return n
		}
		task := func() TaskID { return parseTask(t, d, one(t, d, args, "task")) }

		var acts []Action
		switch d.Cmd {
		case "new":
			var cfg Config
			for k, v := range args {
				switch k {
				case "interval":
					cfg.Interval = duration(t, d, v[0])
				case "timeout":
					cfg.Timeout = duration(t, d, v[0])
				case "min-pause":
					cfg.MinPause = duration(t, d, v[0])
				case "max-concurrent":
					cfg.MaxConcurrent = atoi(t, d, v[0])
				case "tolerable":
					cfg.TolerableFailed = atoi(t, d, v[0])
				case "retained":
					cfg.NumRetained = atoi(t, d, v[0])
				case "next-id":
					cfg.NextID = int64(atoi(t, d, v[0]))
				case "tasks", "sources":
				default:
					d.Fatalf(t, "unknown argument %s", k)
				}
			}
			var tasks, sources []TaskID
			for _, s := range args["tasks"] {
				tasks = append(tasks, parseTask(t, d, s))
			}
			for _, s := range args["sources"] {
				sources = append(sources, parseTask(t, d, s))
			}
			var retained []Completed
			for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
				if line == "" {
					continue
				}
				var r Completed
				for _, f := range strings.Fields(line) {
					k, v, _ := strings.Cut(f, "=")
					switch k {
					case "id":
						r.ID = int64(atoi(t, d, v))
					case "savepoint":
						r.Savepoint = true
					case "keys":
						r.Keys = strings.Split(strings.Trim(v, "()"), ",")
					default:
						d.Fatalf(t, "unknown retained field %s", k)
					}
				}
				r.ManifestKey = ManifestKey(r.ID, r.Savepoint)
				retained = append(retained, r)
			}
			c = NewCoordinator(cfg, tasks, sources, retained, start)
			return "ok"
		case "tick":
			acts = c.Tick(at())
		case "savepoint":
			var n int64
			_, stop := args["stop"]
			n, acts = c.TriggerSavepoint(at(), stop)
			if n == 0 {
				return "refused"
			}
		case "ack":
			st := SubtaskState{Operators: map[string][]byte{"op": []byte("x")}}
			if keys := args["keys"]; len(keys) > 0 {
				st.Backend = &BackendHandle{}
				for _, k := range keys {
					st.Backend.Files = append(st.Backend.Files, FileRef{Name: path.Base(k), Key: k, Size: 1})
				}
			}
			acts = c.Ack(id(), task(), st, at())
		case "decline":
			reason := "declined"
			if v, ok := args["reason"]; ok {
				reason = v[0]
			}
			acts = c.Decline(id(), task(), reason, at())
		case "committed":
			acts = c.Committed(id(), at())
		case "commit-failed":
			_, unknown := args["unknown"]
			acts = c.CommitFailed(id(), errors.New("etcd: request failed"), unknown, at())
		case "finish":
			acts = c.TaskFinished(task())
		case "source-ended":
			acts = c.SourceEnded(task(), at())
		case "state":
			var b strings.Builder
			fmt.Fprintf(&b, "pending: %v\n", c.Pending())
			for _, r := range c.Retained() {
				fmt.Fprintf(&b, "retained: %d%s keys=[%s]\n", r.ID, savepointWord(r.Savepoint), strings.Join(r.Keys, " "))
			}
			fmt.Fprintf(&b, "failures: %d next-id: %d", c.failures, c.nextID)
			return b.String()
		default:
			d.Fatalf(t, "unknown command %s", d.Cmd)
		}
		if len(acts) == 0 {
			return "(none)"
		}
		lines := make([]string, len(acts))
		for i, a := range acts {
			lines[i] = a.String()
		}
		return strings.Join(lines, "\n")
	})
}

func one(t *testing.T, d *datadriven.TestData, args map[string][]string, k string) string {
	v, ok := args[k]
	if !ok || len(v) != 1 {
		d.Fatalf(t, "%s needs one %s=", d.Cmd, k)
	}
	return v[0]
}

func duration(t *testing.T, d *datadriven.TestData, s string) time.Duration {
	v, err := time.ParseDuration(s)
	if err != nil {
		d.Fatalf(t, "%v", err)
	}
	return v
}

func atoi(t *testing.T, d *datadriven.TestData, s string) int {
	v, err := strconv.Atoi(s)
	if err != nil {
		d.Fatalf(t, "%v", err)
	}
	return v
}

func parseTask(t *testing.T, d *datadriven.TestData, s string) TaskID {
	v, sub, ok := strings.Cut(s, "/")
	if !ok {
		d.Fatalf(t, "task %q: want vertex/subtask", s)
	}
	return TaskID{Vertex: atoi(t, d, v), Subtask: atoi(t, d, sub)}
}
