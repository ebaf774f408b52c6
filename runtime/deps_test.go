package runtime

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLayering keeps the package where DESIGN.md puts it: it imports only
// the Braid packages below it.
func TestLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	allowed := map[string]bool{}
	for _, p := range []string{"types", "proto/braid/v1", "operators", "connectors", "shuffle", "state", "jobgraph", "expr", "catalog"} {
		allowed["github.com/braidflow/braid/"+p] = true
	}
	for _, dep := range strings.Fields(string(out)) {
		if !strings.HasPrefix(dep, "github.com/braidflow/braid/") || dep == "github.com/braidflow/braid/runtime" {
			continue
		}
		if !allowed[dep] {
			t.Errorf("runtime imports %s, which DESIGN.md puts above it", dep)
		}
	}
}
