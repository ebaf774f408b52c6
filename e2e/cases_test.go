package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/braidflow/braid/internal/mysqltest"
)

// runLocalCases runs every case in testdata/dir (CASE.sql and its expected
// CASE.out) as a user would, braid sql --local -f CASE.sql --format tsv,
// and checks the final result of the last SELECT (checkResult), rows
// compared as a set unless the case says "-- compare: ordered".
func runLocalCases(t *testing.T, dir string) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.sql"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no cases in testdata/%s: %v", dir, err)
	}
	for _, path := range paths {
		if strings.HasSuffix(path, ".mysql.sql") {
			continue // the MySQL setup of the case beside it
		}
		name := strings.TrimSuffix(filepath.Base(path), ".sql")
		t.Run(name, func(t *testing.T) {
			c := loadCaseFile(t, name, path)
			stdout, stderr, err := braid(t, 2*time.Minute, "sql", "--local", "-f", caseFile(t, c, path), "--format", "tsv")
			checkResult(t, c, stdout, stderr, err)
		})
	}
}

// loadCaseFile reads the case at path (.sql) with its expected result
// (.out beside it) and its "-- compare:" and "-- requires:" headers.
func loadCaseFile(t *testing.T, name, path string) conformanceCase {
	t.Helper()
	sql, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(strings.TrimSuffix(path, ".sql") + ".out")
	if err != nil {
		t.Fatal(err)
	}
	c := conformanceCase{name: name, sql: string(sql), want: string(want)}
	for _, line := range strings.Split(c.sql, "\n") {
		if v, ok := strings.CutPrefix(line, "-- compare:"); ok {
			c.ordered = strings.TrimSpace(v) == "ordered"
		}
		if v, ok := strings.CutPrefix(line, "-- requires:"); ok {
			c.requires = append(c.requires, strings.TrimSpace(v))
		}
	}
	for _, r := range c.requires {
		switch r {
		case "mysql":
			c.sql = prepareMySQL(t, path, c.sql)
		default:
			t.Fatalf("%s requires %q, which the runner cannot provide", name, r)
		}
	}
	return c
}

// prepareMySQL readies a "-- requires: mysql" case: it runs the case's
// NAME.mysql.sql on the test server (MYSQL_HOST and the like, or an
// in-process one, see mysqltest) and substitutes the server's
// ${MYSQL_HOST}, ${MYSQL_PORT}, ${MYSQL_USER} and ${MYSQL_PASSWORD} into
// the case's SQL.
func prepareMySQL(t *testing.T, path, sql string) string {
	t.Helper()
	srv := mysqltest.Start(t)
	setup, err := os.ReadFile(strings.TrimSuffix(path, ".sql") + ".mysql.sql")
	if err != nil {
		t.Fatal(err)
	}
	srv.Exec(t, string(setup))
	for k, v := range srv.Env() {
		sql = strings.ReplaceAll(sql, "${"+k+"}", v)
	}
	return sql
}

// caseFile is the path of c's SQL as it runs: path itself, or, when the
// runner had to prepare the case, a file holding the prepared SQL.
func caseFile(t *testing.T, c conformanceCase, path string) string {
	t.Helper()
	if len(c.requires) == 0 {
		return path
	}
	p := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(p, []byte(c.sql), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
