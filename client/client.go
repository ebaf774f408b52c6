package client

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	braidv1 "github.com/braidflow/braid/proto/braid/v1"
)

// dialTimeout bounds the reachability probe of Dial when ctx has no deadline.
const dialTimeout = 5 * time.Second

// Client is a connection to a job manager. It is safe for concurrent use.
type Client struct {
	endpoint string
	// tls: the connections use TLS.
	tls   bool
	close func() error
	rpc   braidv1.ClientServiceClient
}

// Dial connects to the job manager at endpoint (host:port), without TLS
// unless opts say otherwise (WithTLS). It checks that the endpoint accepts
// connections (and, with TLS, completes a handshake), so a cluster that is
// down is reported here, as "cannot reach job manager at host:port: ...",
// rather than at the first call. ctx bounds the check only.
//
// endpoint may list several job managers separated by commas (highly
// available ones): Dial connects to the first that accepts connections, and
// every call goes to the leader, following the leader a standby names.
//
// opts add to the connection, such as WithToken and WithTLS.
func Dial(ctx context.Context, endpoint string, opts ...Option) (*Client, error) {
	var o dialOptions
	for _, opt := range opts {
		opt(&o)
	}
	pctx := ctx
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		pctx, cancel = context.WithTimeout(ctx, dialTimeout)
		defer cancel()
	}
	var endpoints []string
	for _, e := range strings.Split(endpoint, ",") {
		if e = strings.TrimSpace(e); e != "" {
			endpoints = append(endpoints, e)
		}
	}
	if len(endpoints) == 0 {
		return nil, errors.New("no job manager endpoint")
	}
	var first error
	for _, e := range endpoints {
		if err := probe(pctx, e, o.tls); err != nil {
			first = cmp.Or(first, err)
			continue
		}
		l := newLeaderConn(endpoints, e, append([]grpc.DialOption{o.transport()}, o.grpc...)...)
		if _, err := l.conn(e); err != nil {
			return nil, err
		}
		return &Client{endpoint: e, tls: o.tls != nil, close: l.close, rpc: braidv1.NewClientServiceClient(l)}, nil
	}
	return nil, first
}

// probe connects to endpoint and, with TLS, completes a handshake.
func probe(ctx context.Context, endpoint string, tlsCfg *tls.Config) error {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", endpoint)
	if err != nil {
		return unreachable(endpoint, err)
	}
	defer nc.Close()
	if tlsCfg == nil {
		return nil
	}
	cfg := tlsCfg.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(endpoint)
	}
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return fmt.Errorf("cannot reach job manager at %s over TLS: %w", endpoint, err)
	}
	return nil
}

// newWithConn wraps an existing connection; tests use it with an in-process
// server.
func newWithConn(endpoint string, conn *grpc.ClientConn) *Client {
	return &Client{endpoint: endpoint, close: conn.Close, rpc: braidv1.NewClientServiceClient(conn)}
}

// Endpoint returns the address the client was dialled with (the first
// reachable one of several).
func (c *Client) Endpoint() string { return c.endpoint }

// Close closes the connections. Sessions of the client are not closed on
// the server; they expire there.
func (c *Client) Close() error { return c.close() }

// unreachable names the endpoint in a connection failure, keeping the cause
// short: "connection refused" rather than the whole dial chain.
func unreachable(endpoint string, err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		err = op.Err
		var se interface{ Unwrap() error }
		if errors.As(op.Err, &se) && se.Unwrap() != nil {
			err = se.Unwrap()
		}
	}
	return fmt.Errorf("cannot reach job manager at %s: %w", endpoint, err)
}

// ServerError is an error the server returned. Its text is the server's
// message, without gRPC's "rpc error: code = ..." prefix.
type ServerError struct {
	Code    codes.Code
	Message string
}

// Error is the server's message, after "Unauthenticated: " or "Permission
// denied: " for a caller the server refused, so that the refusal reads as
// one.
func (e *ServerError) Error() string {
	switch e.Code {
	case codes.Unauthenticated:
		return "Unauthenticated: " + e.Message
	case codes.PermissionDenied:
		return "Permission denied: " + e.Message
	}
	return e.Message
}

