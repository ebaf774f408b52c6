package jobmanager_test

import (
	"context"
	"strings"
	"testing"
)

// salesSQL fills a table whose rows cross subtasks at parallelism 4.
const salesSQL = `SET 'parallelism.default' = '4';
CREATE TABLE sales (k1 STRING, k2 INT, x INT, m DECIMAL(10, 2));
INSERT INTO sales VALUES ('a', 1, 1, 1.00), ('a', 1, 2, 2.50), ('a', 2, NULL, NULL), ('b', 1, 5, 0.01),
	(CAST(NULL AS STRING), 1, 7, 1.00);`

// TestGroupByEndToEnd runs GROUP BY through the cluster: every aggregate
// with Flink's result types and NULL handling, the changelog of one group,
// expressions over aggregates, HAVING, a computed key, DISTINCT and a
// global aggregate.
func TestGroupByEndToEnd(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	run(t, s, salesSQL)

	r := run(t, s, "SELECT k1, k2, COUNT(*), COUNT(x), SUM(x), MIN(x), MAX(x), AVG(x), SUM(m), AVG(m) FROM sales GROUP BY k1, k2;")
	equal(t, "all aggregates", materializeRows(t, r.rows), []string{
		"[NULL, 1, 1, 1, 7, 7, 7, 7, 1.00, 1.000000]",
		"[a, 1, 2, 2, 3, 1, 2, 1, 3.50, 1.750000]",
		"[a, 2, 1, 0, NULL, NULL, NULL, NULL, NULL, NULL]",
		"[b, 1, 1, 1, 5, 5, 5, 5, 0.01, 0.010000]",
	})
	var typs []string
	for _, col := range r.cols {
		typs = append(typs, col.Name+" "+col.Type.String())
	}
	equal(t, "result types", typs, []string{"k1 STRING", "k2 INT", "EXPR$2 BIGINT NOT NULL", "EXPR$3 BIGINT NOT NULL",
		"EXPR$4 INT", "EXPR$5 INT", "EXPR$6 INT", "EXPR$7 INT", "EXPR$8 DECIMAL(38, 2)", "EXPR$9 DECIMAL(38, 6)"})

	// One group's changelog, in order: its rows come from one source subtask.
	equal(t, "changelog of group a", run(t, s, "SELECT k1, COUNT(*) FROM sales WHERE k1 = 'a' GROUP BY k1;").rows,
		[]string{"+I[a, 1]", "-U[a, 1]", "+U[a, 2]", "-U[a, 2]", "+U[a, 3]"})

	equal(t, "HAVING and expressions over aggregates",
		materializeRows(t, run(t, s, "SELECT k1, SUM(x) * 2 AS dbl, CAST(COUNT(*) AS INT) FROM sales GROUP BY k1 HAVING COUNT(*) > 1;").rows),
		[]string{"[a, 6, 3]"})
	equal(t, "a computed key",
		materializeRows(t, run(t, s, "SELECT k2 % 2 AS parity, COUNT(*) AS n FROM sales GROUP BY k2 % 2;").rows),
		[]string{"[0, 1]", "[1, 4]"})
	equal(t, "DISTINCT", materializeRows(t, run(t, s, "SELECT DISTINCT k2 FROM sales;").rows), []string{"[1]", "[2]"})
	equal(t, "global aggregate",
		materializeRows(t, run(t, s, "SELECT COUNT(*), COUNT(m), SUM(x), AVG(x), MAX(k1) FROM sales;").rows),
		[]string{"[5, 4, 15, 3, b]"})
	// Flink's streaming global aggregate emits nothing for an empty input.
	run(t, s, "CREATE TABLE empty (x INT);")
	equal(t, "global aggregate over nothing", run(t, s, "SELECT COUNT(*), SUM(x) FROM empty;").rows, nil)
	equal(t, "AVG of INT truncates", run(t, s, "SELECT AVG(a) FROM (VALUES (1), (2)) AS v(a);").rows,
		[]string{"+I[1]"})
	equal(t, "AVG of DOUBLE and SUM of DECIMAL",
		materializeRows(t, run(t, s, "SELECT AVG(a), SUM(b) FROM (VALUES (1e0, 1.5), (2e0, 2.25)) AS v(a, b);").rows),
		[]string{"[1.5, 3.75]"})
}

// TestGroupByOverChangelogs aggregates a join and an upsert table, whose
// retractions the aggregate subtracts (MIN and MAX find the next value),
// and writes aggregates into an upsert table but not an append-only one.
func TestGroupByOverChangelogs(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	run(t, s, salesSQL+`
		CREATE TABLE cust (name STRING, region STRING);
		INSERT INTO cust VALUES ('a', 'eu'), ('b', 'us'), ('c', 'eu');
		CREATE TABLE prices (item STRING, price INT, PRIMARY KEY (item) NOT ENFORCED);
		INSERT INTO prices VALUES ('pen', 1), ('ink', 5), ('cap', 9);
		INSERT INTO prices VALUES ('pen', 2), ('cap', 5);`)
	equal(t, "over a join",
		materializeRows(t, run(t, s, "SELECT c.region, COUNT(*), SUM(s.x) FROM sales s JOIN cust c ON s.k1 = c.name GROUP BY c.region;").rows),
		[]string{"[eu, 3, 3]", "[us, 1, 5]"})
	equal(t, "over an upsert table",
		materializeRows(t, run(t, s, "SELECT price, COUNT(*) FROM prices GROUP BY price;").rows),
		[]string{"[2, 1]", "[5, 2]"})
	equal(t, "MIN and MAX with retraction",
		materializeRows(t, run(t, s, "SELECT MIN(price), MAX(price), SUM(price) FROM prices;").rows),
		[]string{"[2, 5, 12]"})

	run(t, s, `CREATE TABLE totals (k1 STRING, n BIGINT, total INT, PRIMARY KEY (k1) NOT ENFORCED);
		INSERT INTO totals SELECT k1, COUNT(*), SUM(x) FROM sales WHERE k1 IS NOT NULL GROUP BY k1;`)
	equal(t, "the upsert table holds the final aggregates",
		materializeRows(t, run(t, s, "SELECT * FROM totals;").rows), []string{"[a, 3, 3]", "[b, 1, 5]"})

	run(t, s, "CREATE TABLE log (k1 STRING, n BIGINT);")
	err := s.Execute(context.Background(), "INSERT INTO log SELECT k1, COUNT(*) FROM sales GROUP BY k1;", false, newRows())
	if err == nil || !strings.Contains(err.Error(), "doesn't support consuming update changes which is produced by node GroupAggregate(groupBy=[k1]") {
		t.Fatalf("an aggregate into an append-only table: %v", err)
	}
	err = s.Execute(context.Background(), "SELECT k1, x FROM sales GROUP BY k1;", false, newRows())
	if err == nil || !strings.Contains(err.Error(), "line 1, column 12: Expression 'x' is not being grouped") {
		t.Fatalf("a column that is not grouped: %v", err)
	}
}
