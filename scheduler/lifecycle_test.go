package scheduler

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/braidflow/braid/jobgraph"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/types"
)

// TestJobLifecycle runs testdata/lifecycle.txt. Commands:
//
//	new vertices=(source:2,sink:1) [unrestartable=<why>] [retry=500ms]
//	    [type=fixed-delay attempts=N delay=1s ...] (restart strategy, as in
//	    restart.txt; none when absent)
//	deploying attempt=N placements=(0/0@tm1,0/1@tm2,1/0@tm1)
//	deployed attempt=N t=1s
//	deploy-failed attempt=N t=1s [damaged]     (input: the error)
//	report attempt=N task=V/S state=running|finished|failed|canceled
//	    t=1s [class=user]                      (input: the error)
//	attributed attempt=N t=1s [class=..]       (input: the message)
//	tm-lost tm=tm1 t=1s                        (input: the message)
//	delay-elapsed attempt=N t=1s
//	checkpoints-failing t=1s                   (input: the reason)
//	resume attempt=N                           (a job of an earlier leader)
//	rescale                                    (input: the message)
//	cancel                                     (input: the reason)
//	end status=FINISHED                        (input: the message)
//	state
//
// Vertex ids are the positions in vertices=. Times are offsets from a fixed
// start. Each event prints its actions, one a line, or "(none)"; deploying
// prints whether to go on. Rewrite with -rewrite.
func TestJobLifecycle(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var l *JobLifecycle
	var recorded JobStatus // the status etcd would hold
	datadriven.RunTest(t, "testdata/lifecycle.txt", func(t *testing.T, d *datadriven.TestData) string {
		at := func() time.Time {
			var s string
			d.ScanArgs(t, "t", &s)
			off, err := time.ParseDuration(s)
			if err != nil {
				d.Fatalf(t, "t: %v", err)
			}
			return start.Add(off)
		}
		attempt := func() int32 {
			var n int
			d.ScanArgs(t, "attempt", &n)
			return int32(n)
		}
		class := func() types.ErrorClass {
			if !d.HasArg("class") {
				return types.ClassUnknown
			}
			var c string
			d.ScanArgs(t, "class", &c)
			return parseClass(t, c)
		}
		input := strings.TrimSpace(d.Input)

		var acts []Action
		switch d.Cmd {
		case "new":
			l, recorded = newLifecycle(t, d), JobCreated
			return "ok"
		case "deploying":
			var ps []*braidv1.Placement
			for _, s := range d.CmdArgs[argIndex(t, d, "placements")].Vals {
				task, tm, ok := strings.Cut(s, "@")
				if !ok {
					d.Fatalf(t, "placement %q: want V/S@tm", s)
				}
				v, sub := parseSubtask(t, d, task)
				ps = append(ps, &braidv1.Placement{Vertex: v, Subtask: sub, TaskManagerId: tm})
			}
			return fmt.Sprintf("deploy: %t", l.Deploying(attempt(), ps))
		case "deployed":
			acts = l.Deployed(attempt(), at())
		case "deploy-failed":
			acts = l.DeployFailed(attempt(), input, !d.HasArg("damaged"), at())
		case "report":
			var task, state string
			d.ScanArgs(t, "task", &task)
			d.ScanArgs(t, "state", &state)
			v, sub := parseSubtask(t, d, task)
			st, ok := braidv1.TaskState_value["TASK_STATE_"+strings.ToUpper(state)]
			if !ok {
				d.Fatalf(t, "unknown state %q", state)
			}
			acts = l.SubtaskReport(attempt(), v, sub, braidv1.TaskState(st), input, class(), at())
		case "attributed":
			acts = l.FailureAttributed(attempt(), input, class(), at())
		case "tm-lost":
			var tm string
			d.ScanArgs(t, "tm", &tm)
			acts = l.TaskManagerLost(tm, input, at())
		case "delay-elapsed":
			acts = l.RestartDelayElapsed(attempt(), at())
		case "checkpoints-failing":
			acts = l.CheckpointsFailing(input, at())
		case "resume":
			l.Resume(attempt())
			recorded = JobRestarting
			return fmt.Sprintf("next=%d", l.NextAttempt())
		case "rescale":
			acts = l.Rescale(input)
		case "cancel":
			acts = l.Cancel(input)
		case "end":
			var s string
			d.ScanArgs(t, "status", &s)
			acts = l.End(JobStatus(s), input)
		case "state":
			return fmt.Sprintf("status=%s attempt=%d restarts=%d restartable=%t message=%q",
				l.Status(), l.Attempt(), l.Restarts(), l.Restartable(), l.Message())
		default:
			d.Fatalf(t, "unknown command %s", d.Cmd)
		}
		if len(acts) == 0 {
			return "(none)"
		}
		lines := make([]string, len(acts))
		for i, a := range acts {
			lines[i] = formatAction(a)
			// NB: etcd refuses an illegal transition (SetStatusCheck), so
			// the lifecycle must never ask for one.
			if r, ok := a.(RecordStatus); ok {
				if !recorded.CanTransition(r.Status) {
					d.Fatalf(t, "illegal transition %s -> %s", recorded, r.Status)
				}
				recorded = r.Status
			}
		}
		return strings.Join(lines, "\n")
	})
}

