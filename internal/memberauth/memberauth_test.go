package memberauth

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/braidflow/braid/internal/memberauth/testcerts"
)

// The health service's Check stands for a member method, Watch for one
// left to its own checks.
func memberMethod(m string) bool { return m == "/grpc.health.v1.Health/Check" }

// serve serves the health service with m's server options.
func serve(t *testing.T, m *Members) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(m.ServerOptions(memberMethod)...)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// call calls the member method at addr as caller and returns the code.
func call(t *testing.T, addr string, caller *Members) codes.Code {
	t.Helper()
	conn, err := grpc.NewClient(addr, caller.DialOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	return status.Code(err)
}

func mk(t *testing.T, cfg Config) *Members {
	t.Helper()
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSecret(t *testing.T) {
	const secret = "0123456789abcdef0123"
	server := mk(t, Config{Secret: secret})
	addr := serve(t, server)
	if got := call(t, addr, mk(t, Config{Secret: secret})); got != codes.OK {
		t.Errorf("member: %v", got)
	}
	if got := call(t, addr, mk(t, Config{Secret: "another-secret-0123"})); got != codes.Unauthenticated {
		t.Errorf("wrong secret: %v, want Unauthenticated", got)
	}
	if got := call(t, addr, mk(t, Config{})); got != codes.Unauthenticated {
		t.Errorf("no secret: %v, want Unauthenticated", got)
	}
	if _, err := New(Config{Secret: "short"}); err == nil {
		t.Error("a 5-character secret was accepted")
	}
	if !mk(t, Config{}).Insecure() || server.Insecure() {
		t.Error("Insecure")
	}
}

func TestLoadOrCreateSecret(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jm", "cluster-secret")
	s1, err := LoadOrCreateSecret(path)
	if err != nil || len(s1) != 2*secretBytes {
		t.Fatalf("created %q, %v", s1, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("secret file mode %v, %v", fi.Mode(), err)
	}
	if s2, err := LoadOrCreateSecret(path); err != nil || s2 != s1 {
		t.Fatalf("second load %q, %v; want %q", s2, err, s1)
	}
	if s3, err := ReadSecret(path); err != nil || s3 != s1 {
		t.Fatalf("read %q, %v", s3, err)
	}
	if _, err := ReadSecret(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Fatal("read a missing secret")
	}
}

func TestMutualTLS(t *testing.T) {
	cluster, stranger := testcerts.NewCA(t, "cluster"), testcerts.NewCA(t, "stranger")
	withCerts := func(c *testcerts.CA, secret string) *Members {
		cert, key, caf := c.Member(t, t.TempDir())
		return mk(t, Config{CertFile: cert, KeyFile: key, CAFile: caf, Secret: secret})
	}
	server := withCerts(cluster, "")
	addr := serve(t, server)
	if got := call(t, addr, withCerts(cluster, "")); got != codes.OK {
		t.Errorf("member: %v", got)
	}
	if got := call(t, addr, withCerts(stranger, "")); got == codes.OK {
		t.Errorf("a certificate of another CA was accepted")
	}
	if got := call(t, addr, mk(t, Config{})); got != codes.Unavailable {
		t.Errorf("plaintext caller: %v, want Unavailable (no TLS handshake)", got)
	}

	// A TLS caller without a certificate reaches the other methods, not
	// the member ones.
	anon := &Members{tls: &certs{}}
	anon.tls = clientOnly(t, cluster)
	if got := call(t, addr, anon); got != codes.Unauthenticated {
		t.Errorf("caller without a certificate: %v, want Unauthenticated", got)
	}

	if _, err := New(Config{CertFile: "x"}); err == nil {
		t.Error("a certificate without key and CA was accepted")
	}
}

// clientOnly returns certs that verify servers against c but present no
// certificate.
func clientOnly(t *testing.T, c *testcerts.CA) *certs {
	t.Helper()
	cert, key, caf := c.Member(t, t.TempDir())
	cs, err := loadCerts(cert, key, caf, "")
	if err != nil {
		t.Fatal(err)
	}
	cs.mu.cert = nil
	cs.mu.checked = time.Now().Add(time.Hour) // no reload
	return cs
}

// TestCertificateReload: a member whose files change serves the new
// certificate once the reload interval passed.
func TestCertificateReload(t *testing.T) {
	old, next := testcerts.NewCA(t, "old"), testcerts.NewCA(t, "next")
	dir := t.TempDir()
	cert, key, caf := old.Member(t, dir)
	server := mk(t, Config{CertFile: cert, KeyFile: key, CAFile: caf})
	addr := serve(t, server)
	caller := func(c *testcerts.CA) *Members {
		cert, key, caf := c.Member(t, t.TempDir())
		return mk(t, Config{CertFile: cert, KeyFile: key, CAFile: caf})
	}
	if got := call(t, addr, caller(old)); got != codes.OK {
		t.Fatalf("before the rotation: %v", got)
	}
	next.Member(t, dir) // rotate: new certificate, key and CA
	server.tls.mu.Lock()
	server.tls.mu.checked = time.Time{} // the interval passed
	server.tls.mu.Unlock()
	if got := call(t, addr, caller(next)); got != codes.OK {
		t.Fatalf("after the rotation, a member of the new CA: %v", got)
	}
	if got := call(t, addr, caller(old)); got == codes.OK {
		t.Fatal("after the rotation, a member of the old CA was accepted")
	}
}
