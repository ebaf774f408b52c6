package jobmanager

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/metastore"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/scheduler"
	"github.com/braidflow/braid/types"
)

// rpcTimeout bounds each control RPC to a task manager.
const rpcTimeout = 10 * time.Second

// NewJobID returns a fresh job id: 16 hex characters.
func NewJobID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// SubmitJob places graph on the live task managers, records it in etcd and
// deploys it. It refuses a graph that does not pass Validate (a planned
// graph does) before anything is recorded. It assigns graph.JobID when
// empty; the job manager keeps graph, and the caller must not change it
// afterwards. Each deploy tells the task managers the default log's
// current brokers. results receives the collect sink's rows (nil when the
// job has none, or the caller does not want them); it is installed before
// any subtask starts, so no byte is lost. The job belongs to the caller of
// ctx (see roles.go).
//
// SubmitJob returns once every task manager accepted its subtasks; the job
// then runs on its own, and Job.Wait reports how it ended. When deployment
// fails the job is recorded FAILED, its deployed subtasks are canceled, and
// the error is returned.
//
// A job that finds too few free slots waits for them in a FIFO queue, for
// at most Limits.SlotRequestTimeout (see reserveSlots); ctx ending or
// CancelJob takes it out of the queue.
func (jm *JobManager) SubmitJob(ctx context.Context, graph *jobgraph.Graph, results ResultHandler) (*Job, error) {
	return jm.submitJob(ctx, graph, results, jm.cfg.Limits.SlotRequestTimeout)
}

// submitJob is SubmitJob with the job's own slot request timeout.
func (jm *JobManager) submitJob(ctx context.Context, graph *jobgraph.Graph, results ResultHandler, slotTimeout time.Duration) (*Job, error) {
	if graph == nil {
		return nil, errors.New("jobmanager: no job graph")
	}
	if err := graph.Validate(); err != nil {
		return nil, err
	}
	if graph.JobID == "" {
		graph.JobID = NewJobID()
	}
	if err := types.CheckID("job id", graph.JobID); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}

	if len(jm.pool.Snapshot()) == 0 {
		return nil, errors.New("no task managers are registered")
	}
	restore, err := jm.initialRestore(ctx, graph)
	if err != nil {
		return nil, err
	}
	// NB: the id is claimed before the pool allocates under it, so a
	// duplicate id cannot take over another job's slots.
	jm.mu.Lock()
	if jm.mu.closed {
		jm.mu.Unlock()
		return nil, errors.New("jobmanager: shutting down")
	}
	if _, dup := jm.mu.jobs[graph.JobID]; dup {
		jm.mu.Unlock()
		return nil, fmt.Errorf("job %s already exists", graph.JobID)
	}
	jm.mu.jobs[graph.JobID] = nil
	jm.mu.Unlock()

	// reserveSlots places with scheduler.Place over the live task managers
	// and allocates the slots in one step, waiting its turn when too few
	// are free.
	placements, err := jm.reserveSlots(ctx, graph, slotTimeout)
	if err != nil {
		jm.forgetID(graph.JobID)
		return nil, err
	}
	j := newJob(jm, graph, placements, results)
	j.owner = jobOwner(ctx)
	if restore != nil {
		j.initial = restore
		j.sawCheckpointID(restore.CheckpointId)
	}
	jm.mu.Lock()
	jm.mu.jobs[j.id] = j
	jm.mu.Unlock()

	if err := jm.putJob(ctx, j); err != nil {
		jm.forgetID(j.id)
		jm.pool.Release(j.id)
		return nil, err
	}
	jm.log.Info("job submitted", zap.String("job", j.id), zap.String("name", graph.Name), zap.Int("subtasks", len(placements)))
	if err := jm.deploy(ctx, j, restore); err != nil {
		j.step(func(lc *scheduler.JobLifecycle) []scheduler.Action {
			return lc.DeployFailed(0, err.Error(), true, time.Now())
		})
		return nil, err
	}
	j.step(func(lc *scheduler.JobLifecycle) []scheduler.Action { return lc.Deployed(0, time.Now()) })
	return j, nil
}

func (jm *JobManager) forgetID(id string) {
	jm.mu.Lock()
	delete(jm.mu.jobs, id)
	jm.mu.Unlock()
}

func (jm *JobManager) putJob(ctx context.Context, j *Job) error {
	pg, err := j.graph.Proto()
	if err != nil {
		return err
	}
	graph, err := proto.Marshal(pg)
	if err != nil {
		return fmt.Errorf("jobmanager: encode job graph: %w", err)
	}
	_, ps, _ := j.deployment()
	placements, err := encodePlacements(ps)
	if err != nil {
		return err
	}
	rec := &metastore.JobRecord{
		ID: j.id, Name: j.graph.Name, SQL: j.graph.SQL, Owner: j.owner, Status: StatusCreated,
		StartUnixMs: j.startMs, Graph: graph, Placements: placements,
	}
	// NB: fenced with HA: a job manager deposed while it plans cannot leave
	// a job behind that the new leader would resume beside its own.
	return jm.recordJob(ctx, rec, jm.checkpointStorageURI(j), func(rec *metastore.JobRecord) error {
		return jm.store.PutJobAs(ctx, jm.leadership(), rec)
	})
}

