package types

import "fmt"

// DefaultMaxParallelism is the number of key groups of a job unless set.
const DefaultMaxParallelism = 128

// UpperBoundMaxParallelism is the largest max parallelism, Flink's: a key
// group is 2 bytes of every state key.
const UpperBoundMaxParallelism = 1 << 15

// KeyGroupRange is the inclusive range [Start, End] of key groups a subtask
// owns. An empty range has End < Start.
type KeyGroupRange struct {
	Start, End int
}

// Contains reports whether kg lies in the range.
func (r KeyGroupRange) Contains(kg int) bool { return kg >= r.Start && kg <= r.End }

func (r KeyGroupRange) String() string { return fmt.Sprintf("[%d, %d]", r.Start, r.End) }

// KeyGroupForHash maps a key hash to its key group.
func KeyGroupForHash(h uint64, maxParallelism int) int {
	return int(h % uint64(maxParallelism))
}

// SubtaskForKeyGroup maps a key group to the subtask that owns it, as Flink
// does: kg * parallelism / maxParallelism.
func SubtaskForKeyGroup(kg, parallelism, maxParallelism int) int {
	return kg * parallelism / maxParallelism
}

// KeyGroupRangeFor returns the key groups subtask i of p owns: the inverse of
// SubtaskForKeyGroup.
func KeyGroupRangeFor(subtask, parallelism, maxParallelism int) KeyGroupRange {
	start := (subtask*maxParallelism + parallelism - 1) / parallelism
	end := ((subtask+1)*maxParallelism+parallelism-1)/parallelism - 1
	return KeyGroupRange{Start: start, End: end}
}
