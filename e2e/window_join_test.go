package e2e

import "testing"

// TestWindowJoinCases runs testdata/window_join: window joins (INNER,
// LEFT, RIGHT, FULL, semi and anti) of window function relations over
// bounded inputs whose final watermark fires every window.
func TestWindowJoinCases(t *testing.T) {
	runLocalCases(t, "window_join")
}
