package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"go.uber.org/zap"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

// Defaults of JoinOptions.
const (
	DefaultJoinHotRows       = 10_000_000
	DefaultJoinHotKeys       = 10_000
	DefaultJoinHotCacheBytes = 256 << 20
	DefaultJoinSpillKeys     = 5_000_000
	DefaultJoinSpillCache    = 64 << 20
)

// JoinOptions size a join run. Zero values take the runner's defaults.
type JoinOptions struct {
	// Rows is the number of probe rows of JoinHot (unused by JoinSpill).
	Rows int64
	// Keys is the hot key set of JoinHot, and the distinct keys per side of
	// JoinSpill.
	Keys int
	// CacheBytes is the state cache budget.
	CacheBytes int64
	// Dir is where the state's temporary directory is made; os.TempDir()
	// when empty. It is removed afterwards.
	Dir string
}

// stateStatser is implemented by operators that expose their state's cache
// counters.
type stateStatser interface {
	StateStats() state.Stats
}

// openJoin builds the inner join through the operator registry, as the
// runtime does, with its state in a fresh directory under parent.
func openJoin(parent string, cacheBytes int64) (op operators.Operator, dir string, err error) {
	dir, err = os.MkdirTemp(parent, "braid-bench-join-")
	if err != nil {
		return nil, "", fmt.Errorf("bench: %w", err)
	}
	spec := jobgraph.JoinSpec{LeftSchema: rowSchema("l_"), RightSchema: rowSchema("r_"), LeftKeys: []int{0}, RightKeys: []int{0}}
	op, err = operators.NewOperator(&spec)
	if err == nil {
		kgs := types.KeyGroupRange{Start: 0, End: types.DefaultMaxParallelism - 1}
		var be *state.Backend
		be, err = state.Open(filepath.Join(dir, "state"), state.Options{CacheBytes: cacheBytes, KeyGroups: kgs})
		if err == nil {
			err = op.Open(&operators.Context{
				JobID: "bench", Parallelism: 1, MaxParallelism: types.DefaultMaxParallelism,
				KeyGroups: kgs, State: be, OperatorUID: "join", Logger: zap.NewNop(),
			})
			if err != nil {
				op.Close()
				be.Close()
			} else {
				op = &closingOperator{Operator: op, be: be}
			}
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	return op, dir, nil
}

// closingOperator flushes and closes the state backend after the
// operator, so the Pebble figures read afterwards count all the state.
type closingOperator struct {
	operators.Operator
	be *state.Backend
}

func (c *closingOperator) Close() error {
	err := c.Operator.Close()
	return errors.Join(err, c.be.Flush(), c.be.Close())
}

// StateStats passes the join's state counters through.
func (c *closingOperator) StateStats() state.Stats { return c.be.Stats() }

// rowCounter is a Collector that counts rows.
type rowCounter struct{ rows int64 }

func (c *rowCounter) Emit(b types.Batch) error { c.rows += int64(b.NumRows()); return nil }

// JoinHot measures the inner join when every state access hits the cache:
// one right row for each of opts.Keys keys is built (untimed), then
// opts.Rows left rows probe it, each matching exactly once. The probes
// alternate a batch of insertions and a batch retracting the same rows, so
// the left state stays the size of one batch however long the run: Rows
// counts both, and every one of them updates the left state, probes the right
// state and emits one joined row.
func JoinHot(ctx context.Context, opts JoinOptions) (Result, error) {
	if opts.Rows <= 0 {
		opts.Rows = DefaultJoinHotRows
	}
	if opts.Keys <= 0 {
		opts.Keys = DefaultJoinHotKeys
	}
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = DefaultJoinHotCacheBytes
	}
	op, dir, err := openJoin(opts.Dir, opts.CacheBytes)
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	defer op.Close()

	out := &rowCounter{}
	rb := newBatchBuilder(rowSchema("r_"))
	defer rb.release()
	ks := make([]int64, 0, BatchRows)
	for start := 0; start < opts.Keys; start += BatchRows {
		ks = ks[:0]
		for k := start; k < opts.Keys && k < start+BatchRows; k++ {
			ks = append(ks, int64(k))
		}
		b := rb.build(ks, int64(start))
		err := op.Process(1, b, out)
		b.Release()
		if err != nil {
			return Result{}, err
		}
	}
	if out.rows != 0 {
		return Result{}, fmt.Errorf("bench: join: building the right side emitted %d rows", out.rows)
	}
	probes := hotProbes(opts.Keys)
	defer func() {
		for _, p := range probes {
			p.Release()
		}
	}()

	start := time.Now()
	var in int64
	for i := 0; in < opts.Rows; i++ {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return Result{}, err
			}
		}
		b := probes[i%len(probes)]
		if left := opts.Rows - in; left < BatchRows {
			// A partial insert batch: its rows stay in the left state.
			b = types.Batch{Rec: probes[0].Rec.NewSlice(0, left)}
			defer b.Release()
		}
		if err := op.Process(0, b, out); err != nil {
			return Result{}, err
		}
		in += int64(b.NumRows())
	}
	elapsed := time.Since(start)
	if out.rows != in {
		return Result{}, fmt.Errorf("bench: join: %d output rows for %d probe rows", out.rows, in)
	}
	r := newResult("join", in, elapsed)
	r.Extra["hot-keys"] = strconv.Itoa(opts.Keys)
	r.Extra["output-rows"] = strconv.FormatInt(out.rows, 10)
	r.Extra["state-cache"] = mib(uint64(opts.CacheBytes))
	addStateStats(r.Extra, op)
	return r, nil
}

