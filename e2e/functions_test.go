package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFunctionsLocal runs the cases in testdata/functions (scalar
// functions) as a user would, braid sql --local -f CASE.sql --format tsv,
// and checks the final result of the last SELECT.
func TestFunctionsLocal(t *testing.T) {
	paths, err := filepath.Glob("testdata/functions/*.sql")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no function cases: %v", err)
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
