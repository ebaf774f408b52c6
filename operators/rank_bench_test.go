package operators

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"
	"go.uber.org/zap"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

// rankBenchBatch makes a batch of benchLeft rows (k, v, 16-character s)
// with the given kind.
func rankBenchBatch(kind types.RowKind, keys, vals []int64) types.Batch {
	mem := memory.DefaultAllocator
	kb, vb, sb := array.NewInt64Builder(mem), array.NewInt64Builder(mem), array.NewStringBuilder(mem)
	kinds := make([]int8, len(keys))
	for i, k := range keys {
		kb.Append(k)
		vb.Append(vals[i])
		sb.Append(fmt.Sprintf("payload-%08d", vals[i]%100000000))
		kinds[i] = int8(kind)
	}
	cols := []arrow.Array{kb.NewArray(), vb.NewArray(), sb.NewArray()}
	b := types.NewBatch(benchLeft.ArrowSchema(), cols, kinds)
	for _, c := range cols {
		c.Release()
	}
	kb.Release()
	vb.Release()
	sb.Release()
	return b
}

func openBenchOp(b *testing.B, op StatefulOperator) {
	b.Helper()
	ctx := withKeyedState(b, &Context{MaxParallelism: 128, KeyGroups: types.KeyGroupRange{Start: 0, End: 127},
		Logger: zap.NewNop()}, 512<<20, benchDir("/state", vfs.NewMem()))
	if err := op.Open(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { op.Close() })
}

// multisetBytes is the key and entry bytes of every partition of s.
func multisetBytes(b *testing.B, s *state.MultisetState) (keys, bytes int) {
	if err := s.Scan(func(_ int, k []byte, rows []state.MultisetRow) error {
		keys++
		bytes += len(k)
		for _, r := range rows {
			bytes += len(r.Row) + 8
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	return keys, bytes
}

// BenchmarkRankAppendOnly runs an insert-only Top-N partitioned by k (10K
// keys) ordered by v DESC, with the row number output, over 4096-row
// batches of random keys and values; "rising" values enter every top at
// rank 1, so each row updates every rank of its partition (2n rows out).
func BenchmarkRankAppendOnly(b *testing.B) {
	for _, c := range []struct {
		name   string
		limit  int64
		rn     bool
		rising bool
	}{
		{"rn/top3/random", 3, true, false},
		{"rn/top10/random", 10, true, false},
		{"rn/top10/rising", 10, true, true},
		{"no-rn/top10/random", 10, false, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			spec := jobgraph.RankSpec{InputSchema: benchLeft, Partition: []int{0}, OrderBy: []jobgraph.SortKey{{Col: 1, Desc: true}},
				Limit: c.limit, OutputRankNumber: c.rn}
			op, err := NewRank(spec)
			if err != nil {
				b.Fatal(err)
			}
			openBenchOp(b, op)
			r := rand.New(rand.NewPCG(1, 2))
			batches := make([]types.Batch, 16)
			v := int64(0)
			for i := range batches {
				keys, vals := make([]int64, 4096), make([]int64, 4096)
				for j := range keys {
					keys[j] = r.Int64N(10_000)
					vals[j] = r.Int64N(1 << 40)
					if c.rising {
						v++
						vals[j] = v
					}
				}
				batches[i] = rankBenchBatch(types.Insert, keys, vals)
				defer batches[i].Release()
			}
			out := &countCollector{}
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				if err := op.Process(0, batches[n%len(batches)], out); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)*4096/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(out.rows)/float64(b.N*4096), "out/row")
			keys, bytes := multisetBytes(b, op.rows)
			b.ReportMetric(float64(bytes)/float64(keys), "state-B/key")
		})
	}
}

// BenchmarkRankRetract runs a retracting Top-N 10 with the row number
// output, partitioned by k over 1000 keys holding 50 rows each to start:
// an op inserts a 4096-row batch and retracts it again, so the state stays
// at its starting size; rows/s counts all 8192 rows.
func BenchmarkRankRetract(b *testing.B) {
	spec := jobgraph.RankSpec{InputSchema: benchLeft, Partition: []int{0}, OrderBy: []jobgraph.SortKey{{Col: 1, Desc: true}},
		Limit: 10, InputRetracts: true, OutputRankNumber: true}
	op, err := NewRank(spec)
	if err != nil {
		b.Fatal(err)
	}
	openBenchOp(b, op)
	r := rand.New(rand.NewPCG(3, 4))
	out := &countCollector{}
	for start := 0; start < 50_000; start += 4096 {
		keys, vals := make([]int64, 0, 4096), make([]int64, 0, 4096)
		for j := start; j < min(start+4096, 50_000); j++ {
			keys, vals = append(keys, int64(j%1000)), append(vals, r.Int64N(1<<40))
		}
		bb := rankBenchBatch(types.Insert, keys, vals)
		if err := op.Process(0, bb, out); err != nil {
			b.Fatal(err)
		}
		bb.Release()
	}
	var ins, dels []types.Batch
	for i := 0; i < 8; i++ {
		keys, vals := make([]int64, 4096), make([]int64, 4096)
		for j := range keys {
			keys[j], vals[j] = r.Int64N(1000), r.Int64N(1<<40)
		}
		ins, dels = append(ins, rankBenchBatch(types.Insert, keys, vals)), append(dels, rankBenchBatch(types.Delete, keys, vals))
	}
	defer func() {
		for i := range ins {
			ins[i].Release()
			dels[i].Release()
		}
	}()
	out.rows = 0
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		if err := op.Process(0, ins[n%len(ins)], out); err != nil {
			b.Fatal(err)
		}
		if err := op.Process(0, dels[n%len(dels)], out); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)*8192/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(out.rows)/float64(b.N*8192), "out/row")
	keys, bytes := multisetBytes(b, op.rows)
	b.ReportMetric(float64(bytes)/float64(keys), "state-B/key")
}

// BenchmarkRankDeduplicateKeepLast runs keep-last deduplication on event
// and processing time over 100K keys, 4096-row batches of random keys
// with rising rowtimes (every row replaces its key's row: -U/+U after the
// key's first +I).
func BenchmarkRankDeduplicateKeepLast(b *testing.B) {
	for _, c := range []struct {
		name    string
		rowtime int
	}{{"rowtime", 2}, {"proctime", -1}} {
		b.Run(c.name, func(b *testing.B) {
			op, err := NewDeduplicate(jobgraph.DeduplicateSpec{InputSchema: winInput, Keys: []int{0}, KeepLastRow: true, RowtimeCol: c.rowtime})
			if err != nil {
				b.Fatal(err)
			}
			openBenchOp(b, op)
			r := rand.New(rand.NewPCG(5, 6))
			batches := make([]types.Batch, 16)
			ts := int64(0)
			for i := range batches {
				rows := make([]winRow, 4096)
				for j := range rows {
					ts++
					rows[j] = winRow{k: r.Int64N(100_000), x: r.Int64N(1 << 40), ts: ts}
				}
				batches[i] = winBatch(rows...)
				defer batches[i].Release()
			}
			out := &countCollector{}
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				if err := op.Process(0, batches[n%len(batches)], out); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)*4096/b.Elapsed().Seconds(), "rows/s")
			var keys, bytes int
			if err := op.kept.Scan(func(_ int, k, v []byte) error { keys++; bytes += len(k) + len(v); return nil }); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(bytes)/float64(keys), "state-B/key")
		})
	}
}