// convert turns a gRPC error into a ServerError, or into the unreachable
// error when the server went away, or into ctx's error when ctx ended.
func (c *Client) convert(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	st := status.Convert(err)
	switch st.Code() {
	case codes.Canceled:
		return context.Canceled
	case codes.Unavailable:
		if !c.tls && strings.Contains(st.Message(), "server preface") {
			// NB: a TLS server closes a plain-text connection at once.
			return fmt.Errorf("the job manager at %s closed a plain-text connection (%s): it may require TLS, as it does when its members use mutual TLS; connect with its CA (braid --tls-ca or BRAID_TLS_CA; client.WithTLS)", c.endpoint, st.Message())
		}
		// NB: a connection that breaks mid-stream reads as EOF or a reset.
		if strings.Contains(st.Message(), "EOF") || strings.Contains(st.Message(), "reset") {
			return fmt.Errorf("lost the connection to the job manager at %s: %s", c.endpoint, st.Message())
		}
		return fmt.Errorf("cannot reach job manager at %s: %s", c.endpoint, st.Message())
	}
	return &ServerError{Code: st.Code(), Message: st.Message()}
}

// JobSummary is one job as ListJobs reports it. End is zero while the job
// runs; Error is set when it failed.
type JobSummary struct {
	ID     string
	Name   string
	Status string
	Start  time.Time
	End    time.Time
	Error  string
	// Owner is the principal that submitted the job; "" when the job
	// manager authenticates no clients.
	Owner string
}

// JobDetail is a job with its vertices and where their subtasks run.
type JobDetail struct {
	Job      JobSummary
	Vertices []Vertex
	// Checkpoints is nil for a job that takes no checkpoints.
	Checkpoints *CheckpointSummary
}

// CheckpointSummary is a job's checkpointing as DescribeJob reports it.
type CheckpointSummary struct {
	Interval time.Duration
	// LatestID is the latest completed checkpoint, 0 for none yet.
	LatestID int64
	Latest   time.Time
	// Attempt is the job's current deployment; Restarts counts restarts.
	Attempt, Restarts int
}

// Vertex is one vertex of a job graph (an operator chain).
type Vertex struct {
	ID          int
	Name        string
	Parallelism int
	Subtasks    []Subtask
}

// Subtask is one parallel instance of a vertex.
type Subtask struct {
	Index              int
	TaskManagerID      string
	TaskManagerAddress string
	Status             string
	RowsIn             int64
	RowsOut            int64
	RemoteRowsOut      int64
}

