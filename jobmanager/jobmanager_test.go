package jobmanager_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/jobmanager"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/taskmanager"
	"github.com/braidflow/braid/types"
)

// These tests run a real job manager (embedded etcd and broker) with real
// task managers whose subtasks are stand-ins built by Config.Build, so they
// exercise the control plane alone: placement, deployment, status
// aggregation, result relay and failure detection.

// fake subtask behaviours, chosen by vertex name.
type fakeSubtask struct {
	spec taskmanager.SubtaskSpec
}

func (s *fakeSubtask) Counters() (int64, int64, int64) { return 1, 2, 3 }

func (s *fakeSubtask) Run(ctx context.Context) error {
	v := s.spec.Graph.Vertices[s.spec.Vertex]
	switch v.Name {
	case "sink":
		b := threeRows()
		defer b.Release()
		if err := s.spec.Ctx.Results.Write(b); err != nil {
			return err
		}
		return s.spec.Ctx.Results.Close()
	case "forever":
		<-ctx.Done()
		return ctx.Err()
	case "broken":
		return errors.New("disk on fire")
	}
	return nil
}

func build(spec taskmanager.SubtaskSpec) (taskmanager.Subtask, error) {
	return &fakeSubtask{spec: spec}, nil
}

func threeRows() types.Batch {
	schema := types.Schema{{Name: "n", Type: types.DataType{Kind: types.KindBigInt}}}.ArrowSchema()
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues([]int64{10, 20, 30}, nil)
	col := b.NewArray()
	defer col.Release()
	return types.NewInsertBatch(schema, []arrow.Array{col}, 3)
}

type cluster struct {
	jm  *jobmanager.JobManager
	tms []*taskmanager.TaskManager
}

func startCluster(t *testing.T, n int) *cluster {
	t.Helper()
	return startClusterWith(t, n, jobmanager.Limits{})
}

