package jobmanager

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/scheduler"
)

// Job statuses, as stored in etcd. A job moves CREATED -> RUNNING and then
// to exactly one terminal status; CREATED may also go straight to a terminal
// one (a deploy that fails, a bounded job that ends before RUNNING is
// recorded; etcd then sees RUNNING first, as scheduler.JobStatus demands).
const (
	StatusCreated    = string(scheduler.JobCreated)
	StatusRunning    = string(scheduler.JobRunning)
	StatusFinished   = string(scheduler.JobFinished)
	StatusFailed     = string(scheduler.JobFailed)
	StatusCanceled   = string(scheduler.JobCanceled)
	StatusRestarting = string(scheduler.JobRestarting)
)

func terminal(status string) bool { return scheduler.JobStatus(status).Terminal() }

// ResultHandler receives the bytes of a collect sink's Arrow IPC stream in
// order: the first call carries the schema message. The job manager calls
// it from one goroutine at a time; it may block, which holds back the sink
// (backpressure). It is called with end=true exactly once: when the sink has
// written its last rows, or with nil bytes when the job ends before that
// (failed or canceled). An error from it cancels the job.
//
// When the job takes checkpoints, the handler sees rows only once the
// checkpoint after them completes, and the end when the job finishes; a
// job that restarts from a checkpoint does not repeat rows (see
// resultBuffer).
type ResultHandler func(arrowIPC []byte, end bool) error

type subtaskKey struct{ vertex, subtask int32 }

// subtaskState is the job manager's view of one subtask.
type subtaskState struct {
	tmID, addr string
	state      braidv1.TaskState
	rowsIn     int64
	rowsOut    int64
	remoteOut  int64
}

// Job is a submitted job as the job manager tracks it. A job runs in
// attempts: the first deployment is attempt 0, and each restart after a
// failure deploys attempt+1 from the latest completed checkpoint.
type Job struct {
	jm      *JobManager
	id      string
	graph   *braidv1.JobGraph
	startMs int64
	done    chan struct{}
	// restart decides whether a failure restarts the job; used under mu.
	restart *scheduler.RestartPolicy

	// initial is the savepoint the first attempt restored from
	// (execution.savepoint.path), nil for none; later attempts restore it
	// until the job has a checkpoint of its own.
	initial *braidv1.RestoreSpec

	// cpNext is above every checkpoint id any attempt triggered.
	cpMu   sync.Mutex
	cpNext int64

	// transition serializes status changes with their etcd writes, so etcd
	// sees them in order.
	transition sync.Mutex

	results      ResultHandler
	resultsMu    sync.Mutex // held while the handler runs; before heldMu
	resultsEnded bool       // guarded by resultsMu
	// held holds the results back until a checkpoint covers them; nil
	// unless the job has results and takes checkpoints.
	heldMu sync.Mutex
	held   *resultBuffer // guarded by heldMu

	mu struct {
		sync.Mutex
		status   string
		errMsg   string
		endMs    int64
		subtasks map[subtaskKey]*subtaskState
		// failing is set once a failure of the current attempt is being
		// handled; later failures of that attempt are ignored.
		failing bool
		// attempt numbers the current deployment; placements and tmAddrs
		// (task manager id -> address) are where it runs.
		attempt    int32
		restarts   int32
		placements []*braidv1.Placement
		tmAddrs    map[string]string
		// cp coordinates the current attempt's checkpoints; nil when the
		// job takes none or between attempts.
		cp *checkpointRun
	}
}

func newJob(jm *JobManager, graph *braidv1.JobGraph, placements []*braidv1.Placement, results ResultHandler) *Job {
	j := &Job{
		jm:      jm,
		id:      graph.JobId,
		graph:   graph,
		startMs: time.Now().UnixMilli(),
		done:    make(chan struct{}),
		results: results,
		restart: scheduler.NewRestartPolicy(graph.Restart, nil),
	}
	if results != nil && checkpointing(graph) {
		j.held = newResultBuffer(jm.cfg.ResultBufferBytes)
	}
	j.mu.status = StatusCreated
	j.setPlacementsLocked(placements)
	return j
}

