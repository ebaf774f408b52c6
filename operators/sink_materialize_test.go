package operators

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/braidflow/braid/jobgraph"
)

// TestSinkMaterialize checks Flink's SinkUpsertMaterializer changelog per
// sink key (id): without an upsert key rows match on every column, a
// retraction of an older row emits nothing, one of the latest brings the
// row before it back as +U, the last one emits -D; a NULL key passes
// through. With an upsert key (v) an added row replaces its match.
func TestSinkMaterialize(t *testing.T) {
	for _, tc := range []struct {
		name   string
		upsert []int
		in     [][]string
		want   []string
	}{{
		name: "whole rows",
		in: [][]string{
			{"+I 1 a", "+I 1 b", "-U 1 a", "+I 1 c"},
			{"-D 1 c", "-D 1 b", "-D 1 z", "+I NULL q", "+I 2 x"},
		},
		want: []string{
			"+I[1, a]", "+U[1, b]", "+U[1, c]", // -U of the older a: nothing
			"+U[1, b]", "-D[1, b]", // -D of an unknown row: nothing
			"+I[NULL, q]", "+I[2, x]",
		},
	}, {
		name:   "upsert key",
		upsert: []int{1},
		in: [][]string{
			{"+I 1 a", "+U 1 a", "+I 1 b"},
			{"-U 1 a", "-D 1 b", "+I 1 c"},
		},
		want: []string{
			"+I[1, a]", "+U[1, a]", "+U[1, b]",
			"-D[1, b]", "+I[1, c]",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			for _, cache := range []int64{1 << 10, 64 << 20} {
				op, err := NewOperator(&jobgraph.SinkMaterializeSpec{Schema: upsertSchema, Keys: []int{0}, UpsertKey: tc.upsert})
				if err != nil {
					t.Fatal(err)
				}
				if err := op.Open(withKeyedState(t, &Context{MaxParallelism: 128}, cache, "")); err != nil {
					t.Fatal(err)
				}
				out := &calcSink{}
				for _, rows := range tc.in {
					b := upsertBatch(t, rows...)
					if err := op.Process(0, b, out); err != nil {
						t.Fatal(err)
					}
					b.Release()
				}
				if err := op.Close(); err != nil {
					t.Fatal(err)
				}
				if strings.Join(out.rows, " ") != strings.Join(tc.want, " ") {
					t.Errorf("cache %d:\ngot  %v\nwant %v", cache, out.rows, tc.want)
				}
			}
		})
	}
}

// TestSinkMaterializeSpecRefused checks the spec's checks.
func TestSinkMaterializeSpecRefused(t *testing.T) {
	for _, s := range []jobgraph.SinkMaterializeSpec{
		{Schema: upsertSchema},
		{Schema: upsertSchema, Keys: []int{2}},
		{Schema: upsertSchema, Keys: []int{0}, UpsertKey: []int{5}},
		{Schema: upsertSchema, Keys: []int{0}, TTLMs: -1},
	} {
		if _, err := NewSinkMaterialize(s); err == nil {
			t.Errorf("%+v: no error", s)
		}
	}
}

// TestRestoreSinkMaterialize restores the materializer, keyed on v so that
// rows of several ids share a sink key, at the same and other parallelisms.
func TestRestoreSinkMaterialize(t *testing.T) {
	testRestore(t, func(r *rand.Rand) *restoreCase {
		spec := jobgraph.SinkMaterializeSpec{Schema: upsertSchema, Keys: []int{1}, UpsertKey: []int{0}}
		return &restoreCase{
			name: "sink materialize", newOp: registered(&spec), inputs: 1, keys: [2][]int{spec.Keys},
			steps: restoreSteps(r, upsertEvents(r, 500, 10), func(upsertEvent) int { return 0 },
				func(upsertEvent) (int64, bool) { return 0, false }, upsertEventBatch),
		}
	})
}

// BenchmarkSinkMaterialize is the materializer's cost per row when every
// sink key holds a few live rows (updates of 4 upsert keys per sink key).
func BenchmarkSinkMaterialize(b *testing.B) {
	spec := jobgraph.SinkMaterializeSpec{Schema: upsertSchema, Keys: []int{1}, UpsertKey: []int{0}}
	op, err := NewOperator(&spec)
	if err != nil {
		b.Fatal(err)
	}
	if err := op.Open(withKeyedState(b, &Context{MaxParallelism: 128}, 0, "")); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	evs := upsertEvents(r, 4096, 9)
	batch := upsertEventBatch(0, evs)
	defer batch.Release()
	out := &discardCollector{}
	b.ResetTimer()
	for range b.N {
		if err := op.Process(0, batch, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(len(evs))/b.Elapsed().Seconds(), "rows/s")
}
