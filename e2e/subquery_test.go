package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestSubqueryLocal runs the cases in testdata/subquery ([NOT] IN and
// [NOT] EXISTS as semi and anti joins, NOT IN's NULL rule, scalar
// subqueries, subqueries in FROM) as a user would, braid sql --local -f
// CASE.sql --format tsv, and checks the materialized final result of the
// last SELECT, compared as a set ("-- compare: final").
func TestSubqueryLocal(t *testing.T) {
	runLocalCases(t, "subquery")
}

// TestScalarSubqueryTooManyRows: a scalar subquery that returns more than
// one row fails the job with an error that says so.
func TestScalarSubqueryTooManyRows(t *testing.T) {
	stdout, stderr, err := braid(t, 2*time.Minute, "sql", "--local", "-f",
		"testdata/subquery/fails/scalar-too-many-rows.sql", "--format", "tsv")
	if !strings.Contains(stdout+stderr, "a scalar subquery returned more than one row") {
		t.Fatalf("no error for a scalar subquery of two rows (err %v)\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
}
