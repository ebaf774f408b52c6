package jobmanager_test

import (
	"strings"
	"testing"
)

// TestAlterTable: ALTER TABLE SET and RESET change a table's options,
// checked as CREATE TABLE checks them, and RENAME TO moves a connector
// table; the changes are in etcd, so they outlive a restart of the
// cluster, and SHOW CREATE TABLE shows them.
func TestAlterTable(t *testing.T) {
	dir := t.TempDir()
	cl, c := startSQLCluster(t, dir)
	s := openSession(t, c)
	run(t, s, `CREATE TABLE gen (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3', 'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '10');
		CREATE TABLE kept (k INT);`)
	r := run(t, s, "ALTER TABLE gen SET ('number-of-rows' = '5');")
	equal(t, "SET reply", r.status, []string{"Execute statement succeeded."})
	equal(t, "rows after SET", run(t, s, "SELECT k FROM gen;").sorted(), []string{"+I[1]", "+I[2]", "+I[3]", "+I[4]", "+I[5]"})
	run(t, s, "ALTER TABLE gen RESET ('fields.k.start', 'fields.k.end', 'fields.k.kind'); ALTER TABLE gen SET ('fields.k.min' = '7', 'fields.k.max' = '7');")
	run(t, s, "ALTER TABLE gen RENAME TO seq; ALTER TABLE IF EXISTS nope SET ('a' = 'b');")

	for _, tc := range []struct{ sql, want string }{
		{"ALTER TABLE seq SET ('number-of-rows' = 'many');", "line 1, column 13: "},
		{"ALTER TABLE seq SET ('nonsense' = '1');", "nonsense"},
		{"ALTER TABLE seq RESET ('connector');", "line 1, column 24: ALTER TABLE RESET does not support changing 'connector'"},
		{"ALTER TABLE nope SET ('a' = 'b');", "line 1, column 13: Table `default_catalog`.`default_database`.`nope` doesn't exist or is a temporary table."},
		{"ALTER TABLE kept SET ('managed.partitions' = '4');", "line 1, column 23: changing 'managed.partitions' of a managed table is not supported yet"},
		{"ALTER TABLE kept RENAME TO other;", "line 1, column 1: ALTER TABLE ... RENAME TO of a managed table is not supported yet"},
		{"ALTER TABLE seq RENAME TO kept;", "line 1, column 27: Table `default_catalog`.`default_database`.`kept` already exists"},
		{"SELECT * FROM gen;", `unknown table "gen"`},
	} {
		err := execErr(t, s, tc.sql)
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.sql, err, tc.want)
		}
	}

	c.Close()
	if err := cl.Close(); err != nil {
		t.Fatal(err)
	}
	cl, c = startSQLCluster(t, dir)
	defer cl.Close()
	defer c.Close()
	s = openSession(t, c)
	equal(t, "SHOW CREATE TABLE after a restart", run(t, s, "SHOW CREATE TABLE seq;").rows, []string{"+I[CREATE TABLE `default_catalog`.`default_database`.`seq` (\n  `k` INT\n) WITH (\n" +
		"  'connector' = 'datagen',\n  'fields.k.max' = '7',\n  'fields.k.min' = '7',\n  'number-of-rows' = '5'\n)]"})
	equal(t, "rows after the restart", run(t, s, "SELECT k FROM seq;").sorted(), []string{"+I[7]", "+I[7]", "+I[7]", "+I[7]", "+I[7]"})
}
