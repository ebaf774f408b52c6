package jobgraph

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/braidflow/braid/expr"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/types"
)

// TestProtoRoundTrip: FromProto(g.Proto()) is g, and the wire form
// survives a second trip byte for byte.
func TestProtoRoundTrip(t *testing.T) {
	g := testGraph()
	pg, err := g.Proto()
	if err != nil {
		t.Fatal(err)
	}
	back, err := FromProto(pg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, g) {
		t.Fatalf("round trip changed the graph:\n%+v\nwant\n%+v", back, g)
	}
	pg2, err := back.Proto()
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := proto.MarshalOptions{Deterministic: true}.Marshal(pg)
	b2, _ := proto.MarshalOptions{Deterministic: true}.Marshal(pg2)
	if !bytes.Equal(b1, b2) {
		t.Fatal("the wire form changed on a second trip")
	}
	want := map[string]string{OptLocalTimeZone: "Asia/Shanghai", OptSavepointPath: "/sp/savepoint-3", OptSavepointIgnore: "true",
		OptMaxStringBytes: "1048576", OptSourceBatchSize: "16", OptSourceIdle: "1500 ms", OptAutoWatermark: "50 ms", OptRuntimeMode: "batch"}
	if !reflect.DeepEqual(pg.Config, want) {
		t.Errorf("config %v, want %v", pg.Config, want)
	}
}

// TestProtoConfigIsSpecJSON: an operator's wire config is exactly the
// JSON of its spec, as the planner encoded it before the typed graph
// existed: operator uids hash these bytes.
func TestProtoConfigIsSpecJSON(t *testing.T) {
	g := testGraph()
	pg, err := g.Proto()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range g.Vertices {
		for j, op := range v.Chain {
			want, err := json.Marshal(op.Spec)
			if err != nil {
				t.Fatal(err)
			}
			po := pg.Vertices[i].Chain[j]
			if !bytes.Equal(po.Config, want) || po.Kind != op.Kind() || po.Uid != op.UID {
				t.Errorf("vertex %d operator %d: %s %s %s, want %s %s %s", i, j, po.Kind, po.Uid, po.Config, op.Kind(), op.UID, want)
			}
		}
	}
	values := `{"schema":[{"Name":"k","Type":{"Kind":5,"Length":0,"Precision":0,"Scale":0,"NotNull":false}},` +
		`{"Name":"v","Type":{"Kind":10,"Length":2147483647,"Precision":0,"Scale":0,"NotNull":false}}],` +
		`"rows":[[{"op":"lit","type":{"Kind":5,"Length":0,"Precision":0,"Scale":0,"NotNull":false},"value":"1"},` +
		`{"op":"lit","type":{"Kind":10,"Length":2147483647,"Precision":0,"Scale":0,"NotNull":false},"value":"a"}]]}`
	if got := string(pg.Vertices[0].Chain[0].Config); got != values {
		t.Errorf("values config\n%s\nwant\n%s", got, values)
	}
}

// TestFromProtoDefaults: what a graph leaves unset gets the defaults,
// once, in FromProto.
func TestFromProtoDefaults(t *testing.T) {
	pg := &braidv1.JobGraph{JobId: "j", Vertices: []*braidv1.Vertex{
		{Id: 0, Name: "v", Parallelism: 1, Chain: []*braidv1.OperatorSpec{{Kind: KindValues, Config: []byte(`{"schema":[],"rows":[]}`)}}},
	}}
	g, err := FromProto(pg)
	if err != nil {
		t.Fatal(err)
	}
	if g.MaxParallelism != types.DefaultMaxParallelism {
		t.Errorf("max parallelism %d", g.MaxParallelism)
	}
	if want := (CheckpointConfig{Timeout: defaultCheckpointTimeout, MaxConcurrent: 1, NumRetained: 1}); g.Checkpoint != want {
		t.Errorf("checkpoint %+v, want %+v", g.Checkpoint, want)
	}
	if g.Restart != (RestartStrategy{Type: RestartNone}) || g.Session != (Session{TimeZone: "UTC", AutoWatermarkInterval: DefaultAutoWatermarkInterval}) || g.Savepoint != (SavepointRestore{}) {
		t.Errorf("restart %+v, session %+v, savepoint %+v", g.Restart, g.Session, g.Savepoint)
	}
}

