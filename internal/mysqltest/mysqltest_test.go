package mysqltest

import (
	"database/sql"
	"testing"
)

func TestServerRunsScript(t *testing.T) {
	s := Start(t)
	s.Exec(t, "CREATE DATABASE IF NOT EXISTS mysqltest_check;\nDROP TABLE IF EXISTS mysqltest_check.t;\nCREATE TABLE mysqltest_check.t (k INT PRIMARY KEY, v VARCHAR(8));\nINSERT INTO mysqltest_check.t VALUES (1, 'a'), (2, 'b');")
	db, err := sql.Open("mysql", s.DSN("mysqltest_check"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	if err := db.QueryRow("SELECT v FROM t WHERE k = ?", 2).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v != "b" {
		t.Fatalf("got %q, want b", v)
	}
}
