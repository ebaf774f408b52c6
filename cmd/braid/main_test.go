package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
