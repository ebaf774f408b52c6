package connectors

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps keeps the package inside its layer (DESIGN.md): connectors may
// import operators, state, expr, types, catalog and jobgraph, never the
// runtime, planner, servers or scheduling above it.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	forbidden := []string{"runtime", "planner", "scheduler", "checkpoint", "shuffle", "jobmanager",
		"taskmanager", "metastore", "client", "sql", "cmd"}
	for _, dep := range strings.Fields(string(out)) {
		rest, ok := strings.CutPrefix(dep, "github.com/braidflow/braid/")
		if !ok {
			continue
		}
		top := strings.Split(rest, "/")[0]
		for _, f := range forbidden {
			if top == f {
				t.Errorf("connectors depends on %s", dep)
			}
		}
	}
}
