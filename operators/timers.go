package operators

import (
	"container/heap"
	"encoding/binary"

	"github.com/braidflow/braid/state"
)

// bucketTimers is the timer index of a watermark-driven operator: entries
// (opaque bytes, such as a key group and key) are filed under the start of
// a fixed-width time bucket in a multiset state, so firing a bucket never
// scans all keys; only the starts of pending buckets are held in memory, in
// a min-heap.
//
// NB: timers are per subtask, not per key: they live in the subtask's first
// key group. The heap is not in state: Braid has no checkpoints yet, so
// state is never restored; when it is, the heap must be rebuilt from the
// timer state.
type bucketTimers struct {
	state  *state.MultisetState
	kg     int
	width  int64
	starts bucketHeap
	queued map[int64]bool
	buf    []byte
}

func newBucketTimers(st *state.MultisetState, kg int, widthMs int64) *bucketTimers {
	return &bucketTimers{state: st, kg: kg, width: widthMs, queued: map[int64]bool{}}
}

// bucketOf is the start of the bucket holding time t.
func (t *bucketTimers) bucketOf(ts int64) int64 {
	b := ts / t.width
	if ts%t.width < 0 {
		b--
	}
	return b * t.width
}

// add files entry under bucket.
func (t *bucketTimers) add(bucket int64, entry []byte) error {
	t.buf = binary.BigEndian.AppendUint64(t.buf[:0], uint64(bucket))
	if err := t.state.Add(t.kg, t.buf, entry, 1); err != nil {
		return err
	}
	if !t.queued[bucket] {
		t.queued[bucket] = true
		heap.Push(&t.starts, bucket)
	}
	return nil
}

// next pops the earliest pending bucket that starts at or before limit.
func (t *bucketTimers) next(limit int64) (int64, bool) {
	if len(t.starts) == 0 || t.starts[0] > limit {
		return 0, false
	}
	bucket := heap.Pop(&t.starts).(int64)
	delete(t.queued, bucket)
	return bucket, true
}

// take removes and returns the entries of bucket; the returned rows are the
// caller's.
func (t *bucketTimers) take(bucket int64) ([]state.MultisetRow, error) {
	key := binary.BigEndian.AppendUint64(nil, uint64(bucket))
	rows, err := t.state.Get(t.kg, key)
	if err != nil {
		return nil, err
	}
	entries := make([]state.MultisetRow, len(rows))
	for i, r := range rows {
		entries[i] = state.MultisetRow{Row: append([]byte(nil), r.Row...), Count: r.Count}
	}
	for _, e := range entries {
		if err := t.state.Add(t.kg, key, e.Row, -e.Count); err != nil {
			return nil, err
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
