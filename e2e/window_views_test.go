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
		// NB: q7 and views have window aggregates without keys, which run
		// at parallelism 1 whatever the job's, and checkRestoredParallelism
		// wants every operator at the restored parallelism.
		for i, name := range []string{"q5", "q11"} {
			t.Run(fmt.Sprintf("p%d/%s", par, name), func(t *testing.T) {
				cs := loadCaseFile(t, name, filepath.Join("testdata", "window_views", name+".sql"))
				split := splitCase(t, cs, splitByRows)
				db := fmt.Sprintf("wview%d_case_%d_%d", par, i, time.Now().UnixNano())
				runSavepointCase(t, c, cs, split, db, par, "")
			})
		}
	}
}
