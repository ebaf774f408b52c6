package e2e

import "testing"

// TestOverLocal runs the cases in testdata/over (OVER aggregations) as a
// user would, braid sql --local -f CASE.sql --format tsv, and checks the
// result of the last SELECT. The rows of different partitions come in no
// set order, so the cases compare rows as a set ("-- compare: final").
func TestOverLocal(t *testing.T) {
	runLocalCases(t, "over")
}
