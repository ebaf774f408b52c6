package difftest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestReferenceIsIndependent keeps the reference honest: the test imports
// the parser and AST, the client and the local cluster, but nothing of
// the engine it checks (planner, expr, operators), so it cannot share
// their mistakes.
func TestReferenceIsIndependent(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .TestImports " "}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{"sql/ast": true, "sql/parser": true, "types": true, "client": true, "localcluster": true}
	for _, imp := range strings.Fields(string(out)) {
		pkg, ok := strings.CutPrefix(imp, "github.com/braidflow/braid/")
		if ok && !allowed[pkg] {
			t.Errorf("the differential test imports %s; it may import only the parser, the AST, types, the client and the local cluster", pkg)
		}
	}
}
