package jobmanager

import (
	"context"
	"errors"
	"io"
	"net"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidflow/braid/internal/memberauth"
	"github.com/braidflow/braid/metastore"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/scheduler"
	"github.com/braidflow/braid/types"
)

// clusterService serves ClusterService to the task managers.
type clusterService struct {
	braidv1.UnimplementedClusterServiceServer
	jm *JobManager
}

var _ braidv1.ClusterServiceServer = (*clusterService)(nil)

// RegisterTaskManager stores the task manager under a lease of
// HeartbeatTimeout and offers its slots to the scheduler. Registering again
// with the same id replaces the earlier registration.
// maxSlotsPerTaskManager bounds the slots one task manager offers.
const maxSlotsPerTaskManager = 1024

func (s *clusterService) RegisterTaskManager(ctx context.Context, req *braidv1.RegisterTaskManagerRequest) (*braidv1.RegisterTaskManagerResponse, error) {
	if req.TaskManagerId == "" || req.Address == "" || req.Slots <= 0 {
		return nil, status.Error(codes.InvalidArgument, "a task manager registers with an id, an address and at least one slot")
	}
	if err := types.CheckID("task manager id", req.TaskManagerId); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	if req.Slots > maxSlotsPerTaskManager {
		return nil, status.Errorf(codes.InvalidArgument, "a task manager registers at most %d slots, not %d", maxSlotsPerTaskManager, req.Slots)
	}
	if _, _, err := net.SplitHostPort(req.Address); err != nil || len(req.Address) > 256 {
		return nil, status.Errorf(codes.InvalidArgument, "task manager address %q is not host:port", req.Address)
	}
	info := metastore.TaskManagerInfo{ID: req.TaskManagerId, Address: req.Address, Slots: int(req.Slots), RegisteredUnixMs: time.Now().UnixMilli()}
	if err := s.jm.store.RegisterTaskManager(ctx, info, s.jm.cfg.HeartbeatTimeout); err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	inc := memberauth.NewToken()
	s.jm.mu.Lock()
	s.jm.mu.incarnations[req.TaskManagerId] = inc
	s.jm.mu.Unlock()
	s.jm.addTaskManager(info)
	// NB: a task manager registers again only as a new process or after
	// it dropped its subtasks (its lease had lapsed): either way the
	// subtasks the job manager placed there are gone, and calls of the
	// earlier incarnation are refused from now on.
	s.jm.failJobsOn(req.TaskManagerId, "task manager "+req.TaskManagerId+" at "+req.Address+" registered again (it restarted); its subtasks were lost")
	return &braidv1.RegisterTaskManagerResponse{HeartbeatIntervalMs: (s.jm.cfg.HeartbeatTimeout / 3).Milliseconds(), Incarnation: inc}, nil
}

// errIncarnation refuses a call of a task manager registration that is
// not the live one.
var errIncarnation = status.Error(codes.PermissionDenied, "not the task manager's live registration; register again")

// caller checks that the call in ctx comes from the live registration of
// task manager id (the id the request names), and returns
// errIncarnation otherwise.
func (jm *JobManager) caller(ctx context.Context, id string) error {
	got, inc := memberauth.Caller(ctx)
	if got == "" || got != id {
		return errIncarnation
	}
	jm.mu.Lock()
	live, ok := jm.mu.incarnations[id]
	jm.mu.Unlock()
	if !ok || !memberauth.Equal(inc, live) {
		return errIncarnation
	}
	return nil
}

// Heartbeat renews the task manager's lease; known=false asks it to
// register again.
func (s *clusterService) Heartbeat(ctx context.Context, req *braidv1.HeartbeatRequest) (*braidv1.HeartbeatResponse, error) {
	if s.jm.caller(ctx, req.TaskManagerId) != nil {
		// NB: not renewed: the heartbeat of an earlier process (or of no
		// registration) must not keep a dead task manager's lease alive.
		return &braidv1.HeartbeatResponse{Known: false}, nil
	}
	known, err := s.jm.store.RenewTaskManager(ctx, req.TaskManagerId)
	if err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	if known && !s.jm.hasTaskManager(req.TaskManagerId) {
		// The lease outlived our view of it (the removal won a race with
		// the renewal): have it register afresh so the pool sees it again.
		known = false
	}
	return &braidv1.HeartbeatResponse{Known: known}, nil
}

// ReportTaskStatus records one subtask's state and counters and derives the
// job's status from them.
func (s *clusterService) ReportTaskStatus(ctx context.Context, r *braidv1.TaskStatusReport) (*braidv1.TaskStatusAck, error) {
	if err := s.jm.caller(ctx, r.TaskManagerId); err != nil {
		return nil, err
	}
	j := s.jm.job(r.JobId)
	if j == nil {
		return &braidv1.TaskStatusAck{}, nil
	}
	j.report(r)
	return &braidv1.TaskStatusAck{}, nil
}

// AcknowledgeCheckpoint passes a subtask's part of a checkpoint to its
// job's coordinator. Acknowledgements of an earlier attempt are ignored.
func (s *clusterService) AcknowledgeCheckpoint(ctx context.Context, a *braidv1.CheckpointAck) (*braidv1.CheckpointAckResponse, error) {
	if err := s.jm.caller(ctx, a.TaskManagerId); err != nil {
		return nil, err
	}
	if j := s.jm.job(a.JobId); j != nil {
		j.checkpointAck(a)
	}
	return &braidv1.CheckpointAckResponse{}, nil
}

