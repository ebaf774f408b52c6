package state

import (
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestMultisetCount: Count sees one row's occurrences, in the cache and
// after a reload from Pebble, with and without the key's index, and not
// once the row has expired.
func TestMultisetCount(t *testing.T) {
	for _, cache := range []int64{256, 64 << 20} {
		b := openMem(t, vfs.NewMem(), cache)
		clock := time.UnixMilli(1_000_000)
		m := b.Multiset("rows")
		m.SetTTL(time.Hour, func() time.Time { return clock })
		count := func(row string) int64 {
			n, err := m.Count(3, []byte("k"), []byte(row))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		for i := 0; i < 40; i++ { // more rows than indexThreshold
			if err := m.Add(3, []byte("k"), []byte(fmt.Sprint("r", i)), int64(i%3+1)); err != nil {
				t.Fatal(err)
			}
			if err := m.Add(3, []byte(fmt.Sprint("other", i)), []byte("x"), 1); err != nil {
				t.Fatal(err)
			}
		}
		if got := count("r4"); got != 2 {
			t.Fatalf("cache %d: r4 counted %d, want 2", cache, got)
		}
		if got := count("r99"); got != 0 {
			t.Fatalf("cache %d: a missing row counted %d", cache, got)
		}
		clock = clock.Add(61 * time.Minute)
		if got := count("r4"); got != 0 {
			t.Fatalf("cache %d: an expired row counted %d", cache, got)
		}
	}
}
