package e2e

import "testing"

// TestWindowRankLocal runs testdata/window_rank: window Top-N over a window
// function and after a window aggregate (into an append-only table), and
// window deduplication, each with a late row. Rows of different windows
// come in no set order, so the cases compare rows as a set.
func TestWindowRankLocal(t *testing.T) {
	runLocalCases(t, "window_rank")
}
