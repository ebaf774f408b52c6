package jobmanager

import (
	"context"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/braidflow/braid/internal/memberauth/testcerts"
	"github.com/braidflow/braid/metastore"
)

// freeAddr returns a free loopback host:port.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestEtcdOverTLS: a job manager given --etcd-ca, --etcd-cert and
// --etcd-key runs on an etcd that requires client certificates; without
// them it does not start, and says TLS may be why. The TLS flags are
// refused without an external etcd.
func TestEtcdOverTLS(t *testing.T) {
	ca := testcerts.NewCA(t, "etcd")
	serverCert, serverKey, caFile := ca.Member(t, t.TempDir())
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir = "tls", t.TempDir()
	curl := url.URL{Scheme: "https", Host: freeAddr(t)}
	purl := url.URL{Scheme: "http", Host: freeAddr(t)}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{curl}, []url.URL{curl}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{purl}, []url.URL{purl}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ListenMetricsUrls = nil
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.ClientTLSInfo = transport.TLSInfo{CertFile: serverCert, KeyFile: serverKey, TrustedCAFile: caFile, ClientCertAuth: true}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(10 * time.Second):
		t.Fatal("etcd not ready")
	}
	cert, key, _ := ca.Member(t, t.TempDir())

	start := func(files metastore.TLSFiles, timeout time.Duration) (*JobManager, error) {
		jm, err := New(Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), Etcd: []string{curl.Host}, EtcdTLS: files, Logger: zap.NewNop()})
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return jm, jm.Start(ctx)
	}
	jm, err := start(metastore.TLSFiles{CertFile: cert, KeyFile: key, CAFile: caFile}, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jm.Catalog().ListTables(context.Background(), "default_database"); err != nil {
		t.Fatalf("catalog over TLS: %v", err)
	}
	jm.Close()

	if _, err := start(metastore.TLSFiles{}, 2*time.Second); err == nil || !strings.Contains(err.Error(), "if etcd serves TLS") {
		t.Fatalf("job manager on a TLS etcd without TLS: %v", err)
	}
	_, err = New(Config{DataDir: t.TempDir(), EtcdTLS: metastore.TLSFiles{CAFile: caFile}})
	if err == nil || !strings.Contains(err.Error(), "--etcd-ca") {
		t.Fatalf("etcd TLS files with the embedded etcd: %v", err)
	}
}
