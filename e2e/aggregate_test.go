package e2e

import "testing"

// TestAggregatesLocal runs the cases in testdata/aggregate as a user would,
// braid sql --local -f CASE.sql --format tsv, and checks the materialized
// final result of the last SELECT, as the conformance cases do.
func TestAggregatesLocal(t *testing.T) {
	runLocalCases(t, "aggregate")
}
