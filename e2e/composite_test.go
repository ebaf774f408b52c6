package e2e

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestCompositeSavepointRescale runs the composite-value cases of
// testdata/functions (ROW, ARRAY and MAP columns in an aggregate's keyed
// state and shuffle; UNNEST) the way TestConformanceSavepointRescale runs
// the conformance cases: a savepoint mid-run, then a restore at another
// parallelism, whose changelogs together must make the expected result.
func TestCompositeSavepointRescale(t *testing.T) {
	if testing.Short() {
		t.Skip("restores each case twice on an in-process cluster; runs without -short (make test)")
	}
	c := startSavepointCluster(t, 5*time.Minute)
	for _, pass := range savepointPasses {
		for i, name := range []string{"composite-values", "unnest"} {
			t.Run(fmt.Sprintf("p%d/%s", pass.parallelism, name), func(t *testing.T) {
				cs := loadCaseFile(t, name, filepath.Join("testdata", "functions", name+".sql"))
				split := splitCase(t, cs, pass.split)
				db := fmt.Sprintf("cp%d_case_%d_%d", pass.parallelism, i, time.Now().UnixNano())
				runSavepointCase(t, c, cs, split, db, pass.parallelism, pass.interval)
			})
		}
	}
}
