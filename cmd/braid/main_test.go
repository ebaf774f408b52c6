package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/braidflow/braid/internal/clientauth"
	"github.com/braidflow/braid/localcluster"
)

func runArgs(args ...string) (code int, stdout, stderr string) {
	var out, errw bytes.Buffer
	code = run(context.Background(), args, &out, &errw)
	return code, out.String(), errw.String()
}

func closedPort(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

func TestDispatch(t *testing.T) {
	for _, c := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{nil, 2, "", "Usage: braid"},
		{[]string{"help"}, 0, "Usage: braid", ""},
		{[]string{"version"}, 0, "braid dev", ""},
		{[]string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{[]string{"bench"}, 2, "", "Usage: braid bench"},
		{[]string{"bench", "nope"}, 2, "", `unknown benchmark "nope"`},
		{[]string{"bench", "join", "--state-cache", "lots"}, 2, "", "not a size"},
		{[]string{"sql", "--format", "xml"}, 2, "", `unknown format "xml"`},
		{[]string{"sql", "--nope"}, 2, "", "flag provided but not defined"},
		{[]string{"sql", "--set", "novalue"}, 2, "", "want key=value"},
		{[]string{"sql", "stray"}, 2, "", `unexpected argument "stray"`},
		{[]string{"jobs"}, 2, "", "braid jobs list"},
		{[]string{"jobs", "describe"}, 2, "", "braid jobs describe"},
		{[]string{"jobs", "explode", "x"}, 2, "", `unknown subcommand "explode"`},
		{[]string{"local", "extra"}, 2, "", `unexpected argument "extra"`},
	} {
		code, out, errw := runArgs(c.args...)
		if code != c.code || !strings.Contains(out, c.stdout) || !strings.Contains(errw, c.stderr) {
			t.Errorf("braid %q: code %d, stdout %q, stderr %q; want code %d, stdout containing %q, stderr containing %q",
				c.args, code, out, errw, c.code, c.stdout, c.stderr)
		}
	}
}

func TestUnreachableEndpointIsAnError(t *testing.T) {
	addr := closedPort(t)
	script := filepath.Join(t.TempDir(), "q.sql")
	if err := os.WriteFile(script, []byte("SELECT 1;"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"sql", "-f", script, "--endpoint", addr},
		{"jobs", "list", "--endpoint", addr},
		{"jobs", "cancel", "j1", "--endpoint", addr},
	} {
		code, out, errw := runArgs(args...)
		want := "[ERROR] cannot reach job manager at " + addr + ": "
		if code != 1 || out != "" || !strings.HasPrefix(errw, want) {
			t.Errorf("braid %q: code %d, stdout %q, stderr %q; want 1 and %q", args, code, out, errw, want)
		}
	}
	code, _, errw := runArgs("sql", "-f", filepath.Join(t.TempDir(), "missing.sql"))
	if code != 1 || !strings.HasPrefix(errw, "[ERROR] open ") {
		t.Errorf("missing script: code %d, stderr %q", code, errw)
	}
}

// TestToken: braid jobs sends --token, or $BRAID_TOKEN without it, and a
// refusal is reported as Unauthenticated.
func TestToken(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("cli-admin-token-000001 admin ops\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := localcluster.Start(ctx, localcluster.Options{TaskManagers: 1, Clients: clientauth.Config{TokensFile: tokens}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	list := []string{"jobs", "list", "--endpoint", cl.Endpoint()}
	t.Setenv(tokenEnv, "")
	if code, _, errw := runArgs(list...); code != 1 || !strings.HasPrefix(errw, "[ERROR] Unauthenticated: a bearer token is required") {
		t.Errorf("without a token: code %d, stderr %q", code, errw)
	}
	if code, out, errw := runArgs(append(list, "--token", "cli-admin-token-000001")...); code != 0 {
		t.Errorf("with --token: code %d, stdout %q, stderr %q", code, out, errw)
	}
	t.Setenv(tokenEnv, "cli-admin-token-000001")
	if code, _, errw := runArgs(list...); code != 0 {
		t.Errorf("with %s: code %d, stderr %q", tokenEnv, code, errw)
	}
	if code, _, errw := runArgs(append(list, "--token", "not-the-token-at-all")...); code != 1 || !strings.HasPrefix(errw, "[ERROR] Unauthenticated: the token is not valid") {
		t.Errorf("--token over %s: code %d, stderr %q", tokenEnv, code, errw)
	}
}
