package taskmanager

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidflow/braid/checkpoint"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/runtime"
	"github.com/braidflow/braid/shuffle"
	"github.com/braidflow/braid/types"
)

// Subtask is one deployed subtask, ready to run; runtime.Subtask satisfies
// it. Run returns nil at the end of its input and ctx.Err() once canceled;
// the task manager calls it once, from the subtask's own goroutine.
type Subtask interface {
	Run(ctx context.Context) error
	// Counters returns the rows read, written, and written to other task
	// managers so far. It is safe to call while Run runs.
	Counters() (rowsIn, rowsOut, remoteRowsOut int64)
}

// SubtaskSpec is everything a subtask is built from.
type SubtaskSpec struct {
	// Graph is the deploy's job graph, validated by FromProto; the
	// subtasks of the deploy share it, read-only.
	Graph         *jobgraph.Graph
	Vertex        int
	Subtask       int
	Placements    []*braidv1.Placement
	TaskManagerID string
	// Attempt is the job deployment this subtask belongs to.
	Attempt int32
	// Ctx is the operators' context; Results is set for a collect vertex.
	Ctx *operators.Context
	// StateDir is the subtask's private directory (keyed state and local
	// checkpoints); StateCacheBytes its state cache budget.
	StateDir        string
	StateCacheBytes int64
	// Exchange is the task manager's shuffle registry: the subtask
	// registers its inbox there before its builder returns.
	Exchange *shuffle.Exchange
	// Restore is what the subtask resumes from (zero: a fresh start; its
	// keyed state is already in StateDir/db). Checkpoints takes its
	// snapshots; nil when the job takes no checkpoints.
	Restore     runtime.RestoreInfo
	Checkpoints runtime.SnapshotHandler
	// DataEnded is called once the subtask's data ended in a job that
	// checkpoints (runtime.Task.DataEnded): it tells the job manager.
	DataEnded func()
}

// BuildFunc builds a subtask from its spec and registers its inbox, so
// upstream subtasks can connect as soon as DeployTasks returns.
type BuildFunc func(SubtaskSpec) (Subtask, error)

// runningJob is the part of one attempt of a job that runs on this task
// manager.
type runningJob struct {
	id      string
	attempt int32
	dir     string
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	// uploads counts the snapshotters' goroutines; they end with ctx.
	uploads sync.WaitGroup
	// storage is the job's checkpoint storage; nil without checkpoints.
	storage *checkpoint.Storage

	mu struct {
		sync.Mutex
		subtasks     map[[2]int]checkpointable
		snapshotters []*snapshotter
		savepoints   map[int64]bool
	}
}

func (j *runningJob) allSnapshotters() []*snapshotter {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]*snapshotter(nil), j.mu.snapshotters...)
}

func (j *runningJob) subtask(vertex, subtask int) checkpointable {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.mu.subtasks[[2]int{vertex, subtask}]
}

func (j *runningJob) allSubtasks() []checkpointable {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]checkpointable, 0, len(j.mu.subtasks))
	for _, s := range j.mu.subtasks {
		out = append(out, s)
	}
	return out
}

func (j *runningJob) markSavepoint(id int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.mu.savepoints == nil {
		j.mu.savepoints = map[int64]bool{}
	}
	j.mu.savepoints[id] = true
}

func (j *runningJob) forgetSavepoint(id int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.mu.savepoints, id)
}

func (j *runningJob) isSavepoint(id int64) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.mu.savepoints[id]
}

// taskService serves TaskService to the job manager.
type taskService struct {
	braidv1.UnimplementedTaskServiceServer
	tm *TaskManager
}

var _ braidv1.TaskServiceServer = (*taskService)(nil)

