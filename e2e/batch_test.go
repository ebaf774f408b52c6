package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBatchLocal runs the cases in testdata/batch, each with
// execution.runtime-mode = batch, as a user would (braid sql --local -f
// CASE.sql --format tsv), and checks the final result of the last SELECT.
func TestBatchLocal(t *testing.T) {
	runLocalCases(t, "batch")
}

// TestBatchTableau: in batch mode a SELECT prints as Flink's batch mode
// prints it in tableau format: no op column, widths from the content, and
// an "N rows in set" footer, the rows in ORDER BY order.
func TestBatchTableau(t *testing.T) {
	stdout, stderr, err := braid(t, 2*time.Minute, "sql", "--local", "-f", filepath.Join("testdata", "batch", "order-by.sql"), "--format", "tableau")
	if err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, stderr)
	}
	want := `+--------+--------+--------+
| player |   team | points |
+--------+--------+--------+
|    ann |    red |     12 |
|    dee |   blue |     12 |
|    bob |   blue |      7 |
|    fay |    red |      7 |
|    eve | <NULL> |      3 |
|    cid |    red | <NULL> |
+--------+--------+--------+
6 rows in set
`
	if !strings.HasSuffix(stdout, want) {
		t.Fatalf("tableau output:\n%s\nwant it to end with:\n%s", stdout, want)
	}
}

// TestBatchUnboundedTable: a batch-mode query over an unbounded table is
// refused at planning with Flink's message, naming the table and where
// the query reads it.
func TestBatchUnboundedTable(t *testing.T) {
	script := `SET 'execution.runtime-mode' = 'batch';
CREATE TABLE gen (k INT) WITH ('connector' = 'datagen');
SELECT k FROM gen;
`
	path := filepath.Join(t.TempDir(), "unbounded.sql")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := braid(t, 2*time.Minute, "sql", "--local", "-f", path, "--format", "tsv")
	if err == nil {
		t.Fatalf("ran without error:\n%s", stdout)
	}
	want := "line 3, column 15: Querying an unbounded table 'default_catalog.default_database.gen' in batch mode is not allowed. The table source is unbounded."
	if !strings.Contains(stderr, want) {
		t.Fatalf("stderr:\n%s\nwant it to contain %q", stderr, want)
	}
}

// TestConformanceBatch runs each supported conformance case (all but the
// lookup join, which needs MySQL) with
// execution.runtime-mode = batch first: the final result must be the
// case's, as Flink's batch mode returns the final result of the
// streaming query on the same bounded input.
func TestConformanceBatch(t *testing.T) {
	for _, name := range supported {
		t.Run(name, func(t *testing.T) {
			c := loadCase(t, name)
			script := "SET 'execution.runtime-mode' = 'batch';\n" + c.sql
			path := filepath.Join(t.TempDir(), name+".sql")
			if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, err := braid(t, 2*time.Minute, "sql", "--local", "-f", path, "--format", "tsv")
			checkResult(t, c, stdout, stderr, err)
		})
	}
}
