// Package etcdtest starts embedded etcd servers for tests.
package etcdtest

import (
	"net"
	"net/url"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/braidflow/braid/internal/memberauth/testcerts"
)

// StartTLS starts an etcd on loopback that serves its clients over TLS
// with a certificate of ca and requires client certificates ca signed. It
// returns the client host:port; the server stops when the test ends.
func StartTLS(t testing.TB, ca *testcerts.CA) string {
	t.Helper()
	cert, key, caFile := ca.Member(t, t.TempDir())
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir = "tls", t.TempDir()
	curl := url.URL{Scheme: "https", Host: freeAddr(t)}
	purl := url.URL{Scheme: "http", Host: freeAddr(t)}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{curl}, []url.URL{curl}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{purl}, []url.URL{purl}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ListenMetricsUrls = nil
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.ClientTLSInfo = transport.TLSInfo{CertFile: cert, KeyFile: key, TrustedCAFile: caFile, ClientCertAuth: true}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(10 * time.Second):
		t.Fatal("etcd not ready")
	}
	return curl.Host
}

// freeAddr returns a free loopback host:port.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
