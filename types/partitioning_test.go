package types

import "testing"

func TestPartitioningString(t *testing.T) {
	for p, want := range map[Partitioning]string{
		PartitionForward: "FORWARD", PartitionHash: "HASH", PartitionBroadcast: "BROADCAST",
		PartitionRebalance: "REBALANCE", PartitionSingle: "SINGLE", 0: "Partitioning(0)", 9: "Partitioning(9)",
	} {
		if got := p.String(); got != want {
			t.Errorf("%d: %s, want %s", p, got, want)
		}
		if p.Valid() != (want[0] != 'P') {
			t.Errorf("%s: Valid() = %v", want, p.Valid())
		}
	}
}
