package scheduler

import (
	"fmt"
	"time"

	"github.com/braidflow/braid/jobgraph"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/types"
)

// JobLifecycle decides a job's status from what happens to it: its attempts
// are deployed or fail to deploy, its subtasks report, its task managers are
// lost, its checkpoints keep failing, a user cancels it. It is pure, as
// checkpoint.Coordinator is: each event is a method that takes the time
// where it needs one and returns the actions the caller performs, in order
// (etcd writes, RPCs, timers). It starts no goroutine and is not safe for
// concurrent use; one owner feeds it.
//
// A job runs in attempts. The first is attempt 0; each restart deploys the
// next attempt from the latest completed checkpoint:
//
//	lc := NewJobLifecycle(cfg)           // CREATED
//	lc.Deploying(0, placements)          // the caller then deploys them
//	lc.Deployed(0, now)                  // RecordStatus RUNNING, StartCheckpoints
//	lc.SubtaskReport(0, 1, 0, FAILED, ..)// StopCheckpoints, RecordStatus RESTARTING, ..., ScheduleRestart{1, delay}
//	lc.RestartDelayElapsed(1, now)       // DeployAttempt{1}
//	lc.Deploying(1, placements)          // ...
type JobLifecycle struct {
	graph         *jobgraph.Graph
	restart       *RestartPolicy
	unrestartable string
	retryDelay    time.Duration

	status JobStatus
	msg    string
	// attempt is the attempt last passed to Deploying; next is the one the
	// pending restart deploys (valid while RESTARTING).
	attempt, next int32
	restarts      int32
	subtasks      map[SubtaskID]*lifecycleSubtask
	// taskManagers are those the current attempt runs on.
	taskManagers map[string]bool
	// failing is set once a failure of the current attempt is being
	// handled; later failures of that attempt are ignored.
	failing bool
	// checkpoints is set while the current attempt's checkpoints run.
	checkpoints bool
	// deploying is set between Deploying and Deployed (or DeployFailed);
	// a failure of the attempt meanwhile waits in pending and is handled at
	// Deployed, so the job neither restarts twice nor runs on a failed
	// attempt.
	deploying bool
	pending   *pendingFailure
}

// pendingFailure is a failure of an attempt still being deployed.
type pendingFailure struct {
	msg   string
	class types.ErrorClass
}

// SubtaskID names one subtask of a job graph.
type SubtaskID struct{ Vertex, Subtask int32 }

type lifecycleSubtask struct {
	taskManager string
	state       braidv1.TaskState
}

// LifecycleConfig configures a JobLifecycle.
type LifecycleConfig struct {
	// Graph gives the vertices' names and parallelism (for failure
	// messages) and the restart strategy.
	Graph *jobgraph.Graph
	// Restart decides whether a failure restarts the job; nil builds one
	// from Graph's strategy.
	Restart *RestartPolicy
	// Unrestartable, when set, says why no failure may restart the job
	// (e.g. "its results stream to a client"): a failure fails it.
	Unrestartable string
	// RetryDelay is how long a restarting job waits before it tries again
	// after an attempt could not be deployed (no slots, a task manager that
	// does not answer).
	RetryDelay time.Duration
}

// NewJobLifecycle returns the lifecycle of a CREATED job about to deploy
// attempt 0.
func NewJobLifecycle(cfg LifecycleConfig) *JobLifecycle {
	r := cfg.Restart
	if r == nil {
		r = NewRestartPolicy(cfg.Graph.Restart, nil)
	}
	return &JobLifecycle{graph: cfg.Graph, restart: r, unrestartable: cfg.Unrestartable, retryDelay: cfg.RetryDelay,
		status: JobCreated, subtasks: map[SubtaskID]*lifecycleSubtask{}, taskManagers: map[string]bool{}}
}

// Action is something the owner of a JobLifecycle must do.
type Action interface{ lifecycleAction() }

// RecordStatus: write the job's status (and message) to etcd. A terminal
// status is always followed by Finish.
type RecordStatus struct {
	Status  JobStatus
	Message string
}

// CancelAttempt: cancel the attempt's subtasks on its task managers.
type CancelAttempt struct{ Attempt int32 }

// ReleaseSlots: give the job's slots back to the pool.
type ReleaseSlots struct{}

// ScheduleRestart: after Delay, call RestartDelayElapsed(Attempt). Reason
// explains the restart, for the log.
type ScheduleRestart struct {
	Attempt int32
	Delay   time.Duration
	Reason  string
}

// DeployAttempt: place the attempt, call Deploying, deploy it (restoring
// the latest completed checkpoint when FromLatestCheckpoint, else the
// job's initial savepoint) and report Deployed or DeployFailed.
type DeployAttempt struct {
	Attempt              int32
	FromLatestCheckpoint bool
}

