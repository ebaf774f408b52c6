package e2e

import "testing"

// TestStatementsLocal runs the cases in testdata/statements (statement
// sets, CREATE TABLE AS, ALTER TABLE, VALUES in FROM) as a user would,
// braid sql --local -f CASE.sql --format tsv, and checks the materialized final result of the last
// SELECT, compared as a set ("-- compare: final").
func TestStatementsLocal(t *testing.T) {
	runLocalCases(t, "statements")
}
