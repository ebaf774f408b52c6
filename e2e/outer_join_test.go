package e2e

import "testing"

// TestOuterJoinLocal runs the cases in testdata/outer_join (outer joins
// whose ON condition has non-equalities, conditions on a preserved side, or
// no equality at all) as a user would, braid sql --local -f CASE.sql
// --format tsv, and checks the materialized final result of the last
// SELECT, compared as a set ("-- compare: final").
func TestOuterJoinLocal(t *testing.T) {
	runLocalCases(t, "outer_join")
}
