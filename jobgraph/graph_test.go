package jobgraph

import (
	"strings"
	"testing"
	"time"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/types"
)

var testSchema = types.Schema{{Name: "k", Type: types.BigInt}, {Name: "v", Type: types.String}}
var winSchema = types.Schema{{Name: "k", Type: types.BigInt}, {Name: "window_start", Type: types.Timestamp(3)}, {Name: "window_end", Type: types.Timestamp(3)}}

// testGraph is values -> calc, hash-partitioned into a group aggregate,
// into a collect sink: every kind of vertex a plan has.
func testGraph() *Graph {
	aggOut := types.Schema{{Name: "k", Type: types.BigInt}, {Name: "n", Type: types.BigInt}}
	return &Graph{
		JobID: "j1", Name: "collect", SQL: "SELECT k, COUNT(*) FROM t GROUP BY k", MaxParallelism: 128, Bounded: true,
		Vertices: []*Vertex{
			{ID: 0, Name: "Values -> Calc", Parallelism: 1, Chain: []*Operator{
				{Name: "Values", UID: "u0", Spec: &ValuesSpec{Schema: testSchema, Rows: [][]*expr.Expr{
					{expr.Literal(int64(1), types.BigInt), expr.Literal("a", types.String)}}}},
				{Name: "Calc", UID: "u1", Spec: &CalcSpec{InputSchema: testSchema, OutputSchema: testSchema,
					Projections: []*expr.Expr{expr.Column(0, types.BigInt), expr.Column(1, types.String)}}},
			}},
			{ID: 1, Name: "GroupAggregate", Parallelism: 4, NumInputs: 1, Chain: []*Operator{
				{Name: "GroupAggregate", UID: "u2", Spec: &GroupAggSpec{InputSchema: testSchema, Keys: []int{0},
					Aggs: []AggCall{{Func: AggCount, Arg: -1}}, OutputSchema: aggOut, TTLMs: 3600000}},
			}},
			{ID: 2, Name: "Collect", Parallelism: 1, NumInputs: 1, Chain: []*Operator{
				{Name: "Collect", UID: "u3", Spec: &CollectSpec{Schema: aggOut}},
			}},
		},
		Edges: []*Edge{
			{Source: 0, Target: 1, Partitioning: types.PartitionHash, KeyColumns: []int{0}},
			{Source: 1, Target: 2, Partitioning: types.PartitionSingle},
		},
		Checkpoint: CheckpointConfig{Interval: 5 * time.Second, Timeout: time.Minute, MaxConcurrent: 1, NumRetained: 2, Dir: "/ck"},
		Restart: RestartStrategy{Type: RestartExponentialDelay, Attempts: InfiniteAttempts, Delay: time.Second, MaxDelay: time.Minute,
			BackoffMultiplier: 1.5, ResetBackoffThreshold: time.Hour, JitterFactor: 0.1},
		Session:   Session{TimeZone: "Asia/Shanghai", MaxStringBytes: 1 << 20, SourceBatchRows: 16, SourceIdleTimeout: 1500 * time.Millisecond, AutoWatermarkInterval: 50 * time.Millisecond, Batch: true},
		Savepoint: SavepointRestore{Path: "/sp/savepoint-3", IgnoreUnclaimedState: true},
	}
}