// encodePlacements stores placements as a DeployTasksRequest holding only
// them: a proto message we already have for a list of placements.
func encodePlacements(ps []*braidv1.Placement) ([]byte, error) {
	b, err := proto.Marshal(&braidv1.DeployTasksRequest{Placements: ps})
	if err != nil {
		return nil, fmt.Errorf("jobmanager: encode placements: %w", err)
	}
	return b, nil
}

func decodePlacements(b []byte) ([]*braidv1.Placement, error) {
	var req braidv1.DeployTasksRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		return nil, fmt.Errorf("jobmanager: decode placements: %w", err)
	}
	return req.Placements, nil
}

// recordStatus writes a status change to etcd. Failures are logged: the job
// manager's in-memory state stays authoritative for a running job.
// A job manager that abandoned its jobs (HA: deposed or shut down) records
// nothing: the next leader owns them.
func (jm *JobManager) recordStatus(j *Job, status, msg string, endMs int64) {
	if jm.abandoned() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	if err := jm.store.SetJobStatusAs(ctx, jm.leadership(), j.id, status, msg, endMs); err != nil {
		jm.log.Error("record job status", zap.String("job", j.id), zap.String("status", status), zap.Error(err))
	}
}

// deploy sends each task manager of the job's current attempt its
// subtasks, all at once, restoring from restore when it is set.
func (jm *JobManager) deploy(ctx context.Context, j *Job, restore *braidv1.RestoreSpec) error {
	attempt, placements, tmAddrs := j.deployment()
	byTM := map[string][]*braidv1.SubtaskRef{}
	for _, p := range placements {
		byTM[p.TaskManagerId] = append(byTM[p.TaskManagerId], &braidv1.SubtaskRef{Vertex: p.Vertex, Subtask: p.Subtask})
	}
	// NB: every job gets checkpoint storage: one without periodic
	// checkpoints still takes savepoints.
	storage := jm.checkpointStorageURI(j)
	graph, err := j.graph.Proto()
	if err != nil {
		return err
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for tmID, refs := range byTM {
		addr := tmAddrs[tmID]
		req := &braidv1.DeployTasksRequest{Graph: graph, Placements: placements, Deploy: refs, JobManagerAddress: jm.Addr(),
			Attempt: attempt, Restore: restore, CheckpointStorage: storage, Brokers: jm.Brokers(), ResultToken: j.resultToken}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := jm.deployTo(ctx, addr, req)
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("deploy job %s to task manager %s at %s: %w", j.id, tmID, addr, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (jm *JobManager) deployTo(ctx context.Context, addr string, req *braidv1.DeployTasksRequest) error {
	c, err := jm.taskClient(addr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	_, err = c.DeployTasks(ctx, req)
	if err != nil {
		if status.Code(err) == codes.DataLoss {
			return &restoreFailedError{status.Convert(err).Message()}
		}
		return errors.New(status.Convert(err).Message())
	}
	return nil
}

// restoreFailedError is a deploy that a task manager refused because the
// checkpoint it restores from cannot be read.
type restoreFailedError struct{ msg string }

func (e *restoreFailedError) Error() string { return e.msg }

// cancelOnTaskManagers asks every task manager of j, except skip, to cancel
// the job, in the background. Unreachable task managers are only logged.
func (jm *JobManager) cancelOnTaskManagers(j *Job, skip string) {
	if jm.abandoned() {
		// NB: the next leader may already run a later attempt there; the
		// task managers drop this one when they follow it.
		return
	}
	_, _, tmAddrs := j.deployment()
	for tmID, addr := range tmAddrs {
		if tmID == skip {
			continue
		}
		jm.wg.Add(1)
		go func() {
			defer jm.wg.Done()
			c, err := jm.taskClient(addr)
			if err == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				_, err = c.CancelJob(ctx, &braidv1.CancelTasksRequest{JobId: j.id})
				cancel()
			}
			if err != nil {
				jm.log.Debug("cancel job on task manager", zap.String("job", j.id), zap.String("task_manager", tmID), zap.Error(err))
			}
		}()
	}
}

// job returns the live job with id, or nil.
func (jm *JobManager) job(id string) *Job {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	return jm.mu.jobs[id]
}

// Job returns the job with id that this job manager runs or ran, or nil.
func (jm *JobManager) Job(id string) *Job { return jm.job(id) }

// CancelJob cancels a running job: its subtasks are canceled and it ends
// CANCELED. A job still waiting for slots leaves the queue, and its
// submission fails. Canceling a job that already ended does nothing. An unknown id
// fails with codes.NotFound.
func (jm *JobManager) CancelJob(ctx context.Context, id string) error {
	if jm.waits.cancel(id) {
		return nil
	}
	j := jm.job(id)
	if j == nil {
		rec, err := jm.store.GetJob(ctx, id)
		if err != nil || rec == nil {
			return notFound(id)
		}
		if !terminal(rec.Status) {
			// A job of an earlier job manager: nothing runs it any more.
			return jm.store.SetJobStatusAs(ctx, jm.leadership(), id, StatusCanceled, "canceled by user", time.Now().UnixMilli())
		}
		return nil
	}
	j.finish(StatusCanceled, "")
	return nil
}

func notFound(id string) error {
	return status.Errorf(codes.NotFound, "job %s not found", id)
}
