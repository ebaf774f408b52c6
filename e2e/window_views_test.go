package e2e

import (
	"testing"
)

// TestWindowViewCases runs testdata/window_views: window functions over
// the views of a Nexmark-shaped table (a computed, watermarked dateTime
// unpacked from ROW columns), in the shape of Nexmark q5, q7, q11 and q12.
func TestWindowViewCases(t *testing.T) {
	runLocalCases(t, "window_views")
}

// TestWindowViewSavepointRescale runs the event-time cases the third way
// (see TestConformanceSavepointRescale): part of the events, a savepoint,
// the rest, and a restore at parallelism 1 and 3. The window aggregates
// over the views must keep their open windows across the restore, and the
// group aggregate and join of q5 their state.
func TestWindowViewSavepointRescale(t *testing.T) {
	// NB: q7 and views have window aggregates without keys, which run at
	// parallelism 1 whatever the job's, and checkRestoredParallelism wants
	// every operator at the restored parallelism.
	runRescaledCases(t, "window_views", []string{"q5", "q11"})
}