// DeployTasks builds the listed subtasks, which registers their inboxes,
// then starts each in its own goroutine. If any subtask cannot be built,
// none of them start and the error is returned. A job graph that does not
// decode or validate (jobgraph.FromProto) is refused with InvalidArgument
// before anything is built.
func (s *taskService) DeployTasks(ctx context.Context, req *braidv1.DeployTasksRequest) (*braidv1.DeployTasksResponse, error) {
	g, err := jobgraph.FromProto(req.Graph)
	if err == nil {
		// NB: before the id names a directory: "../../x" once removed any
		// directory of the host.
		err = types.CheckID("job id", g.JobID)
	}
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, "taskmanager: deploy: "+err.Error())
	}
	if err := s.tm.deploy(req, g); err != nil {
		var re *restoreError
		if errors.As(err, &re) {
			return nil, status.Error(codes.DataLoss, err.Error())
		}
		return nil, status.Error(codes.FailedPrecondition, err.Error())
	}
	return &braidv1.DeployTasksResponse{}, nil
}

// TriggerCheckpoint passes a checkpoint trigger to the job's source
// subtasks here.
func (s *taskService) TriggerCheckpoint(ctx context.Context, req *braidv1.TriggerCheckpointRequest) (*braidv1.TriggerCheckpointResponse, error) {
	if err := s.tm.triggerCheckpoint(req); err != nil {
		return nil, status.Error(codes.FailedPrecondition, err.Error())
	}
	return &braidv1.TriggerCheckpointResponse{}, nil
}

// NotifyCheckpoint passes a checkpoint's outcome to the job's subtasks
// here.
func (s *taskService) NotifyCheckpoint(ctx context.Context, req *braidv1.NotifyCheckpointRequest) (*braidv1.NotifyCheckpointResponse, error) {
	s.tm.notifyCheckpoint(req)
	return &braidv1.NotifyCheckpointResponse{}, nil
}

// CancelJob cancels the job's subtasks on this task manager, waits a
// moment for them to stop and removes their state. Canceling an unknown job
// does nothing.
func (s *taskService) CancelJob(ctx context.Context, req *braidv1.CancelTasksRequest) (*braidv1.CancelTasksResponse, error) {
	if err := types.CheckID("job id", req.JobId); err != nil {
		return nil, status.Error(codes.InvalidArgument, "taskmanager: cancel: "+err.Error())
	}
	s.tm.cancelJob(ctx, req.JobId)
	return &braidv1.CancelTasksResponse{}, nil
}

type built struct {
	spec SubtaskSpec
	run  Subtask
}

// deploy deploys req's subtasks of g, the request's graph as FromProto
// decoded it.
func (tm *TaskManager) deploy(req *braidv1.DeployTasksRequest, g *jobgraph.Graph) error {
	if err := tm.replaceEarlierAttempt(g.JobID, req.Attempt); err != nil {
		return err
	}
	tm.mu.Lock()
	if tm.mu.closing {
		tm.mu.Unlock()
		return errors.New("taskmanager: shutting down")
	}
	if _, dup := tm.mu.jobs[g.JobID]; dup {
		tm.mu.Unlock()
		return fmt.Errorf("taskmanager: job %s is already deployed here", g.JobID)
	}
	jctx, cancel := context.WithCancel(tm.ctx)
	// NB: each attempt has its own directory: a task manager never trusts
	// local state after a failure, and an earlier attempt's cleanup must
	// not remove this one's files.
	j := &runningJob{id: g.JobID, attempt: req.Attempt, ctx: jctx, cancel: cancel,
		dir: filepath.Join(tm.cfg.DataDir, "jobs", g.JobID, fmt.Sprintf("attempt-%d", req.Attempt))}
	j.mu.subtasks = map[[2]int]checkpointable{}
	tm.mu.jobs[g.JobID] = j
	tm.mu.Unlock()

	subtasks, err := tm.buildAll(j, req, g)
	if err != nil {
		tm.abandon(j)
		return err
	}
	for _, b := range subtasks {
		j.wg.Add(1)
		go tm.run(j, b)
	}
	go func() {
		j.wg.Wait()
		tm.jobEnded(j)
	}()
	tm.log.Info("job deployed", zap.String("job", g.JobID), zap.Int32("attempt", req.Attempt), zap.Int("subtasks", len(subtasks)))
	return nil
}