// startClusterWith is startCluster with the job manager's limits.
func startClusterWith(t *testing.T, n int, limits jobmanager.Limits) *cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	jm, err := jobmanager.New(jobmanager.Config{Listen: "127.0.0.1:0", HTTP: "127.0.0.1:0", DataDir: t.TempDir(), HeartbeatTimeout: time.Second, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	if err := jm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	c := &cluster{jm: jm}
	t.Cleanup(func() {
		for _, tm := range c.tms {
			tm.Close()
		}
		jm.Close()
	})
	for i := range n {
		tm, err := taskmanager.New(taskmanager.Config{
			JobManager: jm.Addr(), Listen: "127.0.0.1:0", DataDir: t.TempDir(), Slots: 2, Members: jm.MemberConfig(),
			ID: "tm-" + string(rune('a'+i)), Build: build,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := tm.Start(ctx); err != nil {
			t.Fatal(err)
		}
		c.tms = append(c.tms, tm)
		if err := tm.WaitRegistered(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for len(jm.SlotsSnapshot()) < n {
		time.Sleep(5 * time.Millisecond)
	}
	return c
}

func (c *cluster) client(t *testing.T) braidv1.ClientServiceClient {
	conn, err := grpc.NewClient(c.jm.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return braidv1.NewClientServiceClient(conn)
}

// graph is a job of unconnected vertices; build decides what each runs.
func graph(vertices ...*jobgraph.Vertex) *jobgraph.Graph {
	for i, v := range vertices {
		v.ID = i
	}
	g := &jobgraph.Graph{Name: "test", Vertices: vertices}
	g.ApplyDefaults()
	return g
}

// vertex is a source vertex at parallelism p.
func vertex(name string, p int) *jobgraph.Vertex {
	return &jobgraph.Vertex{Name: name, Parallelism: p,
		Chain: []*jobgraph.Operator{{Name: "values", Spec: &jobgraph.ValuesSpec{}}}}
}

// sinkVertex is a source vertex whose chain ends in a collect sink.
func sinkVertex(name string) *jobgraph.Vertex {
	v := vertex(name, 1)
	v.Chain = append(v.Chain, &jobgraph.Operator{Name: "collect", Spec: &jobgraph.CollectSpec{}})
	return v
}

// collector gathers a ResultHandler's bytes.
type collector struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	calls int
	ends  int
}

func (c *collector) handle(b []byte, end bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(b)
	c.calls++
	if end {
		c.ends++
	}
	return nil
}

func (c *collector) rows(t *testing.T) []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	rd, err := ipc.NewReader(bytes.NewReader(c.buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Release()
	var out []int64
	for rd.Next() {
		out = append(out, rd.RecordBatch().Column(0).(*array.Int64).Int64Values()...)
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func wait(t *testing.T, j *jobmanager.Job) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	st, err := j.Wait(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("job %s still %s", j.ID(), j.Status())
	}
	return st, err
}

func TestJobFinishesAndDeliversResults(t *testing.T) {
	c := startCluster(t, 2)
	ctx := context.Background()
	var res collector
	g := graph(vertex("source", 2), vertex("pass", 2), sinkVertex("sink"))
	j, err := c.jm.SubmitJob(ctx, g, res.handle)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.ID()) != 16 {
		t.Errorf("job id %q is not 16 hex characters", j.ID())
	}
	st, err := wait(t, j)
	if st != jobmanager.StatusFinished || err != nil {
		t.Fatalf("job ended %s, %v", st, err)
	}
	if got := res.rows(t); len(got) != 3 || got[0] != 10 || got[2] != 30 {
		t.Errorf("results %v, want [10 20 30]", got)
	}
	if res.ends != 1 {
		t.Errorf("end delivered %d times", res.ends)
	}
	if free := c.jm.SlotsSnapshot(); free[0].Used+free[1].Used != 0 {
		t.Errorf("slots still used after the job: %+v", free)
	}

	cl := c.client(t)
	d, err := cl.DescribeJob(ctx, &braidv1.DescribeJobRequest{JobId: j.ID()})
	if err != nil {
		t.Fatal(err)
	}
	if d.Job.Status != "FINISHED" || len(d.Subtasks) != 5 {
		t.Fatalf("describe: %v with %d subtasks", d.Job.Status, len(d.Subtasks))
	}
	tms := map[string]bool{}
	for _, s := range d.Subtasks {
		tms[s.TaskManagerId] = true
		if s.Status != "FINISHED" || s.RowsOut != 2 || s.TaskManagerAddress == "" {
			t.Errorf("subtask %+v", s)
		}
	}
	if len(tms) != 2 {
		t.Errorf("subtasks ran on %v, want both task managers", tms)
	}
	l, err := cl.ListJobs(ctx, &braidv1.ListJobsRequest{})
	if err != nil || len(l.Jobs) != 1 || l.Jobs[0].Status != "FINISHED" {
		t.Fatalf("list jobs: %v, %v", l, err)
	}
	_, err = cl.DescribeJob(ctx, &braidv1.DescribeJobRequest{JobId: "nope"})
	if status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), "job nope not found") {
		t.Errorf("describe unknown job: %v", err)
	}
	c.jm.SetGateway(nil)
	_, err = cl.OpenSession(ctx, &braidv1.OpenSessionRequest{})
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("open session without a gateway: %v", err)
	}
}

func TestFailedSubtaskFailsJob(t *testing.T) {
	c := startCluster(t, 2)
	var res collector
	j, err := c.jm.SubmitJob(context.Background(), graph(vertex("forever", 2), vertex("broken", 1)), res.handle)
	if err != nil {
		t.Fatal(err)
	}
	st, err := wait(t, j)
	if st != jobmanager.StatusFailed || err == nil {
		t.Fatalf("job ended %s, %v", st, err)
	}
	const want = "subtask broken (1/1) on task manager tm-"
	if !strings.Contains(err.Error(), want) || !strings.HasSuffix(err.Error(), "failed: disk on fire") {
		t.Errorf("error %q, want %q...", err, want)
	}
	if res.ends != 1 {
		t.Errorf("end of results delivered %d times on failure", res.ends)
	}
}

func TestCancelJob(t *testing.T) {
	c := startCluster(t, 1)
	ctx := context.Background()
	j, err := c.jm.SubmitJob(ctx, graph(vertex("forever", 2)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.client(t).CancelJob(ctx, &braidv1.CancelJobRequest{JobId: j.ID()}); err != nil {
		t.Fatal(err)
	}
	if st, _ := wait(t, j); st != jobmanager.StatusCanceled {
		t.Fatalf("job ended %s", st)
	}
	if _, err := c.client(t).CancelJob(ctx, &braidv1.CancelJobRequest{JobId: "missing"}); status.Code(err) != codes.NotFound {
		t.Errorf("cancel unknown job: %v", err)
	}
}

func TestNoTaskManagers(t *testing.T) {
	c := startCluster(t, 0)
	_, err := c.jm.SubmitJob(context.Background(), graph(vertex("x", 1)), nil)
	if err == nil || err.Error() != "no task managers are registered" {
		t.Fatalf("submit without task managers: %v", err)
	}
}

func TestLostTaskManager(t *testing.T) {
	c := startCluster(t, 2)
	ctx := context.Background()
	j, err := c.jm.SubmitJob(ctx, graph(vertex("forever", 2)), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Wait until both subtasks run, then kill one task manager.
	for c.jm.Job(j.ID()) != nil && j.Status() == jobmanager.StatusCreated {
		time.Sleep(5 * time.Millisecond)
	}
	lost := c.tms[1]
	lostID, lostAddr := lost.ID(), lost.Addr()
	lost.Close()

	st, err := wait(t, j)
	if st != jobmanager.StatusFailed || err == nil {
		t.Fatalf("job ended %s, %v", st, err)
	}
	want := "task manager " + lostID + " at " + lostAddr + " was lost (no heartbeat for 1s)"
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if tms := c.jm.SlotsSnapshot(); len(tms) != 1 || tms[0].ID != c.tms[0].ID() {
		t.Errorf("pool after the loss: %+v", tms)
	}

	// The job manager still serves, and the next job runs on the survivor.
	if _, err := c.client(t).ListJobs(ctx, &braidv1.ListJobsRequest{}); err != nil {
		t.Fatal(err)
	}
	var res collector
	j2, err := c.jm.SubmitJob(ctx, graph(vertex("source", 2), sinkVertex("sink")), res.handle)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := wait(t, j2); st != jobmanager.StatusFinished {
		t.Fatalf("second job ended %s, %v", st, err)
	}
	if got := res.rows(t); len(got) != 3 {
		t.Errorf("second job returned %v", got)
	}
}
