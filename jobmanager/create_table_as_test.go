package jobmanager_test

import (
	"strings"
	"testing"
)

// TestCreateTableAs: CREATE TABLE ... AS SELECT creates a table of the
// query's columns and options and fills it in one job; IF NOT EXISTS over
// an existing table inserts into it; a query that fails to plan creates
// no table.
func TestCreateTableAs(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	run(t, s, `CREATE TABLE src (id INT, name STRING, amount DOUBLE);
		INSERT INTO src VALUES (1, 'a', 1.5), (2, 'b', 20.0), (3, 'c', 30.0);`)
	r := run(t, s, "CREATE TABLE big WITH ('managed.partitions' = '2') AS SELECT id, UPPER(name) AS name, amount * 2 FROM src WHERE amount > 10;")
	equal(t, "CTAS reply", r.status, []string{"Complete execution of the SQL update statement."})
	equal(t, "the new table", run(t, s, "SELECT * FROM big;").sorted(), []string{"+I[2, B, 40.0]", "+I[3, C, 60.0]"})
	equal(t, "its columns", run(t, s, "DESCRIBE big;").rows, []string{
		"+I[id, INT, TRUE, , , ]", "+I[name, STRING, TRUE, , , ]", "+I[EXPR$2, DOUBLE, TRUE, , , ]"})

	run(t, s, "CREATE TABLE IF NOT EXISTS big AS SELECT id, name, amount FROM src WHERE id = 1;")
	equal(t, "IF NOT EXISTS inserts into the existing table", run(t, s, "SELECT id FROM big;").sorted(), []string{"+I[1]", "+I[2]", "+I[3]"})

	for _, tc := range []struct{ sql, want string }{
		{"CREATE TABLE big AS SELECT 1;", "line 1, column 14: table default_database.big already exists"},
		{"CREATE TABLE bad AS SELECT nope FROM src;", `line 1, column 28: unknown column "nope"`},
		{"CREATE TABLE bad AS SELECT name, COUNT(*) FROM src GROUP BY name;", "doesn't support consuming update changes"},
		{"CREATE TEMPORARY TABLE bad AS SELECT 1;", "CREATE TABLE AS SELECT syntax does not support to create temporary table yet."},
		{"CREATE TABLE bad (x INT) AS SELECT 1;", "line 1, column 19: column definitions in CREATE TABLE ... AS SELECT is not supported yet"},
	} {
		err := execErr(t, s, tc.sql)
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.sql, err, tc.want)
		}
	}
	if err := execErr(t, s, "SELECT * FROM bad;"); !strings.Contains(err.Error(), `unknown table "bad"`) {
		t.Errorf("a failed CTAS left a table: %v", err)
	}
	// In a statement set, with an INSERT reading the same source: the
	// table is created at END, and one job fills both tables.
	run(t, s, "BEGIN STATEMENT SET;")
	r = run(t, s, "CREATE TABLE small AS SELECT id, name FROM src WHERE amount < 10;")
	equal(t, "CTAS in a set", r.status, []string{"Add SQL update statement to the statement set."})
	if err := execErr(t, s, "SELECT * FROM small;"); !strings.Contains(err.Error(), "Only INSERT statement is allowed in Statement Set.") {
		t.Errorf("a SELECT in the set: %v", err)
	}
	if err := execErr(t, s, "CREATE TABLE big AS SELECT 1;"); !strings.Contains(err.Error(), "line 1, column 14: table default_database.big already exists") {
		t.Errorf("a CTAS of an existing table in the set: %v", err)
	}
	run(t, s, "INSERT INTO big SELECT id, name, amount FROM src WHERE id = 3;\nCREATE TABLE twice AS SELECT 1 AS one;\nCREATE TABLE twice AS SELECT 2 AS two;")
	if err := execErr(t, s, "END;"); !strings.Contains(err.Error(), "line 3, column 14: table default_database.twice already exists") {
		t.Errorf("two CTAS of one name: %v", err)
	}
	for _, name := range []string{"small", "twice"} {
		if err := execErr(t, s, "SELECT * FROM "+name+";"); !strings.Contains(err.Error(), `unknown table "`+name+`"`) {
			t.Errorf("a failed set left table %s: %v", name, err)
		}
	}
	run(t, s, "BEGIN STATEMENT SET;\nCREATE TABLE small AS SELECT id, name FROM src WHERE amount < 10;\nINSERT INTO big SELECT id, name, amount FROM src WHERE id = 3;")
	r = run(t, s, "END;")
	equal(t, "END of a set with a CTAS", r.status, []string{"Complete execution of the SQL update statement."})
	equal(t, "the table of the set's CTAS", run(t, s, "SELECT * FROM small;").sorted(), []string{"+I[1, a]"})
	equal(t, "the set's INSERT", run(t, s, "SELECT id FROM big;").sorted(), []string{"+I[1]", "+I[2]", "+I[3]", "+I[3]"})

	plan := run(t, s, "EXPLAIN CREATE TABLE other AS SELECT id FROM src;").rows
	if len(plan) != 1 || !strings.Contains(plan[0], "Sink: other") {
		t.Errorf("EXPLAIN CTAS: %q", plan)
	}
}
