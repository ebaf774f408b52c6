package operators

import (
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.uber.org/zap"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// BenchmarkSemiJoin and BenchmarkAntiJoin run the semi (anti) join with its
// state in the cache, in three shapes. An op inserts a 4096-row left batch
// and a 4096-row right batch, then deletes them again (right first), so the
// state stays at its starting size; rows/s counts all 16384 rows.
//
//   - unique-keys: 100K keys, one right row each to start; left rows have
//     random keys (about half match), right rows insert new keys, each
//     giving its key a first match.
//   - hot-keys: 10 keys with 1K right rows each to start; every batch hits
//     them, so left rows find 1K rows under their key and right rows add to
//     1K-row keys (no residual: a count per key, no scan).
//   - hot-keys-residual: 100 keys, 10 right rows each to start, and the
//     residual left.v < right.v, which compares every row with each row of
//     the other side under its key (about 40 left rows per key in an op).
func BenchmarkSemiJoin(b *testing.B) { benchSemi(b, false) }

func BenchmarkAntiJoin(b *testing.B) { benchSemi(b, true) }

func benchSemi(b *testing.B, anti bool) {
	lt, err := expr.ResolveCall("<", []*expr.Expr{expr.Column(1, types.BigInt), expr.Column(4, types.BigInt)})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		keys     int
		perKey   int
		residual *expr.Expr
	}{
		{"unique-keys", 100_000, 1, nil},
		{"hot-keys", 10, 1000, nil},
		{"hot-keys-residual", 100, 10, lt},
	} {
		b.Run(c.name, func(b *testing.B) {
			spec := jobgraph.SemiJoinSpec{LeftSchema: benchLeft, RightSchema: benchRight,
				LeftKeys: []int{0}, RightKeys: []int{0}, Anti: anti, Residual: c.residual}
			j, err := NewSemiJoin(spec)
			if err != nil {
				b.Fatal(err)
			}
			ctx := withKeyedState(b, &Context{MaxParallelism: 128, KeyGroups: types.KeyGroupRange{Start: 0, End: 127},
				Logger: zap.NewNop()}, 512<<20, benchDir("/state", vfs.NewMem()))
			if err := j.Open(ctx); err != nil {
				b.Fatal(err)
			}
			defer j.Close()
			out := &countCollector{}
			var build []int64
			for k := 0; k < c.keys; k++ {
				for n := 0; n < c.perKey; n++ {
					build = append(build, int64(k))
				}
			}
			for start := 0; start < len(build); start += 4096 {
				rb := benchBatch(benchRight, build[start:min(start+4096, len(build))])
				if err := j.Process(1, rb, out); err != nil {
					b.Fatal(err)
				}
				rb.Release()
			}
			r := rand.New(rand.NewPCG(1, 2))
			var lefts, rights, leftDels, rightDels []types.Batch
			for i := 0; i < 8; i++ {
				lk, rk := make([]int64, 4096), make([]int64, 4096)
				for x := range lk {
					if c.perKey == 1 {
						lk[x] = int64(r.IntN(2 * c.keys))
						rk[x] = int64(c.keys + i*4096 + x)
					} else {
						lk[x], rk[x] = int64(r.IntN(c.keys)), int64(r.IntN(c.keys))
					}
				}
				lefts, rights = append(lefts, benchBatch(benchLeft, lk)), append(rights, benchBatch(benchRight, rk))
				leftDels, rightDels = append(leftDels, deletes(benchLeft, lk)), append(rightDels, deletes(benchRight, rk))
			}
			defer func() {
				for i := range lefts {
					lefts[i].Release()
					rights[i].Release()
					leftDels[i].Release()
					rightDels[i].Release()
				}
			}()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := j.Process(0, lefts[i%len(lefts)], out); err != nil {
					b.Fatal(err)
				}
				if err := j.Process(1, rights[i%len(rights)], out); err != nil {
					b.Fatal(err)
				}
				if err := j.Process(1, rightDels[i%len(rights)], out); err != nil {
					b.Fatal(err)
				}
				if err := j.Process(0, leftDels[i%len(lefts)], out); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)*16384/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// deletes is benchBatch with every row a -D.
func deletes(s types.Schema, keys []int64) types.Batch {
	ins := benchBatch(s, keys)
	defer ins.Release()
	kinds := make([]int8, len(keys))
	for i := range kinds {
		kinds[i] = int8(types.Delete)
	}
	return types.NewBatch(s.ArrowSchema(), ins.Rec.Columns()[:ins.NumCols()], kinds)
}
