package jobmanager

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/braidflow/braid/internal/etcdtest"
	"github.com/braidflow/braid/internal/memberauth/testcerts"
	"github.com/braidflow/braid/metastore"
)

// TestEtcdOverTLS: a job manager given --etcd-ca, --etcd-cert and
// --etcd-key runs on an etcd that requires client certificates; without
// them it does not start, and says TLS may be why. The TLS flags are
// refused without an external etcd.
func TestEtcdOverTLS(t *testing.T) {
	ca := testcerts.NewCA(t, "etcd")
	host := etcdtest.StartTLS(t, ca)
	cert, key, caFile := ca.Member(t, t.TempDir())

	start := func(files metastore.TLSFiles, timeout time.Duration) (*JobManager, error) {
		jm, err := New(Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), Etcd: []string{host}, EtcdTLS: files, Logger: zap.NewNop()})
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
