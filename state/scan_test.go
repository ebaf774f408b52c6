package state

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/braidflow/braid/types"
)

// fillRandom applies random multiset and value writes to b and o, over key
// groups kgs, flushing now and then so some state is in Pebble, some dirty
// in the cache and some in the victim buffer.
func fillRandom(t *testing.T, r *rand.Rand, b *Backend, o *oracle, kgs types.KeyGroupRange, names []string, ops int) {
	t.Helper()
	for i := 0; i < ops; i++ {
		kg := kgs.Start + r.IntN(kgs.End-kgs.Start+1)
		key := []byte(fmt.Sprintf("k%d", r.IntN(30)))
		switch op := r.IntN(10); {
		case op < 7:
			name := names[r.IntN(len(names))]
			row := []byte(fmt.Sprintf("row%d", r.IntN(6)))
			d := int64(r.IntN(5) - 2)
			if err := b.Multiset(name).Add(kg, key, row, d); err != nil {
				t.Fatal(err)
			}
			o.add(name, kg, key, row, d)
		case op < 9:
			v := fmt.Sprintf("v%d", r.IntN(100))
			if err := b.Value("val").Put(kg, key, []byte(v)); err != nil {
				t.Fatal(err)
			}
			if o.vals["val"] == nil {
				o.vals["val"] = map[string]string{}
			}
			o.vals["val"][okey(kg, key)] = v
		default:
			if err := b.Value("val").Delete(kg, key); err != nil {
				t.Fatal(err)
			}
			delete(o.vals["val"], okey(kg, key))
		}
		if r.IntN(500) == 0 {
			if err := b.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// checkScans compares every scan of b with the oracle's content within kgs.
func checkScans(t *testing.T, b *Backend, o *oracle, kgs types.KeyGroupRange, names []string) {
	t.Helper()
	inRange := func(ok string) bool {
		kg, _ := strconv.Atoi(ok[:strings.IndexByte(ok, '/')])
		return kgs.Contains(kg)
	}
	for _, name := range names {
		want := map[string]map[string]int64{}
		for k, rows := range o.multi[name] {
			if len(rows) > 0 && inRange(k) {
				want[k] = rows
			}
		}
		got := map[string]map[string]int64{}
		lastKG := -1
		err := b.Multiset(name).Scan(func(kg int, key []byte, rows []MultisetRow) error {
			if kg < lastKG {
				return fmt.Errorf("key group %d after %d", kg, lastKG)
			}
			lastKG = kg
			k := okey(kg, key)
			if got[k] != nil {
				return fmt.Errorf("key %s visited twice", k)
			}
			got[k] = map[string]int64{}
			for _, r := range rows {
				got[k][string(r.Row)] = r.Count
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: Scan gave\n%v\nwant\n%v", name, got, want)
		}
		keys := map[string]bool{}
		if err := b.Multiset(name).ScanKeys(func(kg int, key []byte) error {
			keys[okey(kg, key)] = true
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(keys) != len(want) {
			t.Fatalf("%s: ScanKeys visited %d keys, want %d", name, len(keys), len(want))
		}
		for k := range want {
			if !keys[k] {
				t.Fatalf("%s: ScanKeys missed %s", name, k)
			}
		}
	}
	want := map[string]string{}
	for k, v := range o.vals["val"] {
		if inRange(k) {
			want[k] = v
		}
	}
	got := map[string]string{}
	if err := b.Value("val").Scan(func(kg int, key, v []byte) error {
		got[okey(kg, key)] = string(v)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("value Scan gave\n%v\nwant\n%v", got, want)
	}
}

// TestScanSeesCacheAndPebble scans after random writes with a tiny and a
// large cache: dirty cached entries, evicted ones and flushed ones alike.
func TestScanSeesCacheAndPebble(t *testing.T) {
	names := []string{"a", "b"}
	for _, cacheBytes := range []int64{1024, 64 << 20} {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("cache%d/seed%d", cacheBytes, seed), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, 7))
				b := openMem(t, vfs.NewMem(), cacheBytes)
				defer b.Close()
				o := newOracle()
				all := types.KeyGroupRange{Start: 0, End: 15}
				fillRandom(t, r, b, o, all, names, 3000)
				checkScans(t, b, o, all, names)
				// Writes after a scan are seen by the next one.
				fillRandom(t, r, b, o, all, names, 500)
				checkScans(t, b, o, all, names)
			})
		}
	}
}

func TestScanStopsAtError(t *testing.T) {
	b := openMem(t, vfs.NewMem(), 0)
	defer b.Close()
	for kg := 0; kg < 4; kg++ {
		if err := b.Multiset("m").Add(kg, []byte("k"), []byte("r"), 1); err != nil {
			t.Fatal(err)
		}
	}
	calls := 0
	stop := fmt.Errorf("stop")
	err := b.Multiset("m").ScanKeys(func(int, []byte) error { calls++; return stop })
	if err != stop || calls != 1 {
		t.Fatalf("ScanKeys: %v after %d calls, want stop after 1", err, calls)
	}
}

// TestRestoreRanges checkpoints two subtasks of 16 key groups (whose state
// ids differ: they created their states in another order) and restores
// them at parallelism 1 and 3.
func TestRestoreRanges(t *testing.T) {
	const maxPar = 16
	dir := t.TempDir()
	o := newOracle()
	r := rand.New(rand.NewPCG(5, 5))
	var ckpts []string
	for i, names := range [][]string{{"a", "b"}, {"b", "a"}} {
		kgs := types.KeyGroupRangeFor(i, 2, maxPar)
		b, err := Open(filepath.Join(dir, fmt.Sprint("old", i)), Options{CacheBytes: 4096, KeyGroups: kgs, MaxParallelism: maxPar})
		if err != nil {
			t.Fatal(err)
		}
		b.Multiset(names[0])
		b.Multiset(names[1])
		fillRandom(t, r, b, o, kgs, names, 2000)
		ck := filepath.Join(dir, fmt.Sprint("ckpt", i))
		if err := b.Checkpoint(ck); err != nil {
			t.Fatal(err)
		}
		// Written after the checkpoint: not restored.
		if err := b.Value("val").Put(kgs.Start, []byte("late"), []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		ckpts = append(ckpts, ck)
	}
	for _, par := range []int{1, 3} {
		for i := 0; i < par; i++ {
			kgs := types.KeyGroupRangeFor(i, par, maxPar)
			dst := filepath.Join(dir, fmt.Sprintf("new%d-%d", par, i))
			opts := Options{KeyGroups: kgs, MaxParallelism: maxPar}
			if err := RestoreRanges(dst, ckpts, kgs, opts); err != nil {
				t.Fatal(err)
			}
			b, err := Open(dst, opts)
			if err != nil {
				t.Fatal(err)
			}
			checkScans(t, b, o, kgs, []string{"a", "b"})
			// Clipped: nothing of another range is in Pebble.
			n := 0
			it, err := b.db.NewIter(nil)
			if err != nil {
				t.Fatal(err)
			}
			for ok := it.First(); ok; ok = it.Next() {
				if kg := int(it.Key()[0])<<8 | int(it.Key()[1]); kg != metaGroup && !kgs.Contains(kg) {
					n++
				}
			}
			it.Close()
			if n > 0 {
				t.Fatalf("parallelism %d subtask %d: %d entries outside %v", par, i, n, kgs)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if err := RestoreRanges(dst, ckpts, kgs, opts); err == nil {
				t.Fatal("RestoreRanges into a backend that holds state succeeded")
			}
		}
	}
}
