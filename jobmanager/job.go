package jobmanager

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/braidflow/braid/internal/memberauth"
	"github.com/braidflow/braid/jobgraph"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/scheduler"
	"github.com/braidflow/braid/types"
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
	// dataEnded: the subtask's data ended and it waits for its final
	// checkpoint (TaskStatusReport.data_ended; sticky).
	dataEnded bool
}

// Job is a submitted job as the job manager tracks it. A job runs in
// attempts: the first deployment is attempt 0, and each restart after a
// failure deploys attempt+1 from the latest completed checkpoint.
type Job struct {
	jm      *JobManager
	id      string
	graph   *jobgraph.Graph
	startMs int64
	done    chan struct{}
	// owner names the principal that submitted the job (see roles.go).
	owner string

	// initial is the savepoint the first attempt restored from
	// (execution.savepoint.path), nil for none; later attempts restore it
	// until the job has a checkpoint of its own.
	initial *braidv1.RestoreSpec

	// cpNext is above every checkpoint id any attempt triggered.
	cpMu   sync.Mutex
	cpNext int64

	// transition serializes the lifecycle's events with the etcd writes
	// they lead to, so etcd sees the statuses in order (see step).
	transition sync.Mutex

	// resultToken authorizes the job's collect sink to push its rows; it
	// goes to task managers with every deploy.
	resultToken  string
	results      ResultHandler
	resultsMu    sync.Mutex // held while the handler runs; before heldMu
	resultsEnded bool       // guarded by resultsMu
	// held holds the results back until a checkpoint covers them; nil
	// unless the job has results and takes checkpoints.
	heldMu sync.Mutex
	held   *resultBuffer // guarded by heldMu

	mu struct {
		sync.Mutex
		// lc decides the job's status; fed by step only.
		lc *scheduler.JobLifecycle
		// errMsg and endMs are set when the job ends.
		errMsg   string
		endMs    int64
		subtasks map[subtaskKey]*subtaskState
		// attempt numbers the current deployment (lc's); placements and
		// tmAddrs (task manager id -> address) are where it runs.
		attempt    int32
		placements []*braidv1.Placement
		tmAddrs    map[string]string
		// cp coordinates the current attempt's checkpoints; nil when the
		// job takes none or between attempts.
		cp *checkpointRun
	}
}

func newJob(jm *JobManager, graph *jobgraph.Graph, placements []*braidv1.Placement, results ResultHandler) *Job {
	j := &Job{
		jm:      jm,
		id:      graph.JobID,
		graph:   graph,
		startMs: time.Now().UnixMilli(),
		done:    make(chan struct{}),
		results: results,
		// NB: per job, not per attempt: chunks of a superseded attempt are
		// dropped by their attempt number.
		resultToken: memberauth.NewToken(),
	}
	if results != nil && checkpointing(graph) {
		j.held = newResultBuffer(jm.cfg.ResultBufferBytes)
	}
	j.mu.lc = scheduler.NewJobLifecycle(scheduler.LifecycleConfig{Graph: graph, Unrestartable: j.unrestartable(), RetryDelay: restartPoll})
	j.deploying(0, placements)
	return j
}

// deploying makes attempt, at placements, the job's current one; it
// reports whether to go on deploying it (see JobLifecycle.Deploying).
func (j *Job) deploying(attempt int32, placements []*braidv1.Placement) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.mu.lc.Deploying(attempt, placements) {
		return false
	}
	j.mu.attempt = attempt
	j.setPlacementsLocked(placements)
	return true
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
	return string(j.mu.lc.Status())
}

// statusLocked returns the current status; j.mu is held.
func (j *Job) statusLocked() string { return string(j.mu.lc.Status()) }

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
	st := j.statusLocked()
	switch {
	case st == StatusFailed:
		return st, errors.New(j.mu.errMsg)
	case st == StatusCanceled && j.mu.errMsg != "":
		return st, errors.New(j.mu.errMsg)
	}
	return st, nil
}

// runsOn reports whether a subtask of the job's current attempt is placed
// on task manager id.
func (j *Job) runsOn(id string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.mu.lc.RunsOn(id)
}

// report records a subtask's report: its counters here, its state in the
// lifecycle.
func (j *Job) report(r *braidv1.TaskStatusReport) {
	j.step(func(lc *scheduler.JobLifecycle) []scheduler.Action {
		st, ok := j.mu.subtasks[subtaskKey{r.Vertex, r.Subtask}]
		if ok && r.Attempt == j.mu.attempt && st.tmID != r.TaskManagerId {
			// NB: a task manager speaks only for the subtasks placed on it.
			return nil
		}
		if ok && !lc.Status().Terminal() && r.Attempt == j.mu.attempt && !subtaskEnded(st.state) {
			st.state = r.State
			st.rowsIn, st.rowsOut, st.remoteOut = r.RowsIn, r.RowsOut, r.RemoteRowsOut
			if r.DataEnded && !st.dataEnded {
				st.dataEnded = true
				if cp := j.mu.cp; cp != nil && cp.attempt == r.Attempt {
					cp.sourceEnded(int(r.Vertex), int(r.Subtask))
				}
			}
		}
		return lc.SubtaskReport(r.Attempt, r.Vertex, r.Subtask, r.State, r.Error, types.ErrorClass(r.ErrorClass), time.Now())
	})
}

func subtaskEnded(s braidv1.TaskState) bool {
	switch s {
	case braidv1.TaskState_TASK_STATE_FINISHED, braidv1.TaskState_TASK_STATE_FAILED, braidv1.TaskState_TASK_STATE_CANCELED:
		return true
	}
	return false
}

func (j *Job) vertex(id int32) *jobgraph.Vertex { return j.graph.Vertex(int(id)) }

// finish moves the job to a terminal status, once: later calls do nothing.
// It records the status in etcd, ends the result stream, cancels the job on
// its task managers (unless it finished) and releases its slots.
func (j *Job) finish(status, msg string) {
	j.step(func(lc *scheduler.JobLifecycle) []scheduler.Action {
		return lc.End(scheduler.JobStatus(status), msg)
	})
}

// endedJobsInMemory is how many ended jobs the job manager keeps with their
// subtask details; older ones are described from their etcd records.
const endedJobsInMemory = 256

// retire notes that job id ended, forgets the oldest ended jobs beyond
// endedJobsInMemory, and wakes the job store's sweep (jobstore.go).
func (jm *JobManager) retire(id string) {
	jm.mu.Lock()
	jm.mu.ended = append(jm.mu.ended, id)
	for len(jm.mu.ended) > endedJobsInMemory {
		delete(jm.mu.jobs, jm.mu.ended[0])
		jm.mu.ended = jm.mu.ended[1:]
	}
	jm.mu.Unlock()
	select {
	case jm.jobEnded <- struct{}{}:
	default:
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
