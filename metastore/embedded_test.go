package metastore

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"
)

func TestEmbeddedEtcdRestartKeepsData(t *testing.T) {
	dir := t.TempDir()
	e, err := StartEmbeddedEtcd(dir, 0, 0, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	eps := e.Endpoints()
	if len(eps) != 1 {
		t.Fatalf("endpoints = %v, want one", eps)
	}
	if eps[0] == "127.0.0.1:2379" {
		t.Fatalf("embedded etcd took the fixed default port")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := Connect(ctx, eps, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Prefix() != DefaultPrefix {
		t.Fatalf("prefix = %q", s.Prefix())
	}
	if err := s.PutJob(ctx, &JobRecord{ID: "j1", Status: "RUNNING"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil { // idempotent
		t.Fatal(err)
	}

	e2, err := StartEmbeddedEtcd(dir, 0, 0, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	s2, err := Connect(ctx, e2.Endpoints(), "/braid/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	j, err := s2.GetJob(ctx, "j1")
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != "RUNNING" {
		t.Fatalf("status after restart = %q", j.Status)
	}
}

func TestEmbeddedEtcdPortInUse(t *testing.T) {
	port := testEtcd.etcd.Clients[0].Addr()
	_, portStr, _ := splitHostPort(port.String())
	if _, err := StartEmbeddedEtcd(t.TempDir(), portStr, 0, zap.NewNop()); err == nil {
		t.Fatal("started a second etcd on a busy client port")
	}
}

func TestConnectUnreachable(t *testing.T) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = Connect(ctx, []string{"127.0.0.1:" + itoa(port)}, "", nil)
	if err == nil {
		t.Fatal("connected to nothing")
	}
}

func BenchmarkStartEmbeddedEtcd(b *testing.B) {
	for b.Loop() {
		e, err := StartEmbeddedEtcd(b.TempDir(), 0, 0, zap.NewNop())
		if err != nil {
			b.Fatal(err)
		}
		e.Close()
	}
}
