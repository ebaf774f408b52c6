package operators

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/zap"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// memLookup is a LookupTable over rows held in memory: (id, w) pairs, read
// by id. It counts its calls and fails the first failures of them.
type memLookup struct {
	rows     map[int64][]int64 // id -> the w of each row
	calls    int
	keys     int
	failures int
	opened   bool
}

func (m *memLookup) Open(*Context) error { m.opened = true; return nil }
func (m *memLookup) Close() error        { m.opened = false; return nil }

func (m *memLookup) Lookup(_ context.Context, keys [][]any) ([]arrow.Array, []int, error) {
	m.calls++
	if m.failures > 0 {
		m.failures--
		return nil, nil, errors.New("connection refused")
	}
	m.keys += len(keys)
	ids := array.NewInt64Builder(memory.DefaultAllocator)
	ws := array.NewInt64Builder(memory.DefaultAllocator)
	defer ids.Release()
	defer ws.Release()
	var match []int
	for i, k := range keys {
		id := k[0].(int64)
		for _, w := range m.rows[id] {
			ids.Append(id)
			ws.Append(w)
			match = append(match, i)
		}
	}
	return []arrow.Array{ids.NewArray(), ws.NewArray()}, match, nil
}

var (
	ljInput  = types.Schema{{Name: "k", Type: types.BigInt}, {Name: "v", Type: types.BigInt}}
	ljLookup = types.Schema{{Name: "id", Type: types.BigInt}, {Name: "w", Type: types.BigInt}}
)

func ljSpec(t testing.TB, outer, residual bool, cache jobgraph.LookupCache) jobgraph.LookupJoinSpec {
	out := append(append(types.Schema{}, ljInput...), ljLookup...)
	if outer {
		for i := 2; i < 4; i++ {
			out[i].Type = out[i].Type.WithNullable(true)
		}
	}
	s := jobgraph.LookupJoinSpec{InputSchema: ljInput, LookupSchema: ljLookup, InputKeys: []int{0}, LookupKeys: []int{0},
		OutputSchema: out, OuterLeft: outer, TableName: "default_catalog.db.dim", Cache: cache, MaxRetries: 2,
		Table: jobgraph.MySQLTable{Host: "h", Port: 3306, Database: "db", Table: "dim", Columns: []string{"id", "w"}}}
	if residual {
		s.Residual = resolve(t, "<>", expr.Column(3, types.BigInt), expr.Column(1, types.BigInt))
	}
	return s
}

// ljRow is a probe row: k (nil for NULL) and v, with its kind.
type ljRow struct {
	k    *int64
	v    int64
	kind types.RowKind
}

func ljBatch(rows []ljRow) types.Batch {
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	vb := array.NewInt64Builder(memory.DefaultAllocator)
	defer kb.Release()
	defer vb.Release()
	kinds := make([]int8, len(rows))
	for i, r := range rows {
		if r.k == nil {
			kb.AppendNull()
		} else {
			kb.Append(*r.k)
		}
		vb.Append(r.v)
		kinds[i] = int8(r.kind)
	}
	cols := []arrow.Array{kb.NewArray(), vb.NewArray()}
	defer cols[0].Release()
	defer cols[1].Release()
	return types.NewBatch(ljInput.ArrowSchema(), cols, kinds)
}

// ljOracle joins rows with table by a nested loop.
func ljOracle(rows []ljRow, table map[int64][]int64, outer, residual bool) []string {
	var out []string
	for _, r := range rows {
		matched := false
		if r.k != nil {
			for _, w := range table[*r.k] {
				if residual && w == r.v {
					continue
				}
				matched = true
				out = append(out, fmt.Sprintf("%s[%d %d %d %d]", r.kind, *r.k, r.v, *r.k, w))
			}
		}
		if !matched && outer {
			k := "NULL"
			if r.k != nil {
				k = fmt.Sprint(*r.k)
			}
			out = append(out, fmt.Sprintf("%s[%s %d NULL NULL]", r.kind, k, r.v))
		}
	}
	sort.Strings(out)
	return out
}

