package jobgraph

import (
	"testing"

	"google.golang.org/protobuf/proto"

	braidv1 "github.com/braidflow/braid/proto/braid/v1"
)

// FuzzFromProto decodes arbitrary bytes as the job graph of a DeployTasks
// request, as a task manager does with what the network hands it: the
// decoding and FromProto never panic, and a graph FromProto accepts is
// valid, encodes again, and decodes again to a graph that encodes the
// same.
func FuzzFromProto(f *testing.F) {
	pg, err := testGraph().Proto()
	if err != nil {
		f.Fatal(err)
	}
	good, err := proto.Marshal(pg)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	for _, mutate := range []func(*braidv1.JobGraph){
		func(g *braidv1.JobGraph) { g.Vertices[0].NumInputs = -1 },
		func(g *braidv1.JobGraph) { g.MaxParallelism = 2_000_000_000 },
		func(g *braidv1.JobGraph) { g.Vertices[0].Chain[0].Kind = "nope" },
		func(g *braidv1.JobGraph) { g.Edges = append(g.Edges, &braidv1.Edge{Source: 0, Target: 99}) },
		func(g *braidv1.JobGraph) { g.Vertices[0].Parallelism = 1 << 30 },
		func(g *braidv1.JobGraph) {
			g.Vertices[0].Chain[0].Config = []byte(`{"schema":[{"name":"x","type":{"kind":99}}]}`)
		},
	} {
		bad := proto.Clone(pg).(*braidv1.JobGraph)
		mutate(bad)
		b, err := proto.Marshal(bad)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var wire braidv1.JobGraph
		if proto.Unmarshal(b, &wire) != nil {
			return
		}
		g, err := FromProto(&wire)
		if err != nil {
			return
		}
		if err := g.Validate(); err != nil {
			t.Fatalf("FromProto accepted a graph that does not validate: %v", err)
		}
		again, err := g.Proto()
		if err != nil {
			t.Fatalf("an accepted graph does not encode: %v", err)
		}
		g2, err := FromProto(again)
		if err != nil {
			t.Fatalf("an accepted graph's encoding is refused: %v", err)
		}
		third, err := g2.Proto()
		if err != nil {
			t.Fatal(err)
		}
		b2, _ := proto.MarshalOptions{Deterministic: true}.Marshal(again)
		b3, _ := proto.MarshalOptions{Deterministic: true}.Marshal(third)
		if string(b2) != string(b3) {
			t.Fatal("an accepted graph's encoding changes on a second round trip")
		}
	})
}