// StartCheckpoints: start coordinating the attempt's checkpoints.
type StartCheckpoints struct{ Attempt int32 }

// StopCheckpoints: stop coordinating checkpoints.
type StopCheckpoints struct{}

// AttributeFailure: a subtask of the attempt failed and the job will not
// restart. If a task manager of the attempt does not answer, wait (at most
// a heartbeat timeout) for it to be reported lost, so that the failure
// names it; then call FailureAttributed with this failure.
type AttributeFailure struct {
	Attempt int32
	Message string
	Class   types.ErrorClass
}

// NotifyFinishedTask: tell the checkpoint coordinator that the subtask
// finished (checkpoint.Coordinator.TaskFinished).
type NotifyFinishedTask struct{ Vertex, Subtask int32 }

// Finish: the job ended with Status (already recorded): end its results,
// wake its waiters, forget it.
type Finish struct {
	Status  JobStatus
	Message string
}

func (RecordStatus) lifecycleAction()       {}
func (CancelAttempt) lifecycleAction()      {}
func (ReleaseSlots) lifecycleAction()       {}
func (ScheduleRestart) lifecycleAction()    {}
func (DeployAttempt) lifecycleAction()      {}
func (StartCheckpoints) lifecycleAction()   {}
func (StopCheckpoints) lifecycleAction()    {}
func (AttributeFailure) lifecycleAction()   {}
func (NotifyFinishedTask) lifecycleAction() {}
func (Finish) lifecycleAction()             {}

// Status returns the job's status.
func (l *JobLifecycle) Status() JobStatus { return l.status }

// Message returns the message of the job's last status: why it failed,
// restarted or was canceled.
func (l *JobLifecycle) Message() string { return l.msg }

// Attempt returns the job's current attempt (the last one deploying).
func (l *JobLifecycle) Attempt() int32 { return l.attempt }

// Restarts returns how many times the job restarted.
func (l *JobLifecycle) Restarts() int32 { return l.restarts }

// RunsOn reports whether a subtask of the current attempt is placed on
// task manager id.
func (l *JobLifecycle) RunsOn(id string) bool { return l.taskManagers[id] }

// Restartable reports whether a failure may restart the job at all: its
// restart strategy is not none and nothing rules a restart out.
func (l *JobLifecycle) Restartable() bool {
	t := l.graph.Restart.Type
	return t != "" && t != jobgraph.RestartNone && l.unrestartable == ""
}

// Deploying makes attempt, placed at placements, the job's current one:
// every subtask DEPLOYING. It reports whether to go on deploying it: false
// when the job ended or another attempt is due meanwhile (the caller then
// releases what it allocated for the attempt).
func (l *JobLifecycle) Deploying(attempt int32, placements []*braidv1.Placement) bool {
	switch {
	case l.status == JobCreated && attempt == 0:
	case l.status == JobRestarting && attempt == l.next:
	default:
		return false
	}
	l.attempt, l.failing = attempt, false
	l.deploying, l.pending = true, nil
	l.subtasks = make(map[SubtaskID]*lifecycleSubtask, len(placements))
	l.taskManagers = map[string]bool{}
	for _, p := range placements {
		l.subtasks[SubtaskID{p.Vertex, p.Subtask}] = &lifecycleSubtask{taskManager: p.TaskManagerId, state: braidv1.TaskState_TASK_STATE_DEPLOYING}
		l.taskManagers[p.TaskManagerId] = true
	}
	return true
}

// Deployed: every task manager accepted the attempt. The job runs.
func (l *JobLifecycle) Deployed(attempt int32, now time.Time) []Action {
	if attempt != l.attempt || !l.deploying {
		return nil
	}
	l.deploying = false
	if l.status != JobCreated && l.status != JobRestarting {
		return nil // NB: a bounded job may have finished before it was recorded RUNNING
	}
	l.status, l.msg = JobRunning, ""
	l.restart.OnRunning(now)
	l.checkpoints = true
	acts := []Action{RecordStatus{Status: JobRunning}, StartCheckpoints{Attempt: attempt}}
	if p := l.pending; p != nil {
		// NB: the attempt failed while it was being deployed.
		l.pending = nil
		acts = append(acts, l.fail(p.msg, p.class, now)...)
	}
	return acts
}

