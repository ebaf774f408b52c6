package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/localcluster"
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
	if testing.Short() {
		t.Skip("restores each case twice on an in-process cluster; runs without -short (make test)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cl, err := localcluster.Start(ctx, localcluster.Options{DataDir: t.TempDir(), TaskManagers: 2, Slots: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c, err := client.Dial(ctx, cl.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, par := range []int{1, 3} {
		for i, name := range []string{"topn-tvf", "dedup"} {
			t.Run(fmt.Sprintf("p%d/%s", par, name), func(t *testing.T) {
				cs := loadCaseFile(t, name, filepath.Join("testdata", "window_rank", name+".sql"))
				split := splitCase(t, cs, splitByRows)
				db := fmt.Sprintf("wrank%d_case_%d_%d", par, i, time.Now().UnixNano())
				runSavepointCase(t, c, cs, split, db, par, "")
			})
		}
	}
}
