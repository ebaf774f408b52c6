package bench

import (
	"context"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRunners runs each in-process runner on a tiny size and checks the
// rows it reports are exactly the rows it was asked for (the runners fail
// themselves when what arrives differs from what was sent).
func TestRunners(t *testing.T) {
	ctx := context.Background()
	odd := int64(3*BatchRows + 17) // a partial last batch
	for _, c := range []struct {
		name string
		run  func() (Result, error)
		want int64
	}{
		{"local-exchange", func() (Result, error) { return LocalExchange(ctx, ExchangeOptions{Rows: odd}) }, odd},
		{"remote-shuffle", func() (Result, error) { return RemoteShuffle(ctx, ExchangeOptions{Rows: odd, Consumers: 3}) }, odd},
		{"join", func() (Result, error) { return JoinHot(ctx, JoinOptions{Rows: odd, Keys: 100, Dir: t.TempDir()}) }, odd},
		{"join-spill", func() (Result, error) {
			return JoinSpill(ctx, JoinOptions{Keys: 20_000, CacheBytes: 256 << 10, Dir: t.TempDir()})
		}, 40_000},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := c.run()
			if err != nil {
				t.Fatal(err)
			}
			if r.Name != c.name || r.Rows != c.want {
				t.Fatalf("got %s with %d rows, want %s with %d", r.Name, r.Rows, c.name, c.want)
			}
			if r.Elapsed <= 0 || r.RowsPerSec <= 0 || r.RowsPerSecPerCore <= 0 {
				t.Fatalf("no rates: %v", r)
			}
			t.Log(r)
		})
	}
}

// TestClusterJoinSpill runs the cluster runner on a few keys when the server
// binaries are at hand ($BRAID_BIN, as make test sets it); it starts two
// processes, so -short skips it.
func TestClusterJoinSpill(t *testing.T) {
	if testing.Short() || os.Getenv("BRAID_BIN") == "" {
		t.Skip("needs BRAID_BIN (the jobmanager and taskmanager binaries) and no -short")
	}
	r, err := ClusterJoinSpill(context.Background(), ClusterOptions{Keys: 10_000, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if r.Rows != 20_000 || r.Extra["tm-peak-rss"] == "" {
		t.Fatalf("unexpected result %v", r)
	}
	t.Log(r)
}

func TestJoinSpillSpills(t *testing.T) {
	r, err := JoinSpill(context.Background(), JoinOptions{Keys: 20_000, CacheBytes: 256 << 10, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if r.Extra["pebble-sst-files"] == "" || r.Extra["pebble-sst-files"] == "0" {
		t.Errorf("no SST files after a spill: %v", r)
	}
}

func TestReadProcMemory(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	m, err := ReadProcMemory(0)
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS == 0 || m.HWM < m.RSS {
		t.Fatalf("VmHWM %d, VmRSS %d", m.HWM, m.RSS)
	}
	if _, err := ReadProcMemory(os.Getpid()); err != nil {
		t.Fatal(err)
	}
}

// The wrappers scale the runners with b.N: an op is one 4096-row batch (one
// key per side for JoinSpill). Read the rows/s metric; ns/op includes the
// runner's setup.
func report(b *testing.B, r Result, err error) {
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(r.RowsPerSec, "rows/s")
	b.ReportMetric(r.RowsPerSecPerCore, "rows/s/core")
}

func BenchmarkLocalExchange(b *testing.B) {
	r, err := LocalExchange(context.Background(), ExchangeOptions{Rows: int64(b.N) * BatchRows})
	report(b, r, err)
}

func BenchmarkRemoteShuffle(b *testing.B) {
	r, err := RemoteShuffle(context.Background(), ExchangeOptions{Rows: int64(b.N) * BatchRows})
	report(b, r, err)
}

func BenchmarkJoinHot(b *testing.B) {
	r, err := JoinHot(context.Background(), JoinOptions{Rows: int64(b.N) * BatchRows, Dir: b.TempDir()})
	report(b, r, err)
}

// BenchmarkJoinSpill joins b.N*1000 keys per side (5M with -benchtime 5000x)
// with a 64 MiB state cache.
func BenchmarkJoinSpill(b *testing.B) {
	r, err := JoinSpill(context.Background(), JoinOptions{Keys: b.N * 1000, Dir: b.TempDir()})
	report(b, r, err)
	b.Log(r)
}

// TestCheckpointRunners runs the checkpoint and recovery runners at a tiny
// size when the server binaries are at hand, as TestClusterJoinSpill does.
func TestCheckpointRunners(t *testing.T) {
	if testing.Short() || os.Getenv("BRAID_BIN") == "" {
		t.Skip("needs BRAID_BIN (the jobmanager and taskmanager binaries) and no -short")
	}
	ctx := context.Background()
	t.Run("checkpoint-size", func(t *testing.T) {
		r, err := CheckpointSize(ctx, CheckpointSizeOptions{StateBytes: 8 << 20, Interval: 500 * time.Millisecond, Payload: 100, Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Details) < 3 || r.Extra["first-uploaded"] != r.Extra["first-state"] {
			t.Fatalf("want 3 checkpoints or more, the first uploading all its state: %v %v", r, r.Details)
		}
		t.Log(r)
	})
	t.Run("checkpoint-overhead", func(t *testing.T) {
		rs, err := CheckpointOverhead(ctx, OverheadOptions{JoinKeys: 5_000, AggRows: 20_000, Interval: 100 * time.Millisecond, Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 2 || rs[0].Rows != 10_000 || rs[1].Rows != 20_000 || rs[0].Extra["overhead"] == "" {
			t.Fatalf("unexpected results %v", rs)
		}
		t.Log(rs)
	})
	t.Run("recovery", func(t *testing.T) {
		r, err := Recovery(ctx, RecoveryOptions{Kills: 1, JobManagerRestarts: 1, Rate: 1000, Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Details) != 2 || r.Extra["running-p50"] == "" || r.Extra["jm-running-p50"] == "" {
			t.Fatalf("unexpected result %v %v", r, r.Details)
		}
		t.Log(r)
	})
}

func TestPercentile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 3}, {99, 5}, {100, 5}, {1, 1}, {20, 1}, {21, 2}} {
		if got := percentile(ds, c.p); got != c.want {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
	if percentile(nil, 50) != 0 {
		t.Error("percentile of nothing")
	}
}
