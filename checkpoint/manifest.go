package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"sort"
	"strconv"
)

// Manifest is a checkpoint's _metadata file: everything a restore needs,
// pointing at the state files in checkpoint storage.
type Manifest struct {
	JobID           string         `json:"job_id"`
	CheckpointID    int64          `json:"checkpoint_id"`
	Savepoint       bool           `json:"savepoint,omitempty"`
	TimestampUnixMs int64          `json:"timestamp_unix_ms"`
	MaxParallelism  int            `json:"max_parallelism"`
	Vertices        []VertexInfo   `json:"vertices"`
	Subtasks        []SubtaskState `json:"subtasks"`
}

// Dir returns the storage prefix, without a trailing slash, under which
// checkpoint id keeps its private files and its manifest: "chk-<id>" or,
// for a savepoint, "savepoint-<id>". Nothing else writes under it.
func Dir(id int64, savepoint bool) string {
	if savepoint {
		return "savepoint-" + strconv.FormatInt(id, 10)
	}
	return "chk-" + strconv.FormatInt(id, 10)
}

// ManifestKey returns the storage key of checkpoint id's manifest:
// Dir(id, savepoint) + "/_metadata".
func ManifestKey(id int64, savepoint bool) string { return Dir(id, savepoint) + "/_metadata" }

// Subtask returns the state of the given subtask, or nil if the manifest
// has none.
func (m *Manifest) Subtask(vertex, subtask int) *SubtaskState {
	for i := range m.Subtasks {
		if m.Subtasks[i].Vertex == vertex && m.Subtasks[i].Subtask == subtask {
			return &m.Subtasks[i]
		}
	}
	return nil
}

// Keys returns every storage key the manifest references, sorted and
// without duplicates. The manifest's own key is not among them.
func (m *Manifest) Keys() []string {
	seen := map[string]bool{}
	var keys []string
	for _, s := range m.Subtasks {
		for _, k := range s.Backend.Keys() {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// The manifest file is its JSON followed by a trailer line:
//
//	{...json...}
//	braid-manifest crc32c=<8 hex digits> size=<bytes of the JSON>
//
// The trailer comes last so that a truncated file has no valid trailer, and
// it repeats the size so that a trailer that happens to survive cannot
// vouch for a shorter body.
const trailerPrefix = "\nbraid-manifest crc32c="

// WriteManifest writes m under key, atomically, as JSON with a trailing
// checksum of the content so that ReadManifest detects truncation and
// corruption.
func WriteManifest(ctx context.Context, st *Storage, key string, m *Manifest) error {
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("checkpoint manifest %s: %v", st.Resolve(key), err)
	}
	var buf bytes.Buffer
	buf.Write(body)
	fmt.Fprintf(&buf, "%s%08x size=%d\n", trailerPrefix, crc32.Checksum(body, castagnoli), len(body))
	_, _, err = st.Put(ctx, key, &buf)
	return err
}

// maxManifestSize bounds what ReadManifest reads, so a wrong key pointing
// at a huge object fails instead of exhausting memory.
const maxManifestSize = 256 << 20

// ReadManifest reads and verifies the manifest under key. Errors name the
// file: "checkpoint manifest <uri>: checksum mismatch", "...: truncated".
func ReadManifest(ctx context.Context, st *Storage, key string) (*Manifest, error) {
	uri := st.Resolve(key)
	r, err := st.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, maxManifestSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxManifestSize {
		return nil, fmt.Errorf("checkpoint manifest %s: larger than %d bytes", uri, maxManifestSize)
	}
	i := bytes.LastIndex(data, []byte(trailerPrefix))
	if i < 0 {
		return nil, fmt.Errorf("checkpoint manifest %s: truncated (no checksum trailer)", uri)
	}
	body, trailer := data[:i], data[i+len(trailerPrefix):]
	var crc uint32
	var size int
	if n, err := fmt.Sscanf(string(trailer), "%08x size=%d\n", &crc, &size); n != 2 || err != nil || !bytes.HasSuffix(trailer, []byte("\n")) {
		return nil, fmt.Errorf("checkpoint manifest %s: truncated (incomplete checksum trailer)", uri)
	}
	if size != len(body) {
		return nil, fmt.Errorf("checkpoint manifest %s: truncated (%d of %d bytes)", uri, len(body), size)
	}
	if got := crc32.Checksum(body, castagnoli); got != crc {
		return nil, fmt.Errorf("checkpoint manifest %s: checksum mismatch (crc32c %08x, trailer says %08x)", uri, got, crc)
	}
	m := new(Manifest)
	if err := json.Unmarshal(body, m); err != nil {
		return nil, fmt.Errorf("checkpoint manifest %s: %v", uri, err)
	}
	return m, nil
}
