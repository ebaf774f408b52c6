package scheduler

import "fmt"

// JobStatus is a job's lifecycle state, the exact string stored in etcd at
// jobs/<id>/status.
//
//	CREATED ──> RUNNING ──> FINISHED
//	   │         │  ▲ ├──────> FAILED
//	   │         │  │ └──────> CANCELED
//	   │         ▼  │
//	   │       RESTARTING ───> FAILED, CANCELED
//	   ├──────────────────> FAILED     (deployment failed)
//	   └──────────────────> CANCELED   (cancelled before it ran)
//
// FINISHED, FAILED and CANCELED are terminal: nothing leaves them. A job
// whose subtask failed and that its restart strategy restarts is
// RESTARTING until it is deployed again (from its latest checkpoint).
type JobStatus string

// The job statuses.
const (
	JobCreated  JobStatus = "CREATED"
	JobRunning  JobStatus = "RUNNING"
	JobFinished JobStatus = "FINISHED"
	JobFailed   JobStatus = "FAILED"
	JobCanceled JobStatus = "CANCELED"
	// JobRestarting: a subtask failed; the job waits for its restart delay
	// and for slots, then runs again from its latest checkpoint.
	JobRestarting JobStatus = "RESTARTING"
)

// transitions lists each status's legal successors.
var transitions = map[JobStatus][]JobStatus{
	JobCreated:    {JobRunning, JobFailed, JobCanceled},
	JobRunning:    {JobFinished, JobFailed, JobCanceled, JobRestarting},
	JobRestarting: {JobRunning, JobFailed, JobCanceled},
	JobFinished:   nil,
	JobFailed:     nil,
	JobCanceled:   nil,
}

// ParseJobStatus returns the status named s, or an error for any other
// string.
func ParseJobStatus(s string) (JobStatus, error) {
	st := JobStatus(s)
	if !st.Valid() {
		return "", fmt.Errorf("scheduler: unknown job status %q", s)
	}
	return st, nil
}

// Valid reports whether s is one of the six statuses.
func (s JobStatus) Valid() bool {
	_, ok := transitions[s]
	return ok
}

// Terminal reports whether s is final: FINISHED, FAILED or CANCELED.
func (s JobStatus) Terminal() bool {
	return s.Valid() && len(transitions[s]) == 0
}

// CanTransition reports whether a job in status s may move to status to.
// Staying in the same status is not a transition and returns false; an
// unknown status on either side returns false.
func (s JobStatus) CanTransition(to JobStatus) bool {
	for _, next := range transitions[s] {
		if next == to {
			return true
		}
	}
	return false
}

// CheckTransition adapts CanTransition to metastore.Store.SetStatusCheck,
// which works on the stored strings.
func CheckTransition(from, to string) bool {
	return JobStatus(from).CanTransition(JobStatus(to))
}
