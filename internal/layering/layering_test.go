// Package layering holds the test that keeps Braid's packages in the
// one-way layers of DESIGN.md: each package imports only the packages of
// this module listed for it below.
package layering

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/braidflow/braid/"

// allowed lists, for each package, the packages of this module it may
// import directly. "*" allows any package but the commands, and a package
// missing from the table fails the test until it is placed in a layer.
//
// Where this differs from DESIGN.md's table: operator specs live in
// jobgraph (the plan both servers share), so jobgraph imports expr and
// operators and connectors import jobgraph; connectors turn catalog tables
// into specs, so they import catalog. The planner builds the typed
// jobgraph.Graph and never sees its protobuf form.
var allowed = map[string][]string{
	"types":          {},
	"proto/braid/v1": {},
	"sql/ast":        {"types"},
	"sql/parser":     {"sql/ast", "types"},
	"expr":           {"types"},
	"catalog":        {"types"},
	"jobgraph":       {"types", "proto/braid/v1", "expr"},
	"planner":        {"sql/ast", "sql/parser", "catalog", "expr", "jobgraph", "types"},
	"state":          {"types"},
	"operators":      {"expr", "state", "types", "jobgraph"},
	"connectors":     {"operators", "state", "expr", "types", "catalog", "jobgraph"},
	"shuffle":        {"types", "proto/braid/v1", "internal/msgsize"},
	"runtime":        {"operators", "connectors", "shuffle", "state", "jobgraph", "types", "proto/braid/v1"},
	"checkpoint":     {"state", "jobgraph", "types", "proto/braid/v1"},
	"scheduler":      {"jobgraph", "types", "proto/braid/v1"},
	"metastore":      {"catalog", "types", "proto/braid/v1"},
	"client":         {"types", "proto/braid/v1", "internal/leaderhint", "internal/msgsize"},
	"client/render":  {"client", "types"},
	"jobmanager":     {"*"},
	"taskmanager":    {"*"},
	"localcluster":   {"*"},
	"bench":          {"*"},

	// The panic-recovering interceptors both servers install.
	"internal/grpcrecover": {},
	// The advertised-address rule both servers share.
	"internal/netaddr": {},
	// How a standby job manager names the leader, for servers and clients.
	"internal/leaderhint": {},
	// How cluster members authenticate each other (secret, mutual TLS).
	"internal/memberauth": {},
	// Certificates for tests of mutual TLS.
	"internal/memberauth/testcerts": {},
	// How clients authenticate (tokens, JWT) and their roles.
	"internal/clientauth": {},
	// The gRPC message size limits of every connection.
	"internal/msgsize": {},
	// The differential test: all its code is in _test.go files, which
	// may import sql/ast, sql/parser, types, client and localcluster but
	// never planner, expr or operators (its own deps_test.go checks).
	"e2e/difftest": {},
	// internal/etcdtest starts etcd servers for tests.
	"internal/etcdtest": {"internal/memberauth/testcerts"},
	// internal/mysqltest gives tests a MySQL-protocol server.
	"internal/mysqltest": {},
}

func TestLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], module)
		if strings.HasPrefix(pkg, "cmd/") || pkg == "e2e" || pkg == "internal/layering" {
			continue
		}
		rules, ok := allowed[pkg]
		if !ok {
			t.Errorf("package %s has no place in the layering table; add it to allowed", pkg)
			continue
		}
		var bad []string
		for _, imp := range f[1:] {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok || permitted(rules, dep) {
				continue
			}
			bad = append(bad, dep)
		}
		sort.Strings(bad)
		if len(bad) > 0 {
			t.Errorf("%s imports %s, which its layer does not allow", pkg, strings.Join(bad, ", "))
		}
	}
}

func permitted(rules []string, dep string) bool {
	for _, r := range rules {
		if r == dep || (r == "*" && !strings.HasPrefix(dep, "cmd/")) {
			return true
		}
	}
	return false
}