// PushResults relays one collect sink's stream to the job's ResultHandler
// (see Job.pushResult). The first chunk names the job; the stream ends
// after a chunk with end=true or when the task manager closes it.
func (s *clusterService) PushResults(stream grpc.ClientStreamingServer[braidv1.ResultChunk, braidv1.PushResultsAck]) error {
	var j *Job
	first := true // no data came yet: the next data starts with the schema
	for {
		c, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return stream.SendAndClose(&braidv1.PushResultsAck{})
		}
		if err != nil {
			return err
		}
		if j == nil {
			// NB: only a subtask the job manager deployed knows the job's
			// result token; anyone else would inject rows into a query.
			if j = s.jm.job(c.JobId); j == nil || !memberauth.Equal(memberauth.ResultToken(stream.Context()), j.resultToken) {
				return notFound(c.JobId)
			}
		}
		if err := j.pushResult(c, first); err != nil {
			return err
		}
		if len(c.ArrowIpc) > 0 {
			first = false
		}
		if c.End {
			return stream.SendAndClose(&braidv1.PushResultsAck{})
		}
	}
}

func (jm *JobManager) hasTaskManager(id string) bool {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	_, ok := jm.mu.tms[id]
	return ok
}

// addTaskManager offers a (re-)registered task manager's slots. It is
// idempotent: both the RPC and the membership watch call it.
func (jm *JobManager) addTaskManager(info metastore.TaskManagerInfo) {
	jm.mu.Lock()
	old, ok := jm.mu.tms[info.ID]
	jm.mu.tms[info.ID] = info
	jm.mu.Unlock()
	if ok && old.Address == info.Address && old.Slots == info.Slots {
		return
	}
	if ok && old.Address != info.Address {
		jm.dropConn(old.Address)
	}
	jm.pool.Add(info.ID, info.Address, info.Slots)
	jm.log.Info("task manager registered", zap.String("task_manager", info.ID), zap.String("address", info.Address), zap.Int("slots", info.Slots))
}

// watchMembers applies membership events until the channel closes.
func (jm *JobManager) watchMembers(events <-chan metastore.MemberEvent) {
	for ev := range events {
		if ev.Removed {
			jm.taskManagerLost(ev.TaskManager.ID)
		} else {
			jm.addTaskManager(ev.TaskManager)
		}
	}
}

// taskManagerLost removes a task manager whose registration is gone and
// fails every unfinished job that had a subtask on it.
func (jm *JobManager) taskManagerLost(id string) {
	jm.mu.Lock()
	info, ok := jm.mu.tms[id]
	delete(jm.mu.tms, id)
	delete(jm.mu.incarnations, id)
	var hit []*Job
	for _, j := range jm.mu.jobs {
		if j != nil && j.runsOn(id) {
			hit = append(hit, j)
		}
	}
	closed := jm.mu.closed
	jm.mu.Unlock()
	if !ok || closed {
		return
	}
	jm.pool.Remove(id)
	jm.dropConn(info.Address)
	msg := "task manager " + id + " at " + info.Address + " was lost (no heartbeat for " + jm.cfg.HeartbeatTimeout.String() + ")"
	jm.log.Warn("task manager lost", zap.String("task_manager", id), zap.String("address", info.Address))
	for _, j := range hit {
		j.taskManagerLost(id, msg)
	}
}

// failJobsOn fails every job whose current attempt has a subtask on task
// manager id.
func (jm *JobManager) failJobsOn(id, msg string) {
	jm.mu.Lock()
	var hit []*Job
	for _, j := range jm.mu.jobs {
		if j != nil && j.runsOn(id) {
			hit = append(hit, j)
		}
	}
	jm.mu.Unlock()
	for _, j := range hit {
		j.taskManagerLost(id, msg)
	}
}

// taskManagerLost tells the job that task manager id is gone, with msg.
func (j *Job) taskManagerLost(id, msg string) {
	j.step(func(lc *scheduler.JobLifecycle) []scheduler.Action { return lc.TaskManagerLost(id, msg, time.Now()) })
}

// attributeFailure hands a subtask's failure back to the job's lifecycle,
// unless one of its task managers is unreachable: then the subtask most
// likely failed because its peer died, and the job waits (at most a
// heartbeat timeout) for that task manager's lease to lapse, so the failure
// names the lost task manager. (A job that restarts does not wait: its
// lifecycle asks for no attribution.)
func (jm *JobManager) attributeFailure(j *Job, a scheduler.AttributeFailure) {
	if !jm.allReachable(j) {
		t := time.NewTimer(jm.cfg.HeartbeatTimeout + time.Second)
		defer t.Stop()
		select {
		case <-j.done:
		case <-t.C:
		case <-jm.ctx.Done():
		}
	}
	j.step(func(lc *scheduler.JobLifecycle) []scheduler.Action {
		return lc.FailureAttributed(a.Attempt, a.Message, a.Class, time.Now())
	})
}

// allReachable probes the health service of each task manager of j.
func (jm *JobManager) allReachable(j *Job) bool {
	ok := true
	_, _, tmAddrs := j.deployment()
	for _, addr := range tmAddrs {
		if !jm.probe(addr) {
			ok = false
		}
	}
	return ok
}
