package state

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/braidflow/braid/types"
)

// oracle is the in-memory model: state name -> kg/key -> row -> count, and
// state name -> kg/key -> value.
type oracle struct {
	multi map[string]map[string]map[string]int64
	vals  map[string]map[string]string
}

func newOracle() *oracle {
	return &oracle{multi: map[string]map[string]map[string]int64{}, vals: map[string]map[string]string{}}
}

func okey(kg int, key []byte) string { return fmt.Sprintf("%d/%s", kg, key) }

func (o *oracle) add(name string, kg int, key, row []byte, d int64) {
	m := o.multi[name]
	if m == nil {
		m = map[string]map[string]int64{}
		o.multi[name] = m
	}
	rows := m[okey(kg, key)]
	if rows == nil {
		rows = map[string]int64{}
		m[okey(kg, key)] = rows
	}
	n := rows[string(row)] + d
	if n <= 0 {
		delete(rows, string(row))
	} else {
		rows[string(row)] = n
	}
}

func (o *oracle) rows(name string, kg int, key []byte) map[string]int64 {
	return o.multi[name][okey(kg, key)]
}

func sameRows(got []MultisetRow, want map[string]int64) error {
	seen := map[string]bool{}
	for _, r := range got {
		if r.Count <= 0 {
			return fmt.Errorf("row %q has count %d", r.Row, r.Count)
		}
		if seen[string(r.Row)] {
			return fmt.Errorf("row %q twice", r.Row)
		}
		seen[string(r.Row)] = true
		if want[string(r.Row)] != r.Count {
			return fmt.Errorf("row %q: count %d, want %d", r.Row, r.Count, want[string(r.Row)])
		}
	}
	if len(got) != len(want) {
		return fmt.Errorf("%d rows, want %d", len(got), len(want))
	}
	return nil
}

func openMem(t testing.TB, fs vfs.FS, cacheBytes int64) *Backend {
	t.Helper()
	b, err := Open("/state", Options{CacheBytes: cacheBytes, FS: fs, MaxParallelism: 16,
		KeyGroups: types.KeyGroupRange{Start: 0, End: 15}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runRandom applies random operations to the backend and the oracle and
// checks every read; it reopens the backend after a Flush now and then.
func runRandom(t *testing.T, seed uint64, cacheBytes int64, ops int) {
	r := rand.New(rand.NewPCG(seed, 99))
	fs := vfs.NewMem()
	b := openMem(t, fs, cacheBytes)
	defer func() { b.Close() }()
	o := newOracle()
	names := []string{"left", "right"}
	randKey := func() (int, []byte) {
		return r.IntN(16), []byte(fmt.Sprintf("k%d", r.IntN(60)))
	}
	randRow := func() []byte {
		// Mostly few distinct rows per key; sometimes many (index path).
		n := 4
		if r.IntN(4) == 0 {
			n = 40
		}
		return []byte(fmt.Sprintf("row-%d-%s", r.IntN(n), "payload"[:r.IntN(8)]))
	}
	for i := 0; i < ops; i++ {
		name := names[r.IntN(2)]
		kg, key := randKey()
		switch op := r.IntN(100); {
		case op < 45:
			row := randRow()
			d := int64(r.IntN(3) + 1)
			if err := b.Multiset(name).Add(kg, key, row, d); err != nil {
				t.Fatal(err)
			}
			o.add(name, kg, key, row, d)
		case op < 75:
			row := randRow()
			d := -int64(r.IntN(3) + 1)
			if err := b.Multiset(name).Add(kg, key, row, d); err != nil {
				t.Fatal(err)
			}
			o.add(name, kg, key, row, d)
		case op < 88:
			got, err := b.Multiset(name).Get(kg, key)
			if err != nil {
				t.Fatal(err)
			}
			if err := sameRows(got, o.rows(name, kg, key)); err != nil {
				t.Fatalf("op %d: %s kg %d key %s: %v", i, name, kg, key, err)
			}
		case op < 92:
			v := fmt.Sprintf("v%d", r.IntN(1000))
			if err := b.Value("val").Put(kg, key, []byte(v)); err != nil {
				t.Fatal(err)
			}
			if o.vals["val"] == nil {
				o.vals["val"] = map[string]string{}
			}
			o.vals["val"][okey(kg, key)] = v
		case op < 94:
			if err := b.Value("val").Delete(kg, key); err != nil {
				t.Fatal(err)
			}
			delete(o.vals["val"], okey(kg, key))
		case op < 99:
			v, ok, err := b.Value("val").Get(kg, key)
			if err != nil {
				t.Fatal(err)
			}
			want, wok := o.vals["val"][okey(kg, key)]
			if ok != wok || string(v) != want {
				t.Fatalf("op %d: value kg %d key %s = %q %v, want %q %v", i, kg, key, v, ok, want, wok)
			}
		default:
			if err := b.Flush(); err != nil {
				t.Fatal(err)
			}
			if r.IntN(3) == 0 {
				if err := b.Close(); err != nil {
					t.Fatal(err)
				}
				b = openMem(t, fs, cacheBytes)
			}
		}
		if s := b.Stats(); s.CacheBytes > cacheBytes+4096 {
			t.Fatalf("op %d: cache holds %d bytes over a budget of %d", i, s.CacheBytes, cacheBytes)
		}
	}
	// Everything, after a final Flush and reopen.
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = openMem(t, fs, cacheBytes)
	for _, name := range names {
		for kg := 0; kg < 16; kg++ {
			for k := 0; k < 60; k++ {
				key := []byte(fmt.Sprintf("k%d", k))
				got, err := b.Multiset(name).Get(kg, key)
				if err != nil {
					t.Fatal(err)
				}
				if err := sameRows(got, o.rows(name, kg, key)); err != nil {
					t.Fatalf("after reopen: %s kg %d key %s: %v", name, kg, key, err)
				}
			}
		}
	}
	s := b.Stats()
	t.Logf("cache %d: %+v", cacheBytes, s)
}

func TestRandomTinyCache(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runRandom(t, seed, 2048, 20000) })
	}
}

