package metastore

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
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
	if err := s.SetJobGraphAs(ctx, nil, "j1", []byte("g2"), nil); err != nil {
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
