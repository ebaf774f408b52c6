package connectors

import (
	"bytes"
	"errors"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

// readTopic reads every record value of topic (in partition order, each
// partition in offset order) with the given isolation level. It reads up to
// the high watermarks (read_uncommitted) or last stable offsets
// (read_committed) listed first; KeepControlRecords makes the last offset
// of a partition that ends with a transaction marker visible.
func readTopic(t *testing.T, brokers []string, topic string, iso kgo.IsolationLevel) [][]byte {
	t.Helper()
	ctx := testCtx(t)
	adm, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	list := kadm.NewClient(adm).ListEndOffsets
	if iso == kgo.ReadCommitted() {
		list = kadm.NewClient(adm).ListCommittedOffsets // the last stable offsets
	}
	ends, err := list(ctx, topic)
	adm.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	if len(want) == 0 {
		return nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(iso), kgo.KeepControlRecords())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	byPart := map[int32][][]byte{}
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("reading %s: %v (still want %v)", topic, err, want)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatal(err) })
		fs.EachRecord(func(r *kgo.Record) {
			if !r.Attrs.IsControl() {
				byPart[r.Partition] = append(byPart[r.Partition], r.Value)
			}
			if end, ok := want[r.Partition]; ok && r.Offset >= end-1 {
				delete(want, r.Partition)
			}
		})
	}
	var out [][]byte
	for p := int32(0); p < 64; p++ {
		out = append(out, byPart[p]...)
	}
	return out
}

// managedRows decodes the managed-table records vs into formatted rows.
func managedRows(t *testing.T, vs [][]byte) []string {
	t.Helper()
	var rows []string
	for _, v := range vs {
		b, err := decodeBatch(v, testSchema.ArrowSchema())
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, formatted(b)...)
		b.Release()
	}
	return rows
}

func rowsOf(from, to int) []string {
	b := testBatch(from, to, types.Insert)
	defer b.Release()
	return formatted(b)
}

// process feeds the sink one batch of ids from..to-1.
func process(t *testing.T, op operators.Operator, from, to int) {
	t.Helper()
	b := testBatch(from, to, types.Insert)
	defer b.Release()
	if err := op.Process(0, b, nil); err != nil {
		t.Fatal(err)
	}
}

func snapshot(t *testing.T, c operators.Checkpointer, id int64) []byte {
	t.Helper()
	st, err := c.SnapshotState(id)
	if err != nil {
		t.Fatalf("SnapshotState(%d): %v", id, err)
	}
	return st
}

func complete(t *testing.T, c operators.Checkpointer, id int64) {
	t.Helper()
	if err := c.NotifyCheckpointComplete(id); err != nil {
		t.Fatalf("NotifyCheckpointComplete(%d): %v", id, err)
	}
}

// crash drops a sink as a killed process would: its client goes away with
// its transaction still open, nothing is aborted.
func crash(w *sinkWriter) {
	w.cl.Close()
	w.cl = nil
	w.cancel()
}

func managedCtx(brokers []string, rs operators.Restore) *operators.Context {
	return &operators.Context{JobID: "job1", OperatorUID: "sink-7", Subtask: 0, Parallelism: 1, Brokers: brokers, Restore: rs}
}

