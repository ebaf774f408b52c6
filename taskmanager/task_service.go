package taskmanager

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/shuffle"
	"github.com/braidflow/braid/types"
)

// ConfigBrokers is the graph.Config key holding the default log's bootstrap
// servers, comma-separated (set by the job manager at submission).
const ConfigBrokers = "braid.brokers"

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
	Graph         *braidv1.JobGraph
	Vertex        int
	Subtask       int
	Placements    []*braidv1.Placement
	TaskManagerID string
	// Ctx is the operators' context; Results is set for a collect vertex.
	Ctx *operators.Context
	// Exchange is the task manager's shuffle registry: the subtask
	// registers its inbox there before its builder returns.
	Exchange *shuffle.Exchange
}

// BuildFunc builds a subtask from its spec and registers its inbox, so
// upstream subtasks can connect as soon as DeployTasks returns.
type BuildFunc func(SubtaskSpec) (Subtask, error)

// runningJob is the part of one job that runs on this task manager.
type runningJob struct {
	id     string
	dir    string
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// taskService serves TaskService to the job manager.
type taskService struct {
	braidv1.UnimplementedTaskServiceServer
	tm *TaskManager
}

var _ braidv1.TaskServiceServer = (*taskService)(nil)

// DeployTasks builds the listed subtasks, which registers their inboxes,
// then starts each in its own goroutine. If any subtask cannot be built,
// none of them start and the error is returned.
func (s *taskService) DeployTasks(ctx context.Context, req *braidv1.DeployTasksRequest) (*braidv1.DeployTasksResponse, error) {
	if err := s.tm.deploy(req); err != nil {
		return nil, status.Error(codes.FailedPrecondition, err.Error())
	}
	return &braidv1.DeployTasksResponse{}, nil
}

// CancelJob cancels the job's subtasks on this task manager, waits a
// moment for them to stop and removes their state. Canceling an unknown job
// does nothing.
func (s *taskService) CancelJob(ctx context.Context, req *braidv1.CancelTasksRequest) (*braidv1.CancelTasksResponse, error) {
	s.tm.cancelJob(ctx, req.JobId)
	return &braidv1.CancelTasksResponse{}, nil
}

type built struct {
	spec SubtaskSpec
	run  Subtask
}

func (tm *TaskManager) deploy(req *braidv1.DeployTasksRequest) error {
	g := req.Graph
	if g == nil || g.JobId == "" {
		return errors.New("taskmanager: deploy without a job graph")
	}
	tm.mu.Lock()
	if tm.mu.closing {
		tm.mu.Unlock()
		return errors.New("taskmanager: shutting down")
	}
	if _, dup := tm.mu.jobs[g.JobId]; dup {
		tm.mu.Unlock()
		return fmt.Errorf("taskmanager: job %s is already deployed here", g.JobId)
	}
	jctx, cancel := context.WithCancel(tm.ctx)
	j := &runningJob{id: g.JobId, dir: filepath.Join(tm.cfg.DataDir, "jobs", g.JobId), ctx: jctx, cancel: cancel}
	tm.mu.jobs[g.JobId] = j
	tm.mu.Unlock()

	var subtasks []built
	for _, ref := range req.Deploy {
		spec, err := tm.spec(j, req, ref)
		if err == nil {
			var r Subtask
			if r, err = tm.build(spec); err == nil {
				subtasks = append(subtasks, built{spec, r})
				continue
			}
		}
		for _, b := range subtasks {
			if c, ok := b.run.(interface{ Close() }); ok {
				c.Close()
			}
		}
		tm.abandon(j)
		return fmt.Errorf("subtask %d/%d of vertex %d: %w", ref.Subtask+1, vertexParallelism(g, ref.Vertex), ref.Vertex, err)
	}
	for _, b := range subtasks {
		j.wg.Add(1)
		go tm.run(j, b)
	}
	go func() {
		j.wg.Wait()
		tm.jobEnded(j)
	}()
	tm.log.Info("job deployed", zap.String("job", g.JobId), zap.Int("subtasks", len(subtasks)))
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

func vertexOf(g *braidv1.JobGraph, id int32) *braidv1.Vertex {
	for _, v := range g.Vertices {
		if v.Id == id {
			return v
		}
	}
	return nil
}

func vertexParallelism(g *braidv1.JobGraph, id int32) int32 {
	if v := vertexOf(g, id); v != nil {
		return v.Parallelism
	}
	return 0
}

// spec builds the operators.Context of one subtask.
func (tm *TaskManager) spec(j *runningJob, req *braidv1.DeployTasksRequest, ref *braidv1.SubtaskRef) (SubtaskSpec, error) {
	g := req.Graph
	v := vertexOf(g, ref.Vertex)
	if v == nil {
		return SubtaskSpec{}, fmt.Errorf("no vertex %d in the job graph", ref.Vertex)
	}
	p := max(int(v.Parallelism), 1)
	maxP := int(g.MaxParallelism)
	if maxP <= 0 {
		maxP = types.DefaultMaxParallelism
	}
	if int(ref.Subtask) >= p || ref.Subtask < 0 {
		return SubtaskSpec{}, fmt.Errorf("subtask index %d out of range for parallelism %d", ref.Subtask, p)
	}
	var brokers []string
	if b := g.Config[ConfigBrokers]; b != "" {
		brokers = strings.Split(b, ",")
	}
	octx := &operators.Context{
		JobID:          g.JobId,
		VertexID:       int(v.Id),
		Subtask:        int(ref.Subtask),
		Parallelism:    p,
		MaxParallelism: maxP,
		KeyGroups:      types.KeyGroupRangeFor(int(ref.Subtask), p, maxP),
		StateDir:       filepath.Join(j.dir, fmt.Sprintf("%d-%d", v.Id, ref.Subtask)),
		// NB: a slot runs at most one stateful subtask at a time, so a
		// per-slot share keeps the task manager within its budget.
		StateCacheBytes: tm.cfg.StateCacheBytes / int64(tm.cfg.Slots),
		Config:          g.Config,
		Bounded:         g.Bounded,
		Brokers:         brokers,
		Logger:          tm.log.With(zap.String("job", g.JobId), zap.String("vertex", v.Name), zap.Int32("subtask", ref.Subtask)),
	}
	if hasCollect(v) {
		octx.Results = &resultWriter{ctx: j.ctx, client: tm.cluster, jobID: g.JobId, subtask: ref.Subtask}
	}
	if err := os.MkdirAll(octx.StateDir, 0o755); err != nil {
		return SubtaskSpec{}, fmt.Errorf("create state directory: %w", err)
	}
	return SubtaskSpec{Graph: g, Vertex: int(v.Id), Subtask: int(ref.Subtask), Placements: req.Placements, TaskManagerID: tm.id, Ctx: octx, Exchange: tm.exchange}, nil
}

func hasCollect(v *braidv1.Vertex) bool {
	for _, op := range v.Chain {
		if op.Kind == jobgraph.KindCollect {
			return true
		}
	}
	return false
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
	if w, ok := b.spec.Ctx.Results.(*resultWriter); ok && err != nil {
		// The sink did not end its results: release the stream.
		w.mu.Lock()
		if w.stream != nil && !w.closed {
			w.stream.CloseSend()
		}
		w.mu.Unlock()
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
	if tm.closing() {
		return
	}
	in, out, remote := r.Counters()
	rep := &braidv1.TaskStatusReport{
		JobId: spec.Graph.JobId, Vertex: int32(spec.Vertex), Subtask: int32(spec.Subtask), TaskManagerId: tm.id,
		State: state, RowsIn: in, RowsOut: out, RemoteRowsOut: remote,
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
