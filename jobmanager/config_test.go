package jobmanager

import (
	"strings"
	"testing"
	"time"
)

// TestCheckpointOptionsResolved checks that the cluster's checkpoint
// defaults, given as job options, are resolved as SET resolves them and
// that a bad one stops New.
func TestCheckpointOptionsResolved(t *testing.T) {
	jm, err := New(Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), CheckpointOptions: map[string]string{
		"execution.checkpointing.interval": "10s",
		"execution.checkpointing.mode":     "AT_LEAST_ONCE",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if cp := jm.cfg.Checkpoint; cp.Interval != 10*time.Second || !cp.AtLeastOnce || cp.Timeout != 10*time.Minute {
		t.Fatalf("resolved defaults: %v", cp)
	}
	_, err = New(Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), CheckpointOptions: map[string]string{"execution.checkpointing.mode": "bogus"}})
	if err == nil || !strings.Contains(err.Error(), "execution.checkpointing.mode") {
		t.Fatalf("a bad mode: %v", err)
	}
}
