package memberauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
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

// ca is a test certificate authority.
type ca struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t *testing.T, name string) *ca {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &ca{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// member writes a member certificate signed by c, its key and c's
// certificate into dir and returns their paths.
func (c *ca) member(t *testing.T, dir string, serial int64) (certFile, keyFile, caFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "member"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, caFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), filepath.Join(dir, "ca.crt")
	for f, b := range map[string][]byte{
		certFile: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyFile:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}),
		caFile:   c.pem,
	} {
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return certFile, keyFile, caFile
}

func TestMutualTLS(t *testing.T) {
	cluster, stranger := newCA(t, "cluster"), newCA(t, "stranger")
	withCerts := func(c *ca, secret string) *Members {
		cert, key, caf := c.member(t, t.TempDir(), 2)
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
	anon.tls = cluster.clientOnly(t)
	if got := call(t, addr, anon); got != codes.Unauthenticated {
		t.Errorf("caller without a certificate: %v, want Unauthenticated", got)
	}

	if _, err := New(Config{CertFile: "x"}); err == nil {
		t.Error("a certificate without key and CA was accepted")
	}
}

// clientOnly returns certs that verify servers against c but present no
// certificate.
func (c *ca) clientOnly(t *testing.T) *certs {
	t.Helper()
	cert, key, caf := c.member(t, t.TempDir(), 3)
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
	old, next := newCA(t, "old"), newCA(t, "next")
	dir := t.TempDir()
	cert, key, caf := old.member(t, dir, 2)
	server := mk(t, Config{CertFile: cert, KeyFile: key, CAFile: caf})
	addr := serve(t, server)
	caller := func(c *ca) *Members {
		cert, key, caf := c.member(t, t.TempDir(), 4)
		return mk(t, Config{CertFile: cert, KeyFile: key, CAFile: caf})
	}
	if got := call(t, addr, caller(old)); got != codes.OK {
		t.Fatalf("before the rotation: %v", got)
	}
	next.member(t, dir, 5) // rotate: new certificate, key and CA
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
