package metastore

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps metastore below the servers, and beside (not above)
// the scheduler, as DESIGN.md's layering says.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	const mod = "github.com/braidflow/braid/"
	forbidden := []string{
		mod + "scheduler", mod + "jobmanager", mod + "taskmanager", mod + "planner",
		mod + "sql", mod + "runtime", mod + "operators", mod + "connectors",
		mod + "shuffle", mod + "client", mod + "cmd",
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") || (strings.HasSuffix(f, "/") && strings.HasPrefix(dep, f)) {
				t.Errorf("metastore depends on %s", dep)
			}
		}
	}
}
