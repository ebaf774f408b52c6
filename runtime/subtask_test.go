package runtime

import (
	"context"

	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"

	"github.com/braidflow/braid/jobgraph"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/shuffle"
	"github.com/braidflow/braid/types"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// threeVertexGraph is source (p=2) -HASH(k)-> map (p=3) -FORWARD-> map+sink (p=3).
func threeVertexGraph(sinkID string, seq seqConfig, ident identityConfig) *jobgraph.Graph {
	return &jobgraph.Graph{
		JobID: "job-" + sinkID, MaxParallelism: 128, Bounded: !seq.Endless,
		Vertices: []*jobgraph.Vertex{
			{ID: 0, Name: "source", Parallelism: 2, Chain: []*jobgraph.Operator{
				{Name: "seq", Spec: &seq}}},
			{ID: 1, Name: "map", Parallelism: 3, NumInputs: 1, Chain: []*jobgraph.Operator{
				{Name: "keyed", Spec: &ident}}},
			{ID: 2, Name: "sink", Parallelism: 3, NumInputs: 1, Chain: []*jobgraph.Operator{
				{Name: "pass", Spec: &identityConfig{}},
				{Name: "sink", Spec: &sinkConfig{ID: sinkID}}}},
		},
		Edges: []*jobgraph.Edge{
			{Source: 0, Target: 1, Partitioning: types.PartitionHash, KeyColumns: []int{0}},
			{Source: 1, Target: 2, Partitioning: types.PartitionForward},
		},
	}
}

// taskManager is one simulated task manager: an Exchange, served over
// loopback gRPC when remote tests need it.
type taskManager struct {
	id   string
	addr string
	x    *shuffle.Exchange
}

func startTaskManagers(t *testing.T, n int, serve bool) []*taskManager {
	var tms []*taskManager
	for i := 0; i < n; i++ {
		tm := &taskManager{id: string(rune('a' + i)), x: shuffle.NewExchange(shuffle.ExchangeOptions{})}
		tms = append(tms, tm)
		if !serve {
			t.Cleanup(func() { _ = tm.x.Close() })
			continue
		}
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		tm.addr = lis.Addr().String()
		srv := grpc.NewServer(shuffle.ServerOptions()...)
		braidv1.RegisterDataServiceServer(srv, tm.x)
		done := make(chan struct{})
		go func() { defer close(done); _ = srv.Serve(lis) }()
		t.Cleanup(func() {
			_ = tm.x.Close()
			srv.Stop()
			<-done
		})
	}
	return tms
}

// runJob deploys every subtask of g, subtask s of vertex v on task manager
// (v+s) mod len(tms), runs them all and returns each Run's error. The first
// failure cancels the others, as a job manager would.
func runJob(ctx context.Context, t *testing.T, g *jobgraph.Graph, tms []*taskManager, started func([]*Subtask)) []error {
	t.Helper()
	g.ApplyDefaults()
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	var placements []*braidv1.Placement
	for _, v := range g.Vertices {
		for s := range v.Parallelism {
			tm := tms[(v.ID+s)%len(tms)]
			placements = append(placements, &braidv1.Placement{Vertex: int32(v.ID), Subtask: int32(s), TaskManagerId: tm.id, Address: tm.addr})
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var subtasks []*Subtask
	for _, p := range placements {
		tm := tms[int(p.Vertex+p.Subtask)%len(tms)]
		st, err := NewSubtask(Task{Graph: g, VertexID: int(p.Vertex), Subtask: int(p.Subtask),
			Placements: placements, TaskManagerID: tm.id, Exchange: tm.x, InboxCapacity: 2})
		if err != nil {
			t.Fatal(err)
		}
		subtasks = append(subtasks, st)
	}
	if started != nil {
		started(subtasks)
	}
	errs := make([]error, len(subtasks))
	var wg sync.WaitGroup
	for i, st := range subtasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = st.Run(ctx); errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	return errs
}

func checkExactlyOnce(t *testing.T, st *sinkState, total int) {
	t.Helper()
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, err := range st.errs {
		t.Error(err)
	}
	if len(st.rows) != total {
		t.Fatalf("%d distinct rows reached the sinks, want %d", len(st.rows), total)
	}
	for v := int64(0); v < int64(total); v++ {
		if st.rows[v] != 1 {
			t.Fatalf("row %d arrived %d times", v, st.rows[v])
		}
	}
	if st.ends != 3 || st.closed != 3 {
		t.Fatalf("sinks saw %d end-of-inputs and %d closes, want 3 and 3", st.ends, st.closed)
	}
}

func testBoundedJob(t *testing.T, name string, tms []*taskManager, wantRemote bool) {
	st := newSinkState(name)
	const perSubtask = 5000
	g := threeVertexGraph(name, seqConfig{Rows: perSubtask, Batch: 300}, identityConfig{CheckKeyGroups: true})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var subtasks []*Subtask
	errs := runJob(ctx, t, g, tms, func(s []*Subtask) { subtasks = s })
	for i, err := range errs {
		if err != nil {
			t.Fatalf("subtask %d: %v", i, err)
		}
	}
	checkExactlyOnce(t, st, 2*perSubtask)
	var in, out, remote [3]int64
	for _, s := range subtasks {
		m := s.Metrics()
		in[s.task.VertexID] += m.RowsIn.Load()
		out[s.task.VertexID] += m.RowsOut.Load()
		remote[s.task.VertexID] += m.RowsRemote.Load()
	}
	for v := 0; v <= 1; v++ {
		if in[v] != 2*perSubtask || out[v] != 2*perSubtask {
			t.Errorf("vertex %d: rows in %d, out %d, want %d", v, in[v], out[v], 2*perSubtask)
		}
	}
	if in[2] != 2*perSubtask || out[2] != 0 {
		t.Errorf("sink vertex: rows in %d, out %d", in[2], out[2])
	}
	if gotRemote := remote[0] > 0; gotRemote != wantRemote {
		t.Errorf("source remote rows %d, want remote traffic %v", remote[0], wantRemote)
	}
}

func TestLocalJob(t *testing.T) {
	testBoundedJob(t, "local", startTaskManagers(t, 1, false), false)
}

func TestTwoTaskManagerJob(t *testing.T) {
	testBoundedJob(t, "remote", startTaskManagers(t, 2, true), true)
}

func testCancel(t *testing.T, name string, tms []*taskManager) {
	st := newSinkState(name)
	g := threeVertexGraph(name, seqConfig{Rows: 1 << 40, Batch: 100, Endless: true}, identityConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for st.count() < 1000 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	errs := runJob(ctx, t, g, tms, nil)
	for i, err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("subtask %d: %v, want context.Canceled", i, err)
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ends != 0 {
		t.Errorf("a cancelled job reported end of input %d times", st.ends)
	}
	if st.closed != 3 {
		t.Errorf("%d sink operators closed, want 3", st.closed)
	}
}

func TestCancelLocal(t *testing.T)  { testCancel(t, "cancel-local", startTaskManagers(t, 1, false)) }
func TestCancelRemote(t *testing.T) { testCancel(t, "cancel-remote", startTaskManagers(t, 2, true)) }

func TestOperatorPanicFailsSubtask(t *testing.T) {
	newSinkState("panic")
	g := threeVertexGraph("panic", seqConfig{Rows: 5000, Batch: 100}, identityConfig{PanicAfter: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	errs := runJob(ctx, t, g, startTaskManagers(t, 2, true), nil)
	panicked := 0
	for _, err := range errs {
		if err == nil {
			t.Fatal("a subtask succeeded in a job whose operator panicked")
		}
		if strings.Contains(err.Error(), "panicked") {
			panicked++
		}
	}
	if panicked == 0 {
		t.Fatalf("no subtask reported the panic: %v", errs)
	}
}

func TestNewSubtaskValidates(t *testing.T) {
	tms := startTaskManagers(t, 1, false)
	g := threeVertexGraph("validate", seqConfig{Rows: 1, Batch: 1}, identityConfig{})
	for _, task := range []Task{
		{Graph: g, VertexID: 9, Exchange: tms[0].x},
		{Graph: g, VertexID: 1, Subtask: 3, Exchange: tms[0].x},
		{Graph: g, VertexID: 1},
	} {
		if _, err := NewSubtask(task); err == nil {
			t.Errorf("NewSubtask(vertex %d, subtask %d) succeeded", task.VertexID, task.Subtask)
		}
	}
	g.Session.TimeZone = "Asia/Tokyo"
	s, err := NewSubtask(Task{Graph: g, VertexID: 1, Subtask: 1, Exchange: tms[0].x})
	if err != nil {
		t.Fatal(err)
	}
	// The session's zone is loaded once, into the operators' context.
	if tz := s.octx.TimeZone; tz == nil || tz.String() != "Asia/Tokyo" {
		t.Errorf("operators' time zone %v, want Asia/Tokyo", tz)
	}
	// The inbox is registered: a second subtask with the same key is refused.
	if _, err := NewSubtask(Task{Graph: g, VertexID: 1, Subtask: 1, Exchange: tms[0].x}); err == nil {
		t.Error("registered the same subtask twice")
	}
	s.Close()
	if _, err := NewSubtask(Task{Graph: g, VertexID: 1, Subtask: 1, Exchange: tms[0].x}); err != nil {
		t.Errorf("after Close: %v", err)
	}
}