// buildAll restores and builds the deploy's subtasks. If one fails, the
// ones built are closed and the error is returned.
func (tm *TaskManager) buildAll(j *runningJob, req *braidv1.DeployTasksRequest, g *jobgraph.Graph) ([]built, error) {
	ctx, cancel := context.WithTimeout(j.ctx, restoreTimeout)
	defer cancel()
	var err error
	if j.storage, err = openJobStorage(ctx, req.CheckpointStorage); err != nil {
		return nil, err
	}
	rs, err := openRestore(ctx, req.Restore, g)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var subtasks []built
	for _, ref := range req.Deploy {
		spec, err := tm.spec(j, req, g, ref)
		if err == nil {
			err = tm.restore(ctx, j, rs, &spec)
		}
		if err == nil {
			var r Subtask
			spec.DataEnded = func() { tm.reportDataEnded(spec, r) }
			if r, err = tm.build(spec); err == nil {
				subtasks = append(subtasks, built{spec, r})
				if c, ok := r.(checkpointable); ok {
					j.mu.Lock()
					j.mu.subtasks[[2]int{spec.Vertex, spec.Subtask}] = c
					j.mu.Unlock()
				}
				continue
			}
		}
		for _, b := range subtasks {
			if c, ok := b.run.(interface{ Close() }); ok {
				c.Close()
			}
		}
		return nil, fmt.Errorf("subtask %d/%d of vertex %d: %w", ref.Subtask+1, vertexParallelism(g, int(ref.Vertex)), ref.Vertex, err)
	}
	return subtasks, nil
}

// restoreTimeout bounds reading a deploy's checkpoint.
const restoreTimeout = 10 * time.Minute

// restore fills a subtask's state from the deploy's checkpoint, if any, and
// gives it its snapshotter when the job takes checkpoints.
func (tm *TaskManager) restore(ctx context.Context, j *runningJob, rs *restoreSource, spec *SubtaskSpec) error {
	var seed *checkpoint.BackendHandle
	if rs != nil {
		info, h, err := rs.restoreSubtask(ctx, spec.Vertex, spec.Subtask, spec.Ctx.Parallelism, spec.StateDir)
		if err != nil {
			return err
		}
		spec.Restore, seed = info, h
	}
	if j.storage != nil {
		sn := newSnapshotter(tm, j, spec.Vertex, spec.Subtask, seed)
		j.mu.Lock()
		j.mu.snapshotters = append(j.mu.snapshotters, sn)
		j.mu.Unlock()
		spec.Checkpoints = sn
	}
	return nil
}

// replaceEarlierAttempt cancels an earlier attempt of job id still running
// here before a later attempt deploys, waiting for its subtasks to stop.
func (tm *TaskManager) replaceEarlierAttempt(id string, attempt int32) error {
	tm.mu.Lock()
	old := tm.mu.jobs[id]
	tm.mu.Unlock()
	if old == nil || old.attempt >= attempt {
		return nil
	}
	ctx, cancel := context.WithTimeout(tm.ctx, 10*time.Second)
	defer cancel()
	tm.cancelJob(ctx, id)
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if tm.mu.jobs[id] == old {
		return fmt.Errorf("taskmanager: attempt %d of job %s is still stopping", old.attempt, id)
	}
	return nil
}

// abandon undoes a deploy that failed half way.
func (tm *TaskManager) abandon(j *runningJob) {
	j.cancel()
	tm.exchange.UnregisterJob(j.id)
	tm.mu.Lock()
	delete(tm.mu.jobs, j.id)
	tm.mu.Unlock()
	os.RemoveAll(j.dir)
	j.uploads.Wait()
	if j.storage != nil {
		j.storage.Close()
	}
}