// setPlacementsLocked makes placements the current attempt's, every
// subtask DEPLOYING. j.mu must be held (or j not yet shared).
func (j *Job) setPlacementsLocked(placements []*braidv1.Placement) {
	j.mu.placements = placements
	j.mu.tmAddrs = map[string]string{}
	j.mu.subtasks = make(map[subtaskKey]*subtaskState, len(placements))
	for _, p := range placements {
		j.mu.subtasks[subtaskKey{p.Vertex, p.Subtask}] = &subtaskState{tmID: p.TaskManagerId, addr: p.Address, state: braidv1.TaskState_TASK_STATE_DEPLOYING}
		j.mu.tmAddrs[p.TaskManagerId] = p.Address
	}
}

// deployment returns the current attempt and where it runs.
func (j *Job) deployment() (attempt int32, placements []*braidv1.Placement, tmAddrs map[string]string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.mu.attempt, j.mu.placements, j.mu.tmAddrs
}

// ID returns the job id.
func (j *Job) ID() string { return j.id }

// Status returns the current status.
func (j *Job) Status() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.mu.status
}

// Done is closed when the job reaches a terminal status.
func (j *Job) Done() <-chan struct{} { return j.done }

// Wait blocks until the job reaches a terminal status or ctx ends. It
// returns the status, and for a FAILED or CANCELED job an error carrying the
// reason; when ctx ends first it returns ctx.Err().
func (j *Job) Wait(ctx context.Context) (string, error) {
	select {
	case <-j.done:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.mu.status == StatusFailed:
		return j.mu.status, errors.New(j.mu.errMsg)
	case j.mu.status == StatusCanceled && j.mu.errMsg != "":
		return j.mu.status, errors.New(j.mu.errMsg)
	}
	return j.mu.status, nil
}

// runsOn reports whether a subtask of the job's current attempt is placed
// on task manager id.
func (j *Job) runsOn(id string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	_, ok := j.mu.tmAddrs[id]
	return ok
}

// applyReport records a subtask's report. It returns the terminal status the
// report implies ("" for none) and, for a failure, its message.
func (j *Job) applyReport(r *braidv1.TaskStatusReport) (status, msg string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if terminal(j.mu.status) || r.Attempt != j.mu.attempt {
		return "", "" // NB: a late report of an earlier attempt
	}
	st, ok := j.mu.subtasks[subtaskKey{r.Vertex, r.Subtask}]
	if !ok || subtaskEnded(st.state) {
		// NB: a subtask's reports arrive in order, but one that ended
		// reports nothing more that could change the job.
		return "", ""
	}
	st.state = r.State
	st.rowsIn, st.rowsOut, st.remoteOut = r.RowsIn, r.RowsOut, r.RemoteRowsOut
	switch r.State {
	case braidv1.TaskState_TASK_STATE_FAILED:
		if j.mu.failing {
			return "", ""
		}
		j.mu.failing = true
		return StatusFailed, fmt.Sprintf("subtask %s (%d/%d) on task manager %s failed: %s",
			j.vertexName(r.Vertex), r.Subtask+1, j.parallelism(r.Vertex), r.TaskManagerId, r.Error)
	case braidv1.TaskState_TASK_STATE_FINISHED:
		if cp := j.mu.cp; cp != nil {
			cp.taskFinished(int(r.Vertex), int(r.Subtask))
		}
		for _, s := range j.mu.subtasks {
			if s.state != braidv1.TaskState_TASK_STATE_FINISHED {
				return "", ""
			}
		}
		return StatusFinished, ""
	}
	return "", ""
}

func subtaskEnded(s braidv1.TaskState) bool {
	switch s {
	case braidv1.TaskState_TASK_STATE_FINISHED, braidv1.TaskState_TASK_STATE_FAILED, braidv1.TaskState_TASK_STATE_CANCELED:
		return true
	}
	return false
}

func (j *Job) vertex(id int32) *braidv1.Vertex {
	for _, v := range j.graph.Vertices {
		if v.Id == id {
			return v
		}
	}
	return nil
}

func (j *Job) vertexName(id int32) string {
	if v := j.vertex(id); v != nil && v.Name != "" {
		return v.Name
	}
	return fmt.Sprintf("vertex %d", id)
}

