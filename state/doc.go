// Package state is Braid's keyed state: one Pebble instance per stateful
// subtask, with a bounded write-back cache in Go memory in front of it.
//
// Every key lives in a key group, computed by the caller from the key's hash
// (types.HashColumns, types.KeyGroupForHash). Pebble keys are laid out as
//
//	[key group: 2 bytes BE][state id: 2 bytes BE][uvarint len(key)][key][user key]
//
// so a subtask's state can be clipped to a key-group range by range scans and
// every entry of one key is one contiguous prefix. State ids are allocated by
// name and recorded under a reserved metadata prefix (0xffff), so a reopened
// instance maps the same names to the same ids.
//
// Reads and writes go to the cache; a miss loads the key (for a multiset, all
// of its rows) from Pebble. Entries are evicted with the CLOCK algorithm once
// the cache exceeds its budget; dirty evicted entries wait in a small victim
// buffer that is written to Pebble in one batch when it fills. Flush writes
// every dirty entry and makes Pebble durable (its WAL is off: a subtask
// restores from a checkpoint after a crash, never from its local directory).
//
// Restore and rescale. Checkpoint makes a Pebble checkpoint of the state;
// Open on it resumes at the same parallelism. RestoreRanges builds the
// state of a subtask of another parallelism from the old subtasks'
// checkpoints: it copies exactly the entries of the new key-group range,
// remapping state ids by name. Operators that hold an index of their state
// in memory (pending timers, windows in flight) rebuild it at Open with
// MultisetState.Scan/ScanKeys or ValueState.Scan, which visit every key of
// a state in the backend's key-group range.
//
// A Backend is used by one goroutine (the subtask's); nothing in it is safe
// for concurrent use.
//
//	be, err := state.Open(dir, state.Options{CacheBytes: 64 << 20, MaxParallelism: 128})
//	if err != nil { ... }
//	rows := be.Multiset("left")
//	_ = rows.Add(kg, key, row, +1)
//	matches, _ := rows.Get(kg, key)
//	_ = be.Flush() // at a checkpoint barrier
//	_ = be.Close()
package state