// DeployFailed: the attempt could not be placed or deployed, with err.
// restorable=false says a task manager could not read the checkpoint the
// attempt restores: retrying reads the same damaged files, and the job must
// not run on part of its state, so it fails. A first attempt that fails to
// deploy fails the job; a restart is retried after the retry delay.
func (l *JobLifecycle) DeployFailed(attempt int32, err string, restorable bool, now time.Time) []Action {
	if attempt == l.attempt {
		l.deploying, l.pending = false, nil
	}
	switch {
	case l.status == JobCreated && attempt == 0:
		return l.finish(JobFailed, err)
	case l.status != JobRestarting || attempt != l.next:
		return nil
	case !restorable:
		return l.finish(JobFailed, "the job cannot be restored from its latest checkpoint: "+err)
	}
	var acts []Action
	if attempt == l.attempt {
		// NB: the attempt was (partly) deployed: its number is used up.
		acts = append(acts, CancelAttempt{Attempt: attempt})
		l.next = attempt + 1
	}
	return append(acts, ReleaseSlots{}, ScheduleRestart{Attempt: l.next, Delay: l.retryDelay, Reason: err})
}

// RestartDelayElapsed: the delay of ScheduleRestart{Attempt: attempt}
// passed.
func (l *JobLifecycle) RestartDelayElapsed(attempt int32, now time.Time) []Action {
	if l.status != JobRestarting || attempt != l.next {
		return nil
	}
	return []Action{DeployAttempt{Attempt: attempt, FromLatestCheckpoint: true}}
}

// SubtaskReport records a subtask's state as its task manager reported it.
// Reports of another attempt than the current one are ignored, as are
// reports of a subtask that already ended. The first failure of the attempt
// is handled (a restart or the job's failure); once all its subtasks
// finished, the job is FINISHED.
func (l *JobLifecycle) SubtaskReport(attempt, vertex, subtask int32, state braidv1.TaskState, errMsg string, class types.ErrorClass, now time.Time) []Action {
	if l.status.Terminal() || attempt != l.attempt {
		return nil // NB: a late report of an earlier attempt
	}
	st, ok := l.subtasks[SubtaskID{vertex, subtask}]
	if !ok || subtaskEnded(st.state) {
		// NB: a subtask's reports arrive in order, but one that ended
		// reports nothing more that could change the job.
		return nil
	}
	st.state = state
	switch state {
	case braidv1.TaskState_TASK_STATE_FAILED:
		if l.failing {
			return nil
		}
		l.failing = true
		msg := fmt.Sprintf("subtask %s (%d/%d) on task manager %s failed: %s",
			l.vertexName(vertex), subtask+1, l.parallelism(vertex), st.taskManager, errMsg)
		if !l.Restartable() {
			return []Action{AttributeFailure{Attempt: attempt, Message: msg, Class: class}}
		}
		return l.fail(msg, class, now)
	case braidv1.TaskState_TASK_STATE_FINISHED:
		var acts []Action
		if l.checkpoints {
			acts = append(acts, NotifyFinishedTask{Vertex: vertex, Subtask: subtask})
		}
		for _, s := range l.subtasks {
			if s.state != braidv1.TaskState_TASK_STATE_FINISHED {
				return acts
			}
		}
		if l.status == JobRestarting {
			return acts // NB: a failed attempt does not finish the job
		}
		return append(acts, l.finish(JobFinished, "")...)
	}
	return nil
}

// FailureAttributed: the failure of AttributeFailure, once attributed.
// Ignored when the attempt is no longer the current one.
func (l *JobLifecycle) FailureAttributed(attempt int32, msg string, class types.ErrorClass, now time.Time) []Action {
	if attempt != l.attempt {
		return nil
	}
	return l.fail(msg, class, now)
}

// TaskManagerLost: task manager tmID is gone (its lease lapsed, or it
// registered again after a restart), with its subtasks. The job fails (and
// may restart) if its current attempt runs there.
func (l *JobLifecycle) TaskManagerLost(tmID, msg string, now time.Time) []Action {
	if !l.taskManagers[tmID] {
		return nil
	}
	return l.fail(msg, types.ClassLostPeer, now)
}

// CheckpointsFailing: the checkpoint coordinator gave up (more checkpoints
// failed in a row than tolerated). The job fails and may restart.
func (l *JobLifecycle) CheckpointsFailing(reason string, now time.Time) []Action {
	return l.fail("checkpoints keep failing: "+reason, types.ClassUnknown, now)
}

// Resume takes over a job an earlier job manager ran, as RESTARTING (its
// status in etcd says so already): attempt is above any attempt the earlier
// job manager deployed. The caller then reports RestartDelayElapsed for
// NextAttempt once it may deploy.
func (l *JobLifecycle) Resume(attempt int32) {
	l.status, l.msg = JobRestarting, "the job manager restarted"
	l.attempt, l.next = attempt, attempt+1
	l.subtasks, l.taskManagers = map[SubtaskID]*lifecycleSubtask{}, map[string]bool{}
}

