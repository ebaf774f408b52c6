package metastore

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestLeaderElectionFencesCheckpoints(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	if _, err := s.Leader(ctx); !errors.Is(err, ErrNotFound) {
		t.Fatalf("leader before any campaign: %v", err)
	}
	first, err := s.Campaign(ctx, "jm-1", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if who, err := s.Leader(ctx); err != nil || who != "jm-1" {
		t.Fatalf("leader = %q, %v", who, err)
	}
	cp1 := CheckpointPointer{ID: 1, Path: "file:///cp/1/_metadata", CompletedUnixMs: 10}
	if err := s.CommitCheckpoint(ctx, first, "job", cp1, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitCheckpoint(ctx, first, "job", CheckpointPointer{ID: 3}, 2); !errors.Is(err, ErrConflict) {
		t.Fatalf("commit against a stale latest: %v, want ErrConflict", err)
	}

	// A second job manager waits until the first resigns, then leads with a
	// larger fencing revision.
	won := make(chan *Leadership, 1)
	go func() {
		l, err := s.Campaign(ctx, "jm-2", time.Second)
		if err != nil {
			t.Error(err)
		}
		won <- l
	}()
	select {
	case <-won:
		t.Fatal("second campaigner won while the first leads")
	case <-time.After(100 * time.Millisecond):
	}
	if err := first.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	second := <-won
	if second == nil {
		t.FailNow()
	}
	defer second.Close()
	if second.Revision() <= first.Revision() {
		t.Fatalf("revisions %d then %d", first.Revision(), second.Revision())
	}
	select {
	case <-first.Done():
	case <-time.After(time.Second):
		t.Fatal("resigned term not done")
	}
	cp2 := CheckpointPointer{ID: 2, Path: "file:///cp/2/_metadata", CompletedUnixMs: 20}
	if err := s.CommitCheckpoint(ctx, first, "job", cp2, 1); !errors.Is(err, ErrFenced) {
		t.Fatalf("commit by the old leader: %v, want ErrFenced", err)
	}
	if err := s.CommitCheckpoint(ctx, second, "job", cp2, 1); err != nil {
		t.Fatal(err)
	}
	latest, ok, err := s.LatestCheckpoint(ctx, "job")
	if err != nil || !ok || latest != cp2 {
		t.Fatalf("latest = %+v, %v, %v", latest, ok, err)
	}
	all, err := s.ListCheckpoints(ctx, "job")
	if err != nil || !reflect.DeepEqual(all, []CheckpointPointer{cp1, cp2}) {
		t.Fatalf("checkpoints = %+v, %v", all, err)
	}
	if err := s.DeleteCheckpoint(ctx, "job", 2); err == nil {
		t.Fatal("deleted the latest checkpoint")
	}
	if err := s.DeleteCheckpoint(ctx, "job", 1); err != nil {
		t.Fatal(err)
	}
	all, err = s.ListCheckpoints(ctx, "job")
	if err != nil || !reflect.DeepEqual(all, []CheckpointPointer{cp2}) {
		t.Fatalf("checkpoints after delete = %+v, %v", all, err)
	}
	// Checkpoint keys under jobs/<id>/ do not disturb the job listing.
	if jobs, err := s.ListJobs(ctx); err != nil || len(jobs) != 0 {
		t.Fatalf("jobs = %+v, %v", jobs, err)
	}
}

func TestCheckpointsUnfenced(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	if _, ok, err := s.LatestCheckpoint(ctx, "j"); ok || err != nil {
		t.Fatalf("latest of a new job: %v, %v", ok, err)
	}
	if err := s.DeleteCheckpoint(ctx, "j", 7); err != nil {
		t.Fatalf("delete with no latest: %v", err)
	}
	if err := s.CommitCheckpoint(ctx, nil, "j", CheckpointPointer{ID: 1}, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitCheckpoint(ctx, nil, "j", CheckpointPointer{ID: 2}, 0); !errors.Is(err, ErrConflict) {
		t.Fatalf("second first checkpoint: %v, want ErrConflict", err)
	}
	if err := s.CommitCheckpoint(ctx, nil, "j", CheckpointPointer{ID: 1}, 1); err == nil {
		t.Fatal("committed a checkpoint id that does not advance")
	}
}

func TestLeaderElectionFencesJobStatus(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	if err := s.PutJob(ctx, &JobRecord{ID: "j", Status: "RUNNING"}); err != nil {
		t.Fatal(err)
	}
	first, err := s.Campaign(ctx, "jm-1", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetJobStatusAs(ctx, first, "j", "RESTARTING", "", 0); err != nil {
		t.Fatal(err)
	}
	// The first term ends without resigning (its lease is revoked, as when
	// it lapses); a second job manager leads.
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second, err := s.Campaign(ctx, "jm-2", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if err := s.SetJobStatusAs(ctx, first, "j", "CANCELED", "deposed", 1); !errors.Is(err, ErrFenced) {
		t.Fatalf("status write by the old leader: %v, want ErrFenced", err)
	}
	if err := s.SetJobStatusAs(ctx, second, "j", "RUNNING", "", 0); err != nil {
		t.Fatal(err)
	}
	if j, err := s.GetJob(ctx, "j"); err != nil || j.Status != "RUNNING" {
		t.Fatalf("job = %+v, %v", j, err)
	}
}

// TestLeaderElectionFencesJobRecords: a deposed leader can neither create a
// job record nor rewrite a job's graph; the current leader can.
func TestLeaderElectionFencesJobRecords(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	first, err := s.Campaign(ctx, "jm-1", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutJobAs(ctx, first, &JobRecord{ID: "a", Status: "CREATED", Graph: []byte("g1")}); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second, err := s.Campaign(ctx, "jm-2", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if err := s.PutJobAs(ctx, first, &JobRecord{ID: "b", Status: "CREATED"}); !errors.Is(err, ErrFenced) {
		t.Fatalf("new job by the old leader: %v, want ErrFenced", err)
	}
	if _, err := s.GetJob(ctx, "b"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("job b after a fenced put: %v, want ErrNotFound", err)
	}
	if _, err := s.SetJobGraphAs(ctx, first, "a", []byte("g2"), nil, nil); !errors.Is(err, ErrFenced) {
		t.Fatalf("graph rewrite by the old leader: %v, want ErrFenced", err)
	}
	if _, err := s.SetJobGraphAs(ctx, second, "a", []byte("g3"), nil, []byte("p")); err != nil {
		t.Fatal(err)
	}
	j, err := s.GetJob(ctx, "a")
	if err != nil || string(j.Graph) != "g3" || string(j.Placements) != "p" || j.Status != "CREATED" {
		t.Fatalf("job a = %+v, %v", j, err)
	}
	if _, err := s.SetJobGraphAs(ctx, second, "nope", nil, nil, nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("graph of an unknown job: %v, want ErrNotFound", err)
	}
}