func newLifecycle(t *testing.T, d *datadriven.TestData) *JobLifecycle {
	cfg := LifecycleConfig{Graph: &jobgraph.Graph{}, RetryDelay: 500 * time.Millisecond}
	var policy []datadriven.CmdArg
	for _, a := range d.CmdArgs {
		switch a.Key {
		case "vertices":
			for i, v := range a.Vals {
				name, p, _ := strings.Cut(v, ":")
				n, err := strconv.Atoi(p)
				if err != nil {
					d.Fatalf(t, "vertex %q: want name:parallelism", v)
				}
				cfg.Graph.Vertices = append(cfg.Graph.Vertices, &jobgraph.Vertex{ID: i, Name: name, Parallelism: n})
			}
		case "unrestartable":
			cfg.Unrestartable = strings.Join(a.Vals, " ")
		case "retry":
			r, err := time.ParseDuration(a.Vals[0])
			if err != nil {
				d.Fatalf(t, "retry: %v", err)
			}
			cfg.RetryDelay = r
		default:
			policy = append(policy, a)
		}
	}
	if len(policy) > 0 {
		pd := *d
		pd.CmdArgs = policy
		cfg.Graph.Restart, _ = parsePolicy(t, &pd)
	}
	return NewJobLifecycle(cfg)
}

func argIndex(t *testing.T, d *datadriven.TestData, key string) int {
	for i, a := range d.CmdArgs {
		if a.Key == key {
			return i
		}
	}
	d.Fatalf(t, "%s needs %s=", d.Cmd, key)
	return -1
}

func parseSubtask(t *testing.T, d *datadriven.TestData, s string) (vertex, subtask int32) {
	v, sub, ok := strings.Cut(s, "/")
	a, err1 := strconv.Atoi(v)
	b, err2 := strconv.Atoi(sub)
	if !ok || err1 != nil || err2 != nil {
		d.Fatalf(t, "subtask %q: want vertex/subtask", s)
	}
	return int32(a), int32(b)
}

func formatAction(a Action) string {
	switch a := a.(type) {
	case RecordStatus:
		if a.Message == "" {
			return "record-status " + string(a.Status)
		}
		return fmt.Sprintf("record-status %s %q", a.Status, a.Message)
	case CancelAttempt:
		return fmt.Sprintf("cancel-attempt %d", a.Attempt)
	case ReleaseSlots:
		return "release-slots"
	case ScheduleRestart:
		return fmt.Sprintf("schedule-restart attempt=%d delay=%s reason=%q", a.Attempt, a.Delay, a.Reason)
	case DeployAttempt:
		return fmt.Sprintf("deploy-attempt %d from-latest-checkpoint=%t", a.Attempt, a.FromLatestCheckpoint)
	case StartCheckpoints:
		return fmt.Sprintf("start-checkpoints %d", a.Attempt)
	case StopCheckpoints:
		return "stop-checkpoints"
	case AttributeFailure:
		return fmt.Sprintf("attribute-failure attempt=%d class=%s %q", a.Attempt, a.Class, a.Message)
	case NotifyFinishedTask:
		return fmt.Sprintf("notify-finished-task %d/%d", a.Vertex, a.Subtask)
	case Finish:
		if a.Message == "" {
			return "finish " + string(a.Status)
		}
		return fmt.Sprintf("finish %s %q", a.Status, a.Message)
	}
	return fmt.Sprintf("%T", a)
}
