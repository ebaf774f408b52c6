package metastore

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/braidflow/braid/internal/etcdtest"
	"github.com/braidflow/braid/internal/memberauth/testcerts"
)

// TestConnectOverTLS: an etcd that requires client certificates is
// reached with the CA and a client certificate, and refuses a client
// without them, or with a certificate of another CA, with an error that
// names the endpoint and points at TLS.
func TestConnectOverTLS(t *testing.T) {
	ca := testcerts.NewCA(t, "etcd")
	endpoint := etcdtest.StartTLS(t, ca)
	cert, key, caFile := ca.Member(t, t.TempDir())
	tlsCfg, err := TLSFiles{CertFile: cert, KeyFile: key, CAFile: caFile}.Config()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := Connect(ctx, []string{endpoint}, "/tls", zap.NewNop(), WithTLS(tlsCfg))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutJob(ctx, &JobRecord{ID: "j", Status: "CREATED"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetJob(ctx, "j"); err != nil {
		t.Fatal(err)
	}
	s.Close()

	other, otherKey, _ := testcerts.NewCA(t, "stranger").Member(t, t.TempDir())
	noCert, err := TLSFiles{CAFile: caFile}.Config()
	if err != nil {
		t.Fatal(err)
	}
	strangerCfg, err := TLSFiles{CertFile: other, KeyFile: otherKey, CAFile: caFile}.Config()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts []Option
		hint string
	}{
		{"plain text", nil, "if etcd serves TLS"},
		{"no client certificate", []Option{WithTLS(noCert)}, "over TLS"},
		{"certificate of another CA", []Option{WithTLS(strangerCfg)}, "over TLS"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		s, err := Connect(ctx, []string{endpoint}, "/tls", zap.NewNop(), tc.opts...)
		cancel()
		if err == nil {
			s.Close()
			t.Fatalf("%s: connected", tc.name)
		}
		if !strings.Contains(err.Error(), endpoint) || !strings.Contains(err.Error(), tc.hint) {
			t.Errorf("%s: %v", tc.name, err)
		}
		t.Logf("%s: %v", tc.name, err)
	}
}

func TestTLSFiles(t *testing.T) {
	if cfg, err := (TLSFiles{}).Config(); cfg != nil || err != nil {
		t.Fatalf("empty: %v, %v", cfg, err)
	}
	if _, err := (TLSFiles{CertFile: "a.crt"}).Config(); err == nil || !strings.Contains(err.Error(), "both") {
		t.Fatalf("certificate without key: %v", err)
	}
	if _, err := (TLSFiles{CAFile: "/nonexistent/ca.crt"}).Config(); err == nil {
		t.Fatal("missing CA file accepted")
	}
}
