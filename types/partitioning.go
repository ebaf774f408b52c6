package types

import "fmt"

// Partitioning says how an edge distributes the rows of its source
// subtasks over the subtasks of its target. The zero value is no
// partitioning at all: an edge must name one.
type Partitioning uint8

const (
	// PartitionForward sends source subtask i's rows to target subtask i;
	// both ends run at one parallelism.
	PartitionForward Partitioning = iota + 1
	// PartitionHash sends each row to the subtask owning the key group of
	// the edge's key columns.
	PartitionHash
	// PartitionBroadcast sends every row to every target subtask.
	PartitionBroadcast
	// PartitionRebalance sends each batch to the next target subtask,
	// round robin.
	PartitionRebalance
	// PartitionSingle sends every row to target subtask 0.
	PartitionSingle
)

var partitioningNames = [...]string{
	PartitionForward:   "FORWARD",
	PartitionHash:      "HASH",
	PartitionBroadcast: "BROADCAST",
	PartitionRebalance: "REBALANCE",
	PartitionSingle:    "SINGLE",
}

// Valid reports whether p is one of the Partition constants.
func (p Partitioning) Valid() bool {
	return p >= PartitionForward && p <= PartitionSingle
}

// String returns Flink's name of p ("HASH"), as plans print it.
func (p Partitioning) String() string {
	if !p.Valid() {
		return fmt.Sprintf("Partitioning(%d)", uint8(p))
	}
	return partitioningNames[p]
}