func (j *Job) parallelism(id int32) int32 {
	if v := j.vertex(id); v != nil {
		return v.Parallelism
	}
	return 0
}

// setRunning moves a CREATED job to RUNNING.
func (j *Job) setRunning() {
	j.transition.Lock()
	defer j.transition.Unlock()
	j.mu.Lock()
	if j.mu.status != StatusCreated && j.mu.status != StatusRestarting {
		j.mu.Unlock()
		return
	}
	j.mu.status = StatusRunning
	j.restart.OnRunning(time.Now())
	j.mu.Unlock()
	j.jm.recordStatus(j, StatusRunning, "", 0)
}

// finish moves the job to a terminal status, once: later calls do nothing.
// It records the status in etcd, ends the result stream, cancels the job on
// its task managers (unless it finished) and releases its slots.
func (j *Job) finish(status, msg string) {
	j.transition.Lock()
	j.mu.Lock()
	if terminal(j.mu.status) {
		j.mu.Unlock()
		j.transition.Unlock()
		return
	}
	from := j.mu.status
	j.mu.status, j.mu.errMsg, j.mu.endMs = status, msg, time.Now().UnixMilli()
	endMs := j.mu.endMs
	cp := j.mu.cp
	j.mu.cp = nil
	j.mu.Unlock()
	cp.stop()
	if from == StatusCreated && !scheduler.JobStatus(from).CanTransition(scheduler.JobStatus(status)) {
		j.jm.recordStatus(j, StatusRunning, "", 0)
	}
	j.jm.recordStatus(j, status, msg, endMs)
	j.transition.Unlock()

	log := j.jm.log.With(zap.String("job", j.id), zap.String("status", status))
	if msg != "" {
		log.Warn("job ended", zap.String("error", msg))
	} else {
		log.Info("job ended")
	}
	j.jm.metrics.jobEnded(status)
	if status != StatusFinished {
		j.jm.cancelOnTaskManagers(j, "")
	}
	// NB: slots and the result stream are settled before Wait returns, so
	// a caller that saw the end can submit again at once.
	j.jm.pool.Release(j.id)
	j.endResults(status == StatusFinished)
	close(j.done)
	j.jm.retire(j.id)
}

// endedJobsInMemory is how many ended jobs the job manager keeps with their
// subtask details; older ones are described from their etcd records.
const endedJobsInMemory = 256

// retire notes that job id ended and forgets the oldest ended jobs beyond
// endedJobsInMemory.
func (jm *JobManager) retire(id string) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	jm.mu.ended = append(jm.mu.ended, id)
	for len(jm.mu.ended) > endedJobsInMemory {
		delete(jm.mu.jobs, jm.mu.ended[0])
		jm.mu.ended = jm.mu.ended[1:]
	}
}

// deliver passes one result chunk to the handler. It reports whether the
// stream is still open.
func (j *Job) deliver(ipc []byte, end bool) error {
	if j.results == nil {
		return nil
	}
	j.resultsMu.Lock()
	defer j.resultsMu.Unlock()
	if j.resultsEnded {
		return nil
	}
	if end {
		j.resultsEnded = true
	}
	return j.results(ipc, end)
}

// endResults delivers the end of the result stream if the sink has not.
// Results held back for checkpoints go first: all of them when the job
// finished (no attempt will replay them), else those a checkpoint covers.
func (j *Job) endResults(finished bool) {
	if j.results == nil {
		return
	}
	// NB: a handler blocked on a slow client holds resultsMu; ending the
	// stream waits for it rather than calling the handler concurrently.
	j.resultsMu.Lock()
	defer j.resultsMu.Unlock()
	if j.resultsEnded {
		return
	}
	j.resultsEnded = true
	var out [][]byte
	if j.held != nil {
		j.heldMu.Lock()
		out = j.held.take(finished)
		j.heldMu.Unlock()
	}
	for _, b := range out {
		if err := j.results(b, false); err != nil {
			j.jm.log.Debug("result handler refused the last results", zap.String("job", j.id), zap.Error(err))
			return
		}
	}
	if err := j.results(nil, true); err != nil {
		j.jm.log.Debug("result handler refused the end of results", zap.String("job", j.id), zap.Error(err))
	}
}
