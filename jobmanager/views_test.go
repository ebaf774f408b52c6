package jobmanager_test

import (
	"context"
	"strings"
	"testing"
)

// TestViews: a view is created, listed, described and read like a table;
// a permanent one outlives its session, a temporary one does not, and
// mistakes are refused with Flink's messages at their positions.
func TestViews(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	a := openSession(t, c)
	run(t, a, `CREATE TABLE orders (id INT, customer STRING, amount DOUBLE);
		INSERT INTO orders VALUES (1, 'ann', 5.0), (2, 'bob', 150.0), (3, 'ann', 200.0);
		CREATE VIEW big (k, v) COMMENT 'large orders' AS SELECT id, amount FROM orders WHERE amount > 100;
		CREATE VIEW per_customer AS SELECT customer, COUNT(*) AS n FROM orders GROUP BY customer;
		CREATE TEMPORARY VIEW mine AS SELECT k FROM big WHERE v > 160;`)
	equal(t, "a view", run(t, a, "SELECT k, v FROM big;").sorted(), []string{"+I[2, 150.0]", "+I[3, 200.0]"})
	equal(t, "a temporary view over a view", run(t, a, "SELECT * FROM mine;").sorted(), []string{"+I[3]"})
	equal(t, "a view in a join", run(t, a, "SELECT o.customer, b.v FROM orders o JOIN big b ON o.id = b.k;").sorted(),
		[]string{"+I[ann, 200.0]", "+I[bob, 150.0]"})
	equal(t, "an aggregating view", run(t, a, "SELECT customer, n FROM per_customer WHERE n > 1;").sorted(),
		[]string{"+U[ann, 2]"})
	equal(t, "SHOW TABLES", run(t, a, "SHOW TABLES;").sorted(), []string{"+I[big]", "+I[mine]", "+I[orders]", "+I[per_customer]"})
	equal(t, "SHOW VIEWS", run(t, a, "SHOW VIEWS;").sorted(), []string{"+I[big]", "+I[mine]", "+I[per_customer]"})
	equal(t, "DESCRIBE", run(t, a, "DESCRIBE big;").rows, []string{"+I[k, INT, TRUE, , , ]", "+I[v, DOUBLE, TRUE, , , ]"})
	equal(t, "SHOW CREATE VIEW", run(t, a, "SHOW CREATE VIEW big;").rows, []string{"+I[CREATE VIEW `default_catalog`.`default_database`.`big` (\n  `k`,\n  `v`\n)\nCOMMENT 'large orders'\nAS SELECT id, amount FROM orders WHERE amount > 100\n]"})

	// INSERT ... SELECT from a view, with a WITH clause.
	run(t, a, `CREATE TABLE out (k INT, v DOUBLE);
		INSERT INTO out WITH doubled AS (SELECT k, v * 2 AS v FROM big) SELECT k, v FROM doubled;`)
	equal(t, "INSERT from a CTE over a view", run(t, a, "SELECT * FROM out;").sorted(), []string{"+I[2, 300.0]", "+I[3, 400.0]"})

	// Another session sees the permanent views only.
	b := openSession(t, c)
	equal(t, "SHOW VIEWS in another session", run(t, b, "SHOW VIEWS;").sorted(), []string{"+I[big]", "+I[per_customer]"})
	equal(t, "a view from another session", run(t, b, "SELECT k FROM big;").sorted(), []string{"+I[2]", "+I[3]"})

	for _, tc := range []struct{ sql, want string }{
		{"SELECT 1;\nCREATE VIEW big AS SELECT 1;", "line 2, column 13: Table (or view) default_database.big already exists in Catalog default_catalog."},
		{"CREATE TEMPORARY VIEW mine AS SELECT 1;", "line 1, column 23: Temporary table '`default_catalog`.`default_database`.`mine`' already exists"},
		{"CREATE VIEW bad AS SELECT nope FROM orders;", `line 1, column 27: unknown column "nope"`},
		{"CREATE VIEW bad (a) AS SELECT id, amount FROM orders;", "line 1, column 13: VIEW definition and input fields not match:"},
		{"DROP VIEW nope;", "line 1, column 11: View with identifier 'default_catalog.default_database.nope' does not exist."},
		{"DROP VIEW orders;", "line 1, column 11: View with identifier 'default_catalog.default_database.orders' does not exist."},
		{"DROP TABLE big;", "line 1, column 12: Table with identifier 'default_catalog.default_database.big' does not exist."},
		{"SHOW CREATE TABLE big;", "line 1, column 19: SHOW CREATE TABLE is only supported for tables, but `default_catalog`.`default_database`.`big` is a view. Please use SHOW CREATE VIEW instead."},
		{"SHOW CREATE VIEW orders;", "line 1, column 18: SHOW CREATE VIEW is only supported for views, but `default_catalog`.`default_database`.`orders` is a table. Please use SHOW CREATE TABLE instead."},
		{"INSERT INTO big SELECT id, amount FROM orders;", "line 1, column 13: view default_catalog.default_database.big cannot be written"},
		{"WITH o (a, b) AS (SELECT id FROM orders) SELECT * FROM o;", "line 1, column 6: Number of columns must match number of query columns"},
	} {
		err := execErr(t, a, tc.sql)
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.sql, err, tc.want)
		}
	}
	run(t, a, "CREATE VIEW IF NOT EXISTS big AS SELECT 1; DROP VIEW IF EXISTS nope; DROP TABLE IF EXISTS big;")
	equal(t, "big after IF [NOT] EXISTS", run(t, a, "SELECT k FROM big;").sorted(), []string{"+I[2]", "+I[3]"})

	// A temporary view hides a permanent one of its name; DROP VIEW then
	// refuses, as in Flink, until the temporary one is dropped.
	run(t, a, "CREATE TEMPORARY VIEW big AS SELECT 42 AS k;")
	equal(t, "the temporary view hides the permanent", run(t, a, "SELECT k FROM big;").rows, []string{"+I[42]"})
	if err := execErr(t, a, "DROP VIEW big;"); !strings.Contains(err.Error(), "Temporary view with identifier '`default_catalog`.`default_database`.`big`' exists. Drop it first before removing the permanent view.") {
		t.Errorf("DROP VIEW under a temporary view: %v", err)
	}
	run(t, a, "DROP TEMPORARY VIEW big; DROP VIEW big;")
	equal(t, "SHOW VIEWS after the drops", run(t, a, "SHOW VIEWS;").sorted(), []string{"+I[mine]", "+I[per_customer]"})
	if err := b.Execute(context.Background(), "SELECT * FROM big;", false, newRows()); err == nil || !strings.Contains(err.Error(), `unknown table "big"`) {
		t.Errorf("a dropped view: %v", err)
	}
}

