package e2e

import "testing"

// TestSetOpsLocal runs the cases in testdata/setops (set operations and
// USING / NATURAL joins) as a user would, braid sql --local -f CASE.sql
// --format tsv, and checks the materialized final result of the last
// SELECT, compared as a set ("-- compare: final").
func TestSetOpsLocal(t *testing.T) {
	runLocalCases(t, "setops")
}
