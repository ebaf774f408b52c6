package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/braidflow/braid/internal/memberauth"
	"github.com/braidflow/braid/internal/memberauth/testcerts"
	"github.com/braidflow/braid/localcluster"
)

// TestJobsOverTLS: braid jobs and braid sql reach a job manager whose
// members use mutual TLS with --tls-ca or BRAID_TLS_CA, and without
// either fail with an error that points at TLS.
func TestJobsOverTLS(t *testing.T) {
	cert, key, ca := testcerts.NewCA(t, "cluster").Member(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := localcluster.Start(ctx, localcluster.Options{Members: memberauth.Config{CertFile: cert, KeyFile: key, CAFile: ca}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ep := cl.Endpoint()
	script := filepath.Join(t.TempDir(), "q.sql")
	writeFile(t, script, "SELECT 1;")
	if code, out, errw := runArgs("sql", "-f", script, "--endpoint", ep, "--tls-ca", ca); code != 0 || !strings.Contains(out, "1") {
		t.Fatalf("sql with --tls-ca: code %d, stdout %q, stderr %q", code, out, errw)
	}
	if code, _, errw := runArgs("jobs", "list", "--endpoint", ep, "--tls-ca", ca, "--tls-cert", cert, "--tls-key", key); code != 0 {
		t.Fatalf("jobs list with a client certificate: code %d, stderr %q", code, errw)
	}
	if code, _, errw := runArgs("jobs", "list", "--endpoint", ep); code != 1 || !strings.Contains(errw, "may require TLS") || !strings.Contains(errw, "--tls-ca") {
		t.Fatalf("jobs list without TLS: code %d, stderr %q", code, errw)
	}
	t.Setenv("BRAID_TLS_CA", ca)
	if code, _, errw := runArgs("jobs", "list", "--endpoint", ep); code != 0 {
		t.Fatalf("jobs list with BRAID_TLS_CA: code %d, stderr %q", code, errw)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
