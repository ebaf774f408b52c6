package checkpoint

import "strconv"

// FileRef is one file of a subtask's state backend in checkpoint storage.
type FileRef struct {
	// Name is the file's name in the local Pebble checkpoint directory,
	// e.g. "000012.sst", "MANIFEST-000001", "OPTIONS-000003",
	// "marker.format-version.000001.001".
	Name   string `json:"name"`
	Key    string `json:"key"` // its storage key
	Size   int64  `json:"size"`
	CRC32C uint32 `json:"crc32c"` // CRC-32C (Castagnoli) of the content
}

// BackendHandle is a subtask's Pebble checkpoint as it sits in checkpoint
// storage: every file of the directory, in name order.
type BackendHandle struct {
	Files []FileRef `json:"files"`
}

// Keys returns the storage keys of h's files, in h's order.
func (h *BackendHandle) Keys() []string {
	if h == nil {
		return nil
	}
	keys := make([]string, len(h.Files))
	for i, f := range h.Files {
		keys[i] = f.Key
	}
	return keys
}

// Size returns the total size of h's files.
func (h *BackendHandle) Size() int64 {
	var n int64
	if h != nil {
		for _, f := range h.Files {
			n += f.Size
		}
	}
	return n
}

// TaskID names a subtask: a vertex of the job graph and the subtask's index
// in it.
type TaskID struct{ Vertex, Subtask int }

func (t TaskID) String() string { return strconv.Itoa(t.Vertex) + "/" + strconv.Itoa(t.Subtask) }

// SubtaskState is one subtask's part of a checkpoint: what it acknowledges
// to the coordinator and what the manifest records for its restore.
type SubtaskState struct {
	Vertex  int `json:"vertex"`
	Subtask int `json:"subtask"`
	// Operators maps an operator's uid to what its SnapshotState returned.
	Operators map[string][]byte `json:"operators,omitempty"`
	// Backend is nil for a subtask without keyed state.
	Backend *BackendHandle `json:"backend,omitempty"`
}

// Task returns the subtask s belongs to.
func (s *SubtaskState) Task() TaskID { return TaskID{Vertex: s.Vertex, Subtask: s.Subtask} }

// VertexInfo describes a vertex of the job graph as it was checkpointed, so
// a restore can tell a rescale (another parallelism) from a changed job
// (other operator uids).
type VertexInfo struct {
	ID           int      `json:"id"`
	Parallelism  int      `json:"parallelism"`
	OperatorUIDs []string `json:"operator_uids"`
	// OperatorNames are the operators' names, in chain order, for errors.
	OperatorNames []string `json:"operator_names,omitempty"`
}
