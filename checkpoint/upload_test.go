package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

func key(i int) []byte   { return []byte(fmt.Sprintf("key-%06d", i)) }
func value(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 100) }

// writeAndCheckpoint writes keys [from, to), flushes them into an SST and
// makes a Pebble checkpoint in dir.
func writeAndCheckpoint(t *testing.T, db *pebble.DB, from, to int, dir string) {
	t.Helper()
	b := db.NewBatch()
	for i := from; i < to; i++ {
		if err := b.Set(key(i), value(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Checkpoint(dir); err != nil {
		t.Fatal(err)
	}
}

func checkKeys(t *testing.T, dir string, n int) {
	t.Helper()
	db, err := pebble.Open(dir, &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := 0; i < n; i++ {
		v, closer, err := db.Get(key(i))
		if err != nil {
			t.Fatalf("restored db: get %s: %v", key(i), err)
		}
		if !bytes.Equal(v, value(i)) {
			t.Fatalf("restored db: %s = %x", key(i), v)
		}
		closer.Close()
	}
}

func TestIncrementalUploadAndRestore(t *testing.T) {
	ctx := context.Background()
	for name, st := range storages(t) {
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			db, err := pebble.Open(filepath.Join(tmp, "db"), &pebble.Options{DisableAutomaticCompactions: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			u := NewUploader(st, "shared/1-0")

			writeAndCheckpoint(t, db, 0, 1000, filepath.Join(tmp, "c1"))
			h1, up1, err := u.Upload(ctx, filepath.Join(tmp, "c1"), Dir(1, false)+"/1-0")
			if err != nil {
				t.Fatal(err)
			}
			if up1 != h1.Size() {
				t.Fatalf("first upload: %d bytes uploaded of %d", up1, h1.Size())
			}
			u.Seed(h1) // checkpoint 1 completed

			writeAndCheckpoint(t, db, 1000, 1100, filepath.Join(tmp, "c2"))
			h2, up2, err := u.Upload(ctx, filepath.Join(tmp, "c2"), Dir(2, false)+"/1-0")
			if err != nil {
				t.Fatal(err)
			}
			if up2 >= h2.Size() {
				t.Fatalf("second upload: %d bytes uploaded of %d; nothing reused", up2, h2.Size())
			}
			reused := 0
			for _, f := range h2.Files {
				for _, g := range h1.Files {
					if f == g {
						if !strings.HasSuffix(f.Name, ".sst") || !strings.HasPrefix(f.Key, "shared/1-0/") {
							t.Fatalf("reused a non-shared file %+v", f)
						}
						reused++
					}
				}
				if !strings.HasSuffix(f.Name, ".sst") && !strings.HasPrefix(f.Key, "chk-2/1-0/") {
					t.Fatalf("private file %+v not under chk-2/1-0/", f)
				}
			}
			if reused == 0 {
				t.Fatal("no file of checkpoint 1 reused")
			}

			restored := filepath.Join(tmp, "restored")
			if err := Download(ctx, st, h2, restored); err != nil {
				t.Fatal(err)
			}
			checkKeys(t, restored, 1100)

			// A restored subtask seeded with h2 uploads no SST again.
			u2 := NewUploader(st, "shared/1-0")
			u2.Seed(h2)
			h3, up3, err := u2.Upload(ctx, filepath.Join(tmp, "c2"), Dir(3, false)+"/1-0")
			if err != nil {
				t.Fatal(err)
			}
			var private int64
			for _, f := range h3.Files {
				if !strings.HasSuffix(f.Name, ".sst") {
					private += f.Size
				}
			}
			if up3 != private {
				t.Fatalf("seeded upload: %d bytes uploaded, want only the %d private bytes", up3, private)
			}

			// A savepoint is self-contained.
			sp := NewUploader(st, "shared/1-0")
			sp.Full = true
			sp.Seed(h2)
			h4, up4, err := sp.Upload(ctx, filepath.Join(tmp, "c2"), Dir(4, true)+"/1-0")
			if err != nil {
				t.Fatal(err)
			}
			if up4 != h4.Size() {
				t.Fatalf("full upload: %d of %d bytes", up4, h4.Size())
			}
			for _, f := range h4.Files {
				if !strings.HasPrefix(f.Key, "savepoint-4/1-0/") {
					t.Fatalf("savepoint file %+v outside the savepoint", f)
				}
			}
		})
	}
}

func TestUnconfirmedSSTsAreNotReused(t *testing.T) {
	ctx := context.Background()
	st := storages(t)["file"]
	tmp := t.TempDir()
	db, err := pebble.Open(filepath.Join(tmp, "db"), &pebble.Options{DisableAutomaticCompactions: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	u := NewUploader(st, "shared")
	writeAndCheckpoint(t, db, 0, 100, filepath.Join(tmp, "c1"))
	h1, _, err := u.Upload(ctx, filepath.Join(tmp, "c1"), "chk-1/x")
	if err != nil {
		t.Fatal(err)
	}
	// Checkpoint 1 was never confirmed (say it was aborted and its files
	// deleted): its SSTs go up again, under new keys.
	h2, up2, err := u.Upload(ctx, filepath.Join(tmp, "c1"), "chk-2/x")
	if err != nil {
		t.Fatal(err)
	}
	if up2 != h2.Size() {
		t.Fatalf("uploaded %d of %d bytes", up2, h2.Size())
	}
	for i := range h1.Files {
		if h1.Files[i].Key == h2.Files[i].Key {
			t.Fatalf("key %s written twice", h1.Files[i].Key)
		}
	}
}

// damage rewrites the stored object of key through f.
func damage(t *testing.T, st *Storage, key string, f func([]byte) []byte) {
	t.Helper()
	ctx := context.Background()
	r, err := st.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Put(ctx, key, bytes.NewReader(f(data))); err != nil {
		t.Fatal(err)
	}
}

func TestDownloadVerifies(t *testing.T) {
	ctx := context.Background()
	for name, st := range storages(t) {
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			db, err := pebble.Open(filepath.Join(tmp, "db"), &pebble.Options{})
			if err != nil {
				t.Fatal(err)
			}
			writeAndCheckpoint(t, db, 0, 500, filepath.Join(tmp, "c1"))
			db.Close()
			h, _, err := NewUploader(st, "shared").Upload(ctx, filepath.Join(tmp, "c1"), "chk-1/0-0")
			if err != nil {
				t.Fatal(err)
			}
			var sst FileRef
			for _, f := range h.Files {
				if strings.HasSuffix(f.Name, ".sst") {
					sst = f
				}
			}
			orig := func() []byte {
				r, _ := st.Get(ctx, sst.Key)
				defer r.Close()
				b, _ := io.ReadAll(r)
				return b
			}()
			cases := []struct {
				name string
				f    func([]byte) []byte
				want string
			}{
				{"flip", func(b []byte) []byte { b = bytes.Clone(b); b[len(b)/2] ^= 0x40; return b }, "checksum mismatch"},
				{"truncate", func(b []byte) []byte { return b[:len(b)-7] }, "truncated"},
				{"extend", func(b []byte) []byte { return append(bytes.Clone(b), 0) }, "longer"},
				{"delete", nil, "file does not exist"},
			}
			for i, c := range cases {
				if c.f == nil {
					if err := st.Delete(ctx, sst.Key); err != nil {
						t.Fatal(err)
					}
				} else {
					damage(t, st, sst.Key, func([]byte) []byte { return c.f(orig) })
				}
				dir := filepath.Join(tmp, fmt.Sprintf("restore-%d", i))
				err := Download(ctx, st, h, dir)
				if err == nil {
					t.Fatalf("%s: Download succeeded", c.name)
				}
				for _, want := range []string{sst.Name, st.Resolve(sst.Key), c.want} {
					if !strings.Contains(err.Error(), want) {
						t.Fatalf("%s: error %q does not mention %q", c.name, err, want)
					}
				}
				if _, err := os.Stat(filepath.Join(dir, sst.Name)); !os.IsNotExist(err) {
					t.Fatalf("%s: damaged file left under its name (%v)", c.name, err)
				}
				left, _ := filepath.Glob(filepath.Join(dir, "*.partial"))
				if len(left) > 0 {
					t.Fatalf("%s: partial files left: %q", c.name, left)
				}
			}
		})
	}
}

func TestDownloadRefusesUnsafeNames(t *testing.T) {
	st := storages(t)["file"]
	for _, name := range []string{"../evil", "a/b", "..", ""} {
		h := &BackendHandle{Files: []FileRef{{Name: name, Key: "k"}}}
		if err := Download(context.Background(), st, h, t.TempDir()); err == nil || !strings.Contains(err.Error(), "invalid name") {
			t.Errorf("Download of name %q: %v", name, err)
		}
	}
}
