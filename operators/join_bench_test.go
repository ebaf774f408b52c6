package operators

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"
	"go.uber.org/zap"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// benchSchemas: BIGINT key, BIGINT value, 16-character STRING on each side.
var (
	benchLeft  = types.Schema{{Name: "k", Type: types.BigInt}, {Name: "v", Type: types.BigInt}, {Name: "s", Type: types.String}}
	benchRight = types.Schema{{Name: "k2", Type: types.BigInt}, {Name: "v2", Type: types.BigInt}, {Name: "s2", Type: types.String}}
)

// benchBatch makes a batch of n insertions with the given keys.
func benchBatch(s types.Schema, keys []int64) types.Batch { return benchBatchV(s, keys, 0) }

// benchBatchV is benchBatch with the value column numbering rows from v0.
func benchBatchV(s types.Schema, keys []int64, v0 int64) types.Batch {
	mem := memory.DefaultAllocator
	kb, vb, sb := array.NewInt64Builder(mem), array.NewInt64Builder(mem), array.NewStringBuilder(mem)
	for i, k := range keys {
		kb.Append(k)
		vb.Append(v0 + int64(i))
		sb.Append(fmt.Sprintf("payload-%08d", k%100000000))
	}
	cols := []arrow.Array{kb.NewArray(), vb.NewArray(), sb.NewArray()}
	b := types.NewInsertBatch(s.ArrowSchema(), cols, len(keys))
	for _, c := range cols {
		c.Release()
	}
	return b
}

type countCollector struct{ rows int }

func (c *countCollector) Emit(b types.Batch) error { c.rows += b.NumRows(); return nil }

