package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runLocalCases runs every case in testdata/dir (CASE.sql and its expected
// CASE.out) as a user would, braid sql --local -f CASE.sql --format tsv,
// and checks the final result of the last SELECT (checkResult), rows
// compared as a set unless the case says "-- compare: ordered".
func runLocalCases(t *testing.T, dir string) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.sql"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no cases in testdata/%s: %v", dir, err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".sql")
		t.Run(name, func(t *testing.T) {
			c := loadCaseFile(t, name, path)
			stdout, stderr, err := braid(t, 2*time.Minute, "sql", "--local", "-f", path, "--format", "tsv")
			checkResult(t, c, stdout, stderr, err)
		})
	}
}

// loadCaseFile reads the case at path (.sql) with its expected result
// (.out beside it) and its "-- compare:" and "-- requires:" headers.
func loadCaseFile(t *testing.T, name, path string) conformanceCase {
	t.Helper()
	sql, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(strings.TrimSuffix(path, ".sql") + ".out")
	if err != nil {
		t.Fatal(err)
	}
	c := conformanceCase{name: name, sql: string(sql), want: string(want)}
	for _, line := range strings.Split(c.sql, "\n") {
		if v, ok := strings.CutPrefix(line, "-- compare:"); ok {
			c.ordered = strings.TrimSpace(v) == "ordered"
		}
		if v, ok := strings.CutPrefix(line, "-- requires:"); ok {
			c.requires = append(c.requires, strings.TrimSpace(v))
		}
	}
	return c
}
