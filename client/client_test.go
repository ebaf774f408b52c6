package client

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/types"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// cannedServer answers Execute with a fixed response sequence, and records
// what it was asked.
type cannedServer struct {
	braidv1.UnimplementedClientServiceServer
	responses []*braidv1.ExecuteResponse
	execErr   error // returned after the responses
	block     bool  // after the responses, wait for the client to go away

	mu        sync.Mutex
	scripts   []string
	cancelled bool
	props     map[string]string
}

func (s *cannedServer) OpenSession(_ context.Context, req *braidv1.OpenSessionRequest) (*braidv1.OpenSessionResponse, error) {
	s.mu.Lock()
	s.props = req.GetProperties()
	s.mu.Unlock()
	return &braidv1.OpenSessionResponse{SessionId: "s1"}, nil
}

func (s *cannedServer) CloseSession(context.Context, *braidv1.CloseSessionRequest) (*braidv1.CloseSessionResponse, error) {
	return &braidv1.CloseSessionResponse{}, nil
}

func (s *cannedServer) Execute(req *braidv1.ExecuteRequest, stream grpc.ServerStreamingServer[braidv1.ExecuteResponse]) error {
	s.mu.Lock()
	s.scripts = append(s.scripts, req.GetScript())
	s.mu.Unlock()
	if req.GetSessionId() != "s1" {
		return status.Error(codes.NotFound, "unknown session "+req.GetSessionId())
	}
	for _, r := range s.responses {
		if err := stream.Send(r); err != nil {
			return err
		}
	}
	if s.block {
		<-stream.Context().Done()
		s.mu.Lock()
		s.cancelled = true
		s.mu.Unlock()
		return stream.Context().Err()
	}
	return s.execErr
}

func (s *cannedServer) ListJobs(context.Context, *braidv1.ListJobsRequest) (*braidv1.ListJobsResponse, error) {
	return &braidv1.ListJobsResponse{Jobs: []*braidv1.JobSummary{
		{JobId: "j1", Name: "insert-into_t", Status: "RUNNING", StartTimeUnixMs: 1_700_000_000_000},
		{JobId: "j2", Name: "q", Status: "FAILED", StartTimeUnixMs: 1_700_000_000_000, EndTimeUnixMs: 1_700_000_001_500, Error: "boom"},
	}}, nil
}

func (s *cannedServer) DescribeJob(_ context.Context, req *braidv1.DescribeJobRequest) (*braidv1.DescribeJobResponse, error) {
	if req.GetJobId() != "j1" {
		return nil, status.Errorf(codes.NotFound, "job %s not found", req.GetJobId())
	}
	return &braidv1.DescribeJobResponse{
		Job: &braidv1.JobSummary{JobId: "j1", Name: "n", Status: "RUNNING"},
		Graph: &braidv1.JobGraph{Vertices: []*braidv1.Vertex{
			{Id: 1, Name: "Source: t", Parallelism: 2},
			{Id: 2, Name: "Sink", Parallelism: 1},
		}},
		Subtasks: []*braidv1.SubtaskInfo{
			{Vertex: 1, Subtask: 1, TaskManagerId: "tm-2", RowsOut: 7},
			{Vertex: 2, Subtask: 0, TaskManagerId: "tm-1", RowsIn: 12},
			{Vertex: 1, Subtask: 0, TaskManagerId: "tm-1", RowsOut: 5},
		},
	}, nil
}

func (s *cannedServer) CancelJob(_ context.Context, req *braidv1.CancelJobRequest) (*braidv1.CancelJobResponse, error) {
	return nil, status.Errorf(codes.FailedPrecondition, "job %s is already finished", req.GetJobId())
}

func startServer(t *testing.T, srv braidv1.ClientServiceServer) *Client {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	gs := grpc.NewServer()
	braidv1.RegisterClientServiceServer(gs, srv)
	go gs.Serve(lis)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	c := newWithConn("bufnet", conn)
	t.Cleanup(func() {
		c.Close()
		gs.Stop()
	})
	return c
}

// recorder is a Handler that writes what it hears as text.
type recorder struct {
	buf bytes.Buffer
}

func (r *recorder) Status(stmt int, msg, jobID string) {
	r.buf.WriteString("status " + itoa(stmt) + " " + msg + " job=" + jobID + "\n")
}

func (r *recorder) Schema(stmt int, res ResultInfo) {
	cols, changelog, jobID := res.Columns, res.Changelog, res.JobID
	r.buf.WriteString("schema " + itoa(stmt))
	for _, c := range cols {
		r.buf.WriteString(" " + c.Name + ":" + c.Type.String())
	}
	if changelog {
		r.buf.WriteString(" changelog")
	}
	r.buf.WriteString(" job=" + jobID + "\n")
}

func (r *recorder) Batch(stmt int, b types.Batch) {
	for i := 0; i < b.NumRows(); i++ {
		r.buf.WriteString("row " + itoa(stmt) + " " + b.Kind(i).String())
		for c := 0; c < b.NumCols(); c++ {
			col := b.Column(c)
			if col.IsNull(i) {
				r.buf.WriteString(" NULL")
				continue
			}
			r.buf.WriteString(" " + col.ValueStr(i))
		}
		r.buf.WriteString("\n")
	}
}

