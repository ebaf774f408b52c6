package state

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps keeps state below operators, runtime and the servers in the
// layering of DESIGN.md: of this module it may import types only.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	const mod = "github.com/braidflow/braid/"
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, mod) && p != mod+"state" && p != mod+"types" {
			t.Errorf("state imports %s", p)
		}
	}
}
