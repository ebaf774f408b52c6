package metastore

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestJobRecords(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	if _, err := s.GetJob(ctx, "nope"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("get missing job: %v", err)
	}
	j1 := &JobRecord{ID: "j1", Name: "first", SQL: "INSERT INTO a SELECT * FROM b", Owner: "alice", Status: "CREATED",
		StartUnixMs: 20, Graph: []byte{0x0a, 0x02, 'j', '1', 0x00, 0xff}, Placements: []byte("p")}
	j0 := &JobRecord{ID: "j0", Name: "zeroth", Status: "RUNNING", StartUnixMs: 10}
	for _, j := range []*JobRecord{j1, j0} {
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.GetJob(ctx, "j1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, j1) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, j1)
	}
	// Keys below jobs/<id>/ that are not spec or status are not jobs.
	if _, err := s.client.Put(ctx, s.jobKey("j1", "latest"), "x"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetJobStatus(ctx, "j1", "FAILED", "boom", 99); err != nil {
		t.Fatal(err)
	}
	jobs, err := s.ListJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].ID != "j0" || jobs[1].ID != "j1" {
		t.Fatalf("jobs = %+v", jobs)
	}
	want := *j1
	want.Status, want.Error, want.EndUnixMs = "FAILED", "boom", 99
	if !reflect.DeepEqual(jobs[1], &want) {
		t.Fatalf("after status change:\n got %+v\nwant %+v", jobs[1], &want)
	}
	if err := s.SetJobStatus(ctx, "ghost", "RUNNING", "", 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("status of missing job: %v", err)
	}
	// A rescale's new graph keeps the rest of the spec, the owner too.
	if _, err := s.SetJobGraphAs(ctx, nil, "j1", []byte("g2"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetJob(ctx, "j1"); err != nil || got.Owner != "alice" || string(got.Graph) != "g2" {
		t.Fatalf("after a new graph: %+v %v, want owner alice", got, err)
	}
}

// testStatusCheck mirrors scheduler.JobStatus.CanTransition closely enough
// for these tests: terminal statuses are final. metastore does
// not import scheduler.
func testStatusCheck(from, to string) bool {
	switch from {
	case "FINISHED", "FAILED", "CANCELED":
		return false
	}
	return true
}

func TestSetJobStatusCheck(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	s.SetStatusCheck(testStatusCheck)
	if err := s.PutJob(ctx, &JobRecord{ID: "j", Status: "RUNNING"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetJobStatus(ctx, "j", "CANCELED", "", 5); err != nil {
		t.Fatal(err)
	}
	err := s.SetJobStatus(ctx, "j", "RUNNING", "", 0)
	if !errors.Is(err, ErrIllegalTransition) || !strings.Contains(err.Error(), "CANCELED -> RUNNING") {
		t.Fatalf("leaving a terminal status: %v", err)
	}
	j, err := s.GetJob(ctx, "j")
	if err != nil || j.Status != "CANCELED" || j.EndUnixMs != 5 {
		t.Fatalf("job = %+v, %v", j, err)
	}
}

// TestSetJobStatusRace: of several writers racing from RUNNING to distinct
// terminal statuses, exactly one wins; the compare-and-swap stops the others
// from overwriting a terminal status.
func TestSetJobStatusRace(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	s.SetStatusCheck(testStatusCheck)
	if err := s.PutJob(ctx, &JobRecord{ID: "j", Status: "RUNNING"}); err != nil {
		t.Fatal(err)
	}
	targets := []string{"FINISHED", "FAILED", "CANCELED", "FAILED", "CANCELED", "FINISHED"}
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, to := range targets {
		wg.Go(func() { errs[i] = s.SetJobStatus(context.Background(), "j", to, to, int64(i)) })
	}
	wg.Wait()
	won := 0
	var winner string
	for i, err := range errs {
		switch {
		case err == nil:
			won++
			winner = targets[i]
		case !errors.Is(err, ErrIllegalTransition):
			t.Fatal(err)
		}
	}
	j, err := s.GetJob(ctx, "j")
	if err != nil {
		t.Fatal(err)
	}
	// Equal targets may both "win" (re-setting the current status is
	// allowed), but every winner set the stored status.
	if won == 0 || j.Status != winner {
		t.Fatalf("won=%d winner=%s stored=%s", won, winner, j.Status)
	}
}

// TestJobRecordLimits: the graph and placements are stored compressed,
// the SQL text is cut, and a record over the limits is refused with a
// RecordTooLargeError, writing nothing.
func TestJobRecordLimits(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	graph := []byte(strings.Repeat("a literal row, ", 100_000))
	long := strings.Repeat("é", MaxSQLBytes)
	j := &JobRecord{ID: "big", SQL: long, Status: "CREATED", Graph: graph, Placements: []byte(strings.Repeat("p", 10_000))}
	if err := s.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	resp, err := s.client.Get(ctx, s.jobKey("big", "spec"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(resp.Kvs[0].Value); n > MaxSQLBytes+20_000 {
		t.Fatalf("spec of %d bytes for a graph of %d", n, len(graph))
	}
	got, err := s.GetJob(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Graph, graph) || !reflect.DeepEqual(got.Placements, j.Placements) {
		t.Fatal("graph or placements changed in the round trip")
	}
	if len(got.SQL) > MaxSQLBytes || !strings.HasPrefix(long, got.SQL[:1000]) || !strings.HasSuffix(got.SQL, "keeps the first ones]") {
		t.Fatalf("SQL of %d bytes kept as %d bytes ending %q", len(long), len(got.SQL), got.SQL[len(got.SQL)-80:])
	}
	if cutSQL(got.SQL) != got.SQL {
		t.Fatal("cutting a cut SQL text changed it")
	}

	// Incompressible bytes.
	noise := make([]byte, MaxJobRecordBytes)
	x := uint64(1)
	for i := range noise {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		noise[i] = byte(x)
	}
	var big *RecordTooLargeError
	err = s.PutJob(ctx, &JobRecord{ID: "huge", Status: "CREATED", Graph: noise[:MaxInlineGraphBytes+1024]})
	if !errors.As(err, &big) || big.What != PartGraph || big.Limit != MaxInlineGraphBytes {
		t.Fatalf("graph over the limit: %v", err)
	}
	if _, err := s.GetJob(ctx, "huge"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("refused job was written: %v", err)
	}
	ref := &GraphRef{URI: "file:///x#job-graph-1.zst", Size: 10, CRC32C: 7}
	if err := s.PutJob(ctx, &JobRecord{ID: "huge", Status: "CREATED", Graph: noise, GraphRef: ref}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetJob(ctx, "huge"); err != nil || got.Graph != nil || !reflect.DeepEqual(got.GraphRef, ref) {
		t.Fatalf("job with a graph reference: %+v, %v", got, err)
	}
	err = s.PutJob(ctx, &JobRecord{ID: "huge2", Status: "CREATED", GraphRef: ref, Placements: noise})
	if !errors.As(err, &big) || big.What != PartRecord {
		t.Fatalf("record over the limit: %v", err)
	}
	prev, err := s.SetJobGraphAs(ctx, nil, "huge", []byte("small"), nil, nil)
	if err != nil || !reflect.DeepEqual(prev, ref) {
		t.Fatalf("set graph: previous ref %+v, %v", prev, err)
	}
	if got, err := s.GetJob(ctx, "huge"); err != nil || string(got.Graph) != "small" || got.GraphRef != nil {
		t.Fatalf("after set graph: %+v, %v", got, err)
	}
}

// TestDeleteJob removes every key of one job and nothing of another.
func TestDeleteJob(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	for _, id := range []string{"a", "ab"} {
		if err := s.PutJob(ctx, &JobRecord{ID: id, Status: "FINISHED"}); err != nil {
			t.Fatal(err)
		}
		if err := s.CommitCheckpoint(ctx, nil, id, CheckpointPointer{ID: 1, Path: "file:///c#chk-1/_metadata"}, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteJobAs(ctx, nil, "a"); err != nil {
		t.Fatal(err)
	}
	resp, err := s.client.Get(ctx, s.dir("jobs", "a"), clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil || resp.Count != 0 {
		t.Fatalf("%v keys of job a left, %v", resp.Count, err)
	}
	if _, err := s.GetJob(ctx, "ab"); err != nil {
		t.Fatalf("job ab after deleting a: %v", err)
	}
	if cps, err := s.ListCheckpoints(ctx, "ab"); err != nil || len(cps) != 1 {
		t.Fatalf("checkpoints of ab after deleting a: %v, %v", cps, err)
	}
	if err := s.DeleteJobAs(ctx, nil, "a"); err != nil {
		t.Fatalf("deleting again: %v", err)
	}
}
