package taskmanager

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
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

	"github.com/braidflow/braid/jobgraph"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/types"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeJM is a ClusterService that records what task managers tell it.
type fakeJM struct {
	braidv1.UnimplementedClusterServiceServer
	mu         sync.Mutex
	registered int
	heartbeats int
	forget     bool // answer the next heartbeat with known=false
	reports    []*braidv1.TaskStatusReport
	results    bytes.Buffer
	ended      bool
	changed    chan struct{}
	// pushDelay holds each result chunk back before it is taken, as a job
	// manager relaying to a slow client does; chunks counts those taken,
	// and chunksAtFinish how many had been when a FINISHED report came.
	pushDelay      time.Duration
	chunks         int
	chunksAtFinish []int
}

func (f *fakeJM) note() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

func (f *fakeJM) RegisterTaskManager(_ context.Context, r *braidv1.RegisterTaskManagerRequest) (*braidv1.RegisterTaskManagerResponse, error) {
	f.mu.Lock()
	f.registered++
	f.mu.Unlock()
	f.note()
	return &braidv1.RegisterTaskManagerResponse{HeartbeatIntervalMs: 20}, nil
}

func (f *fakeJM) Heartbeat(context.Context, *braidv1.HeartbeatRequest) (*braidv1.HeartbeatResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.heartbeats++
	known := !f.forget
	f.forget = false
	f.note()
	return &braidv1.HeartbeatResponse{Known: known}, nil
}

func (f *fakeJM) ReportTaskStatus(_ context.Context, r *braidv1.TaskStatusReport) (*braidv1.TaskStatusAck, error) {
	f.mu.Lock()
	f.reports = append(f.reports, r)
	if r.State == braidv1.TaskState_TASK_STATE_FINISHED {
		f.chunksAtFinish = append(f.chunksAtFinish, f.chunks)
	}
	f.mu.Unlock()
	f.note()
	return &braidv1.TaskStatusAck{}, nil
}

func (f *fakeJM) PushResults(s grpc.ClientStreamingServer[braidv1.ResultChunk, braidv1.PushResultsAck]) error {
	for {
		c, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return s.SendAndClose(&braidv1.PushResultsAck{})
		}
		if err != nil {
			return err
		}
		time.Sleep(f.pushDelay)
		f.mu.Lock()
		f.chunks++
		f.results.Write(c.ArrowIpc)
		f.ended = f.ended || c.End
		f.mu.Unlock()
		f.note()
	}
}

// waitFor polls cond under f.mu until it holds or 5 s pass.
func (f *fakeJM) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		f.mu.Lock()
		ok := cond()
		f.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-f.changed:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (f *fakeJM) state(job string, vertex int32) braidv1.TaskState {
	var s braidv1.TaskState
	for _, r := range f.reports {
		if r.JobId == job && r.Vertex == vertex {
			s = r.State
		}
	}
	return s
}

func startFakeJM(t testing.TB) (*fakeJM, string) {
	f := &fakeJM{changed: make(chan struct{}, 1)}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	braidv1.RegisterClusterServiceServer(s, f)
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	return f, lis.Addr().String()
}

// fakeSubtask is a Subtask driven by a function.
type fakeSubtask struct {
	run func(ctx context.Context) error
}

func (s *fakeSubtask) Run(ctx context.Context) error             { return s.run(ctx) }
func (s *fakeSubtask) Counters() (rowsIn, rowsOut, remote int64) { return 0, 3, 0 }

func testBatch() types.Batch {
	schema := types.Schema{{Name: "n", Type: types.DataType{Kind: types.KindBigInt}}}.ArrowSchema()
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues([]int64{1, 2, 3}, nil)
	col := b.NewArray()
	defer col.Release()
	return types.NewInsertBatch(schema, []arrow.Array{col}, 3)
}

