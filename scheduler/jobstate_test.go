package scheduler

import "testing"

func TestJobStatusTransitions(t *testing.T) {
	all := []JobStatus{JobCreated, JobRunning, JobFinished, JobFailed, JobCanceled, JobRestarting}
	legal := map[[2]JobStatus]bool{
		{JobCreated, JobRunning}:     true,
		{JobCreated, JobFailed}:      true,
		{JobCreated, JobCanceled}:    true,
		{JobRunning, JobFinished}:    true,
		{JobRunning, JobFailed}:      true,
		{JobRunning, JobCanceled}:    true,
		{JobRunning, JobRestarting}:  true,
		{JobRestarting, JobRunning}:  true,
		{JobRestarting, JobFailed}:   true,
		{JobRestarting, JobCanceled}: true,
	}
	for _, from := range all {
		for _, to := range all {
			if got := from.CanTransition(to); got != legal[[2]JobStatus{from, to}] {
				t.Errorf("%s -> %s: CanTransition = %v", from, to, got)
			}
			if got := CheckTransition(string(from), string(to)); got != from.CanTransition(to) {
				t.Errorf("%s -> %s: CheckTransition = %v", from, to, got)
			}
		}
		if !from.Valid() {
			t.Errorf("%s not valid", from)
		}
	}
	for _, s := range all {
		want := s == JobFinished || s == JobFailed || s == JobCanceled
		if s.Terminal() != want {
			t.Errorf("%s.Terminal() = %v", s, s.Terminal())
		}
	}
	if JobStatus("SUSPENDED").CanTransition(JobRunning) || JobRunning.CanTransition("running") {
		t.Error("unknown status allowed in a transition")
	}
}

func TestParseJobStatus(t *testing.T) {
	if s, err := ParseJobStatus("FAILED"); err != nil || s != JobFailed {
		t.Fatalf("ParseJobStatus(FAILED) = %q, %v", s, err)
	}
	for _, bad := range []string{"", "failed", "restarting"} {
		if _, err := ParseJobStatus(bad); err == nil {
			t.Errorf("ParseJobStatus(%q) accepted", bad)
		}
	}
	if JobStatus("").Terminal() {
		t.Error("empty status is terminal")
	}
}