func TestValidateAcceptsTestGraph(t *testing.T) {
	if err := testGraph().Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestValidate breaks a valid graph one way at a time; each must fail with
// an error naming what and where.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(g *Graph)
		want   string
	}{
		{"max parallelism 0", func(g *Graph) { g.MaxParallelism = 0 }, "jobgraph: max parallelism 0 is outside [1, 32768]"},
		{"max parallelism 2e9", func(g *Graph) { g.MaxParallelism = 2_000_000_000 }, "max parallelism 2000000000 is outside [1, 32768]"},
		{"no vertices", func(g *Graph) { g.Vertices, g.Edges = nil, nil }, "the job graph has no vertices"},
		{"sparse ids", func(g *Graph) { g.Vertices[2].ID = 7 }, "vertex 7 (Collect) is at position 2"},
		{"parallelism 0", func(g *Graph) { g.Vertices[1].Parallelism = 0 }, "vertex 1 (GroupAggregate): parallelism 0 is outside [1, 128]"},
		{"parallelism above max", func(g *Graph) { g.Vertices[1].Parallelism = 129 }, "parallelism 129 is outside [1, 128]"},
		{"negative inputs", func(g *Graph) { g.Vertices[1].NumInputs = -1 }, "vertex 1 (GroupAggregate): -1 inputs"},
		{"three inputs", func(g *Graph) { g.Vertices[1].NumInputs = 3 }, "3 inputs"},
		{"empty chain", func(g *Graph) { g.Vertices[2].Chain = nil }, "vertex 2 (Collect): no operators"},
		{"nil spec", func(g *Graph) { g.Vertices[2].Chain[0].Spec = nil }, "operator 0 has no spec"},
		{"source with an input", func(g *Graph) { g.Vertices[0].NumInputs = 1 }, "operator 0 (Values) is a values, which takes 0 inputs, but the vertex has 1"},
		{"operator without its input", func(g *Graph) { g.Vertices[1].NumInputs = 0; g.Edges = g.Edges[1:] },
			"operator 0 (GroupAggregate) is a group_aggregate, which takes 1 inputs, but the vertex has 0"},
		{"source mid-chain", func(g *Graph) {
			g.Vertices[0].Chain = append(g.Vertices[0].Chain, &Operator{Name: "V2", Spec: &ValuesSpec{Schema: testSchema}})
		}, "operator 2 (V2) is a values, which takes 0 inputs, but only the first operator"},
		{"bad spec", func(g *Graph) { g.Vertices[0].Chain[1].Spec.(*CalcSpec).Projections[1] = expr.Column(5, types.String) },
			"vertex 0 (Values -> Calc): operator 1 (Calc): calc: projection 1 reads column 5 of 2"},
		{"parallel collect", func(g *Graph) { g.Vertices[2].Parallelism = 2; g.Edges[1].Partitioning = types.PartitionRebalance },
			"vertex 2 (Collect): operator 0 (Collect) is a collect sink and must run at parallelism 1, not 2"},
		{"duplicate uid", func(g *Graph) { g.Vertices[2].Chain[0].UID = "u1" }, "operator 0 (Collect) has uid u1, as vertex 0 operator 1 (Calc) has"},
		{"edge to nowhere", func(g *Graph) { g.Edges[1].Target = 3 }, "edge 1 -> 3 (input 0): references a missing vertex"},
		{"edge into a source", func(g *Graph) { g.Edges[0].Source, g.Edges[0].Target = 1, 0 }, "vertex 0 (Values -> Calc) is a source and takes no input"},
		{"edge into a missing input", func(g *Graph) { g.Edges[1].TargetInput = 1 }, "edge 1 -> 2 (input 1): vertex 2 (Collect) has inputs 0 to 0"},
		{"self edge", func(g *Graph) { g.Edges[1].Source = 2 }, "connects a vertex to itself"},
		{"no partitioning", func(g *Graph) { g.Edges[1].Partitioning = 0 }, "Partitioning(0) is not a partitioning"},
		{"forward across parallelism", func(g *Graph) { g.Edges[0].Partitioning = types.PartitionForward },
			"edge 0 -> 1 (input 0): a FORWARD edge joins vertices of one parallelism, not 1 and 4"},
		{"hash without keys", func(g *Graph) { g.Edges[0].KeyColumns = nil }, "a HASH edge needs key columns"},
		{"negative key", func(g *Graph) { g.Edges[0].KeyColumns = []int{-1} }, "negative key column -1"},
		{"unfed input", func(g *Graph) { g.Edges = g.Edges[:1] }, "vertex 2 (Collect) has no edge into its input 0"},
		{"cycle", func(g *Graph) {
			g.Vertices[1].Chain[0] = &Operator{Name: "Join", Spec: &JoinSpec{LeftSchema: testSchema, RightSchema: testSchema,
				OutputSchema: append(append(types.Schema{}, testSchema...), testSchema...)}}
			g.Vertices[1].NumInputs = 2
			g.Vertices[2].Chain[0].Spec = &CalcSpec{InputSchema: testSchema}
			g.Vertices[2].Name = "Calc"
			g.Edges = append(g.Edges, &Edge{Source: 2, Target: 1, TargetInput: 1, Partitioning: types.PartitionRebalance})
		}, "the graph has a cycle"},
		{"checkpoint interval", func(g *Graph) { g.Checkpoint.Interval = time.Millisecond }, "checkpoint interval 1ms must be 0 (disabled) or at least 10ms"},
		{"checkpoint timeout", func(g *Graph) { g.Checkpoint.Timeout = 0 }, "checkpoint timeout 0s must be positive"},
		{"restart type", func(g *Graph) { g.Restart.Type = "sometimes" }, `unknown restart strategy "sometimes"`},
		{"restart jitter", func(g *Graph) { g.Restart.JitterFactor = 2 }, "exponential-delay restart strategy: jitter factor 2 is outside [0, 1]"},
		{"time zone", func(g *Graph) { g.Session.TimeZone = "Nowhere/Land" }, "invalid time zone 'Nowhere/Land' in table.local-time-zone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := testGraph()
			tc.mutate(g)
			err := g.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "jobgraph: ") {
				t.Errorf("error %q does not name the package", err)
			}
		})
	}
}

