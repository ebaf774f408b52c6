package jobmanager

import (
	"context"
	"errors"
	"sort"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidflow/braid/metastore"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
)

// clientService serves ClientService: job listing, description and
// cancellation here, sessions and scripts through the Gateway.
type clientService struct {
	braidv1.UnimplementedClientServiceServer
	jm *JobManager
}

var _ braidv1.ClientServiceServer = (*clientService)(nil)

var errNoGateway = status.Error(codes.Unimplemented, "this job manager has no SQL gateway installed: sessions and SQL execution are not available")

func (s *clientService) OpenSession(ctx context.Context, req *braidv1.OpenSessionRequest) (*braidv1.OpenSessionResponse, error) {
	g := s.jm.gateway()
	if g == nil {
		return nil, errNoGateway
	}
	return g.OpenSession(ctx, req)
}

func (s *clientService) CloseSession(ctx context.Context, req *braidv1.CloseSessionRequest) (*braidv1.CloseSessionResponse, error) {
	g := s.jm.gateway()
	if g == nil {
		return nil, errNoGateway
	}
	return g.CloseSession(ctx, req)
}

func (s *clientService) Execute(req *braidv1.ExecuteRequest, stream grpc.ServerStreamingServer[braidv1.ExecuteResponse]) error {
	g := s.jm.gateway()
	if g == nil {
		return errNoGateway
	}
	return g.Execute(req, stream)
}

// ListJobs lists the jobs recorded in etcd that the caller may see (an
// admin every one), newest first, with the live status of the jobs this
// job manager runs.
func (s *clientService) ListJobs(ctx context.Context, _ *braidv1.ListJobsRequest) (*braidv1.ListJobsResponse, error) {
	recs, err := s.jm.store.ListJobs(ctx)
	if err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	resp := &braidv1.ListJobsResponse{}
	who := caller(ctx)
	for _, r := range recs {
		if sees(who, r.Owner) {
			resp.Jobs = append(resp.Jobs, s.jm.summary(r))
		}
	}
	resp.Jobs = append(resp.Jobs, s.jm.waits.summaries(who)...)
	sort.SliceStable(resp.Jobs, func(a, b int) bool { return resp.Jobs[a].StartTimeUnixMs > resp.Jobs[b].StartTimeUnixMs })
	return resp, nil
}

// summary is r overlaid with the live state of the job, when it runs here
// (etcd lags the in-memory status by one write).
func (jm *JobManager) summary(r *metastore.JobRecord) *braidv1.JobSummary {
	sum := &braidv1.JobSummary{JobId: r.ID, Name: r.Name, Status: r.Status, StartTimeUnixMs: r.StartUnixMs, EndTimeUnixMs: r.EndUnixMs, Error: r.Error, Owner: r.Owner}
	if j := jm.job(r.ID); j != nil {
		j.mu.Lock()
		sum.Status, sum.Error, sum.EndTimeUnixMs = j.statusLocked(), j.mu.errMsg, j.mu.endMs
		j.mu.Unlock()
	}
	return sum
}

// DescribeJob returns a job's summary, graph and per-subtask placement,
// status and row counters (live for jobs this job manager runs). A job the
// caller may not see is not found.
func (s *clientService) DescribeJob(ctx context.Context, req *braidv1.DescribeJobRequest) (*braidv1.DescribeJobResponse, error) {
	if w := s.jm.waits.summary(req.JobId, caller(ctx)); w != nil {
		return &braidv1.DescribeJobResponse{Job: w}, nil
	}
	rec, err := s.visibleRecord(ctx, req.JobId)
	if err != nil {
		return nil, err
	}
	resp := &braidv1.DescribeJobResponse{Job: s.jm.summary(rec)}
	if j := s.jm.job(req.JobId); j != nil {
		if resp.Graph, err = j.graph.Proto(); err != nil {
			return nil, status.Errorf(codes.Internal, "job %s: %v", j.id, err)
		}
		resp.Subtasks = j.subtaskInfos()
		resp.Checkpoints = s.jm.checkpointSummary(ctx, j)
		return resp, nil
	}
	graph, err := loadGraph(ctx, rec)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "job %s: stored graph is unreadable: %v", rec.ID, err)
	}
	resp.Graph = graph
	placements, err := decodePlacements(rec.Placements)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "job %s: %v", rec.ID, err)
	}
	for _, p := range placements {
		resp.Subtasks = append(resp.Subtasks, &braidv1.SubtaskInfo{
			Vertex: p.Vertex, Subtask: p.Subtask, TaskManagerId: p.TaskManagerId, TaskManagerAddress: p.Address, Status: rec.Status,
		})
	}
	return resp, nil
}

