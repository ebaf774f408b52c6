package operators

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

// openBatchSort opens a BatchSort on one subtask of 128 key groups, its
// state in memory (on disk under dir when dir is not empty), and returns it
// with its backend.
func openBatchSort(t testing.TB, spec jobgraph.BatchSortSpec, cacheBytes int64, dir string, restore Restore) (*BatchSort, *state.Backend) {
	t.Helper()
	op, err := NewOperator(&spec)
	if err != nil {
		t.Fatal(err)
	}
	s := op.(*BatchSort)
	ctx := withKeyedState(t, &Context{Parallelism: 1, MaxParallelism: 128,
		KeyGroups: types.KeyGroupRangeFor(0, 1, 128), Restore: restore, Logger: zap.NewNop()}, cacheBytes, dir)
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, ctx.State
}

// sortKeyText is the part of a row rankOrder sorts on.
func sortKeyText(r arow) string {
	return fmt.Sprintf("%s|%s|%s", optStr(r.x), optStr(r.s), optStr(r.d))
}

// checkBatchSortOutput checks out (the operator's whole output) against
// the live rows of the oracle: every row +I, ordered by rankOrder, the sort
// keys those of the oracle's rows [offset, offset+limit), and every row one
// the oracle holds.
func checkBatchSortOutput(t *testing.T, spec jobgraph.BatchSortSpec, out []string, oracle *rankOracle, byText map[string]arow) {
	t.Helper()
	live := slices.Clone(oracle.parts[""])
	slices.SortStableFunc(live, oracleRankCompare)
	lo := min(int(spec.Offset), len(live))
	hi := len(live)
	if spec.Limit > 0 {
		hi = min(hi, lo+int(spec.Limit))
	}
	want := live[lo:hi]
	if len(out) != len(want) {
		t.Fatalf("%d rows out, want %d:\n%v", len(out), len(want), out)
	}
	left := map[string]int{}
	for _, r := range oracle.parts[""] {
		left[formatArow(r)]++
	}
	var prev *arow
	for i, o := range out {
		kind, body := o[:2], o[2:]
		if kind != "+I" {
			t.Fatalf("row %d is %s", i, o)
		}
		r, ok := byText[body]
		if !ok || left[body] == 0 {
			t.Fatalf("row %d %s is not in the result", i, o)
		}
		left[body]--
		if prev != nil && oracleRankCompare(*prev, r) > 0 {
			t.Fatalf("row %d %s sorts before the row ahead of it %s", i, o, formatArow(*prev))
		}
		if got, w := sortKeyText(r), sortKeyText(want[i]); got != w {
			t.Fatalf("row %d has sort key %s, want %s", i, got, w)
		}
		prev = &r
	}
}

// TestBatchSortAgainstOracle feeds random changelogs (retractions, NULLs
// and ties in every sort key, retractions of rows never inserted) at
// several batch sizes and checks that nothing comes out before the end of
// input and that the final rows are the oracle's, sorted and cut.
func TestBatchSortAgainstOracle(t *testing.T) {
	for _, c := range []struct {
		events        int
		limit, offset int64
	}{{600, 0, 0}, {600, 3, 0}, {600, 0, 5}, {600, 4, 2}, {600, 1000, 0}, {9000, 3, 2}} {
		for _, batch := range []int{1, 7, 4096} {
			for _, cache := range []int64{2 << 10, 64 << 20} {
				name := fmt.Sprintf("events=%d/limit=%d/offset=%d/batch=%d/cache=%d", c.events, c.limit, c.offset, batch, cache)
				t.Run(name, func(t *testing.T) {
					r := rand.New(rand.NewPCG(uint64(c.events)+uint64(batch), uint64(c.limit*7+c.offset)))
					evs := randomAggEvents(r, c.events, 5, true)
					spec := jobgraph.BatchSortSpec{InputSchema: aggInput, OrderBy: rankOrder, Limit: c.limit, Offset: c.offset}
					op, _ := openBatchSort(t, spec, cache, "", Restore{})
					oracle := &rankOracle{limit: c.events}
					byText := map[string]arow{}
					out := &aggCollector{schema: aggInput}
					for start := 0; start < len(evs); start += batch {
						chunk := evs[start:min(start+batch, len(evs))]
						for _, e := range chunk {
							oracle.apply(e)
							byText[formatArow(e.row)] = e.row
						}
						b := buildAggBatch(chunk)
						err := op.Process(0, b, out)
						b.Release()
						if err != nil {
							t.Fatal(err)
						}
					}
					if len(out.rows) > 0 {
						t.Fatalf("emitted before the end of input: %v", out.rows[:1])
					}
					if err := op.EndInput(0, out); err != nil {
						t.Fatal(err)
					}
					checkBatchSortOutput(t, spec, out.rows, oracle, byText)
					if out.maxRows > joinBatchRows {
						t.Fatalf("emitted a batch of %d rows", out.maxRows)
					}
				})
			}
		}
	}
}

