package connectors

import (
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
)

// crashBroker simulates a SIGKILL of the process that runs the embedded
// broker b: it copies b's data directory as it is on disk now (every
// produce is synced before it is acknowledged, and nothing is written at a
// clean shutdown yet), starts a new broker on the copy and leaves b running
// until the test ends, unreachable to the new one's clients.
func crashBroker(t *testing.T, dir string) (*Broker, string) {
	t.Helper()
	cp := t.TempDir()
	if err := os.CopyFS(cp, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	b, err := StartEmbeddedBroker(cp, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b, cp
}

// TestManagedSinkBrokerCrash: the broker crashes (and restarts on its data
// directory) while a sink's transaction is open, several times in a row;
// each time the sink restores from its last checkpoint. The restore must
// not wait on the transaction that the crash left open, and a reader sees
// every row once.
func TestManagedSinkBrokerCrash(t *testing.T) {
	dir := t.TempDir()
	b0, err := StartEmbeddedBroker(dir, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b0.Close() })
	brokers := b0.Addrs()
	kafkaTopic(t, brokers, "tbl", 1)
	spec := jobgraph.ManagedSinkSpec{Topic: "tbl", Schema: testSchema}

	s := NewManagedSink(spec)
	if err := s.Open(managedCtx(brokers, operators.Restore{})); err != nil {
		t.Fatal(err)
	}
	process(t, s, 0, 10)
	snapshot(t, s, 1)
	complete(t, s, 1)
	next, ckpt := 10, int64(1)
	for crashNo := 0; crashNo < 3; crashNo++ {
		// Epoch ckpt+1 is pre-committed (with its marker) when the broker
		// crashes, its checkpoint complete or not.
		process(t, s, next, next+10)
		ckpt++
		st := snapshot(t, s, ckpt)
		next += 10
		process(t, s, next, next+5) // replayed after the restore
		if crashNo%2 == 1 {
			complete(t, s, ckpt)
			if err := s.w.flush(); err != nil {
				t.Fatal(err)
			}
		}
		var b *Broker
		b, dir = crashBroker(t, dir)
		crash(s.w)
		brokers = b.Addrs()

		s = NewManagedSink(spec)
		start := time.Now()
		if err := s.Open(managedCtx(brokers, operators.Restore{ID: ckpt, State: [][]byte{st}})); err != nil {
			t.Fatalf("restore after crash %d: %v", crashNo+1, err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("restore after crash %d took %s", crashNo+1, d)
		}
		complete(t, s, ckpt) // the job's checkpoint ckpt is complete
	}
	process(t, s, next, next+10)
	next += 10
	if err := s.EndInput(0, nil); err != nil {
		t.Fatal(err)
	}
	snapshot(t, s, ckpt+1) // the final checkpoint
	complete(t, s, ckpt+1)
	s.Close()
	got := managedRows(t, readTopic(t, brokers, "tbl", kgo.ReadCommitted()))
	if want := rowsOf(0, next); !equalStrings(got, want) {
		t.Fatalf("read_committed:\n got %q\nwant %q", got, want)
	}
}

// TestSinkCancelledWhileBrokerGone: a sink whose broker went away (the job
// manager that runs it was killed) blocks in its flush at a barrier; the
// cancellation of its subtask ends the wait at once, so the attempt stops
// and the next one can deploy.
func TestSinkCancelledWhileBrokerGone(t *testing.T) {
	b, err := StartEmbeddedBroker(t.TempDir(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	brokers := b.Addrs()
	kafkaTopic(t, brokers, "tbl", 1)
	s := NewManagedSink(jobgraph.ManagedSinkSpec{Topic: "tbl", Schema: testSchema})
	done := make(chan struct{})
	octx := managedCtx(brokers, operators.Restore{})
	octx.Checkpointing, octx.Done = true, done
	if err := s.Open(octx); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	process(t, s, 0, 10)
	if err := s.w.flush(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	process(t, s, 10, 20)
	snapped := make(chan error, 1)
	go func() {
		_, err := s.SnapshotState(1)
		snapped <- err
	}()
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	close(done)
	select {
	case err := <-snapped:
		if err == nil {
			t.Fatal("the snapshot succeeded without a broker")
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("the snapshot returned %s after the cancellation", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the snapshot still waits 10s after the cancellation")
	}
}
