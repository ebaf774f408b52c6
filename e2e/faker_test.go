package e2e

import "testing"

// TestFakerLocal runs the cases in testdata/faker (the faker connector) as
// a user would, braid sql --local -f CASE.sql --format tsv, and checks the
// final result of the last SELECT: counts and bounds that random values
// cannot change.
func TestFakerLocal(t *testing.T) {
	runLocalCases(t, "faker")
}