func TestTaskManager(t *testing.T) {
	f, jmAddr := startFakeJM(t)
	// Vertex 0 sends rows to the collect sink, vertex 1 panics, vertex 2
	// runs until canceled.
	var stateDir string
	build := func(spec SubtaskSpec) (Subtask, error) {
		switch spec.Vertex {
		case 0:
			res := spec.Ctx.Results
			if res == nil {
				return nil, errors.New("no result writer for a collect vertex")
			}
			return &fakeSubtask{run: func(context.Context) error {
				b := testBatch()
				defer b.Release()
				for range 2 {
					if err := res.Write(b); err != nil {
						return err
					}
				}
				return res.Close()
			}}, nil
		case 1:
			return &fakeSubtask{run: func(context.Context) error { panic("boom") }}, nil
		default:
			stateDir = spec.StateDir
			if spec.Ctx.Brokers[0] != "b1:9092" || spec.StateCacheBytes != DefaultStateCacheBytes/3 {
				return nil, errors.New("wrong context")
			}
			return &fakeSubtask{run: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }}, nil
		}
	}

	dir := t.TempDir()
	tm, err := New(Config{JobManager: jmAddr, Listen: "127.0.0.1:0", DataDir: dir, ID: "tm-test", Slots: 3, Build: build})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := tm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer tm.Close()
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := tm.WaitRegistered(wctx); err != nil {
		t.Fatal(err)
	}

	// known=false makes the task manager register again.
	f.waitFor(t, "heartbeats", func() bool { return f.heartbeats >= 2 })
	f.mu.Lock()
	f.forget = true
	f.mu.Unlock()
	f.waitFor(t, "re-registration", func() bool { return f.registered >= 2 })

	conn, err := grpc.NewClient(tm.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ts := braidv1.NewTaskServiceClient(conn)
	graph := sourcesGraph(t, "job1", "sink", "bad", "forever")
	_, err = ts.DeployTasks(ctx, &braidv1.DeployTasksRequest{Graph: graph, Brokers: []string{"b1:9092", "b2:9092"}, Deploy: []*braidv1.SubtaskRef{{Vertex: 0}, {Vertex: 1}, {Vertex: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	f.waitFor(t, "sink finished", func() bool { return f.state("job1", 0) == braidv1.TaskState_TASK_STATE_FINISHED })
	f.waitFor(t, "panic reported", func() bool { return f.state("job1", 1) == braidv1.TaskState_TASK_STATE_FAILED })
	f.waitFor(t, "forever running", func() bool { return f.state("job1", 2) == braidv1.TaskState_TASK_STATE_RUNNING })

	f.mu.Lock()
	for _, r := range f.reports {
		if r.State == braidv1.TaskState_TASK_STATE_FAILED && r.Error != "panic: boom" {
			t.Errorf("failure reported as %q", r.Error)
		}
	}
	if !f.ended {
		t.Error("result stream did not end")
	}
	rows := 0
	rd, err := ipc.NewReader(bytes.NewReader(f.results.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for rd.Next() {
		rows += int(rd.RecordBatch().NumRows())
	}
	if rd.Err() != nil {
		t.Fatal(rd.Err())
	}
	rd.Release()
	f.mu.Unlock()
	if rows != 6 {
		t.Errorf("got %d result rows, want 6", rows)
	}

	if _, err := os.Stat(stateDir); err != nil {
		t.Fatalf("state dir of a running subtask: %v", err)
	}
	if _, err := ts.CancelJob(ctx, &braidv1.CancelTasksRequest{JobId: "job1"}); err != nil {
		t.Fatal(err)
	}
	f.waitFor(t, "cancel reported", func() bool { return f.state("job1", 2) == braidv1.TaskState_TASK_STATE_CANCELED })
	if _, err := os.Stat(stateDir); !os.IsNotExist(err) {
		t.Errorf("state dir survives cancel: %v", err)
	}
}

// TestStoppedSinkResultsBeforeFinished: a collect sink stopped at a
// savepoint ends without closing its results (the job manager ends them
// when the job finishes, and drops chunks that come later), so the task
// manager must not report it FINISHED before the job manager took every
// chunk it sent.
func TestStoppedSinkResultsBeforeFinished(t *testing.T) {
	f, jmAddr := startFakeJM(t)
	f.pushDelay = 100 * time.Millisecond
	build := func(spec SubtaskSpec) (Subtask, error) {
		res := spec.Ctx.Results
		return &fakeSubtask{run: func(context.Context) error {
			b := testBatch()
			defer b.Release()
			for range 2 {
				if err := res.Write(b); err != nil {
					return err
				}
			}
			// Stopped at savepoint 7: the barrier, then no Close.
			return res.Checkpoint(7)
		}}, nil
	}
	tm, err := New(Config{JobManager: jmAddr, Listen: "127.0.0.1:0", DataDir: t.TempDir(), ID: "tm-test", Build: build})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := tm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer tm.Close()
	req := &braidv1.DeployTasksRequest{Graph: sourcesGraph(t, "job1", "sink"), Deploy: []*braidv1.SubtaskRef{{Vertex: 0}}}
	if _, err := (&taskService{tm: tm}).DeployTasks(ctx, req); err != nil {
		t.Fatal(err)
	}
	f.waitFor(t, "sink finished", func() bool { return f.state("job1", 0) == braidv1.TaskState_TASK_STATE_FINISHED })
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.chunksAtFinish) != 1 || f.chunksAtFinish[0] != 3 {
		t.Fatalf("the job manager had taken %v chunks when the sink was reported FINISHED, want all 3 (two batches and the barrier)", f.chunksAtFinish)
	}
	if f.ended {
		t.Error("a sink stopped at a savepoint ended its results")
	}
}

// sourcesGraph is the wire form of a job of one source vertex per name,
// each a values source at parallelism 1; the first one's chain ends in a
// collect sink.
func sourcesGraph(t testing.TB, jobID string, names ...string) *braidv1.JobGraph {
	t.Helper()
	g := &jobgraph.Graph{JobID: jobID}
	for i, name := range names {
		v := &jobgraph.Vertex{ID: i, Name: name, Parallelism: 1,
			Chain: []*jobgraph.Operator{{Name: "values", Spec: &jobgraph.ValuesSpec{}}}}
		if i == 0 {
			v.Chain = append(v.Chain, &jobgraph.Operator{Name: "collect", Spec: &jobgraph.CollectSpec{}})
		}
		g.Vertices = append(g.Vertices, v)
	}
	g.ApplyDefaults()
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	pg, err := g.Proto()
	if err != nil {
		t.Fatal(err)
	}
	return pg
}

func TestDeployRejectsBadSubtask(t *testing.T) {
	_, jmAddr := startFakeJM(t)
	tm, err := New(Config{JobManager: jmAddr, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tm.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer tm.Close()
	_, err = (&taskService{tm: tm}).DeployTasks(context.Background(), &braidv1.DeployTasksRequest{
		Graph:  sourcesGraph(t, "j", "v"),
		Deploy: []*braidv1.SubtaskRef{{Vertex: 0, Subtask: 1}},
	})
	if err == nil {
		t.Fatal("deploy of subtask 1 at parallelism 1 succeeded")
	}
	tm.mu.Lock()
	n := len(tm.mu.jobs)
	tm.mu.Unlock()
	if n != 0 {
		t.Errorf("failed deploy left %d jobs behind", n)
	}
}

// TestDeployRefusesBadGraph: a deploy whose job graph does not decode or
// validate fails with InvalidArgument naming the fault, deploys nothing,
// and the task manager keeps serving. A negative num_inputs used to panic
// a task manager, a huge max parallelism to make it allocate gigabytes.
func TestDeployRefusesBadGraph(t *testing.T) {
	_, jmAddr := startFakeJM(t)
	tm, err := New(Config{JobManager: jmAddr, Listen: "127.0.0.1:0", DataDir: t.TempDir(), Slots: 2,
		Build: func(SubtaskSpec) (Subtask, error) {
			return &fakeSubtask{run: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := tm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer tm.Close()
	conn, err := grpc.NewClient(tm.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ts := braidv1.NewTaskServiceClient(conn)
	for _, tc := range []struct {
		name  string
		graph func() *braidv1.JobGraph
		want  string
	}{
		{"negative num_inputs", func() *braidv1.JobGraph {
			g := sourcesGraph(t, "bad1", "src", "next")
			g.Vertices[1].NumInputs = -1
			return g
		}, "vertex 1 (next): -1 inputs"},
		{"huge max parallelism", func() *braidv1.JobGraph {
			g := sourcesGraph(t, "bad2", "src")
			g.MaxParallelism = 2_000_000_000
			return g
		}, "max parallelism 2000000000 is outside [1, 32768]"},
		{"unknown kind", func() *braidv1.JobGraph {
			g := sourcesGraph(t, "bad3", "src")
			g.Vertices[0].Chain[0].Kind = "teleport"
			return g
		}, `unknown operator kind "teleport"`},
		{"no job id", func() *braidv1.JobGraph { return sourcesGraph(t, "", "src") }, "job id is empty"},
		{"no graph", func() *braidv1.JobGraph { return nil }, "no job graph"},
	} {
		_, err := ts.DeployTasks(ctx, &braidv1.DeployTasksRequest{Graph: tc.graph(), Deploy: []*braidv1.SubtaskRef{{Vertex: 0}}})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: DeployTasks = %v, want InvalidArgument with %q", tc.name, err, tc.want)
		}
	}
	tm.mu.Lock()
	n := len(tm.mu.jobs)
	tm.mu.Unlock()
	if n != 0 {
		t.Errorf("refused deploys left %d jobs behind", n)
	}
	// The task manager still serves: a good deploy runs.
	if _, err := ts.DeployTasks(ctx, &braidv1.DeployTasksRequest{Graph: sourcesGraph(t, "good", "src"), Deploy: []*braidv1.SubtaskRef{{Vertex: 0}}}); err != nil {
		t.Fatalf("deploy after the refused ones: %v", err)
	}
	if _, err := ts.CancelJob(ctx, &braidv1.CancelTasksRequest{JobId: "good"}); err != nil {
		t.Fatal(err)
	}
}

// TestStartRemovesEarlierState: a task manager never reuses job state an
// earlier run left behind.
func TestStartRemovesEarlierState(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "jobs", "old-job", "0-0")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	tm, err := New(Config{JobManager: "127.0.0.1:1", Listen: "127.0.0.1:0", DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := tm.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer tm.Close()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale state still there after start: %v", err)
	}
}

// TestDeployRefusesPathJobID: a job id that is a path is refused before it
// names a directory (it once made the task manager remove any directory of
// the host), and the task manager keeps serving.
func TestDeployRefusesPathJobID(t *testing.T) {
	_, jmAddr := startFakeJM(t)
	data := t.TempDir()
	victim := filepath.Join(filepath.Dir(data), "victim-"+filepath.Base(data))
	if err := os.MkdirAll(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(victim)
	tm, err := New(Config{JobManager: jmAddr, Listen: "127.0.0.1:0", DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	if err := tm.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer tm.Close()
	conn, err := grpc.NewClient(tm.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ts := braidv1.NewTaskServiceClient(conn)
	rel, _ := filepath.Rel(filepath.Join(data, "jobs"), victim)
	for _, id := range []string{rel, "../x", "", "a/b"} {
		_, err := ts.DeployTasks(context.Background(), &braidv1.DeployTasksRequest{
			Graph:  sourcesGraph(t, id, "v"),
			Deploy: []*braidv1.SubtaskRef{{Vertex: 0}},
		})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "job id") {
			t.Errorf("deploy of job %q: %v, want InvalidArgument naming the job id", id, err)
		}
		if _, err := ts.CancelJob(context.Background(), &braidv1.CancelTasksRequest{JobId: id}); status.Code(err) != codes.InvalidArgument {
			t.Errorf("cancel of job %q: %v, want InvalidArgument", id, err)
		}
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("the directory outside the data dir is gone: %v", err)
	}
}