// TestFromProtoRefuses: a bad wire graph is refused with an error naming
// what is wrong and where, never a panic.
func TestFromProtoRefuses(t *testing.T) {
	good := func() *braidv1.JobGraph {
		pg, err := testGraph().Proto()
		if err != nil {
			t.Fatal(err)
		}
		return pg
	}
	for _, tc := range []struct {
		name   string
		mutate func(pg *braidv1.JobGraph)
		want   string
	}{
		{"nil", nil, "jobgraph: no job graph"},
		{"negative num_inputs", func(pg *braidv1.JobGraph) { pg.Vertices[1].NumInputs = -1 }, "vertex 1 (GroupAggregate): -1 inputs"},
		{"huge max parallelism", func(pg *braidv1.JobGraph) { pg.MaxParallelism = 2_000_000_000 }, "max parallelism 2000000000 is outside [1, 32768]"},
		{"negative max parallelism", func(pg *braidv1.JobGraph) { pg.MaxParallelism = -4 }, "max parallelism -4 is outside"},
		{"unknown kind", func(pg *braidv1.JobGraph) { pg.Vertices[2].Chain[0].Kind = "teleport" },
			`jobgraph: vertex 2 (Collect), operator 0 (Collect): unknown operator kind "teleport"`},
		{"bad config", func(pg *braidv1.JobGraph) { pg.Vertices[2].Chain[0].Config = []byte(`{"schema":7}`) }, "operator 0 (Collect): bad collect config"},
		{"no config", func(pg *braidv1.JobGraph) { pg.Vertices[2].Chain[0].Config = nil }, "collect operator has no config"},
		{"kind and config disagree", func(pg *braidv1.JobGraph) {
			pg.Vertices[1].Chain[0].Kind = KindJoinInner
			pg.Vertices[1].Chain[0].Config = []byte(`{"outer_left":true}`)
		}, "join_inner config describes a join_outer operator"},
		{"unspecified partitioning", func(pg *braidv1.JobGraph) { pg.Edges[0].Partitioning = braidv1.Partitioning_PARTITIONING_UNSPECIFIED },
			"edge 0 -> 1 (input 0): Partitioning(0) is not a partitioning"},
		{"missing vertex", func(pg *braidv1.JobGraph) { pg.Vertices[1] = nil }, "vertex 1 is missing"},
		{"bad time zone", func(pg *braidv1.JobGraph) { pg.Config[OptLocalTimeZone] = "Mars/Olympus" }, "invalid time zone 'Mars/Olympus'"},
		{"negative timeout", func(pg *braidv1.JobGraph) { pg.Checkpoint.TimeoutMs = -1 }, "checkpoint timeout -1ms must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pg *braidv1.JobGraph
			if tc.mutate != nil {
				pg = good()
				tc.mutate(pg)
			}
			_, err := FromProto(pg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("FromProto() = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestProtoRefusesWhatDoesNotEncode(t *testing.T) {
	g := testGraph()
	g.Vertices[0].Chain[0].Spec = &ValuesSpec{Schema: testSchema[:1], Rows: [][]*expr.Expr{{{Op: expr.OpLiteral, Type: types.BigInt, Value: "x"}}}}
	if _, err := g.Proto(); err == nil || !strings.Contains(err.Error(), "vertex 0 (Values -> Calc), operator 0 (Values): cannot encode values spec") {
		t.Fatalf("Proto() = %v", err)
	}
	g = testGraph()
	g.Edges[0].KeyColumns = []int{1 << 40}
	if _, err := g.Proto(); err == nil || !strings.Contains(err.Error(), "key column 1099511627776 does not fit") {
		t.Fatalf("Proto() = %v", err)
	}
}

// testSpec is a kind this package does not know, registered as a test
// registers its own operators'.
type testSpec struct {
	N int `json:"n"`
}

func (*testSpec) Kind() string    { return "jobgraph_test.spec" }
func (*testSpec) Inputs() int     { return 0 }
func (*testSpec) Validate() error { return nil }

func init() { RegisterSpec("jobgraph_test.spec", func() Spec { return &testSpec{} }) }

func TestRegisteredSpec(t *testing.T) {
	pg := &braidv1.JobGraph{Vertices: []*braidv1.Vertex{
		{Id: 0, Name: "src", Parallelism: 1, Chain: []*braidv1.OperatorSpec{{Kind: "jobgraph_test.spec", Config: []byte(`{"n":3}`)}}},
	}}
	g, err := FromProto(pg)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := g.Vertices[0].Chain[0].Spec.(*testSpec); !ok || s.N != 3 {
		t.Fatalf("spec %#v", g.Vertices[0].Chain[0].Spec)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a kind twice did not panic")
		}
	}()
	RegisterSpec(KindCalc, func() Spec { return &CalcSpec{} })
}
