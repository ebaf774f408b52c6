package shuffle

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/braidflow/braid/types"
)

// Targets returns the subtasks of the target vertex that source subtask
// `source` sends to over an edge with partitioning p. FORWARD connects
// subtask i to subtask i mod targetParallelism, SINGLE connects every source
// to subtask 0, and the other kinds connect every source to every target.
func Targets(p types.Partitioning, source, targetParallelism int) []int {
	switch p {
	case types.PartitionForward:
		return []int{source % targetParallelism}
	case types.PartitionSingle:
		return []int{0}
	}
	out := make([]int, targetParallelism)
	for i := range out {
		out[i] = i
	}
	return out
}

// Sources returns the subtasks of the source vertex that send to subtask
// `target` over an edge with partitioning p: the inverse of Targets.
func Sources(p types.Partitioning, target, sourceParallelism, targetParallelism int) []int {
	var out []int
	for s := 0; s < sourceParallelism; s++ {
		for _, t := range Targets(p, s, targetParallelism) {
			if t == target {
				out = append(out, s)
			}
		}
	}
	return out
}

// Partitioner splits batches among the n target subtasks of an edge. It is
// used by one goroutine and reuses its scratch space between calls.
type Partitioner struct {
	kind           types.Partitioning
	n              int
	keys           []int
	maxParallelism int
	next           int // round-robin position

	// kgTarget maps a key group to its target subtask; kgMask is
	// maxParallelism-1 when that is a power of two, else 0.
	kgTarget []int32
	kgMask   uint64

	hashes    []uint64
	keyCol    []arrow.Array
	rowTarget []int32
	positions []int32
	counts    []int32
	idx       [][]int32
}

// NewPartitioner returns a partitioner for an edge of kind p into n target
// subtasks. HASH edges hash keyColumns into maxParallelism key groups.
func NewPartitioner(p types.Partitioning, n int, keyColumns []int, maxParallelism int) (*Partitioner, error) {
	if n <= 0 {
		return nil, fmt.Errorf("shuffle: %d target subtasks", n)
	}
	switch p {
	case types.PartitionForward, types.PartitionBroadcast,
		types.PartitionRebalance, types.PartitionSingle:
	case types.PartitionHash:
		if len(keyColumns) == 0 {
			return nil, fmt.Errorf("shuffle: HASH edge without key columns")
		}
		if maxParallelism < n {
			return nil, fmt.Errorf("shuffle: max parallelism %d below parallelism %d", maxParallelism, n)
		}
	default:
		return nil, fmt.Errorf("shuffle: unsupported partitioning %v", p)
	}
	part := &Partitioner{
		kind: p, n: n, keys: keyColumns, maxParallelism: maxParallelism,
		idx: make([][]int32, n), counts: make([]int32, n),
	}
	if p == types.PartitionHash {
		part.kgTarget = make([]int32, maxParallelism)
		for kg := range part.kgTarget {
			part.kgTarget[kg] = int32(types.SubtaskForKeyGroup(kg, n, maxParallelism))
		}
		if maxParallelism&(maxParallelism-1) == 0 {
			part.kgMask = uint64(maxParallelism - 1)
		}
	}
	return part, nil
}

// Partition calls emit once per target that receives rows of b, in target
// order. target indexes Targets(kind, source, n): for FORWARD and SINGLE it
// is always 0 (the one target), otherwise it is the target subtask. The
// batch passed to emit is borrowed: it is either b itself (all rows go to
// that target) or a sub-batch that Partition releases after emit returns.
// Partition stops at the first error. Empty batches are dropped.
func (p *Partitioner) Partition(b types.Batch, emit func(target int, b types.Batch) error) error {
	if b.NumRows() == 0 {
		return nil
	}
	switch p.kind {
	case types.PartitionForward, types.PartitionSingle:
		return emit(0, b)
	case types.PartitionBroadcast:
		for t := 0; t < p.n; t++ {
			if err := emit(t, b); err != nil {
				return err
			}
		}
		return nil
	case types.PartitionRebalance:
		t := p.next
		p.next = (p.next + 1) % p.n
		return emit(t, b)
	}
	return p.hashPartition(b, emit)
}

func (p *Partitioner) hashPartition(b types.Batch, emit func(int, types.Batch) error) error {
	n := b.NumRows()
	if cap(p.hashes) < n {
		p.hashes = make([]uint64, n)
	}
	hs := p.hashes[:n]
	p.keyCol = p.keyCol[:0]
	for _, k := range p.keys {
		p.keyCol = append(p.keyCol, b.Column(k))
	}
	types.HashColumns(p.keyCol, hs)
	// Two passes, a counting sort: target of each row, then row positions
	// grouped by target.
	if cap(p.rowTarget) < n {
		p.rowTarget = make([]int32, n)
	}
	rt := p.rowTarget[:n]
	counts := p.counts
	clear(counts)
	table := p.kgTarget
	if mask := p.kgMask; mask != 0 {
		for i, h := range hs {
			t := table[h&mask]
			rt[i] = t
			counts[t]++
		}
	} else {
		maxP := uint64(p.maxParallelism)
		for i, h := range hs {
			t := table[h%maxP]
			rt[i] = t
			counts[t]++
		}
	}
	if cap(p.positions) < n {
		p.positions = make([]int32, n)
	}
	pos := p.positions[:n]
	start := 0
	for t, c := range counts {
		p.idx[t] = pos[start : start : start+int(c)]
		start += int(c)
	}
	for i, t := range rt {
		p.idx[t] = append(p.idx[t], int32(i))
	}
	for t, idx := range p.idx {
		switch len(idx) {
		case 0:
			continue
		case n:
			return emit(t, b)
		}
		sub := Take(b, idx)
		err := emit(t, sub)
		sub.Release()
		if err != nil {
			return err
		}
	}
	return nil
}
