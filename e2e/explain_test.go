package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExplainLocal runs EXPLAIN as a user would, braid sql --local -f
// CASE.sql: in the default (tableau) format the plan prints as plain text,
// as Flink's SQL client prints it, not as a one-cell table; in tsv format
// under its "result" header.
func TestExplainLocal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "explain.sql")
	script := `CREATE TABLE orders (id INT, customer STRING, amount DOUBLE);
EXPLAIN CHANGELOG_MODE SELECT customer, SUM(amount) AS total FROM orders WHERE amount > 10 GROUP BY customer;
`
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	const plan = `== Optimized Execution Plan ==
Collect(fields=[customer, total], changelogMode=[NONE])
+- Exchange(distribution=[single], changelogMode=[I,UB,UA])
   +- GroupAggregate(groupBy=[customer], select=[customer, SUM($f1) AS total], changelogMode=[I,UB,UA])
      +- Exchange(distribution=[hash[customer]], changelogMode=[I])
         +- Calc(select=[customer, amount AS $f1], where=[(amount > CAST(10 AS DOUBLE))], changelogMode=[I])
            +- TableSourceScan(table=[[default_catalog, default_database, orders]], fields=[id, customer, amount], changelogMode=[I])

Warning: GroupAggregate(groupBy=[customer]) keeps state for every group key forever: set 'table.exec.state.ttl' or a STATE_TTL hint.

== Job graph (max parallelism 128) ==
`
	stdout, stderr, err := braid(t, 2*time.Minute, "sql", "--local", "-f", path)
	if err != nil {
		t.Fatalf("braid sql: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "[INFO] Execute statement succeeded.\n"+plan) {
		t.Errorf("tableau output lacks the plain-text plan:\n%s", stdout)
	}
	if strings.Contains(stdout, "| == Optimized") || strings.Contains(stdout, "1 row in set") {
		t.Errorf("the plan printed as a table:\n%s", stdout)
	}
	stdout, stderr, err = braid(t, 2*time.Minute, "sql", "--local", "-f", path, "--format", "tsv")
	if err != nil {
		t.Fatalf("braid sql --format tsv: %v\n%s", err, stderr)
	}
	if !strings.HasPrefix(stdout, "result\n"+plan) {
		t.Errorf("tsv output:\n%s", stdout)
	}
}
