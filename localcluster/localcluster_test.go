package localcluster_test

import (
	"bytes"
	"context"

	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/braidflow/braid/internal/memberauth"
	"github.com/braidflow/braid/internal/memberauth/testcerts"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/jobmanager"
	"github.com/braidflow/braid/localcluster"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/taskmanager"
	"github.com/braidflow/braid/types"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// etcd's and grpc's process-wide background goroutines.
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
		goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run"),
	)
}

var schema = types.Schema{{Name: "n", Type: types.DataType{Kind: types.KindBigInt}}}

// testRowsSpec configures the test source: each subtask emits Rows rows
// n = subtask*1000 + i, in batches of 2; with Forever it then keeps
// emitting one row every 10 ms until canceled.
type testRowsSpec struct {
	Rows    int  `json:"rows"`
	Forever bool `json:"forever"`
}

var _ jobgraph.Spec = (*testRowsSpec)(nil)

func (*testRowsSpec) Kind() string    { return "test_rows" }
func (*testRowsSpec) Inputs() int     { return 0 }
func (*testRowsSpec) Validate() error { return nil }

type testRows struct {
	spec    testRowsSpec
	subtask int
}

func (s *testRows) Open(ctx *operators.Context) error { s.subtask = ctx.Subtask; return nil }
func (s *testRows) Close() error                      { return nil }

func (s *testRows) Run(ctx context.Context, out operators.Collector) error {
	emit := func(vals ...int64) error {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		b.AppendValues(vals, nil)
		col := b.NewArray()
		defer col.Release()
		batch := types.NewInsertBatch(schema.ArrowSchema(), []arrow.Array{col}, len(vals))
		defer batch.Release()
		return out.Emit(batch)
	}
	base := int64(s.subtask * 1000)
	for i := 0; i < s.spec.Rows; i += 2 {
		vals := []int64{base + int64(i)}
		if i+1 < s.spec.Rows {
			vals = append(vals, base+int64(i+1))
		}
		if err := emit(vals...); err != nil {
			return err
		}
	}
	for s.spec.Forever {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if err := emit(base + 999); err != nil {
			return err
		}
	}
	return nil
}

// testPassSpec configures testPass, which forwards its input.
type testPassSpec struct{}

var _ jobgraph.Spec = (*testPassSpec)(nil)

func (*testPassSpec) Kind() string    { return "test_pass" }
func (*testPassSpec) Inputs() int     { return 1 }
func (*testPassSpec) Validate() error { return nil }

type testPass struct{}

func (testPass) Open(*operators.Context) error { return nil }
func (testPass) Process(_ int, b types.Batch, out operators.Collector) error {
	return out.Emit(b)
}
func (testPass) EndInput(int, operators.Collector) error { return nil }
func (testPass) Close() error                            { return nil }

func init() {
	// NB: the specs travel to the task managers in deploy requests, which
	// decode them by kind.
	jobgraph.RegisterSpec("test_rows", func() jobgraph.Spec { return &testRowsSpec{} })
	jobgraph.RegisterSpec("test_pass", func() jobgraph.Spec { return &testPassSpec{} })
	operators.RegisterSource("test_rows", func(spec jobgraph.Spec) (operators.Source, error) {
		s, err := operators.SpecAs[*testRowsSpec](spec)
		if err != nil {
			return nil, err
		}
		return &testRows{spec: *s}, nil
	})
	operators.RegisterOperator("test_pass", func(spec jobgraph.Spec) (operators.Operator, error) {
		if _, err := operators.SpecAs[*testPassSpec](spec); err != nil {
			return nil, err
		}
		return testPass{}, nil
	})
}

// pipeline is source(p=2) -hash-> pass(p=2) -single-> collect(p=1).
func pipeline(spec testRowsSpec) *jobgraph.Graph {
	g := &jobgraph.Graph{
		Name:    "pipeline",
		Bounded: !spec.Forever,
		Vertices: []*jobgraph.Vertex{
			{ID: 0, Name: "source", Parallelism: 2, Chain: []*jobgraph.Operator{{Name: "rows", Spec: &spec}}},
			{ID: 1, Name: "pass", Parallelism: 2, NumInputs: 1, Chain: []*jobgraph.Operator{{Name: "pass", Spec: &testPassSpec{}}}},
			{ID: 2, Name: "sink", Parallelism: 1, NumInputs: 1, Chain: []*jobgraph.Operator{{Name: "collect", Spec: &jobgraph.CollectSpec{Schema: schema}}}},
		},
		Edges: []*jobgraph.Edge{
			{Source: 0, Target: 1, Partitioning: types.PartitionHash, KeyColumns: []int{0}},
			{Source: 1, Target: 2, Partitioning: types.PartitionSingle},
		},
	}
	g.ApplyDefaults()
	return g
}