func TestRandomBigCache(t *testing.T) {
	for seed := uint64(1); seed <= 2; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runRandom(t, seed, 64<<20, 20000) })
	}
}

func TestTinyCacheEvictsAndMisses(t *testing.T) {
	b := openMem(t, vfs.NewMem(), 4096)
	defer b.Close()
	ms := b.Multiset("m")
	for i := 0; i < 1000; i++ {
		if err := ms.Add(i%16, []byte(fmt.Sprint(i)), []byte("row"), 1); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 1000; i++ {
		got, err := ms.Get(i%16, []byte(fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Count != 1 || string(got[0].Row) != "row" {
			t.Fatalf("key %d: %v", i, got)
		}
	}
	s := b.Stats()
	if s.Evictions == 0 || s.Misses < 1000 || s.FlushedBytes == 0 {
		t.Fatalf("expected evictions, misses and writes: %+v", s)
	}
}

func TestStateIDsSurviveReopen(t *testing.T) {
	fs := vfs.NewMem()
	b := openMem(t, fs, 1<<20)
	_ = b.Multiset("a")
	if err := b.Value("b").Put(3, []byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	// Asking in another order must still find "b" under its old id.
	b = openMem(t, fs, 1<<20)
	defer b.Close()
	_ = b.Multiset("c")
	v, ok, err := b.Value("b").Get(3, []byte("k"))
	if err != nil || !ok || string(v) != "v" {
		t.Fatalf("got %q %v %v", v, ok, err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("using a value state name as a multiset did not panic")
		}
	}()
	b.Multiset("b")
}

func TestKeyGroupOutsideRange(t *testing.T) {
	b, err := Open("/s", Options{FS: vfs.NewMem(), MaxParallelism: 128, KeyGroups: types.KeyGroupRange{Start: 32, End: 63}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Multiset("m").Add(5, []byte("k"), []byte("r"), 1); err == nil {
		t.Fatal("key group 5 accepted by a subtask owning [32, 63]")
	}
	if err := b.Multiset("m").Add(40, []byte("k"), []byte("r"), 1); err != nil {
		t.Fatal(err)
	}
}

// TestKeysDoNotBleed: a key that is a prefix of another key, and a row that
// makes the two Pebble keys look alike, stay apart.
func TestKeysDoNotBleed(t *testing.T) {
	b := openMem(t, vfs.NewMem(), 1) // every access misses
	defer b.Close()
	ms := b.Multiset("m")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ms.Add(1, []byte("a"), []byte("bc"), 1))
	must(ms.Add(1, []byte("ab"), []byte("c"), 2))
	must(ms.Add(1, []byte(""), []byte("abc"), 3))
	must(b.Flush())
	for key, want := range map[string]string{"a": "bc", "ab": "c", "": "abc"} {
		got, err := ms.Get(1, []byte(key))
		must(err)
		if len(got) != 1 || string(got[0].Row) != want {
			t.Fatalf("key %q: %v", key, got)
		}
	}
	got, err := b.Multiset("m").Get(2, []byte("a"))
	must(err)
	if len(got) != 0 {
		t.Fatalf("key group 2 sees %v", got)
	}
}

func BenchmarkMultisetAddGet(b *testing.B) {
	for _, tc := range []struct {
		name  string
		keys  int
		cache int64
	}{{"hot-10K", 10000, 64 << 20}, {"spill-1M-8MB", 1 << 20, 8 << 20}} {
		b.Run(tc.name, func(b *testing.B) {
			be, err := Open("/s", Options{FS: vfs.NewMem(), CacheBytes: tc.cache})
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close()
			ms := be.Multiset("m")
			r := rand.New(rand.NewPCG(1, 1))
			keys := make([][]byte, tc.keys)
			for i := range keys {
				keys[i] = []byte(fmt.Sprintf("key-%08d", i))
			}
			row := []byte("row-payload-0123456789")
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ki := r.IntN(len(keys))
				k, kg := keys[ki], ki%128
				if err := ms.Add(kg, k, row, 1); err != nil {
					b.Fatal(err)
				}
				if _, err := ms.Get(kg, k); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			s := be.Stats()
			b.ReportMetric(float64(s.Misses)/float64(s.Hits+s.Misses), "missratio")
		})
	}
}

// TestMultisetTTL: rows expire a TTL after their last write, whether they
// sit in the cache or were written to Pebble and read back.
func TestMultisetTTL(t *testing.T) {
	for _, cache := range []int64{256, 64 << 20} {
		fs := vfs.NewMem()
		b := openMem(t, fs, cache)
		clock := time.UnixMilli(1_000_000)
		now := func() time.Time { return clock }
		m := b.Multiset("rows")
		m.SetTTL(time.Hour, now)
		add := func(key, row string, d int64) {
			if err := m.Add(1, []byte(key), []byte(row), d); err != nil {
				t.Fatal(err)
			}
		}
		get := func(key string) []string {
			rows, err := m.Get(1, []byte(key))
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, r := range rows {
				out = append(out, fmt.Sprintf("%s*%d", r.Row, r.Count))
			}
			sort.Strings(out)
			return out
		}
		add("k", "a", 1)
		add("k", "b", 2)
		for i := 0; i < 50; i++ { // push k out of a tiny cache
			add(fmt.Sprint("other", i), "x", 1)
		}
		clock = clock.Add(40 * time.Minute)
		add("k", "b", 1) // a write refreshes b
		if got := get("k"); fmt.Sprint(got) != "[a*1 b*3]" {
			t.Fatalf("cache %d: before expiry %v", cache, got)
		}
		clock = clock.Add(30 * time.Minute) // a is 70 min old, b 30 min
		if got := get("k"); fmt.Sprint(got) != "[b*3]" {
			t.Fatalf("cache %d: after a expired %v", cache, got)
		}
		add("k", "a", -1) // retracting an expired row does nothing
		clock = clock.Add(time.Hour)
		if got := get("k"); len(got) != 0 {
			t.Fatalf("cache %d: after b expired %v", cache, got)
		}
		add("k", "a", 1)
		if got := get("k"); fmt.Sprint(got) != "[a*1]" {
			t.Fatalf("cache %d: expired row written again %v", cache, got)
		}
		if err := b.Flush(); err != nil {
			t.Fatal(err)
		}
		b.Close()
	}
}