// jobEnded forgets a job once all its local subtasks have returned.
func (tm *TaskManager) jobEnded(j *runningJob) {
	j.cancel()
	tm.exchange.UnregisterJob(j.id)
	tm.mu.Lock()
	if tm.mu.jobs[j.id] == j {
		delete(tm.mu.jobs, j.id)
	}
	tm.mu.Unlock()
	if err := os.RemoveAll(j.dir); err != nil {
		tm.log.Warn("remove job state", zap.String("job", j.id), zap.Error(err))
	}
	os.Remove(filepath.Dir(j.dir)) // the job's directory, once no attempt is left
	j.uploads.Wait()
	if j.storage != nil {
		j.storage.Close()
	}
}

// cancelAllJobs cancels every job running here.
func (tm *TaskManager) cancelAllJobs() {
	tm.mu.Lock()
	ids := make([]string, 0, len(tm.mu.jobs))
	for id := range tm.mu.jobs {
		ids = append(ids, id)
	}
	tm.mu.Unlock()
	for _, id := range ids {
		tm.cancelJob(tm.ctx, id)
	}
}

func (tm *TaskManager) cancelJob(ctx context.Context, id string) {
	tm.mu.Lock()
	j := tm.mu.jobs[id]
	tm.mu.Unlock()
	if j == nil {
		return
	}
	j.cancel()
	done := make(chan struct{})
	go func() {
		j.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		tm.jobEnded(j)
	case <-time.After(5 * time.Second):
		tm.log.Warn("subtasks still running 5s after cancel", zap.String("job", id))
	case <-ctx.Done():
	}
}

func vertexParallelism(g *jobgraph.Graph, id int) int {
	if v := g.Vertex(id); v != nil {
		return v.Parallelism
	}
	return 0
}

// spec builds the operators.Context of one subtask.
func (tm *TaskManager) spec(j *runningJob, req *braidv1.DeployTasksRequest, g *jobgraph.Graph, ref *braidv1.SubtaskRef) (SubtaskSpec, error) {
	v := g.Vertex(int(ref.Vertex))
	if v == nil {
		return SubtaskSpec{}, fmt.Errorf("no vertex %d in the job graph", ref.Vertex)
	}
	p, maxP := v.Parallelism, g.MaxParallelism
	if int(ref.Subtask) >= p || ref.Subtask < 0 {
		return SubtaskSpec{}, fmt.Errorf("subtask index %d out of range for parallelism %d", ref.Subtask, p)
	}
	brokers := req.Brokers
	octx := &operators.Context{
		JobID:          g.JobID,
		VertexID:       v.ID,
		Subtask:        int(ref.Subtask),
		Parallelism:    p,
		MaxParallelism: maxP,
		KeyGroups:      types.KeyGroupRangeFor(int(ref.Subtask), p, maxP),
		Bounded:        g.Bounded,
		Brokers:        brokers,
		Logger:         tm.log.With(zap.String("job", g.JobID), zap.String("vertex", v.Name), zap.Int32("subtask", ref.Subtask)),
	}
	if v.HasKind(jobgraph.KindCollect) {
		octx.Results = &resultWriter{ctx: j.ctx, client: tm.cluster, jobID: g.JobID, subtask: ref.Subtask, attempt: req.Attempt, token: req.ResultToken}
	}
	stateDir := filepath.Join(j.dir, fmt.Sprintf("%d-%d", v.ID, ref.Subtask))
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return SubtaskSpec{}, fmt.Errorf("create state directory: %w", err)
	}
	return SubtaskSpec{Graph: g, Vertex: v.ID, Subtask: int(ref.Subtask), Placements: req.Placements, TaskManagerID: tm.id, Attempt: req.Attempt, Ctx: octx, Exchange: tm.exchange,
		StateDir: stateDir,
		// NB: a slot runs at most one stateful subtask at a time, so a
		// per-slot share keeps the task manager within its budget.
		StateCacheBytes: tm.cfg.StateCacheBytes / int64(tm.cfg.Slots),
	}, nil
}

