package jobmanager_test

import (
	"strings"
	"testing"
)

// TestExplain: EXPLAIN returns one row of one STRING column, the plan tree
// with column names, the unbounded-state warnings and the job graph;
// CHANGELOG_MODE adds each node's row kinds and the other detail words
// change nothing.
func TestExplain(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	run(t, s, "CREATE TABLE src (k INT, v STRING);")
	const q = "SELECT k, COUNT(*) AS cnt FROM src WHERE k > 1 GROUP BY k;"
	plan := run(t, s, "EXPLAIN "+q).rows
	if len(plan) != 1 {
		t.Fatalf("EXPLAIN returned %d rows: %q", len(plan), plan)
	}
	for _, want := range []string{
		"== Optimized Execution Plan ==\n",
		"+- GroupAggregate(groupBy=[k], select=[k, COUNT(*) AS cnt])\n",
		"+- Calc(select=[k], where=[(k > 1)])\n",
		"TableSourceScan(table=[[default_catalog, default_database, src]], fields=[k, v])\n",
		"\nWarning: GroupAggregate(groupBy=[k]) keeps state for every group key forever: set 'table.exec.state.ttl' or a STATE_TTL hint.\n",
		"\n== Job graph (max parallelism 128) ==\n",
	} {
		if !strings.Contains(plan[0], want) {
			t.Errorf("EXPLAIN lacks %q:\n%s", want, plan[0])
		}
	}
	if strings.Contains(plan[0], "changelogMode") {
		t.Errorf("EXPLAIN without CHANGELOG_MODE shows changelog modes:\n%s", plan[0])
	}
	same := run(t, s, "EXPLAIN ESTIMATED_COST, JSON_EXECUTION_PLAN, PLAN_ADVICE "+q).rows
	equal(t, "EXPLAIN with the details it ignores", same, plan)

	modes := run(t, s, "EXPLAIN CHANGELOG_MODE "+q).rows
	for _, want := range []string{
		"GroupAggregate(groupBy=[k], select=[k, COUNT(*) AS cnt], changelogMode=[I,UB,UA])\n",
		"Exchange(distribution=[hash[k]], changelogMode=[I])\n",
		"Collect(fields=[k, cnt], changelogMode=[NONE])\n",
	} {
		if len(modes) != 1 || !strings.Contains(modes[0], want) {
			t.Errorf("EXPLAIN CHANGELOG_MODE lacks %q:\n%q", want, modes)
		}
	}

	run(t, s, "SET 'table.exec.state.ttl' = '1 h';")
	if ttl := run(t, s, "EXPLAIN "+q).rows; len(ttl) != 1 || strings.Contains(ttl[0], "Warning:") {
		t.Errorf("EXPLAIN with a state TTL still warns: %q", ttl)
	}
}
