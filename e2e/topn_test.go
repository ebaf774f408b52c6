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

// TestTopNLocal runs the cases in testdata/topn as a user would, braid sql
// --local -f CASE.sql --format tsv, and checks the materialized final result
// of the last SELECT. NB: the client prints the surviving rows of a
// changelog in arrival order, which for a Top-N is not ORDER BY order (a
// newcomer that enters the top prints last), so these cases compare rows as
// a set ("-- compare: final"); only "-- compare: ordered" cases compare order.
func TestTopNLocal(t *testing.T) {
	runLocalCases(t, "topn")
}

// TestTopNSavepointRescale runs Top-N and deduplication cases the third
// way (see TestConformanceSavepointRescale): part of the input, a
// savepoint, the rest of the input, and a restore at parallelism 1 and 3.
// The two changelogs together must materialize to the case's result, and
// no retraction (a rank's -U, a deduplicate's -U) may miss its row.
func TestTopNSavepointRescale(t *testing.T) {
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
		for i, name := range []string{"row-number-output-partitioned", "deduplicate-rowtime"} {
			t.Run(fmt.Sprintf("p%d/%s", par, name), func(t *testing.T) {
				cs := loadCaseFile(t, name, filepath.Join("testdata", "topn", name+".sql"))
				split := splitCase(t, cs, splitByRows)
				db := fmt.Sprintf("topn%d_case_%d_%d", par, i, time.Now().UnixNano())
				runSavepointCase(t, c, cs, split, db, par, "")
			})
		}
	}
}
