package e2e

import (
	"os"
	"path/filepath"
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
	paths, err := filepath.Glob("testdata/subquery/*.sql")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no subquery cases: %v", err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".sql")
		t.Run(name, func(t *testing.T) {
			sql, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(path, ".sql") + ".out")
			if err != nil {
				t.Fatal(err)
			}
			c := loadCaseText(name, string(sql), string(want))
			stdout, stderr, err := braid(t, 2*time.Minute, "sql", "--local", "-f", path, "--format", "tsv")
			checkResult(t, c, stdout, stderr, err)
		})
	}
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