// hotProbes builds pairs of left batches over random hot keys: insertions,
// then the same rows retracted.
func hotProbes(keys int) []types.Batch {
	lb := newBatchBuilder(rowSchema("l_"))
	defer lb.release()
	rng := rand.New(rand.NewPCG(3, 4))
	ks := make([]int64, BatchRows)
	kinds := make([]int8, BatchRows)
	for i := range kinds {
		kinds[i] = int8(types.Delete)
	}
	var out []types.Batch
	for i := 0; i < 8; i++ {
		for j := range ks {
			ks[j] = rng.Int64N(int64(keys))
		}
		ins := lb.build(ks, int64(i*BatchRows))
		cols := make([]arrow.Array, ins.NumCols())
		for c := range cols {
			cols[c] = ins.Column(c)
		}
		del := types.NewBatch(ins.Rec.Schema(), cols, kinds)
		out = append(out, ins, del)
	}
	return out
}

// JoinSpill joins opts.Keys distinct keys per side with an opts.CacheBytes
// state cache on a real directory: the right side is built, then the left
// side probes it, every row matching once, each side in its own fixed
// permutation of the keys. The state (two rows per key) is far larger than
// the cache, so nearly every probe misses and reads Pebble. Rows counts the
// input rows of both sides. Extras give the peak Go heap (HeapInuse,
// sampled), the process's peak RSS (VmHWM, reset at the start where Linux
// allows), the state's on-disk size and, when the operator exposes them, the
// cache's evictions and misses.
func JoinSpill(ctx context.Context, opts JoinOptions) (Result, error) {
	if opts.Keys <= 0 {
		opts.Keys = DefaultJoinSpillKeys
	}
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = DefaultJoinSpillCache
	}
	runtime.GC()
	resetOK := resetPeakRSS()
	op, dir, err := openJoin(opts.Dir, opts.CacheBytes)
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	closed := false
	defer func() {
		if !closed {
			op.Close()
		}
	}()

	var peakHeap uint64
	var ms runtime.MemStats
	sample := func() {
		runtime.ReadMemStats(&ms)
		peakHeap = max(peakHeap, ms.HeapInuse)
	}
	out := &rowCounter{}
	n := int64(opts.Keys)
	ks := make([]int64, 0, BatchRows)
	start := time.Now()
	for _, side := range []int{1, 0} {
		bb := newBatchBuilder(rowSchema([]string{"l_", "r_"}[side]))
		perm := rand.New(rand.NewPCG(uint64(side), 3))
		// k -> (k*prime + off) mod n is a permutation of [0, n) as prime
		// does not divide n... unless it does: then fall back to prime 1.
		prime := int64(1_000_003)
		if n%prime == 0 {
			prime = 1
		}
		off := perm.Int64N(n)
		for first, batch := int64(0), 0; first < n; first, batch = first+BatchRows, batch+1 {
			if batch%64 == 0 {
				if err := ctx.Err(); err != nil {
					bb.release()
					return Result{}, err
				}
				sample()
			}
			ks = ks[:0]
			for k := first; k < n && k < first+BatchRows; k++ {
				ks = append(ks, (k*prime+off)%n)
			}
			b := bb.build(ks, first)
			err := op.Process(side, b, out)
			b.Release()
			if err != nil {
				bb.release()
				return Result{}, err
			}
		}
		bb.release()
	}
	sample()
	extra := map[string]string{}
	addStateStats(extra, op)
	closed = true
	if err := op.Close(); err != nil { // flushes the cache to Pebble
		return Result{}, err
	}
	elapsed := time.Since(start)
	if out.rows != n {
		return Result{}, fmt.Errorf("bench: join-spill: %d output rows for %d keys per side", out.rows, n)
	}
	r := newResult("join-spill", 2*n, elapsed)
	for k, v := range extra {
		r.Extra[k] = v
	}
	r.Extra["keys-per-side"] = strconv.FormatInt(n, 10)
	r.Extra["output-rows"] = strconv.FormatInt(out.rows, 10)
	r.Extra["state-cache"] = mib(uint64(opts.CacheBytes))
	r.Extra["peak-heap"] = mib(peakHeap)
	if m, err := ReadProcMemory(0); err == nil {
		k := "peak-rss"
		if !resetOK {
			k = "peak-rss-process" // includes whatever ran before
		}
		r.Extra[k] = mib(m.HWM)
	}
	if sz, files, err := dirSize(filepath.Join(dir, "state")); err == nil {
		r.Extra["pebble-disk"] = mib(uint64(sz))
		r.Extra["pebble-sst-files"] = strconv.Itoa(files)
	}
	return r, nil
}

// addStateStats records the state's cache counters, if op exposes them.
func addStateStats(extra map[string]string, op operators.Operator) {
	s, ok := op.(stateStatser)
	if !ok {
		return
	}
	st := s.StateStats()
	extra["cache-hits"] = strconv.FormatInt(st.Hits, 10)
	extra["cache-misses"] = strconv.FormatInt(st.Misses, 10)
	extra["cache-evictions"] = strconv.FormatInt(st.Evictions, 10)
	extra["pebble-flushed"] = mib(uint64(st.FlushedBytes))
}

// dirSize sums the sizes of the files under dir and counts its .sst files.
func dirSize(dir string) (size int64, ssts int, err error) {
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		size += info.Size()
		if filepath.Ext(path) == ".sst" {
			ssts++
		}
		return nil
	})
	return size, ssts, err
}