// TestViewNamesResolveInItsDatabase: a view's query reads the tables of
// the database the view is in, whatever the reader's current database; a
// view whose table was dropped fails where it is read, naming the view.
func TestViewNamesResolveInItsDatabase(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	run(t, s, `CREATE TABLE orders (id INT); INSERT INTO orders VALUES (1);
		CREATE DATABASE shop; USE shop;
		CREATE TABLE orders (id INT); INSERT INTO orders VALUES (2);
		CREATE VIEW v AS SELECT id FROM orders;
		CREATE TABLE gone (id INT); CREATE VIEW broken AS SELECT id FROM gone; DROP TABLE gone;
		USE default_database;`)
	equal(t, "shop.v from default_database", run(t, s, "SELECT id FROM shop.v;").rows, []string{"+I[2]"})
	err := execErr(t, s, "SELECT id FROM\n  shop.broken;")
	if want := `line 2, column 3: view shop.broken: line 1, column 16: unknown table "gone"`; !strings.Contains(err.Error(), want) {
		t.Errorf("a view over a dropped table: %v, want %q", err, want)
	}
}

// TestViewsSurviveRestart: a permanent view is in the catalog, so it is
// there after the cluster restarts on the same data directory.
func TestViewsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	cl, c := startSQLCluster(t, dir)
	s := openSession(t, c)
	run(t, s, "CREATE TABLE t (x INT); INSERT INTO t VALUES (1), (2), (3); CREATE VIEW odd AS SELECT x FROM t WHERE MOD(x, 2) = 1;")
	c.Close()
	if err := cl.Close(); err != nil {
		t.Fatal(err)
	}
	cl, c = startSQLCluster(t, dir)
	defer cl.Close()
	defer c.Close()
	s = openSession(t, c)
	equal(t, "the view after a restart", run(t, s, "SELECT x FROM odd;").sorted(), []string{"+I[1]", "+I[3]"})
}
