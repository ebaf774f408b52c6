package e2e

import "testing"

// TestFunctionsLocal runs the cases in testdata/functions (scalar
// functions) as a user would, braid sql --local -f CASE.sql --format tsv,
// and checks the final result of the last SELECT.
func TestFunctionsLocal(t *testing.T) {
	runLocalCases(t, "functions")
}
