package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTopNLocal runs the cases in testdata/topn as a user would, braid sql
// --local -f CASE.sql --format tsv, and checks the materialized final result
// of the last SELECT. NB: the client prints the surviving rows of a
// changelog in arrival order, which for a Top-N is not ORDER BY order (a
// newcomer that enters the top prints last), so these cases compare rows as
// a set ("-- compare: final"); only "-- compare: ordered" cases compare order.
func TestTopNLocal(t *testing.T) {
	paths, err := filepath.Glob("testdata/topn/*.sql")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no Top-N cases: %v", err)
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

// loadCaseText reads a case's "-- compare:" header as loadCase does.
func loadCaseText(name, sql, want string) conformanceCase {
	c := conformanceCase{name: name, sql: sql, want: want}
	for _, line := range strings.Split(sql, "\n") {
		if v, ok := strings.CutPrefix(line, "-- compare:"); ok {
			c.ordered = strings.TrimSpace(v) == "ordered"
		}
	}
	return c
}