func TestSpecValidate(t *testing.T) {
	join := func() *JoinSpec {
		return &JoinSpec{LeftSchema: testSchema, RightSchema: testSchema, LeftKeys: []int{0}, RightKeys: []int{0},
			OutputSchema: append(append(types.Schema{}, testSchema...), testSchema...)}
	}
	for _, tc := range []struct {
		spec Spec
		want string // "" = valid
	}{
		{join(), ""},
		{func() Spec { s := join(); s.RightKeys = nil; return s }(), "1 left keys but 0 right keys"},
		{func() Spec { s := join(); s.LeftKeys = []int{2}; return s }(), "left key column 2 is outside the 2 columns"},
		{func() Spec { s := join(); s.LeftKeys, s.RightKeys, s.OuterLeft = nil, nil, true; return s }(), ""}, // on one subtask
		{func() Spec { s := join(); s.Residual = expr.Column(4, types.Boolean); return s }(), "residual reads column 4 of 4"},
		{func() Spec { s := join(); s.OutputSchema = testSchema; return s }(), "2 output columns for 2 left and 2 right columns"},
		{&IntervalJoinSpec{JoinSpec: *join(), LeftTime: 2}, "left rowtime column 2 is outside"},
		{&TemporalJoinSpec{JoinSpec: *join(), RightTime: -1}, "right rowtime column -1 is outside"},
		{&SemiJoinSpec{LeftSchema: testSchema, RightSchema: testSchema, LeftKeys: []int{0}, RightKeys: []int{0}, Anti: true}, ""},
		{&SemiJoinSpec{LeftSchema: testSchema, RightSchema: testSchema, LeftKeys: []int{0}}, "1 left keys but 0 right keys"},
		{&SemiJoinSpec{LeftSchema: testSchema, RightSchema: testSchema, Residual: expr.Column(4, types.Boolean)}, "residual reads column 4 of 4"},
		{&WindowJoinSpec{LeftSchema: winSchema, RightSchema: winSchema, LeftWindowStart: 1, LeftWindowEnd: 2, RightWindowStart: 1, RightWindowEnd: 2,
			Window: WindowSpec{Kind: WindowTumble, SizeMs: 10}, JoinType: WindowJoinFull, OutputSchema: append(append(types.Schema{}, winSchema...), winSchema...)}, ""},
		{&WindowJoinSpec{LeftSchema: winSchema, RightSchema: winSchema, LeftWindowStart: 1, LeftWindowEnd: 2, RightWindowStart: 1, RightWindowEnd: 2,
			Window: WindowSpec{Kind: WindowTumble, SizeMs: 10}, JoinType: WindowJoinSemi, OutputSchema: winSchema}, ""},
		{&WindowJoinSpec{LeftSchema: winSchema, RightSchema: winSchema, LeftWindowStart: 0, LeftWindowEnd: 2, RightWindowStart: 1, RightWindowEnd: 2,
			Window: WindowSpec{Kind: WindowTumble, SizeMs: 10}, JoinType: WindowJoinInner, OutputSchema: winSchema}, "left window_start column 0 is BIGINT"},
		{&WindowJoinSpec{LeftSchema: winSchema, RightSchema: winSchema, LeftWindowStart: 1, LeftWindowEnd: 2, RightWindowStart: 1, RightWindowEnd: 2,
			Window: WindowSpec{Kind: WindowTumble, SizeMs: 10}, JoinType: "CROSS", OutputSchema: winSchema}, `unknown join type "CROSS"`},
		{&WindowJoinSpec{LeftSchema: winSchema, RightSchema: winSchema, LeftWindowStart: 1, LeftWindowEnd: 2, RightWindowStart: 1, RightWindowEnd: 2,
			Window: WindowSpec{Kind: WindowHop, SizeMs: 10}, JoinType: WindowJoinAnti, OutputSchema: winSchema}, "HOP window step 0 ms is not positive"},
		{&NormalizeSpec{Schema: testSchema}, "no key columns"},
		{&GroupAggSpec{InputSchema: testSchema, Aggs: []AggCall{{Func: AggSum, Arg: -1}}, OutputSchema: testSchema[:1]},
			"aggregate 0 (SUM) argument column -1 is outside"},
		{&GroupAggSpec{InputSchema: testSchema, Aggs: []AggCall{{Func: "MEDIAN", Arg: 0}}, OutputSchema: testSchema[:1]},
			`aggregate 0: unknown function "MEDIAN"`},
		{&WindowAggSpec{InputSchema: testSchema, Window: WindowSpec{Kind: WindowHop, SizeMs: 10}, OutputSchema: make(types.Schema, 3)},
			"HOP window step 0 ms is not positive"},
		{&RankSpec{InputSchema: testSchema, OrderBy: []SortKey{{Col: 0}}}, "limit 0 is not positive"},
		{&WatermarkAssignerSpec{InputSchema: testSchema}, "watermark has no expression"},
		{&ValuesSpec{Schema: testSchema, Rows: [][]*expr.Expr{{expr.Literal(int64(1), types.BigInt)}}}, "row 1 has 1 values for 2 columns"},
		{&ManagedSinkSpec{Schema: testSchema}, "no topic"},
		{&KafkaSourceSpec{Topic: "t", Brokers: []string{"b"}, StartupMode: "group-offsets"}, `unknown startup mode "group-offsets"`},
		{&KafkaSinkSpec{Topic: "t", Brokers: []string{"b"}, Guarantee: KafkaDeliveryExactlyOnce}, "exactly-once delivery without a transactional id prefix"},
		{&DatagenSpec{Schema: testSchema, Fields: []DatagenField{{Kind: "random"}, {Kind: "random", NullRate: 1.5}}}, "column v: null rate 1.5 is outside [0, 1]"},
	} {
		err := tc.spec.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%T: %v", tc.spec, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%T: Validate() = %v, want %q", tc.spec, err, tc.want)
		}
	}
}

func TestJoinSpecKind(t *testing.T) {
	if k := (&JoinSpec{}).Kind(); k != KindJoinInner {
		t.Errorf("inner join kind %s", k)
	}
	if k := (&JoinSpec{OuterRight: true}).Kind(); k != KindJoinOuter {
		t.Errorf("right join kind %s", k)
	}
	if k := (&IntervalJoinSpec{JoinSpec: JoinSpec{OuterLeft: true}}).Kind(); k != KindJoinInterval {
		t.Errorf("interval join kind %s", k)
	}
}