// Rescale makes a RUNNING job RESTARTING to deploy NextAttempt from the
// savepoint the caller just took, at another parallelism; the restart
// strategy is not consulted. It returns nothing when the job is not
// RUNNING. The caller then places and deploys the next attempt itself
// (Deploying, then Deployed or DeployFailed).
func (l *JobLifecycle) Rescale(msg string) []Action {
	if l.status != JobRunning {
		return nil
	}
	l.status, l.msg = JobRestarting, msg
	l.next = l.attempt + 1
	var acts []Action
	if l.checkpoints {
		l.checkpoints = false
		acts = append(acts, StopCheckpoints{})
	}
	return append(acts, RecordStatus{Status: JobRestarting, Message: msg}, CancelAttempt{Attempt: l.attempt}, ReleaseSlots{})
}

// NextAttempt returns the attempt a restarting job deploys next.
func (l *JobLifecycle) NextAttempt() int32 { return l.next }

// Cancel ends the job CANCELED with reason ("" when a user canceled it).
func (l *JobLifecycle) Cancel(reason string) []Action { return l.finish(JobCanceled, reason) }

// End ends the job with a terminal status decided outside the lifecycle: a
// stop with a savepoint FINISHED it, its results could not be kept FAILED
// it. It does nothing once the job ended.
func (l *JobLifecycle) End(status JobStatus, msg string) []Action {
	if !status.Terminal() {
		panic(fmt.Sprintf("scheduler: End with non-terminal status %s", status))
	}
	return l.finish(status, msg)
}

// fail handles a failure of the current attempt. The restart strategy
// decides: either the job ends FAILED with msg, or it becomes RESTARTING
// and the next attempt is deployed after the strategy's delay. Failures
// while the job is already restarting or ended are ignored.
func (l *JobLifecycle) fail(msg string, class types.ErrorClass, now time.Time) []Action {
	if l.status.Terminal() {
		return nil
	}
	if l.deploying {
		if l.pending == nil {
			l.pending = &pendingFailure{msg: msg, class: class}
		}
		return nil
	}
	if l.status == JobRestarting {
		return nil
	}
	if l.unrestartable != "" {
		return l.finish(JobFailed, msg)
	}
	restart, delay, why := l.restart.OnFailure(now, class)
	if !restart {
		if t := l.graph.Restart.Type; t != "" && t != jobgraph.RestartNone {
			msg += " (not restarted: " + why + ")"
		}
		return l.finish(JobFailed, msg)
	}
	l.status, l.msg = JobRestarting, msg
	l.restarts++
	l.next = l.attempt + 1
	var acts []Action
	if l.checkpoints {
		l.checkpoints = false
		acts = append(acts, StopCheckpoints{})
	}
	return append(acts, RecordStatus{Status: JobRestarting, Message: msg}, CancelAttempt{Attempt: l.attempt},
		ReleaseSlots{}, ScheduleRestart{Attempt: l.next, Delay: delay, Reason: why})
}

// finish moves the job to a terminal status, once: later calls return
// nothing. A job that never ran is recorded RUNNING first when its status
// cannot go straight from CREATED to the terminal one.
func (l *JobLifecycle) finish(status JobStatus, msg string) []Action {
	if l.status.Terminal() {
		return nil
	}
	from := l.status
	l.status, l.msg = status, msg
	var acts []Action
	if l.checkpoints {
		l.checkpoints = false
		acts = append(acts, StopCheckpoints{})
	}
	if from == JobCreated && !from.CanTransition(status) {
		acts = append(acts, RecordStatus{Status: JobRunning})
	}
	acts = append(acts, RecordStatus{Status: status, Message: msg})
	if status != JobFinished {
		acts = append(acts, CancelAttempt{Attempt: l.attempt})
	}
	return append(acts, ReleaseSlots{}, Finish{Status: status, Message: msg})
}

func subtaskEnded(s braidv1.TaskState) bool {
	switch s {
	case braidv1.TaskState_TASK_STATE_FINISHED, braidv1.TaskState_TASK_STATE_FAILED, braidv1.TaskState_TASK_STATE_CANCELED:
		return true
	}
	return false
}

func (l *JobLifecycle) vertex(id int32) *jobgraph.Vertex { return l.graph.Vertex(int(id)) }

func (l *JobLifecycle) vertexName(id int32) string {
	if v := l.vertex(id); v != nil && v.Name != "" {
		return v.Name
	}
	return fmt.Sprintf("vertex %d", id)
}

func (l *JobLifecycle) parallelism(id int32) int32 {
	if v := l.vertex(id); v != nil {
		return int32(v.Parallelism)
	}
	return 0
}
