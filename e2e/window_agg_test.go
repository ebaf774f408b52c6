package e2e

import "testing"

// TestWindowAggCases runs testdata/window_agg: SESSION windows, legacy
// group windows and processing-time windows under a window aggregate.
func TestWindowAggCases(t *testing.T) {
	runLocalCases(t, "window_agg")
}