type results struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	ends int
}

func (r *results) handle(b []byte, end bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf.Write(b)
	if end {
		r.ends++
	}
	return nil
}

func (r *results) values(t *testing.T) []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	rd, err := ipc.NewReader(bytes.NewReader(r.buf.Bytes()))
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
	sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	return out
}

func start(t *testing.T, opts localcluster.Options) *localcluster.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := localcluster.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return c
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

func TestPipelineDeliversEveryRow(t *testing.T) {
	c := start(t, localcluster.Options{})
	if n := len(c.JobManager().SlotsSnapshot()); n != 2 {
		t.Fatalf("%d task managers registered, want 2", n)
	}
	var res results
	j, err := c.JobManager().SubmitJob(context.Background(), pipeline(testRowsSpec{Rows: 7}), res.handle)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := wait(t, j); st != jobmanager.StatusFinished {
		t.Fatalf("job ended %s: %v", st, err)
	}
	want := []int64{0, 1, 2, 3, 4, 5, 6, 1000, 1001, 1002, 1003, 1004, 1005, 1006}
	got := res.values(t)
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if res.ends != 1 {
		t.Errorf("end of results delivered %d times", res.ends)
	}
}

// TestPipelineOverMutualTLS runs the pipeline with members that
// authenticate by certificate: deploys, results and the data exchange
// between the two task managers all go over mutual TLS, and a task manager
// without a certificate is refused.
func TestPipelineOverMutualTLS(t *testing.T) {
	cert, key, ca := testcerts.NewCA(t, "cluster").Member(t, t.TempDir())
	c := start(t, localcluster.Options{Members: memberauth.Config{CertFile: cert, KeyFile: key, CAFile: ca}})
	var res results
	j, err := c.JobManager().SubmitJob(context.Background(), pipeline(testRowsSpec{Rows: 3}), res.handle)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := wait(t, j); st != jobmanager.StatusFinished {
		t.Fatalf("job ended %s: %v", st, err)
	}
	if got := res.values(t); len(got) != 6 {
		t.Fatalf("got %v, want 6 rows", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	tm, err := c.AddTaskManager(ctx, taskmanager.Config{ID: "plain", Members: memberauth.Config{Secret: "a-secret-but-no-certificate"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tm.WaitRegistered(ctx); err == nil {
		t.Fatal("a task manager without a certificate registered")
	}
	if n := len(c.JobManager().SlotsSnapshot()); n != 2 {
		t.Errorf("%d task managers registered, want 2", n)
	}
}

func TestLostTaskManagerFailsJob(t *testing.T) {
	c := start(t, localcluster.Options{HeartbeatTimeout: time.Second})
	jm := c.JobManager()
	var res results
	j, err := jm.SubmitJob(context.Background(), pipeline(testRowsSpec{Rows: 2, Forever: true}), res.handle)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // let rows flow
	lost := c.TaskManagers()[1]
	id, addr := lost.ID(), lost.Addr()
	lost.Close()

	st, err := wait(t, j)
	if st != jobmanager.StatusFailed || err == nil {
		t.Fatalf("job ended %s, %v", st, err)
	}
	if want := "task manager " + id + " at " + addr + " was lost"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q, want it to start %q", err, want)
	}

	// The next job runs on the remaining task manager.
	var res2 results
	j2, err := jm.SubmitJob(context.Background(), pipeline(testRowsSpec{Rows: 3}), res2.handle)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := wait(t, j2); st != jobmanager.StatusFinished {
		t.Fatalf("second job ended %s: %v", st, err)
	}
	if got := res2.values(t); len(got) != 6 {
		t.Errorf("second job returned %v", got)
	}
}