func runLookupJoin(t *testing.T, spec jobgraph.LookupJoinSpec, table *memLookup, rows []ljRow, batchSize int, now func() time.Time) ([]string, *LookupJoin) {
	t.Helper()
	j, err := NewLookupJoin(spec, table)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Open(&Context{Logger: zap.NewNop(), Now: now}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	out := &ijCollector{}
	for start := 0; start < len(rows); start += batchSize {
		b := ljBatch(rows[start:min(start+batchSize, len(rows))])
		if err := j.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	if err := j.EndInput(0, out); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out.events)
	return out.events, j
}

func randomLookupCase(r *rand.Rand, n int) ([]ljRow, map[int64][]int64) {
	table := map[int64][]int64{}
	for id := int64(0); id < 40; id++ {
		for c := r.IntN(3); c > 0; c-- { // 0 to 2 rows per id
			table[id] = append(table[id], r.Int64N(5))
		}
	}
	kinds := []types.RowKind{types.Insert, types.Insert, types.UpdateBefore, types.UpdateAfter, types.Delete}
	rows := make([]ljRow, n)
	for i := range rows {
		rows[i] = ljRow{v: r.Int64N(5), kind: kinds[r.IntN(len(kinds))]}
		if r.IntN(10) > 0 {
			k := r.Int64N(50)
			rows[i].k = &k
		}
	}
	return rows, table
}

// TestLookupJoinOracle compares the join with a nested loop over random
// probe rows (NULL keys, every row kind, keys with 0 to 2 rows and keys
// missing from the table), INNER and LEFT, with and without a residual,
// without a cache and with a tiny and a large one, in batches of 1 to 4096
// rows.
func TestLookupJoinOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	caches := map[string]jobgraph.LookupCache{
		"nocache": {},
		"tiny":    {Enabled: true, MaxRows: 2, CacheMissingKey: true},
		"large":   {Enabled: true, MaxRows: 1000, CacheMissingKey: false},
	}
	for _, outer := range []bool{false, true} {
		for _, residual := range []bool{false, true} {
			for cname, cache := range caches {
				for _, bs := range []int{1, 7, 256, 4096} {
					t.Run(fmt.Sprintf("outer=%v/residual=%v/%s/batch%d", outer, residual, cname, bs), func(t *testing.T) {
						rows, table := randomLookupCase(r, 600)
						got, _ := runLookupJoin(t, ljSpec(t, outer, residual, cache), &memLookup{rows: table}, rows, bs, nil)
						want := ljOracle(rows, table, outer, residual)
						if fmt.Sprint(got) != fmt.Sprint(want) {
							t.Fatalf("got %d rows, want %d\ngot  %v\nwant %v", len(got), len(want), got, want)
						}
					})
				}
			}
		}
	}
}

func i64(v int64) *int64 { return &v }

// TestLookupJoinBatchesKeys: the distinct uncached keys of one batch are
// read in one call; a cached key is not read again.
func TestLookupJoinBatchesKeys(t *testing.T) {
	table := &memLookup{rows: map[int64][]int64{1: {10}, 2: {20}}}
	rows := []ljRow{{k: i64(1)}, {k: i64(2)}, {k: i64(1)}, {k: i64(3)}, {k: nil}}
	_, j := runLookupJoin(t, ljSpec(t, false, false, jobgraph.LookupCache{}), table, rows, 5, nil)
	if table.calls != 1 || table.keys != 3 {
		t.Fatalf("%d calls reading %d keys, want 1 call of 3 keys", table.calls, table.keys)
	}
	if l, k, _, _ := j.LookupStats(); l != 1 || k != 3 {
		t.Fatalf("stats %d lookups %d keys", l, k)
	}

	table = &memLookup{rows: map[int64][]int64{1: {10}}}
	cached := jobgraph.LookupCache{Enabled: true, MaxRows: 10, CacheMissingKey: true}
	_, j = runLookupJoin(t, ljSpec(t, false, false, cached), table, []ljRow{{k: i64(1)}, {k: i64(3)}, {k: i64(1)}, {k: i64(3)}}, 2, nil)
	if table.calls != 1 || table.keys != 2 {
		t.Fatalf("cached: %d calls reading %d keys, want 1 call of 2 keys", table.calls, table.keys)
	}
	if _, _, hits, misses := j.LookupStats(); hits != 2 || misses != 2 {
		t.Fatalf("cache hits %d misses %d, want 2 and 2", hits, misses)
	}
}

// TestLookupJoinCacheExpiry: entries expire after write and after access,
// a missing key is cached only with CacheMissingKey, and the least
// recently used key is evicted beyond MaxRows.
func TestLookupJoinCacheExpiry(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	for _, tc := range []struct {
		name  string
		cache jobgraph.LookupCache
		steps []time.Duration // time to advance before each probe of key 1
		calls int
	}{
		{"write", jobgraph.LookupCache{Enabled: true, ExpireAfterWriteMs: 1000}, []time.Duration{0, 500 * time.Millisecond, 400 * time.Millisecond, 200 * time.Millisecond}, 2},
		{"access", jobgraph.LookupCache{Enabled: true, ExpireAfterAccessMs: 1000}, []time.Duration{0, 900 * time.Millisecond, 900 * time.Millisecond, 1100 * time.Millisecond}, 2},
		{"missing-not-cached", jobgraph.LookupCache{Enabled: true, MaxRows: 5}, []time.Duration{0, 0}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := &memLookup{rows: map[int64][]int64{1: {10}}}
			key := int64(1)
			if tc.name == "missing-not-cached" {
				key = 9
			}
			j, err := NewLookupJoin(ljSpec(t, false, false, tc.cache), table)
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Open(&Context{Logger: zap.NewNop(), Now: clock}); err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			for _, d := range tc.steps {
				now = now.Add(d)
				b := ljBatch([]ljRow{{k: &key}})
				if err := j.Process(0, b, &ijCollector{}); err != nil {
					t.Fatal(err)
				}
				b.Release()
			}
			if table.calls != tc.calls {
				t.Fatalf("%d lookups, want %d", table.calls, tc.calls)
			}
		})
	}

	c := newLookupCache(jobgraph.LookupCache{Enabled: true, MaxRows: 2, CacheMissingKey: true})
	c.put([]byte("a"), nil, now)
	c.put([]byte("b"), nil, now)
	c.get([]byte("a"), now)
	c.put([]byte("c"), nil, now)
	if _, ok := c.get([]byte("b"), now); ok || c.len() != 2 {
		t.Fatalf("b should be evicted (least recently used), len %d", c.len())
	}
	if _, ok := c.get([]byte("a"), now); !ok {
		t.Fatal("a was evicted")
	}
}