// TestBatchSortChangelog pins the final rows of a small changelog: updates
// replace rows, duplicates stay, a retraction of a row never inserted is
// ignored, NULL sorts first ascending and last descending.
func TestBatchSortChangelog(t *testing.T) {
	row := func(kind types.RowKind, x *int32, s string) aggEvent {
		return aggEvent{kind, arow{x: x, s: &s}}
	}
	evs := []aggEvent{
		row(types.Insert, ptr(int32(5)), "a"),
		row(types.Insert, ptr(int32(2)), "b"),
		row(types.Insert, nil, "n"),
		row(types.UpdateBefore, ptr(int32(5)), "a"),
		row(types.UpdateAfter, ptr(int32(7)), "a"),
		row(types.Delete, ptr(int32(9)), "never"),
		row(types.Insert, ptr(int32(2)), "b"),
		row(types.Insert, ptr(int32(3)), "c"),
		row(types.Delete, ptr(int32(3)), "c"),
	}
	for _, c := range []struct {
		spec jobgraph.BatchSortSpec
		want string
	}{
		{jobgraph.BatchSortSpec{OrderBy: []jobgraph.SortKey{{Col: 1}}},
			"+I[NULL, NULL, NULL, NULL, n] +I[NULL, 2, NULL, NULL, b] +I[NULL, 2, NULL, NULL, b] +I[NULL, 7, NULL, NULL, a]"},
		{jobgraph.BatchSortSpec{OrderBy: []jobgraph.SortKey{{Col: 1, Desc: true}}},
			"+I[NULL, 7, NULL, NULL, a] +I[NULL, 2, NULL, NULL, b] +I[NULL, 2, NULL, NULL, b] +I[NULL, NULL, NULL, NULL, n]"},
		{jobgraph.BatchSortSpec{OrderBy: []jobgraph.SortKey{{Col: 1, Desc: true, NullsFirst: true}}, Limit: 2},
			"+I[NULL, NULL, NULL, NULL, n] +I[NULL, 7, NULL, NULL, a]"},
		{jobgraph.BatchSortSpec{OrderBy: []jobgraph.SortKey{{Col: 4}}, Offset: 1, Limit: 2},
			"+I[NULL, 2, NULL, NULL, b] +I[NULL, 2, NULL, NULL, b]"},
		{jobgraph.BatchSortSpec{Offset: 3}, "+I[NULL, NULL, NULL, NULL, n]"},
	} {
		spec := c.spec
		spec.InputSchema = aggInput
		op, _ := openBatchSort(t, spec, 0, "", Restore{})
		out := &aggCollector{schema: aggInput}
		b := buildAggBatch(evs)
		err := op.Process(0, b, out)
		b.Release()
		if err != nil {
			t.Fatal(err)
		}
		if err := op.EndInput(0, out); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(out.rows, " "); got != c.want {
			t.Errorf("%+v:\ngot  %s\nwant %s", c.spec, got, c.want)
		}
	}
}

