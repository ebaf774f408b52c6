package scheduler

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps scheduler below the servers in DESIGN.md's
// layering and free of I/O: placement is pure.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	const mod = "github.com/braidflow/braid/"
	forbidden := []string{
		mod + "metastore", mod + "jobmanager", mod + "taskmanager", mod + "planner",
		mod + "sql", mod + "runtime", mod + "operators", mod + "connectors",
		mod + "shuffle", mod + "client", mod + "cmd", mod + "catalog",
		"go.etcd.io/", "github.com/cockroachdb/pebble",
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") || (strings.HasSuffix(f, "/") && strings.HasPrefix(dep, f)) {
				t.Errorf("scheduler depends on %s", dep)
			}
		}
	}
}