// run runs one subtask to its end and reports its states.
func (tm *TaskManager) run(j *runningJob, b built) {
	defer j.wg.Done()
	tm.report(b.spec, b.run, braidv1.TaskState_TASK_STATE_RUNNING, nil)
	// While the subtask runs, its row counters go to the job manager every
	// progressInterval, so a described running job shows its progress.
	stop := make(chan struct{})
	progress := make(chan struct{})
	go func() {
		defer close(progress)
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				tm.report(b.spec, b.run, braidv1.TaskState_TASK_STATE_RUNNING, nil)
			}
		}
	}()
	err := runGuarded(j.ctx, b.run, b.spec.Ctx.Logger)
	close(stop)
	<-progress // NB: the final report must not overtake a progress report.
	if w, ok := b.spec.Ctx.Results.(*resultWriter); ok {
		if err == nil {
			// NB: a sink stopped at a savepoint ends without closing its
			// results. The job manager ends them when every subtask
			// finished and drops chunks that come later, so the FINISHED
			// report must not overtake the chunks still in flight.
			err = w.Detach()
		} else {
			w.release()
		}
	}
	switch {
	case err == nil:
		tm.report(b.spec, b.run, braidv1.TaskState_TASK_STATE_FINISHED, nil)
	case j.ctx.Err() != nil:
		tm.report(b.spec, b.run, braidv1.TaskState_TASK_STATE_CANCELED, nil)
	default:
		b.spec.Ctx.Logger.Warn("subtask failed", zap.Error(err))
		tm.report(b.spec, b.run, braidv1.TaskState_TASK_STATE_FAILED, err)
	}
}

// progressInterval is how often a running subtask reports its counters.
const progressInterval = time.Second

// runGuarded runs r, turning a panic into an error with the stack logged.
func runGuarded(ctx context.Context, r Subtask, log *zap.Logger) (err error) {
	defer func() {
		if p := recover(); p != nil {
			log.Error("subtask panicked", zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return r.Run(ctx)
}

// report tells the job manager about a subtask's state. Reports stop once
// the task manager closes; a report that cannot be delivered is logged.
func (tm *TaskManager) report(spec SubtaskSpec, r Subtask, state braidv1.TaskState, cause error) {
	tm.sendReport(spec, r, state, cause, false)
}

// reportDataEnded tells the job manager that a running subtask's data
// ended: it waits for its final checkpoint.
func (tm *TaskManager) reportDataEnded(spec SubtaskSpec, r Subtask) {
	tm.sendReport(spec, r, braidv1.TaskState_TASK_STATE_RUNNING, nil, true)
}

func (tm *TaskManager) sendReport(spec SubtaskSpec, r Subtask, state braidv1.TaskState, cause error, dataEnded bool) {
	if tm.closing() || r == nil {
		return
	}
	in, out, remote := r.Counters()
	rep := &braidv1.TaskStatusReport{
		JobId: spec.Graph.JobID, Vertex: int32(spec.Vertex), Subtask: int32(spec.Subtask), TaskManagerId: tm.id,
		State: state, RowsIn: in, RowsOut: out, RemoteRowsOut: remote, Attempt: spec.Attempt, DataEnded: dataEnded,
	}
	if cause != nil {
		rep.Error = cause.Error()
		rep.ErrorClass = wireClass(types.ClassOf(cause))
	}
	ctx, cancel := context.WithTimeout(tm.ctx, 10*time.Second)
	defer cancel()
	if _, err := tm.cluster.ReportTaskStatus(ctx, rep); err != nil {
		tm.log.Warn("report subtask status", zap.String("job", rep.JobId), zap.Stringer("state", state), zap.Error(err))
	}
}
