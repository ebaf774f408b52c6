package jobmanager_test

import (
	"context"
	"strings"
	"testing"
)

// scoresSQL fills a table whose rows cross subtasks at parallelism 4, with
// ties and NULLs in the sort key.
const scoresSQL = `SET 'parallelism.default' = '4';
CREATE TABLE scores (player STRING, team INT, pts INT);
INSERT INTO scores VALUES ('ann', 1, 10), ('bob', 1, 30), ('cat', 1, NULL), ('dan', 1, 20),
	('eve', 2, 5), ('fay', 2, 4), ('gus', 2, 40), ('hal', 3, NULL), ('ivy', 3, 1);`

// TestTopNEndToEnd runs streaming Top-N through the cluster: ORDER BY ...
// LIMIT on one subtask (NULLs last descending, first ascending), the
// ROW_NUMBER form per team, a Top-N over an aggregate (a retracting
// input), the exact changelog of an append-only Top-N, an upsert table fed
// by a Top-N, and the errors.
func TestTopNEndToEnd(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	run(t, s, scoresSQL)

	equal(t, "ORDER BY DESC LIMIT",
		materializeRows(t, run(t, s, "SELECT player, pts FROM scores ORDER BY pts DESC LIMIT 3;").rows),
		[]string{"[bob, 30]", "[dan, 20]", "[gus, 40]"})
	equal(t, "NULLs first ascending",
		materializeRows(t, run(t, s, "SELECT player FROM scores WHERE team <> 2 ORDER BY pts, player LIMIT 3;").rows),
		[]string{"[cat]", "[hal]", "[ivy]"})
	equal(t, "ROW_NUMBER per team, NULLs last descending",
		materializeRows(t, run(t, s, `SELECT team, player, pts FROM (
			SELECT *, ROW_NUMBER() OVER (PARTITION BY team ORDER BY pts DESC) AS rn FROM scores
		) WHERE rn <= 2;`).rows),
		[]string{"[1, bob, 30]", "[1, dan, 20]", "[2, eve, 5]", "[2, gus, 40]", "[3, hal, NULL]", "[3, ivy, 1]"})
	equal(t, "over an aggregate",
		materializeRows(t, run(t, s, "SELECT team, SUM(pts) AS total FROM scores GROUP BY team ORDER BY total DESC LIMIT 2;").rows),
		[]string{"[1, 60]", "[2, 49]"})
	// One source subtask: the changelog in order. A newcomer that enters
	// evicts the last row (-D, then +I); one that does not emits nothing.
	equal(t, "append-only changelog",
		run(t, s, "SELECT x FROM (VALUES (1), (5), (3), (7), (3)) AS v(x) ORDER BY x DESC LIMIT 2;").rows,
		[]string{"+I[1]", "+I[5]", "-D[1]", "+I[3]", "-D[3]", "+I[7]"})

	run(t, s, `CREATE TABLE best (team INT, player STRING, pts INT, PRIMARY KEY (team, player) NOT ENFORCED);
		INSERT INTO best SELECT team, player, pts FROM (
			SELECT *, ROW_NUMBER() OVER (PARTITION BY team ORDER BY pts DESC) AS rn FROM scores
		) WHERE rn = 1;`)
	equal(t, "an upsert table holds the final top rows",
		materializeRows(t, run(t, s, "SELECT * FROM best;").rows),
		[]string{"[1, bob, 30]", "[2, gus, 40]", "[3, ivy, 1]"})

	run(t, s, "CREATE TABLE log (player STRING, pts INT);")
	err := s.Execute(context.Background(), "INSERT INTO log SELECT player, pts FROM scores ORDER BY pts LIMIT 2;", false, newRows())
	if err == nil || !strings.Contains(err.Error(), "doesn't support consuming update and delete changes which is produced by node Rank(strategy=[AppendFastStrategy]") {
		t.Fatalf("a Top-N into an append-only table: %v", err)
	}
	err = s.Execute(context.Background(), "SELECT player FROM scores ORDER BY pts;", false, newRows())
	if err == nil || !strings.Contains(err.Error(), "Sort on a non-time-attribute field is not supported.") {
		t.Fatalf("ORDER BY without LIMIT: %v", err)
	}
}
