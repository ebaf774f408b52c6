package client

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps keeps the client library light: of Braid's own packages it may
// import only the wire contracts and the types.
func TestDeps(t *testing.T) {
	for _, pkg := range []string{".", "./render"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Skipf("go list: %v", err)
		}
		for _, dep := range strings.Fields(string(out)) {
			rest, ok := strings.CutPrefix(dep, "github.com/braidflow/braid/")
			if !ok {
				continue
			}
			switch {
			case rest == "proto/braid/v1", rest == "types", rest == "client", rest == "client/render":
			default:
				t.Errorf("%s imports %s; the client may import only proto/braid/v1 and types", pkg, dep)
			}
		}
	}
}
