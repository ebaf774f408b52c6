package operators

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/braidflow/braid/state"
)

// bucketTimers is the timer index of a watermark-driven operator: entries
// (opaque bytes, such as a key group and key) are filed under the start of
// a fixed-width time bucket in a multiset state, so firing a bucket never
// scans all keys. In memory there is only an index of that state: the
// starts of pending buckets in a min-heap and, per bucket, the key groups
// that have entries in it.
//
// Each entry is filed under the key group of the key it belongs to (the
// state key is (kg, bucket)), so the timers move with their keys when a job
// is restored at another parallelism, and restore rebuilds the in-memory
// index from the state of the subtask's key groups: nothing is snapshotted.
type bucketTimers struct {
	state  *state.MultisetState
	width  int64
	starts bucketHeap
	queued map[int64]map[int]struct{} // bucket -> key groups with entries
	buf    []byte
}

func newBucketTimers(st *state.MultisetState, widthMs int64) *bucketTimers {
	return &bucketTimers{state: st, width: widthMs, queued: map[int64]map[int]struct{}{}}
}

// restore rebuilds the in-memory index from the timer state, as a resumed
// subtask finds it (a fresh one finds none). It is called at Open.
func (t *bucketTimers) restore() error {
	return t.state.ScanKeys(func(kg int, key []byte) error {
		if len(key) != 8 {
			return fmt.Errorf("operators: timer state holds a bad bucket key %x", key)
		}
		t.queue(kg, int64(binary.BigEndian.Uint64(key)))
		return nil
	})
}

// bucketOf is the start of the bucket holding time t.
func (t *bucketTimers) bucketOf(ts int64) int64 {
	b := ts / t.width
	if ts%t.width < 0 {
		b--
	}
	return b * t.width
}

// add files entry under bucket in key group kg, the key group of the key
// the entry is about.
func (t *bucketTimers) add(kg int, bucket int64, entry []byte) error {
	t.buf = binary.BigEndian.AppendUint64(t.buf[:0], uint64(bucket))
	if err := t.state.Add(kg, t.buf, entry, 1); err != nil {
		return err
	}
	t.queue(kg, bucket)
	return nil
}

func (t *bucketTimers) queue(kg int, bucket int64) {
	kgs := t.queued[bucket]
	if kgs == nil {
		kgs = map[int]struct{}{}
		t.queued[bucket] = kgs
		heap.Push(&t.starts, bucket)
	}
	kgs[kg] = struct{}{}
}

// next pops the earliest pending bucket that starts at or before limit,
// with the key groups that have entries in it, ascending. An entry added
// to the bucket after next queues it again.
func (t *bucketTimers) next(limit int64) (int64, []int, bool) {
	if len(t.starts) == 0 || t.starts[0] > limit {
		return 0, nil, false
	}
	bucket := heap.Pop(&t.starts).(int64)
	kgs := make([]int, 0, len(t.queued[bucket]))
	for kg := range t.queued[bucket] {
		kgs = append(kgs, kg)
	}
	sort.Ints(kgs)
	delete(t.queued, bucket)
	return bucket, kgs, true
}

// take removes and returns the entries of bucket in key groups kgs, in
// key-group order; the returned rows are the caller's.
func (t *bucketTimers) take(bucket int64, kgs []int) ([]state.MultisetRow, error) {
	key := binary.BigEndian.AppendUint64(nil, uint64(bucket))
	var entries []state.MultisetRow
	for _, kg := range kgs {
		rows, err := t.state.Get(kg, key)
		if err != nil {
			return nil, err
		}
		first := len(entries)
		for _, r := range rows {
			entries = append(entries, state.MultisetRow{Row: append([]byte(nil), r.Row...), Count: r.Count})
		}
		for _, e := range entries[first:] {
			if err := t.state.Add(kg, key, e.Row, -e.Count); err != nil {
				return nil, err
			}
		}
	}
	return entries, nil
}

// bucketHeap is a min-heap of bucket start times.
type bucketHeap []int64

func (h bucketHeap) Len() int           { return len(h) }
func (h bucketHeap) Less(a, b int) bool { return h[a] < h[b] }
func (h bucketHeap) Swap(a, b int)      { h[a], h[b] = h[b], h[a] }
func (h *bucketHeap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *bucketHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
