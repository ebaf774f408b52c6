package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"io/fs"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// startS3 runs an in-memory S3-compatible server on loopback with one
// bucket and returns the s3:// URI of prefix in it.
func startS3(t *testing.T, bucket, prefix string) string {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	q := url.Values{}
	q.Set("endpoint", srv.URL)
	q.Set("region", "us-east-1")
	q.Set("use_path_style", "true")
	q.Set("access_key_id", "test")
	q.Set("secret_access_key", "test-secret")
	return "s3://" + bucket + "/" + prefix + "?" + q.Encode()
}

// storages returns a local and an S3 storage for table-driven tests.
func storages(t *testing.T) map[string]*Storage {
	t.Helper()
	ctx := context.Background()
	out := map[string]*Storage{}
	local, err := OpenStorage(ctx, filepath.Join(t.TempDir(), "ckpt", "nested"))
	if err != nil {
		t.Fatal(err)
	}
	out["file"] = local
	s3st, err := OpenStorage(ctx, startS3(t, "braid", "jobs/j1"))
	if err != nil {
		t.Fatal(err)
	}
	out["s3"] = s3st
	for _, s := range out {
		t.Cleanup(func() { s.Close() })
	}
	return out
}

func TestStorageRoundTrip(t *testing.T) {
	ctx := context.Background()
	for name, st := range storages(t) {
		t.Run(name, func(t *testing.T) {
			data := bytes.Repeat([]byte("braid checkpoint "), 1000)
			size, crc, err := st.Put(ctx, "chk-3/_metadata", bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if size != int64(len(data)) || crc != crc32.Checksum(data, castagnoli) {
				t.Fatalf("Put = %d, %08x; want %d, %08x", size, crc, len(data), crc32.Checksum(data, castagnoli))
			}
			for _, k := range []string{"shared/a.sst", "shared/b.sst", "chk-4/_metadata"} {
				if _, _, err := st.Put(ctx, k, strings.NewReader(k)); err != nil {
					t.Fatal(err)
				}
			}
			r, err := st.Get(ctx, "chk-3/_metadata")
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			r.Close()
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("Get: %v, %d bytes", err, len(got))
			}
			keys, err := st.List(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"chk-3/_metadata", "chk-4/_metadata", "shared/a.sst", "shared/b.sst"}
			if !reflect.DeepEqual(keys, want) {
				t.Fatalf("List = %q, want %q", keys, want)
			}
			if keys, _ := st.List(ctx, "shared/"); len(keys) != 2 {
				t.Fatalf("List(shared/) = %q", keys)
			}
			if err := st.Delete(ctx, "shared/a.sst"); err != nil {
				t.Fatal(err)
			}
			if err := st.Delete(ctx, "shared/a.sst"); err != nil {
				t.Fatalf("second Delete: %v", err)
			}
			_, err = st.Get(ctx, "shared/a.sst")
			if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "shared/a.sst") ||
				!strings.Contains(err.Error(), "checkpoint storage "+st.URI()) {
				t.Fatalf("Get of a deleted key: %v", err)
			}
			var se *StorageError
			if !errors.As(err, &se) || se.Class().String() != "ERROR_CLASS_EXTERNAL" {
				t.Fatalf("error %v is not an external StorageError", err)
			}
			if _, _, err := st.Put(ctx, "../escape", strings.NewReader("x")); err == nil {
				t.Fatal("Put accepted a key with ..")
			}
		})
	}
}

// failingReader yields some bytes and then fails, like a local file that
// vanishes mid-upload.
type failingReader struct{ n int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errors.New("disk gone")
	}
	n := min(len(p), f.n)
	f.n -= n
	return n, nil
}

func TestStoragePutIsAtomic(t *testing.T) {
	ctx := context.Background()
	for name, st := range storages(t) {
		t.Run(name, func(t *testing.T) {
			if _, _, err := st.Put(ctx, "k", strings.NewReader("old")); err != nil {
				t.Fatal(err)
			}
			if _, _, err := st.Put(ctx, "k", &failingReader{n: 100 << 10}); err == nil {
				t.Fatal("Put of a failing reader succeeded")
			}
			if _, _, err := st.Put(ctx, "new", &failingReader{n: 10}); err == nil {
				t.Fatal("Put of a failing reader succeeded")
			}
			r, err := st.Get(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(r)
			r.Close()
			if string(got) != "old" {
				t.Fatalf("after a failed Put, k = %q", got)
			}
			keys, err := st.List(ctx, "")
			if err != nil || !reflect.DeepEqual(keys, []string{"k"}) {
				t.Fatalf("List = %q, %v; want only k", keys, err)
			}
		})
	}
}

func TestStorageURIs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := OpenStorage(ctx, "file://"+dir+"/x/")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.URI() != "file://"+dir+"/x" {
		t.Fatalf("URI = %q", st.URI())
	}
	if _, _, err := st.Put(ctx, "chk-1/_metadata", strings.NewReader("m")); err != nil {
		t.Fatal(err)
	}
	abs := st.Resolve("chk-1/_metadata")
	base, key, err := Split(abs)
	if err != nil || base != st.URI() || key != "chk-1/_metadata" {
		t.Fatalf("Split(%q) = %q, %q, %v", abs, base, key, err)
	}
	st2, err := OpenStorage(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if r, err := st2.Get(ctx, key); err != nil {
		t.Fatal(err)
	} else {
		r.Close()
	}

	s3uri := startS3(t, "bkt", "a/b")
	s3st, err := OpenStorage(ctx, s3uri)
	if err != nil {
		t.Fatal(err)
	}
	defer s3st.Close()
	if strings.Contains(s3st.URI(), "secret") || !strings.HasPrefix(s3st.URI(), "s3://bkt/a/b?") {
		t.Fatalf("S3 URI = %q", s3st.URI())
	}
	if _, _, err := s3st.Put(ctx, "chk-1/_metadata", strings.NewReader("m")); err != nil {
		t.Fatal(err)
	}
	// Credentials for a resolved URI come from the environment.
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
	base, key, err = Split(s3st.Resolve("chk-1/_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	s3st2, err := OpenStorage(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer s3st2.Close()
	r, err := s3st2.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()

	for _, bad := range []string{"relative/dir", "gs://b/p", "s3://b/p?bogus=1", "s3:///p"} {
		if _, err := OpenStorage(ctx, bad); err == nil {
			t.Errorf("OpenStorage(%q) succeeded", bad)
		}
	}
	for _, bad := range []string{"file:///x", "file:///x#", "file:///x#../y"} {
		if _, _, err := Split(bad); err == nil {
			t.Errorf("Split(%q) succeeded", bad)
		}
	}
}

// TestLocalDeleteRemovesEmptyDirs checks that deleting the last file of a
// local directory removes the directory (and its empty parents), and
// leaves a directory that still holds files.
func TestLocalDeleteRemovesEmptyDirs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := OpenStorage(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, k := range []string{"chk-1/0-0/MANIFEST-1", "chk-1/_metadata", "chk-2/_metadata"} {
		if _, _, err := st.Put(ctx, k, strings.NewReader(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Delete(ctx, "chk-1/0-0/MANIFEST-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "chk-1", "0-0")); !os.IsNotExist(err) {
		t.Fatalf("empty chk-1/0-0 still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "chk-1")); err != nil {
		t.Fatalf("chk-1 still holds _metadata but is gone: %v", err)
	}
	if err := st.Delete(ctx, "chk-1/_metadata"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "chk-1")); !os.IsNotExist(err) {
		t.Fatalf("empty chk-1 still there: %v", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the storage's own directory is gone: %v", err)
	}
}
