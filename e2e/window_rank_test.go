package e2e

import (
	"testing"
)

// TestWindowRankLocal runs testdata/window_rank: window Top-N over a window
// function and after a window aggregate (into an append-only table), and
// window deduplication, each with a late row. Rows of different windows
// come in no set order, so the cases compare rows as a set.
func TestWindowRankLocal(t *testing.T) {
	runLocalCases(t, "window_rank")
}

// TestWindowRankSavepointRescale runs window Top-N and window
// deduplication cases the third way (see TestConformanceSavepointRescale):
// part of the input, a savepoint with windows still open, the rest of the
// input, and a restore at parallelism 1 and 3. The two runs' rows together
// must be the case's result: no window fires twice or is lost.
func TestWindowRankSavepointRescale(t *testing.T) {
	runRescaledCases(t, "window_rank", []string{"topn-tvf", "dedup"})
}