// TestBatchSortUnorderedMultiset: without ORDER BY, OFFSET or LIMIT the
// final rows are the changelog's multiset, whatever their order.
func TestBatchSortUnorderedMultiset(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	evs := randomAggEvents(r, 2000, 6, true)
	op, _ := openBatchSort(t, jobgraph.BatchSortSpec{InputSchema: aggInput}, 4<<10, "", Restore{})
	oracle := &rankOracle{limit: len(evs)}
	out := &aggCollector{schema: aggInput}
	for start := 0; start < len(evs); start += 100 {
		chunk := evs[start:min(start+100, len(evs))]
		for _, e := range chunk {
			oracle.apply(e)
		}
		b := buildAggBatch(chunk)
		err := op.Process(0, b, out)
		b.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := op.EndInput(0, out); err != nil {
		t.Fatal(err)
	}
	got := &materialized{t: t}
	got.apply(out.rows)
	if g, w := got.sorted(), oracle.top(); !slices.Equal(g, w) {
		t.Fatalf("got  %v\nwant %v", g, w)
	}
}

// TestBatchSortRestoreOrdered: a sort checkpointed midway and restored
// (real Pebble on disk) emits exactly what an uninterrupted one emits.
func TestBatchSortRestoreOrdered(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	evs := randomAggEvents(r, 800, 5, true)
	spec := jobgraph.BatchSortSpec{InputSchema: aggInput, OrderBy: rankOrder, Limit: 50, Offset: 3}
	run := func(op *BatchSort, evs []aggEvent, out Collector) {
		b := buildAggBatch(evs)
		defer b.Release()
		if err := op.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
	}
	root := t.TempDir()
	ref := &aggCollector{schema: aggInput}
	op, _ := openBatchSort(t, spec, 2<<10, filepath.Join(root, "ref"), Restore{})
	run(op, evs, ref)
	if err := op.EndInput(0, ref); err != nil {
		t.Fatal(err)
	}

	for _, split := range []int{0, 1, 333, len(evs)} {
		before, be := openBatchSort(t, spec, 2<<10, filepath.Join(root, fmt.Sprint("before-", split)), Restore{})
		out := &aggCollector{schema: aggInput}
		run(before, evs[:split], out)
		ck := filepath.Join(root, fmt.Sprint("ckpt-", split))
		// As the runtime does at a barrier: the operator keeps nothing
		// outside its keyed state, so the backend's checkpoint is all.
		if err := be.Checkpoint(ck); err != nil {
			t.Fatal(err)
		}
		after, _ := openBatchSort(t, spec, 2<<10, ck, Restore{ID: 1, State: [][]byte{nil}})
		run(after, evs[split:], out)
		if err := after.EndInput(0, out); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out.rows, ref.rows) {
			t.Fatalf("restored after %d of %d rows:\ngot  %v\nwant %v", split, len(evs), out.rows, ref.rows)
		}
	}
}

// TestRestoreBatchSort runs the restore matrix on the unordered form, which
// may run at any parallelism behind a HASH edge on every column.
func TestRestoreBatchSort(t *testing.T) {
	testRestore(t, func(r *rand.Rand) *restoreCase {
		spec := jobgraph.BatchSortSpec{InputSchema: aggInput}
		return &restoreCase{
			name: "batch-sort", newOp: registered(&spec),
			inputs: 1, keys: [2][]int{{0, 1, 2, 3, 4}}, steps: aggRestoreSteps(r, randomAggEvents(r, 500, 6, true)),
		}
	})
}

// BenchmarkBatchSort sorts 100,000 rows (applied in batches of 4096, then
// emitted at end of input) with an ample cache and with one that spills to
// Pebble; it reports rows/s.
func BenchmarkBatchSort(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	evs := randomAggEvents(r, 100_000, 1000, false)
	var batches []types.Batch
	for start := 0; start < len(evs); start += joinBatchRows {
		batches = append(batches, buildAggBatch(evs[start:min(start+joinBatchRows, len(evs))]))
	}
	defer func() {
		for _, bt := range batches {
			bt.Release()
		}
	}()
	for _, c := range []struct {
		name  string
		order []jobgraph.SortKey
		cache int64
	}{{"sort/cache=64MB", rankOrder, 64 << 20}, {"sort/cache=1MB", rankOrder, 1 << 20}, {"unordered/cache=64MB", nil, 64 << 20}} {
		b.Run(c.name, func(b *testing.B) {
			spec := jobgraph.BatchSortSpec{InputSchema: aggInput, OrderBy: c.order}
			for i := 0; i < b.N; i++ {
				op, _ := openBatchSort(b, spec, c.cache, "", Restore{})
				out := &countCollector{}
				for _, bt := range batches {
					if err := op.Process(0, bt, out); err != nil {
						b.Fatal(err)
					}
				}
				if err := op.EndInput(0, out); err != nil {
					b.Fatal(err)
				}
				if out.rows != len(evs) {
					b.Fatalf("%d rows out, want %d", out.rows, len(evs))
				}
			}
			b.ReportMetric(float64(len(evs)*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
