package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// supported lists the conformance cases whose SQL Braid runs today. Every
// other case in testdata/conformance must fail with a clear "not supported"
// error naming the feature (TestConformanceUnsupported), so a case that
// starts working shows up as a test to move here.
var supported = []string{
	"seed-join-orders-shipments",
	"seed-regular-join-inner",
	"seed-regular-join-filter",
	"seed-merge-streams",
	"seed-regular-join-left",
	"seed-regular-join-right",
	"seed-regular-join-full",
	"seed-regular-join-cross",
	"seed-regular-join-ttl-hint",
	// An event-time interval join: the watermarks of both inputs expire
	// its state.
	"seed-interval-join",
	// LEFT JOIN LATERAL over a correlated aggregate, decorrelated into a
	// join with the grouped subquery, then a global Top-3 the client
	// prints in ORDER BY order.
	"seed-lateral-join-top3",
	// An event-time temporal join: each transaction joins the rate
	// version valid at its time.
	"seed-temporal-join",
	// A processing-time lookup join of a MySQL table (the runner sets up
	// the table on the test server, see prepareMySQL).
	"seed-lookup-join",
}

type conformanceCase struct {
	name     string
	sql      string
	want     string
	ordered  bool
	requires []string
}

func loadCase(t *testing.T, name string) conformanceCase {
	t.Helper()
	return loadCaseFile(t, name, filepath.Join("testdata/conformance", name+".sql"))
}

// normalize splits a TSV result into its header and rows, sorting the rows
// unless order matters.
func normalize(out string, ordered bool) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 {
		return ""
	}
	rows := lines[1:]
	if !ordered {
		sort.Strings(rows)
	}
	return strings.Join(append([]string{lines[0]}, rows...), "\n")
}

func checkResult(t *testing.T, c conformanceCase, stdout, stderr string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v\nstderr:\n%s", c.name, err, stderr)
	}
	got, want := normalize(stdout, c.ordered), normalize(c.want, c.ordered)
	if got != want {
		t.Fatalf("%s: result differs\n--- got\n%s\n--- want\n%s\n--- stderr\n%s", c.name, got, want, stderr)
	}
}

// TestConformanceLocal runs each supported case on its own embedded local
// cluster, as a user would: braid sql --local -f CASE.sql --format tsv.
func TestConformanceLocal(t *testing.T) {
	for _, name := range supported {
		t.Run(name, func(t *testing.T) {
			c := loadCase(t, name)
			stdout, stderr, err := braid(t, 2*time.Minute, "sql", "--local", "-f",
				caseFile(t, c, filepath.Join("testdata/conformance", name+".sql")), "--format", "tsv")
			checkResult(t, c, stdout, stderr, err)
		})
	}
}

// TestConformanceSettings runs each supported case at parallelism 1 and 4,
// with sources emitting batches of 1 row and of 1024 rows: the final result
// must be the case's in every combination.
func TestConformanceSettings(t *testing.T) {
	for _, name := range supported {
		c := loadCase(t, name)
		for _, par := range []int{1, 4} {
			for _, batch := range []int{1, 1024} {
				t.Run(fmt.Sprintf("%s/p%d-batch%d", name, par, batch), func(t *testing.T) {
					script := fmt.Sprintf("SET 'parallelism.default' = '%d';\nSET 'braid.exec.source.batch-size' = '%d';\n%s", par, batch, c.sql)
					path := filepath.Join(t.TempDir(), name+".sql")
					if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
						t.Fatal(err)
					}
					stdout, stderr, err := braid(t, 2*time.Minute, "sql", "--local", "-f", path, "--format", "tsv")
					checkResult(t, c, stdout, stderr, err)
				})
			}
		}
	}
}

// TestConformanceProcesses runs each supported case against one long-running
// cluster of three processes (a job manager and two task managers), each case
// in a database of its own because the catalog is persistent.
func TestConformanceProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a multi-process cluster; runs without -short (make test)")
	}
	cl := startProcessCluster(t, 2, 2)
	for i, name := range supported {
		t.Run(name, func(t *testing.T) {
			c := loadCase(t, name)
			db := fmt.Sprintf("case_%d_%d", i, time.Now().UnixNano())
			script := fmt.Sprintf("CREATE DATABASE %s;\nUSE %s;\n%s", db, db, c.sql)
			path := filepath.Join(t.TempDir(), name+".sql")
			if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, err := braid(t, 2*time.Minute, "sql", "--endpoint", cl.endpoint, "-f", path, "--format", "tsv")
			checkResult(t, c, stdout, stderr, err)
		})
	}
}

// TestConformanceUnsupported runs every case Braid does not support yet and
// checks that it fails with a positioned "not supported yet" error rather
// than a wrong result or a crash. A case that starts to pass belongs in
// supported.
func TestConformanceUnsupported(t *testing.T) {
	all, err := filepath.Glob("testdata/conformance/*.out")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, s := range supported {
		known[s] = true
	}
	for _, path := range all {
		name := strings.TrimSuffix(filepath.Base(path), ".out")
		if known[name] {
			continue
		}
		t.Run(name, func(t *testing.T) {
			stdout, stderr, err := braid(t, 2*time.Minute, "sql", "--local", "-f",
				filepath.Join("testdata/conformance", name+".sql"), "--format", "tsv")
			if err == nil {
				t.Fatalf("%s ran without error; move it to supported if its result is right:\n%s", name, stdout)
			}
			if !strings.Contains(stderr, "not supported yet") || !strings.Contains(stderr, "line ") {
				t.Fatalf("%s failed without a positioned \"not supported yet\" error:\n%s", name, stderr)
			}
		})
	}
}
