package checkpoint

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"strings"
	"testing"
)

func testManifest() *Manifest {
	return &Manifest{
		JobID:           "job-1",
		CheckpointID:    7,
		TimestampUnixMs: 1700000000000,
		MaxParallelism:  128,
		Vertices: []VertexInfo{
			{ID: 0, Parallelism: 2, OperatorUIDs: []string{"src"}},
			{ID: 1, Parallelism: 1, OperatorUIDs: []string{"agg", "sink"}},
		},
		Subtasks: []SubtaskState{
			{Vertex: 0, Subtask: 0, Operators: map[string][]byte{"src": []byte("offset=10")}},
			{Vertex: 0, Subtask: 1, Operators: map[string][]byte{"src": []byte("offset=12")}},
			{Vertex: 1, Subtask: 0, Operators: map[string][]byte{"agg": {1, 2}}, Backend: &BackendHandle{Files: []FileRef{
				{Name: "000004.sst", Key: "shared/t-1-000004.sst", Size: 100, CRC32C: 1},
				{Name: "MANIFEST-000001", Key: "chk-7/1-0/MANIFEST-000001", Size: 10, CRC32C: 2},
			}}},
		},
	}
}

func TestManifestRoundTrip(t *testing.T) {
	ctx := context.Background()
	for name, st := range storages(t) {
		t.Run(name, func(t *testing.T) {
			m := testManifest()
			key := ManifestKey(m.CheckpointID, false)
			if key != "chk-7/_metadata" || ManifestKey(3, true) != "savepoint-3/_metadata" {
				t.Fatalf("ManifestKey = %q", key)
			}
			if err := WriteManifest(ctx, st, key, m); err != nil {
				t.Fatal(err)
			}
			got, err := ReadManifest(ctx, st, key)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, m) {
				t.Fatalf("read back %+v, want %+v", got, m)
			}
			if s := got.Subtask(1, 0); s == nil || s.Backend == nil {
				t.Fatal("Subtask(1, 0) = nil")
			}
			if got.Subtask(1, 1) != nil {
				t.Fatal("Subtask(1, 1) != nil")
			}
			want := []string{"chk-7/1-0/MANIFEST-000001", "shared/t-1-000004.sst"}
			if !reflect.DeepEqual(got.Keys(), want) {
				t.Fatalf("Keys = %q, want %q", got.Keys(), want)
			}
		})
	}
}

func TestManifestDetectsDamage(t *testing.T) {
	ctx := context.Background()
	st := storages(t)["file"]
	if err := WriteManifest(ctx, st, "good", testManifest()); err != nil {
		t.Fatal(err)
	}
	r, err := st.Get(ctx, "good")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(r)
	r.Close()
	trailer := bytes.LastIndexByte(data[:len(data)-1], '\n')

	flipped := bytes.Clone(data)
	flipped[10] ^= 0x01
	cases := map[string]struct {
		data []byte
		want string
	}{
		"flipped":       {flipped, "checksum mismatch"},
		"no-trailer":    {data[:trailer], "truncated"},
		"half-trailer":  {data[:len(data)-5], "truncated"},
		"half-body":     {data[:len(data)/2], "truncated"},
		"empty":         {nil, "truncated"},
		"body-cut-keep": {append(bytes.Clone(data[:20]), data[trailer:]...), "truncated"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if _, _, err := st.Put(ctx, name, bytes.NewReader(c.data)); err != nil {
				t.Fatal(err)
			}
			_, err := ReadManifest(ctx, st, name)
			if err == nil {
				t.Fatal("ReadManifest accepted a damaged manifest")
			}
			if !strings.Contains(err.Error(), "checkpoint manifest "+st.Resolve(name)+": "+c.want) {
				t.Fatalf("error %q does not name the file and %q", err, c.want)
			}
		})
	}
	if _, err := ReadManifest(ctx, st, "missing"); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("ReadManifest(missing) = %v", err)
	}
}