// TestManagedSinkExactlyOnce drives a managed sink through checkpoints, a
// crash and a restore, and reads the topic read_committed: every row once,
// in order. The crash comes either before checkpoint 2 committed (its
// epoch is re-produced from the state) or after (its marker says to skip
// it, and the rows after barrier 2 were in the aborted transaction).
func TestManagedSinkExactlyOnce(t *testing.T) {
	for _, tc := range []struct {
		name            string
		committedBefore bool
		// dupUncommitted is the rows a read_uncommitted reader sees twice.
		dupUncommitted []string
	}{
		{"crash before commit", false, rowsOf(10, 30)},
		{"crash after commit", true, rowsOf(30, 35)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			brokers := startBroker(t).Addrs()
			kafkaTopic(t, brokers, "tbl", 1)
			spec := jobgraph.ManagedSinkSpec{Topic: "tbl", Schema: testSchema}

			s := NewManagedSink(spec)
			if err := s.Open(managedCtx(brokers, operators.Restore{})); err != nil {
				t.Fatal(err)
			}
			process(t, s, 0, 10)
			snapshot(t, s, 1)
			process(t, s, 10, 20)
			complete(t, s, 1)
			process(t, s, 20, 30)
			st2 := snapshot(t, s, 2)
			if tc.committedBefore {
				complete(t, s, 2)
				process(t, s, 30, 35) // in a transaction that the crash leaves open
				if err := s.w.flush(); err != nil {
					t.Fatal(err)
				}
			} else {
				process(t, s, 30, 33) // kept in memory until epoch 2 commits
			}
			crash(s.w)

			s = NewManagedSink(spec)
			if err := s.Open(managedCtx(brokers, operators.Restore{ID: 2, State: [][]byte{st2}})); err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			process(t, s, 30, 40) // replayed after barrier 2
			snapshot(t, s, 3)
			process(t, s, 40, 45) // buffered: epoch 3 awaits its checkpoint
			complete(t, s, 3)
			process(t, s, 45, 50)
			if err := s.EndInput(0, nil); err != nil {
				t.Fatal(err)
			}
			snapshot(t, s, 4) // the final checkpoint
			complete(t, s, 4)

			got := managedRows(t, readTopic(t, brokers, "tbl", kgo.ReadCommitted()))
			if want := rowsOf(0, 50); !equalStrings(got, want) {
				t.Fatalf("read_committed:\n got %q\nwant %q", got, want)
			}
			// The test can fail: without read_committed the aborted rows show.
			raw := managedRows(t, readTopic(t, brokers, "tbl", kgo.ReadUncommitted()))
			if want := sorted(append(rowsOf(0, 50), tc.dupUncommitted...)); !equalStrings(sorted(raw), want) {
				t.Fatalf("read_uncommitted:\n got %q\nwant %q", raw, want)
			}
		})
	}
}

// TestManagedSinkFinalCheckpoint: a transactional sink whose input ended
// commits its last rows with the final checkpoint, not before; a job that
// fails in between replays them from an earlier checkpoint, and one that
// fails after the final barrier re-produces them from its state: either
// way every row once.
func TestManagedSinkFinalCheckpoint(t *testing.T) {
	for _, crashAfterBarrier := range []bool{false, true} {
		name := "crash before the final barrier"
		if crashAfterBarrier {
			name = "crash after the final barrier"
		}
		t.Run(name, func(t *testing.T) {
			brokers := startBroker(t).Addrs()
			kafkaTopic(t, brokers, "tbl", 1)
			spec := jobgraph.ManagedSinkSpec{Topic: "tbl", Schema: testSchema}
			s := NewManagedSink(spec)
			if err := s.Open(managedCtx(brokers, operators.Restore{})); err != nil {
				t.Fatal(err)
			}
			process(t, s, 0, 10)
			st := snapshot(t, s, 1)
			complete(t, s, 1)
			process(t, s, 10, 20)
			if err := s.EndInput(0, nil); err != nil {
				t.Fatal(err)
			}
			restoreID := int64(1)
			if crashAfterBarrier {
				st, restoreID = snapshot(t, s, 2), 2
			}
			// The test can fail: a sink that commits at the end of its
			// input shows rows 10..19 here.
			if got, want := managedRows(t, readTopic(t, brokers, "tbl", kgo.ReadCommitted())), rowsOf(0, 10); !equalStrings(got, want) {
				t.Fatalf("before the final checkpoint completed:\n got %q\nwant %q", got, want)
			}
			crash(s.w)

			s = NewManagedSink(spec)
			if err := s.Open(managedCtx(brokers, operators.Restore{ID: restoreID, State: [][]byte{st}})); err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if !crashAfterBarrier {
				process(t, s, 10, 20) // replayed after barrier 1
			}
			if err := s.EndInput(0, nil); err != nil {
				t.Fatal(err)
			}
			snapshot(t, s, 3)
			complete(t, s, 3)
			if got, want := managedRows(t, readTopic(t, brokers, "tbl", kgo.ReadCommitted())), rowsOf(0, 20); !equalStrings(got, want) {
				t.Fatalf("read_committed:\n got %q\nwant %q", got, want)
			}
		})
	}
}