// TestLookupJoinRetries: a failing lookup is retried MaxRetries times, then
// fails the job with an external error.
func TestLookupJoinRetries(t *testing.T) {
	table := &memLookup{rows: map[int64][]int64{1: {10}}, failures: 2}
	got, _ := runLookupJoin(t, ljSpec(t, false, false, jobgraph.LookupCache{}), table, []ljRow{{k: i64(1)}}, 1, nil)
	if table.calls != 3 || len(got) != 1 {
		t.Fatalf("%d calls, %v", table.calls, got)
	}

	table = &memLookup{rows: map[int64][]int64{1: {10}}, failures: 3}
	j, err := NewLookupJoin(ljSpec(t, false, false, jobgraph.LookupCache{}), table)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Open(&Context{Logger: zap.NewNop()}); err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	b := ljBatch([]ljRow{{k: i64(1)}})
	defer b.Release()
	err = j.Process(0, b, &ijCollector{})
	if err == nil || types.ClassOf(err) != types.ClassExternal {
		t.Fatalf("error %v (class %v), want an external error", err, types.ClassOf(err))
	}
}

// TestLookupJoinRestore: the join keeps no keyed state; a new instance (a
// restored subtask) starts with an empty cache and reads its keys again.
func TestLookupJoinRestore(t *testing.T) {
	cache := jobgraph.LookupCache{Enabled: true, MaxRows: 10, CacheMissingKey: true}
	table := &memLookup{rows: map[int64][]int64{1: {10}}}
	var j Operator
	j, err := NewLookupJoin(ljSpec(t, false, false, cache), table)
	if err != nil {
		t.Fatal(err)
	}
	if _, stateful := j.(StatefulOperator); stateful {
		t.Fatal("a lookup join should keep no keyed state")
	}
	for i := 0; i < 2; i++ {
		got, _ := runLookupJoin(t, ljSpec(t, false, false, cache), table, []ljRow{{k: i64(1)}, {k: i64(1)}}, 1, nil)
		if len(got) != 2 {
			t.Fatalf("run %d: %v", i, got)
		}
	}
	if table.calls != 2 {
		t.Fatalf("%d lookups over two instances, want one each", table.calls)
	}
}

func TestLookupJoinSpecErrors(t *testing.T) {
	s := ljSpec(t, false, false, jobgraph.LookupCache{})
	s.InputKeys = nil
	if _, err := NewLookupJoin(s, &memLookup{}); err == nil {
		t.Fatal("a spec without keys was accepted")
	}
	s = ljSpec(t, false, false, jobgraph.LookupCache{})
	s.InputKeys = []int{1}
	s.InputSchema = types.Schema{{Name: "k", Type: types.BigInt}, {Name: "v", Type: types.String}}
	if _, err := NewLookupJoin(s, &memLookup{}); err == nil {
		t.Fatal("keys of different types were accepted")
	}
}

// BenchmarkLookupJoin measures the join over an in-memory table: every key
// read from the table, and keys served by the cache.
func BenchmarkLookupJoin(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	table := &memLookup{rows: map[int64][]int64{}}
	for id := int64(0); id < 1000; id++ {
		table.rows[id] = []int64{id}
	}
	rows := make([]ljRow, 4096)
	for i := range rows {
		rows[i] = ljRow{k: i64(r.Int64N(1000)), v: int64(i)}
	}
	batch := ljBatch(rows)
	defer batch.Release()
	for _, bc := range []struct {
		name  string
		cache jobgraph.LookupCache
	}{{"nocache", jobgraph.LookupCache{}}, {"cache", jobgraph.LookupCache{Enabled: true, MaxRows: 10000}}} {
		b.Run(bc.name, func(b *testing.B) {
			j, err := NewLookupJoin(ljSpec(b, false, false, bc.cache), table)
			if err != nil {
				b.Fatal(err)
			}
			if err := j.Open(&Context{Logger: zap.NewNop()}); err != nil {
				b.Fatal(err)
			}
			defer j.Close()
			out := &countingSink{}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := j.Process(0, batch, out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*float64(len(rows))/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