// subtaskInfos lists the job's subtasks ordered by vertex and index.
func (j *Job) subtaskInfos() []*braidv1.SubtaskInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]*braidv1.SubtaskInfo, 0, len(j.mu.subtasks))
	for k, st := range j.mu.subtasks {
		out = append(out, &braidv1.SubtaskInfo{
			Vertex: k.vertex, Subtask: k.subtask, TaskManagerId: st.tmID, TaskManagerAddress: st.addr,
			Status: taskStateName(st.state), RowsIn: st.rowsIn, RowsOut: st.rowsOut, RemoteRowsOut: st.remoteOut,
		})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Vertex != out[b].Vertex {
			return out[a].Vertex < out[b].Vertex
		}
		return out[a].Subtask < out[b].Subtask
	})
	return out
}

// taskStateName turns TASK_STATE_RUNNING into RUNNING.
func taskStateName(s braidv1.TaskState) string {
	const prefix = "TASK_STATE_"
	n := s.String()
	if len(n) > len(prefix) && n[:len(prefix)] == prefix {
		return n[len(prefix):]
	}
	return n
}

func (s *clientService) CancelJob(ctx context.Context, req *braidv1.CancelJobRequest) (*braidv1.CancelJobResponse, error) {
	// NB: the owner of a job may cancel it (a viewer's SELECT, say); to
	// anyone else but an admin it is not found, as in DescribeJob.
	if who := caller(ctx); !who.IsAdmin() && s.jm.waits.summary(req.JobId, who) == nil {
		if _, err := s.visibleRecord(ctx, req.JobId); err != nil {
			return nil, err
		}
	}
	if err := s.jm.CancelJob(ctx, req.JobId); err != nil {
		return nil, err
	}
	return &braidv1.CancelJobResponse{}, nil
}

func (s *clientService) TriggerSavepoint(ctx context.Context, req *braidv1.TriggerSavepointRequest) (*braidv1.TriggerSavepointResponse, error) {
	if err := requireAdmin(ctx, "a savepoint of job "+req.JobId); err != nil {
		return nil, err
	}
	id, path, err := s.jm.TriggerSavepoint(ctx, req.JobId, req.Dir)
	if err != nil {
		return nil, err
	}
	return &braidv1.TriggerSavepointResponse{Path: path, JobId: id}, nil
}

func (s *clientService) StopJob(ctx context.Context, req *braidv1.StopJobRequest) (*braidv1.StopJobResponse, error) {
	if err := requireAdmin(ctx, "stopping job "+req.JobId); err != nil {
		return nil, err
	}
	id, path, err := s.jm.StopJob(ctx, req.JobId, req.Savepoint, req.Dir)
	if err != nil {
		return nil, err
	}
	return &braidv1.StopJobResponse{Path: path, JobId: id}, nil
}

func (s *clientService) RescaleJob(ctx context.Context, req *braidv1.RescaleJobRequest) (*braidv1.RescaleJobResponse, error) {
	if err := requireAdmin(ctx, "rescaling job "+req.JobId); err != nil {
		return nil, err
	}
	id, path, err := s.jm.RescaleJob(ctx, req.JobId, int(req.Parallelism))
	if err != nil {
		return nil, err
	}
	return &braidv1.RescaleJobResponse{Path: path, JobId: id}, nil
}

// visibleRecord returns the etcd record of job id when the caller may see
// it; a job it may not see is not found, exactly as a missing one.
func (s *clientService) visibleRecord(ctx context.Context, id string) (*metastore.JobRecord, error) {
	rec, err := s.jm.store.GetJob(ctx, id)
	if errors.Is(err, metastore.ErrNotFound) || (err == nil && (rec == nil || !sees(caller(ctx), rec.Owner))) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	return rec, nil
}