func fromUnixMs(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

func jobFromProto(j *braidv1.JobSummary) JobSummary {
	return JobSummary{
		ID:     j.GetJobId(),
		Name:   j.GetName(),
		Status: j.GetStatus(),
		Start:  fromUnixMs(j.GetStartTimeUnixMs()),
		End:    fromUnixMs(j.GetEndTimeUnixMs()),
		Error:  j.GetError(),
		Owner:  j.GetOwner(),
	}
}

// ListJobs returns every job the job manager knows, in the server's order.
func (c *Client) ListJobs(ctx context.Context) ([]JobSummary, error) {
	resp, err := c.rpc.ListJobs(ctx, &braidv1.ListJobsRequest{})
	if err != nil {
		return nil, c.convert(ctx, err)
	}
	out := make([]JobSummary, 0, len(resp.GetJobs()))
	for _, j := range resp.GetJobs() {
		out = append(out, jobFromProto(j))
	}
	return out, nil
}

// DescribeJob returns the job with its vertices in graph order and, under
// each, its subtasks ordered by index.
func (c *Client) DescribeJob(ctx context.Context, jobID string) (JobDetail, error) {
	resp, err := c.rpc.DescribeJob(ctx, &braidv1.DescribeJobRequest{JobId: jobID})
	if err != nil {
		return JobDetail{}, c.convert(ctx, err)
	}
	d := JobDetail{Job: jobFromProto(resp.GetJob())}
	if cs := resp.GetCheckpoints(); cs != nil {
		d.Checkpoints = &CheckpointSummary{Interval: time.Duration(cs.GetIntervalMs()) * time.Millisecond,
			LatestID: cs.GetLatestId(), Attempt: int(cs.GetAttempt()), Restarts: int(cs.GetRestarts())}
		if cs.GetLatestUnixMs() > 0 {
			d.Checkpoints.Latest = time.UnixMilli(cs.GetLatestUnixMs())
		}
	}
	byID := map[int32]int{}
	for _, v := range resp.GetGraph().GetVertices() {
		byID[v.GetId()] = len(d.Vertices)
		d.Vertices = append(d.Vertices, Vertex{ID: int(v.GetId()), Name: v.GetName(), Parallelism: int(v.GetParallelism())})
	}
	for _, st := range resp.GetSubtasks() {
		i, ok := byID[st.GetVertex()]
		if !ok {
			// A subtask of a vertex the graph does not list: keep it visible.
			i = len(d.Vertices)
			byID[st.GetVertex()] = i
			d.Vertices = append(d.Vertices, Vertex{ID: int(st.GetVertex()), Name: "?"})
		}
		v := &d.Vertices[i]
		v.Subtasks = append(v.Subtasks, Subtask{
			Index:              int(st.GetSubtask()),
			TaskManagerID:      st.GetTaskManagerId(),
			TaskManagerAddress: st.GetTaskManagerAddress(),
			Status:             st.GetStatus(),
			RowsIn:             st.GetRowsIn(),
			RowsOut:            st.GetRowsOut(),
			RemoteRowsOut:      st.GetRemoteRowsOut(),
		})
	}
	for i := range d.Vertices {
		sortSubtasks(d.Vertices[i].Subtasks)
	}
	return d, nil
}

func sortSubtasks(s []Subtask) {
	slices.SortStableFunc(s, func(a, b Subtask) int { return cmp.Compare(a.Index, b.Index) })
}

// CancelJob asks the job manager to cancel a job. It returns when the
// request is accepted, not when the job has stopped.
func (c *Client) CancelJob(ctx context.Context, jobID string) error {
	_, err := c.rpc.CancelJob(ctx, &braidv1.CancelJobRequest{JobId: jobID})
	return c.convert(ctx, err)
}

// TriggerSavepoint takes a savepoint of a running job (named by its id or
// a unique prefix of it) and returns the job's full id and the URI of the
// savepoint's manifest. With dir set, the savepoint is copied under
// <dir>/<job id>/ and the copy's URI is returned. The job keeps running.
func (c *Client) TriggerSavepoint(ctx context.Context, jobID, dir string) (id, path string, err error) {
	resp, err := c.rpc.TriggerSavepoint(ctx, &braidv1.TriggerSavepointRequest{JobId: jobID, Dir: dir})
	if err != nil {
		return "", "", c.convert(ctx, err)
	}
	return resp.JobId, resp.Path, nil
}

// StopJob stops a running job. With savepoint it first takes a savepoint
// (copied under dir when set) and returns its URI; the job ends FINISHED.
// Without savepoint the job is canceled.
func (c *Client) StopJob(ctx context.Context, jobID string, savepoint bool, dir string) (id, path string, err error) {
	resp, err := c.rpc.StopJob(ctx, &braidv1.StopJobRequest{JobId: jobID, Savepoint: savepoint, Dir: dir})
	if err != nil {
		return "", "", c.convert(ctx, err)
	}
	return resp.JobId, resp.Path, nil
}

// RescaleJob restarts a running job from a fresh savepoint with every
// vertex (but collect sinks and VALUES sources) at parallelism, keeping
// its id. It returns the savepoint's URI.
func (c *Client) RescaleJob(ctx context.Context, jobID string, parallelism int) (id, path string, err error) {
	resp, err := c.rpc.RescaleJob(ctx, &braidv1.RescaleJobRequest{JobId: jobID, Parallelism: int32(parallelism)})
	if err != nil {
		return "", "", c.convert(ctx, err)
	}
	return resp.JobId, resp.Path, nil
}