func openBenchJoin(b *testing.B, dir string, fs vfs.FS, cacheBytes int64) *InnerJoin {
	j, err := NewInnerJoin(jobgraph.JoinSpec{LeftSchema: benchLeft, RightSchema: benchRight, LeftKeys: []int{0}, RightKeys: []int{0}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := withKeyedState(b, &Context{MaxParallelism: 128, KeyGroups: types.KeyGroupRange{Start: 0, End: 127},
		Logger: zap.NewNop()}, cacheBytes, benchDir(dir, fs))
	if err := j.Open(ctx); err != nil {
		b.Fatal(err)
	}
	return j
}

// BenchmarkInnerJoin: one right row for each of 10K hot keys is built, then
// 4096-row left batches with random keys probe it (one match per row), so
// every state access hits the cache. An op is one left batch; rows/s counts
// left input rows (each also updates the left state and emits one row).
func BenchmarkInnerJoin(b *testing.B) {
	const keys = 10000
	j := openBenchJoin(b, "/state", vfs.NewMem(), 256<<20)
	defer j.Close()
	out := &countCollector{}
	for start := 0; start < keys; start += 4096 {
		ks := make([]int64, 0, 4096)
		for k := start; k < keys && k < start+4096; k++ {
			ks = append(ks, int64(k))
		}
		rb := benchBatch(benchRight, ks)
		if err := j.Process(1, rb, out); err != nil {
			b.Fatal(err)
		}
		rb.Release()
	}
	r := rand.New(rand.NewPCG(1, 2))
	probes := make([]types.Batch, 16)
	for i := range probes {
		ks := make([]int64, 4096)
		for x := range ks {
			ks[x] = int64(r.IntN(keys))
		}
		probes[i] = benchBatch(benchLeft, ks)
	}
	defer func() {
		for _, p := range probes {
			p.Release()
		}
	}()
	out.rows = 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := j.Process(0, probes[i%len(probes)], out); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if out.rows != b.N*4096 {
		b.Fatalf("%d output rows, want %d", out.rows, b.N*4096)
	}
	b.ReportMetric(float64(b.N)*4096/b.Elapsed().Seconds(), "rows/s")
	s := j.be.Backend().Stats()
	b.ReportMetric(float64(s.Misses)/float64(s.Hits+s.Misses), "missratio")
}

// BenchmarkJoinSpill5M joins N distinct keys per side (5M unless
// BRAID_SPILL_KEYS says otherwise) with a 64 MiB state cache on a real
// directory: the right side is built, then the left side probes it, every
// row matching once. Nearly every access misses the cache, so this measures
// the Pebble path and shows the heap stays bounded. Run with -benchtime 1x.
func BenchmarkJoinSpill5M(b *testing.B) {
	n := 5_000_000
	if s := os.Getenv("BRAID_SPILL_KEYS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	for it := 0; it < b.N; it++ {
		dir, fs := b.TempDir(), vfs.FS(nil)
		if os.Getenv("BRAID_SPILL_MEMFS") != "" {
			fs = vfs.NewMem()
		}
		j := openBenchJoin(b, dir, fs, 64<<20)
		out := &countCollector{}
		var peak uint64
		var ms runtime.MemStats
		sample := func() {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak {
				peak = ms.HeapInuse
			}
		}
		// A fixed permutation of keys, different per side, so the probe
		// order is not the build order.
		for side := 1; side >= 0; side-- {
			s := benchRight
			if side == 0 {
				s = benchLeft
			}
			perm := rand.New(rand.NewPCG(uint64(side), 3))
			const prime = 1_000_003
			off := perm.Int64N(int64(n))
			for start := 0; start < n; start += 4096 {
				ks := make([]int64, 0, 4096)
				for k := start; k < n && k < start+4096; k++ {
					ks = append(ks, (int64(k)*prime+off)%int64(n))
				}
				bt := benchBatch(s, ks)
				if err := j.Process(side, bt, out); err != nil {
					b.Fatal(err)
				}
				bt.Release()
				if (start/4096)%32 == 0 {
					sample()
				}
			}
		}
		sample()
		st := j.be.Backend().Stats()
		if err := j.Close(); err != nil {
			b.Fatal(err)
		}
		if out.rows != n {
			b.Fatalf("%d output rows, want %d", out.rows, n)
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		b.ReportMetric(float64(st.Misses)/float64(st.Hits+st.Misses), "missratio")
		b.ReportMetric(float64(st.FlushedBytes)/(1<<20), "flushed-MB")
	}
	b.ReportMetric(float64(b.N)*2*float64(n)/b.Elapsed().Seconds(), "rows/s")
}

// benchDir is the state directory withKeyedState wants: "" for memory.
func benchDir(dir string, fs vfs.FS) string {
	if fs != nil {
		return ""
	}
	return dir
}

// outerBenchRows is the number of outer (left) rows of one
// BenchmarkOuterJoinHotKeys op, whatever the rows per key.
const outerBenchRows = 100_000

// hotKeyBatches makes the inputs of one BenchmarkOuterJoinHotKeys op:
// outerBenchRows left rows spread over outerBenchRows/perKey keys (perKey
// rows each, all distinct), then one right row per key, then its
// retraction.
func hotKeyBatches(perKey int) (left []types.Batch, right, retract types.Batch) {
	keys := outerBenchRows / perKey
	ks := make([]int64, 0, 4096)
	for i := 0; i < outerBenchRows; i++ {
		ks = append(ks, int64(i%keys))
		if len(ks) == 4096 || i == outerBenchRows-1 {
			left = append(left, benchBatchV(benchLeft, ks, int64(i+1-len(ks))))
			ks = ks[:0]
		}
	}
	rk := make([]int64, keys)
	for i := range rk {
		rk[i] = int64(i)
	}
	// NB: right values are negative, left ones are not: v > v2 holds for
	// every pair.
	right = benchBatchV(benchRight, rk, -int64(keys))
	retract = benchBatchV(benchRight, rk, -int64(keys))
	kinds := retract.Kinds()
	for i := range kinds {
		kinds[i] = int8(types.Delete)
	}
	return left, right, retract
}

// BenchmarkOuterJoinHotKeys: a LEFT JOIN gets 100K left rows with 10, 1K or
// 100K rows per key and no right rows (each emits its padded row), then one
// right row per key that matches every left row of its key (each left row's
// padded row is deleted and its joined row inserted), then that right row's
// retraction (joined rows deleted, padded rows back). An op is the whole
// sequence on a fresh join; every row of a key is in the state cache. With
// "residual" the condition also has v > v2, true for every pair, so the
// join keeps per-row match counts; with "residual-ttl" both sides also have
// a state TTL (an hour: nothing expires). rows/s counts input rows; each input row
// costs its own state update plus the 5 output rows per left row, so a flat
// ns/row across the three sizes means no per-key scan. state-B/key is the
// cache's accounting of the state per key at the end; pebble-B/key what a
// checkpoint writes per key.
func BenchmarkOuterJoinHotKeys(b *testing.B) {
	for _, v := range []struct {
		name          string
		residual, ttl bool
	}{{"equi", false, false}, {"residual", true, false}, {"residual-ttl", true, true}} {
		for _, perKey := range []int{10, 1000, 100_000} {
			b.Run(fmt.Sprintf("%s/perKey=%d", v.name, perKey), func(b *testing.B) {
				benchOuterHotKeys(b, perKey, v.residual, v.ttl)
			})
		}
	}
}

func benchOuterHotKeys(b *testing.B, perKey int, residual, ttl bool) {
	left, right, retract := hotKeyBatches(perKey)
	defer func() {
		for _, l := range left {
			l.Release()
		}
		right.Release()
		retract.Release()
	}()
	keys := outerBenchRows / perKey
	spec := jobgraph.JoinSpec{LeftSchema: benchLeft, RightSchema: benchRight, LeftKeys: []int{0}, RightKeys: []int{0}, OuterLeft: true}
	if residual {
		// v > v2 over (k, v, s, k2, v2, s2).
		spec.Residual = &expr.Expr{Op: expr.OpCall, Func: ">", Type: types.Boolean,
			Args: []*expr.Expr{expr.Column(1, types.BigInt), expr.Column(4, types.BigInt)}}
	}
	if ttl {
		// Nothing expires during the op; every access still checks.
		spec.LeftTTLMs, spec.RightTTLMs = time.Hour.Milliseconds(), time.Hour.Milliseconds()
	}
	var stateBytes, pebbleBytes float64
	var elapsed time.Duration
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		j, err := NewOuterJoin(spec)
		if err != nil {
			b.Fatal(err)
		}
		ctx := withKeyedState(b, &Context{MaxParallelism: 128, KeyGroups: types.KeyGroupRange{Start: 0, End: 127},
			Logger: zap.NewNop()}, 4<<30, "")
		if err := j.Open(ctx); err != nil {
			b.Fatal(err)
		}
		out := &countCollector{}
		start := time.Now()
		b.StartTimer()
		for _, l := range left {
			if err := j.Process(0, l, out); err != nil {
				b.Fatal(err)
			}
		}
		if err := j.Process(1, right, out); err != nil {
			b.Fatal(err)
		}
		if err := j.Process(1, retract, out); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		elapsed += time.Since(start)
		if want := 5 * outerBenchRows; out.rows != want {
			b.Fatalf("%d output rows, want %d", out.rows, want)
		}
		stateBytes = float64(ctx.State.Stats().CacheBytes) / float64(keys)
		if err := ctx.State.Flush(); err != nil {
			b.Fatal(err)
		}
		pebbleBytes = float64(ctx.State.Stats().FlushedBytes) / float64(keys)
		j.Close()
		ctx.State.Close()
	}
	in := float64(b.N) * float64(outerBenchRows+2*keys)
	b.ReportMetric(in/elapsed.Seconds(), "rows/s")
	b.ReportMetric(float64(elapsed.Nanoseconds())/in, "ns/row")
	b.ReportMetric(stateBytes, "state-B/key")
	b.ReportMetric(pebbleBytes, "pebble-B/key")
}