// TestManagedSinkLostNotice: a completion notice that never comes is made
// up by the next one, which commits both epochs in order; an aborted
// checkpoint leaves its epoch for a later one.
func TestManagedSinkLostNotice(t *testing.T) {
	brokers := startBroker(t).Addrs()
	kafkaTopic(t, brokers, "tbl", 1)
	s := NewManagedSink(jobgraph.ManagedSinkSpec{Topic: "tbl", Schema: testSchema})
	if err := s.Open(managedCtx(brokers, operators.Restore{})); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	snapshot(t, s, 1)
	process(t, s, 0, 5)
	snapshot(t, s, 2)
	process(t, s, 5, 10)
	snapshot(t, s, 3)
	if err := s.NotifyCheckpointAborted(3); err != nil {
		t.Fatal(err)
	}
	process(t, s, 10, 15)
	st := snapshot(t, s, 4)
	if got := managedRows(t, readTopic(t, brokers, "tbl", kgo.ReadCommitted())); len(got) != 0 {
		t.Fatalf("rows visible before any checkpoint completed: %q", got)
	}
	if dst, err := decodeSinkState(st); err != nil || len(dst.epochs) != 3 {
		t.Fatalf("state holds %d epochs (%v), want 3", len(dst.epochs), err)
	}
	complete(t, s, 3)
	if got, want := managedRows(t, readTopic(t, brokers, "tbl", kgo.ReadCommitted())), rowsOf(0, 10); !equalStrings(got, want) {
		t.Fatalf("after checkpoint 3:\n got %q\nwant %q", got, want)
	}
	process(t, s, 15, 20)
	complete(t, s, 4)
	if err := s.EndInput(0, nil); err != nil {
		t.Fatal(err)
	}
	snapshot(t, s, 5)
	complete(t, s, 5)
	if got, want := managedRows(t, readTopic(t, brokers, "tbl", kgo.ReadCommitted())), rowsOf(0, 20); !equalStrings(got, want) {
		t.Fatalf("at the end:\n got %q\nwant %q", got, want)
	}
}

