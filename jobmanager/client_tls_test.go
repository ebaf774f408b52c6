package jobmanager_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/internal/memberauth"
	"github.com/braidflow/braid/internal/memberauth/testcerts"
	"github.com/braidflow/braid/localcluster"
)

// TestClientOverTLS: with members on mutual TLS the job manager serves
// clients over TLS: a client given the CA runs SQL and lists jobs, with or
// without a client certificate; a client without TLS, or with another CA,
// gets an error that says what to do.
func TestClientOverTLS(t *testing.T) {
	ca := testcerts.NewCA(t, "cluster")
	cert, key, caFile := ca.Member(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := localcluster.Start(ctx, localcluster.Options{Members: memberauth.Config{CertFile: cert, KeyFile: key, CAFile: caFile}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	for _, files := range []client.TLSFiles{{CAFile: caFile}, {CAFile: caFile, CertFile: cert, KeyFile: key}} {
		cfg, err := files.Config()
		if err != nil {
			t.Fatal(err)
		}
		c, err := client.Dial(ctx, cl.Endpoint(), client.WithTLS(cfg))
		if err != nil {
			t.Fatal(err)
		}
		s := openSession(t, c)
		equal(t, "rows over TLS", run(t, s, "SELECT * FROM (VALUES (1), (2)) AS t(x);").sorted(), []string{"+I[1]", "+I[2]"})
		if _, err := c.ListJobs(ctx); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}

	plain, err := client.Dial(ctx, cl.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	_, err = plain.ListJobs(ctx)
	if err == nil || !strings.Contains(err.Error(), cl.Endpoint()) || !strings.Contains(err.Error(), "TLS") {
		t.Fatalf("plain-text client: %v, want an error naming the endpoint and TLS", err)
	}
	t.Logf("plain-text client: %v", err)

	_, _, otherCA := testcerts.NewCA(t, "other").Member(t, t.TempDir())
	cfg, err := client.TLSFiles{CAFile: otherCA}.Config()
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Dial(ctx, cl.Endpoint(), client.WithTLS(cfg))
	if err == nil || !strings.Contains(err.Error(), "over TLS") || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("client with another CA: %v", err)
	}
	t.Logf("client with another CA: %v", err)
}