func (r *recorder) End(stmt int, st string) {
	r.buf.WriteString("end " + itoa(stmt) + " " + st + "\n")
}

func itoa(i int) string { return strconv.Itoa(i) }

// ipcStream encodes batches of (a INT, s STRING) as one IPC stream.
func ipcStream(t *testing.T, rows [][]any) []byte {
	t.Helper()
	schema := types.Schema{{Name: "a", Type: types.Int}, {Name: "s", Type: types.String}}
	as := schema.ArrowSchema()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(as))
	for _, batch := range rows {
		ib := array.NewInt32Builder(memory.DefaultAllocator)
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		var kinds []int8
		for _, r := range batch {
			row := r.([]any)
			if row[1] == nil {
				ib.AppendNull()
			} else {
				ib.Append(int32(row[1].(int)))
			}
			if row[2] == nil {
				sb.AppendNull()
			} else {
				sb.Append(row[2].(string))
			}
			kinds = append(kinds, int8(row[0].(types.RowKind)))
		}
		ia, sa := ib.NewArray(), sb.NewArray()
		b := types.NewBatch(as, []arrow.Array{ia, sa}, kinds)
		if err := w.Write(b.Rec); err != nil {
			t.Fatal(err)
		}
		b.Release()
		ia.Release()
		sa.Release()
		ib.Release()
		sb.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestExecuteDecodesSplitStream(t *testing.T) {
	stream := ipcStream(t, [][]any{
		{[]any{types.Insert, 1, "a"}, []any{types.Insert, nil, "b"}},
		{[]any{types.UpdateBefore, 1, "a"}, []any{types.UpdateAfter, 2, nil}},
	})
	// Cut the stream at awkward places: messages split across ResultBatches.
	var resps []*braidv1.ExecuteResponse
	resps = append(resps, &braidv1.ExecuteResponse{Statement: 0, Payload: &braidv1.ExecuteResponse_Status{Status: &braidv1.StatementStatus{Message: "Execute statement succeeded."}}})
	resps = append(resps, &braidv1.ExecuteResponse{Statement: 1, Payload: &braidv1.ExecuteResponse_Schema{Schema: &braidv1.ResultSchema{
		Columns: []*braidv1.ResultColumn{{Name: "a", Type: "INT"}, {Name: "s", Type: "STRING"}}, JobId: "q1", Changelog: true}}})
	for _, cut := range [][2]int{{0, 3}, {3, 100}, {100, 333}, {333, len(stream)}} {
		resps = append(resps, &braidv1.ExecuteResponse{Statement: 1, Payload: &braidv1.ExecuteResponse_Batch{Batch: &braidv1.ResultBatch{ArrowIpc: stream[cut[0]:cut[1]]}}})
	}
	resps = append(resps, &braidv1.ExecuteResponse{Statement: 1, Payload: &braidv1.ExecuteResponse_End{End: &braidv1.ResultEnd{JobStatus: "FINISHED"}}})
	resps = append(resps, &braidv1.ExecuteResponse{Statement: 2, Payload: &braidv1.ExecuteResponse_Status{Status: &braidv1.StatementStatus{Message: "Submitted.", JobId: "j9"}}})

	srv := &cannedServer{responses: resps}
	c := startServer(t, srv)
	ctx := context.Background()
	s, err := c.OpenSession(ctx, map[string]string{"k": "v"})
	if err != nil {
		t.Fatal(err)
	}
	var r recorder
	if err := s.Execute(ctx, "SET 'k'='v'; SELECT * FROM t; INSERT INTO u SELECT 1;", false, &r); err != nil {
		t.Fatal(err)
	}
	want := `status 0 Execute statement succeeded. job=
schema 1 a:INT s:STRING changelog job=q1
row 1 +I 1 a
row 1 +I NULL b
row 1 -U 1 a
row 1 +U 2 NULL
end 1 FINISHED
status 2 Submitted. job=j9
`
	if got := r.buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if srv.props["k"] != "v" {
		t.Errorf("session properties not sent: %v", srv.props)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestExecuteEmptyResult(t *testing.T) {
	srv := &cannedServer{responses: []*braidv1.ExecuteResponse{
		{Payload: &braidv1.ExecuteResponse_Schema{Schema: &braidv1.ResultSchema{Columns: []*braidv1.ResultColumn{{Name: "x", Type: "DECIMAL(10, 2) NOT NULL"}}}}},
		{Payload: &braidv1.ExecuteResponse_End{End: &braidv1.ResultEnd{JobStatus: "FINISHED"}}},
	}}
	c := startServer(t, srv)
	s, err := c.OpenSession(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var r recorder
	if err := s.Execute(context.Background(), "SELECT x FROM t WHERE false", false, &r); err != nil {
		t.Fatal(err)
	}
	if got, want := r.buf.String(), "schema 0 x:DECIMAL(10, 2) NOT NULL job=\nend 0 FINISHED\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestExecuteServerErrorKeepsMessage(t *testing.T) {
	msg := `sql: line 1, column 15: unknown table "nope"`
	srv := &cannedServer{
		responses: []*braidv1.ExecuteResponse{{Payload: &braidv1.ExecuteResponse_Status{Status: &braidv1.StatementStatus{Message: "ok"}}}},
		execErr:   status.Error(codes.InvalidArgument, msg),
	}
	c := startServer(t, srv)
	s, err := c.OpenSession(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var r recorder
	err = s.Execute(context.Background(), "USE x; SELECT * FROM nope", false, &r)
	if err == nil || err.Error() != msg {
		t.Fatalf("error = %v, want %q", err, msg)
	}
	var se *ServerError
	if !errors.As(err, &se) || se.Code != codes.InvalidArgument {
		t.Errorf("error %#v is not a ServerError with InvalidArgument", err)
	}
	if r.buf.String() != "status 0 ok job=\n" {
		t.Errorf("handler heard %q", r.buf.String())
	}
}

func TestExecuteBadStreamFails(t *testing.T) {
	srv := &cannedServer{responses: []*braidv1.ExecuteResponse{
		{Payload: &braidv1.ExecuteResponse_Schema{Schema: &braidv1.ResultSchema{Columns: []*braidv1.ResultColumn{{Name: "a", Type: "INT"}}}}},
		{Payload: &braidv1.ExecuteResponse_Batch{Batch: &braidv1.ResultBatch{ArrowIpc: []byte("definitely not arrow ipc data at all")}}},
		{Payload: &braidv1.ExecuteResponse_End{End: &braidv1.ResultEnd{JobStatus: "FINISHED"}}},
	}}
	c := startServer(t, srv)
	s, err := c.OpenSession(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Execute(context.Background(), "SELECT 1", false, &recorder{})
	if err == nil || !strings.Contains(err.Error(), "decoding result") {
		t.Fatalf("error = %v, want a decoding error", err)
	}
}

func TestExecuteCancelReachesServer(t *testing.T) {
	stream := ipcStream(t, [][]any{{[]any{types.Insert, 1, "a"}}})
	srv := &cannedServer{block: true, responses: []*braidv1.ExecuteResponse{
		{Payload: &braidv1.ExecuteResponse_Schema{Schema: &braidv1.ResultSchema{Columns: []*braidv1.ResultColumn{{Name: "a", Type: "INT"}, {Name: "s", Type: "STRING"}}}}},
		{Payload: &braidv1.ExecuteResponse_Batch{Batch: &braidv1.ResultBatch{ArrowIpc: stream}}},
	}}
	c := startServer(t, srv)
	s, err := c.OpenSession(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &cancelOnRow{cancel: cancel}
	err = s.Execute(ctx, "SELECT * FROM t", true, h)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	if h.rows != 1 {
		t.Errorf("rows before cancel = %d, want 1", h.rows)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		srv.mu.Lock()
		done := srv.cancelled
		srv.mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("server never saw the cancellation")
		}
		time.Sleep(time.Millisecond)
	}
}

type cancelOnRow struct {
	recorder
	cancel context.CancelFunc
	rows   int
}

func (h *cancelOnRow) Batch(stmt int, b types.Batch) {
	h.rows += b.NumRows()
	h.cancel()
}

func TestJobs(t *testing.T) {
	c := startServer(t, &cannedServer{})
	ctx := context.Background()
	jobs, err := c.ListJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].ID != "j1" || !jobs[0].End.IsZero() || jobs[1].Error != "boom" ||
		jobs[1].End.Sub(jobs[1].Start) != 1500*time.Millisecond {
		t.Errorf("jobs = %+v", jobs)
	}
	d, err := c.DescribeJob(ctx, "j1")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Vertices) != 2 || len(d.Vertices[0].Subtasks) != 2 || d.Vertices[0].Subtasks[0].TaskManagerID != "tm-1" ||
		d.Vertices[0].Subtasks[1].RowsOut != 7 || d.Vertices[1].Subtasks[0].RowsIn != 12 {
		t.Errorf("detail = %+v", d)
	}
	if _, err := c.DescribeJob(ctx, "zz"); err == nil || err.Error() != "job zz not found" {
		t.Errorf("describe error = %v", err)
	}
	if err := c.CancelJob(ctx, "j2"); err == nil || err.Error() != "job j2 is already finished" {
		t.Errorf("cancel error = %v", err)
	}
}

func TestDialUnreachable(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close() // nothing listens there now
	_, err = Dial(context.Background(), addr)
	if err == nil {
		t.Fatal("Dial succeeded against a closed port")
	}
	want := "cannot reach job manager at " + addr + ": "
	if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "refused") {
		t.Errorf("error = %q, want prefix %q and the cause", err, want)
	}
}

func TestDialReal(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	braidv1.RegisterClientServiceServer(gs, &cannedServer{})
	go gs.Serve(lis)
	defer gs.Stop()
	c, err := Dial(context.Background(), lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ListJobs(context.Background()); err != nil {
		t.Fatal(err)
	}
}
