package e2e

import "testing"

// TestNexmarkCases runs testdata/nexmark: the nexmark connector with the
// benchmark's DDL (ROW columns, the computed dateTime and its watermark)
// and views, with a fixed base time so the events are exact.
func TestNexmarkCases(t *testing.T) {
	runLocalCases(t, "nexmark")
}
