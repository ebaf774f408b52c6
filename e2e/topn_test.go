package e2e

import (
	"testing"
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
	runRescaledCases(t, "topn", []string{"row-number-output-partitioned", "deduplicate-rowtime"})
}
