package taskmanager

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	braidv1 "github.com/braidflow/braid/proto/braid/v1"
)

// FuzzDeployTasks gives a task manager arbitrary DeployTasks requests:
// whatever they hold, the task manager does not panic, creates nothing
// outside its data directory, and a refused deploy leaves no job behind.
// The request's checkpoint storage and restore are cleared: they name
// places a member chose (a member may write its checkpoints anywhere its
// job manager says), which is not what this target checks.
func FuzzDeployTasks(f *testing.F) {
	good := &braidv1.DeployTasksRequest{Graph: sourcesGraph(f, "j1", "src", "next"), Deploy: []*braidv1.SubtaskRef{{Vertex: 0}, {Vertex: 1}}}
	for _, req := range []*braidv1.DeployTasksRequest{
		good,
		{Graph: sourcesGraph(f, "../../x", "v"), Deploy: []*braidv1.SubtaskRef{{Vertex: 0}}},
		{Graph: sourcesGraph(f, "j2", "v"), Deploy: []*braidv1.SubtaskRef{{Vertex: 0, Subtask: 7}, {Vertex: -1}}},
		{Graph: sourcesGraph(f, "j3", "v"), Attempt: -3, Placements: []*braidv1.Placement{{Vertex: 9, Subtask: -1, TaskManagerId: "../tm"}}},
	} {
		b, err := proto.Marshal(req)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	_, jmAddr := startFakeJM(f)
	root := f.TempDir()
	data := filepath.Join(root, "data")
	tm, err := New(Config{JobManager: jmAddr, Listen: "127.0.0.1:0", DataDir: data, Slots: 4,
		Build: func(SubtaskSpec) (Subtask, error) {
			return &fakeSubtask{run: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }}, nil
		}})
	if err != nil {
		f.Fatal(err)
	}
	if err := tm.Start(context.Background()); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { tm.Close() })
	svc := &taskService{tm: tm}
	f.Fuzz(func(t *testing.T, b []byte) {
		req := &braidv1.DeployTasksRequest{}
		if proto.Unmarshal(b, req) != nil {
			return
		}
		req.CheckpointStorage, req.Restore = "", nil
		ctx := context.Background()
		_, err := svc.DeployTasks(ctx, req)
		if err == nil {
			svc.CancelJob(ctx, &braidv1.CancelTasksRequest{JobId: req.Graph.GetJobId()})
		}
		jobs := func() int {
			tm.mu.Lock()
			defer tm.mu.Unlock()
			return len(tm.mu.jobs)
		}
		// NB: a canceled job leaves the map when its subtasks have ended.
		for deadline := time.Now().Add(5 * time.Second); err == nil && jobs() != 0 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		if n := jobs(); n != 0 {
			t.Fatalf("after the deploy (error %v) and a cancel, %d jobs are left", err, n)
		}
		entries, rerr := os.ReadDir(root)
		if rerr != nil {
			t.Fatal(rerr)
		}
		for _, e := range entries {
			if e.Name() != "data" {
				t.Fatalf("the deploy created %s outside the data directory", filepath.Join(root, e.Name()))
			}
		}
		if err == nil && req.Graph.GetJobId() != "" && strings.ContainsAny(req.Graph.GetJobId(), "/\\") {
			t.Fatalf("a job id with a path separator was deployed: %q", req.Graph.GetJobId())
		}
	})
}
