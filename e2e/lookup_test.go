package e2e

import "testing"

// TestLookupCases runs testdata/lookup: lookup joins of MySQL tables
// (LEFT, cached, the jdbc connector's options) and a bounded scan of one,
// against the test MySQL server (see prepareMySQL).
func TestLookupCases(t *testing.T) {
	runLocalCases(t, "lookup")
}
