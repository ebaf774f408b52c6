package e2e

import "testing"

// TestWindowViewCases runs testdata/window_views: window functions over
// the views of a Nexmark-shaped table (a computed, watermarked dateTime
// unpacked from ROW columns), in the shape of Nexmark q5, q7, q11 and q12.
func TestWindowViewCases(t *testing.T) {
	runLocalCases(t, "window_views")
}