// TestManagedSinkWithoutCheckpoints: a job that never checkpoints writes
// without transactions and markers, and its rows are readable at the end.
func TestManagedSinkWithoutCheckpoints(t *testing.T) {
	brokers := startBroker(t).Addrs()
	kafkaTopic(t, brokers, "tbl", 1)
	s := NewManagedSink(jobgraph.ManagedSinkSpec{Topic: "tbl", Schema: testSchema})
	if err := s.Open(managedCtx(brokers, operators.Restore{})); err != nil {
		t.Fatal(err)
	}
	process(t, s, 0, 10)
	process(t, s, 10, 12)
	if err := s.EndInput(0, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := managedRows(t, readTopic(t, brokers, "tbl", kgo.ReadCommitted())), rowsOf(0, 12); !equalStrings(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := topicPartitions(testCtx(t), kadm.NewClient(cl), sinkEpochTopic); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("marker topic lookup: %v, want it absent", err)
	}
}

// TestKafkaSinkExactlyOnce: the kafka sink with 'exactly-once' recovers a
// crash before the commit of checkpoint 2 like the managed sink.
func TestKafkaSinkExactlyOnce(t *testing.T) {
	brokers := startBroker(t).Addrs()
	kafkaTopic(t, brokers, "out", 2)
	spec := jobgraph.KafkaSinkSpec{Topic: "out", Brokers: brokers, Schema: testSchema, RoundRobin: true,
		Guarantee: jobgraph.KafkaDeliveryExactlyOnce, TransactionalIDPrefix: "app"}
	ctx := func(rs operators.Restore) *operators.Context {
		return &operators.Context{JobID: "job2", OperatorUID: "k-1", Parallelism: 1, Restore: rs}
	}
	s := NewKafkaSink(spec)
	if err := s.Open(ctx(operators.Restore{})); err != nil {
		t.Fatal(err)
	}
	process(t, s, 0, 4)
	snapshot(t, s, 1)
	process(t, s, 4, 8)
	complete(t, s, 1)
	process(t, s, 8, 12)
	st2 := snapshot(t, s, 2)
	if s.w.txnID != "app-job2-k-1-0" {
		t.Errorf("transactional id %q", s.w.txnID)
	}
	crash(s.w)

	s = NewKafkaSink(spec)
	if err := s.Open(ctx(operators.Restore{ID: 2, State: [][]byte{st2}})); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	process(t, s, 12, 16)
	if err := s.EndInput(0, nil); err != nil {
		t.Fatal(err)
	}
	snapshot(t, s, 3) // the final checkpoint
	complete(t, s, 3)
	ids := func(vs [][]byte) []string {
		var out []string
		for _, v := range vs {
			out = append(out, string(v[:bytes.IndexByte(v, ',')]))
		}
		return sorted(out)
	}
	var want []string
	for i := range 16 {
		want = append(want, `{"id":`+strconv.Itoa(i))
	}
	if got := ids(readTopic(t, brokers, "out", kgo.ReadCommitted())); !equalStrings(got, sorted(want)) {
		t.Fatalf("read_committed ids:\n got %q\nwant %q", got, sorted(want))
	}
	if got := readTopic(t, brokers, "out", kgo.ReadUncommitted()); len(got) != 16+8 {
		t.Fatalf("read_uncommitted sees %d records, want 24 (epoch 2 twice)", len(got))
	}
}

// TestSinkStateRoundTrip checks the state's encoding and that corrupt
// state is refused.
func TestSinkStateRoundTrip(t *testing.T) {
	eps := []sinkEpoch{{id: 3, recs: []sinkRecord{{Partition: 1, Value: []byte("ab")}, {Partition: -1, Value: nil},
		{Partition: 2, Key: []byte("k"), Value: []byte{}}}}, {id: 4}}
	b := encodeSinkState(5, 77, eps)
	st, err := decodeSinkState(b)
	if err != nil || st.markerP != 5 || st.scanFrom != 77 || len(st.epochs) != 2 || st.epochs[0].id != 3 ||
		string(st.epochs[0].recs[0].Value) != "ab" || st.epochs[0].recs[1].Partition != -1 || st.epochs[1].id != 4 {
		t.Fatalf("round trip: %+v %v", st, err)
	}
	// A key, a tombstone (nil value) and an empty value are told apart.
	recs := st.epochs[0].recs
	if recs[0].Key != nil || recs[1].Value != nil || string(recs[2].Key) != "k" || recs[2].Value == nil || len(recs[2].Value) != 0 {
		t.Errorf("keys and tombstones: %+v", recs)
	}
	// Version 1 state (no keys): marker 5, scan 77, one epoch 3 of one
	// record on partition 1 with value "ab".
	v1 := []byte{1, 10, 154, 1, 1, 6, 1, 2, 2, 'a', 'b'}
	if st, err := decodeSinkState(v1); err != nil || len(st.epochs) != 1 || string(st.epochs[0].recs[0].Value) != "ab" ||
		st.epochs[0].recs[0].Key != nil || st.epochs[0].recs[0].Partition != 1 {
		t.Errorf("version 1 state: %+v %v", st, err)
	}
	for i := 1; i < len(b); i++ {
		if _, err := decodeSinkState(b[:i]); err == nil {
			t.Errorf("truncated to %d bytes: no error", i)
		}
	}
	if _, err := decodeSinkState(append(b, 0)); err == nil {
		t.Error("trailing byte: no error")
	}
	if st, err := decodeSinkState(nil); err != nil || len(st.epochs) != 0 {
		t.Errorf("empty state: %+v %v", st, err)
	}
}
