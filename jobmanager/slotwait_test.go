package jobmanager_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/jobmanager"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
)

type submitted struct {
	job *jobmanager.Job
	err error
}

// submitAsync submits g in the background; its outcome arrives on the
// channel.
func submitAsync(c *cluster, g *jobgraph.Graph) <-chan submitted {
	out := make(chan submitted, 1)
	go func() {
		j, err := c.jm.SubmitJob(context.Background(), g, nil)
		out <- submitted{j, err}
	}()
	return out
}

// waitListed waits until ListJobs shows job id with status and a message
// containing msg.
func waitListed(t *testing.T, cl braidv1.ClientServiceClient, id, st, msg string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l, err := cl.ListJobs(context.Background(), &braidv1.ListJobsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range l.Jobs {
			if j.JobId == id && j.Status == st && strings.Contains(j.Error, msg) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s not listed %s %q: %v", id, st, msg, l.Jobs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func withID(g *jobgraph.Graph) *jobgraph.Graph {
	g.JobID = jobmanager.NewJobID()
	return g
}

// TestSlotRequestQueue: a job that lacks slots waits (listed CREATED,
// "waiting for N slots") instead of failing at once with no job id; the
// head of the queue is served first when slots free up, even when a
// smaller job behind it would fit; CancelJob takes a waiting job out of
// the queue; and a job that waits longer than slot.request.timeout fails
// with an error naming the job, the slots it needs, those free and the
// timeout.
func TestSlotRequestQueue(t *testing.T) {
	c := startClusterWith(t, 1, jobmanager.Limits{SlotRequestTimeout: 20 * time.Second})
	cl := c.client(t)
	ctx := context.Background()
	first, err := c.jm.SubmitJob(ctx, graph(vertex("forever", 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	big := withID(graph(vertex("forever", 2)))
	bigDone := submitAsync(c, big)
	waitListed(t, cl, big.JobID, "CREATED", "waiting for 2 slots")
	small := withID(graph(vertex("forever", 1)))
	smallDone := submitAsync(c, small)
	waitListed(t, cl, small.JobID, "CREATED", "waiting for 1 slot")
	sc, err := client.Dial(ctx, c.jm.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if shown := strings.Join(run(t, openSession(t, sc), "SHOW JOBS;").rows, "\n"); !strings.Contains(shown, small.JobID+", test, CREATED") {
		t.Errorf("SHOW JOBS does not show the waiting job %s CREATED:\n%s", small.JobID, shown)
	}
	d, err := cl.DescribeJob(ctx, &braidv1.DescribeJobRequest{JobId: small.JobID})
	if err != nil || d.Job.Status != "CREATED" {
		t.Fatalf("describe a waiting job: %v, %v", d, err)
	}
	select {
	case s := <-smallDone:
		t.Fatalf("the small job overtook the big one: %v", s.err)
	case <-time.After(50 * time.Millisecond):
	}

	if err := c.jm.CancelJob(ctx, first.ID()); err != nil {
		t.Fatal(err)
	}
	b := <-bigDone
	if b.err != nil {
		t.Fatalf("big job after the first ended: %v", b.err)
	}
	if _, err := cl.CancelJob(ctx, &braidv1.CancelJobRequest{JobId: small.JobID}); err != nil {
		t.Fatal(err)
	}
	s := <-smallDone
	if status.Code(s.err) != codes.Canceled || !strings.Contains(s.err.Error(), small.JobID) {
		t.Fatalf("small job canceled while waiting: %v", s.err)
	}
	if err := c.jm.CancelJob(ctx, b.job.ID()); err != nil {
		t.Fatal(err)
	}
	wait(t, b.job)
	if l, _ := cl.ListJobs(ctx, &braidv1.ListJobsRequest{}); len(l.Jobs) != 2 {
		t.Errorf("jobs listed after the waits: %v", l.Jobs)
	}
}

// TestSlotRequestTimeout: a job that cannot get its slots within
// slot.request.timeout fails with ResourceExhausted, naming what it needs,
// what is free and the timeout, and leaves nothing behind.
func TestSlotRequestTimeout(t *testing.T) {
	c := startClusterWith(t, 1, jobmanager.Limits{SlotRequestTimeout: 300 * time.Millisecond})
	g := withID(graph(vertex("forever", 3)))
	start := time.Now()
	_, err := c.jm.SubmitJob(context.Background(), g, nil)
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("submit a job of 3 slots on 2: %v", err)
	}
	for _, want := range []string{"job " + g.JobID, "3 slots", "slot.request.timeout (300ms)", "2 of 2 slots are free"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("failed after %s, before the timeout", d)
	}
	if tms := c.jm.SlotsSnapshot(); tms[0].Used != 0 {
		t.Errorf("slots used after the timeout: %+v", tms)
	}
	// The next job is not blocked by the one that timed out.
	j, err := c.jm.SubmitJob(context.Background(), graph(vertex("source", 2)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := wait(t, j); st != jobmanager.StatusFinished {
		t.Fatalf("next job %s, %v", st, err)
	}
}

// TestSlotWaitClientGone: a waiting submission whose context ends leaves
// the queue at once.
func TestSlotWaitClientGone(t *testing.T) {
	c := startClusterWith(t, 1, jobmanager.Limits{})
	first, err := c.jm.SubmitJob(context.Background(), graph(vertex("forever", 2)), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = c.jm.SubmitJob(ctx, graph(vertex("forever", 1)), nil)
	if status.Code(err) != codes.Canceled {
		t.Fatalf("submit whose context ended while waiting: %v", err)
	}
	c.jm.CancelJob(context.Background(), first.ID())
	wait(t, first)
	if l, _ := c.client(t).ListJobs(context.Background(), &braidv1.ListJobsRequest{}); len(l.Jobs) != 1 {
		t.Errorf("jobs listed: %v", l.Jobs)
	}
}
