package operators

import (
	"fmt"
	"testing"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// BenchmarkDistinctAgg: COUNT(DISTINCT x) GROUP BY k over a retracting
// input (so the view keeps counts), 4096-row batches of inserts, with few
// groups of many distinct values (every row a new value) and many groups
// of few values. It reports rows/s and the state's bytes per group and per
// distinct value (keys and values as stored, from a scan of the state).
func BenchmarkDistinctAgg(b *testing.B) {
	for _, c := range []struct {
		name           string
		groups, values int
		distinct       bool
	}{
		{"4groups-x-manyvalues", 4, 1 << 30, true},
		{"100kgroups-x-4values", 100_000, 4, true},
		// The baseline: COUNT(x), no view.
		{"4groups-nodistinct", 4, 1 << 30, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			spec := jobgraph.GroupAggSpec{InputSchema: dInput, Keys: []int{0}, InputRetracts: true,
				Aggs:         []jobgraph.AggCall{{Func: "COUNT", Arg: 1, Distinct: c.distinct}},
				OutputSchema: types.Schema{dInput[0], {Name: "c", Type: types.BigInt.WithNullable(false)}}}
			op, err := NewGroupAgg(spec)
			if err != nil {
				b.Fatal(err)
			}
			if err := op.Open(withKeyedState(b, &Context{MaxParallelism: 128}, 0, "")); err != nil {
				b.Fatal(err)
			}
			defer op.Close()
			evs := make([]dEvent, 4096)
			xs := make([]int32, len(evs))
			out := discardCollector{}
			row := 0
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				for i := range evs {
					g := row % c.groups
					xs[i] = int32((row / c.groups) % c.values)
					evs[i] = dEvent{types.Insert, drow{k: int64(g), x: &xs[i]}}
					row++
				}
				batch := buildDBatch(evs)
				if err := op.Process(0, batch, out); err != nil {
					b.Fatal(err)
				}
				batch.Release()
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N*len(evs))/b.Elapsed().Seconds(), "rows/s")
			var groups, entries, bytes int
			if err := op.accs.Scan(func(_ int, k, v []byte) error { groups++; bytes += len(k) + len(v); return nil }); err != nil {
				b.Fatal(err)
			}
			if c.distinct {
				if err := op.views[0].counts.Scan(func(_ int, k, v []byte) error { entries++; bytes += len(k) + len(v); return nil }); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(bytes)/float64(entries), "state-B/value")
			}
			b.ReportMetric(float64(bytes)/float64(groups), "state-B/group")
			if testing.Verbose() {
				fmt.Printf("%s: %d groups, %d distinct entries, %d bytes\n", c.name, groups, entries, bytes)
			}
		})
	}
}
