package jobmanager_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/localcluster"
)

// checkpointCluster starts a local cluster and a session on it.
func checkpointCluster(t *testing.T) (*localcluster.Cluster, *client.Session, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	cl, err := localcluster.Start(ctx, localcluster.Options{DataDir: dir, TaskManagers: 2, Slots: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	c, err := client.Dial(ctx, cl.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return cl, openSession(t, c), dir
}

const endlessAgg = `
CREATE TABLE gen (k BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '20000', 'fields.k.min' = '0', 'fields.k.max' = '9999');
CREATE TABLE sink (k BIGINT, c BIGINT) WITH ('connector' = 'blackhole');
`

// TestCheckpointsRetainAndIncrease runs a stateful job with frequent
// checkpoints: ids only increase, only num-retained checkpoints stay in
// etcd, and the storage holds no directory of a dropped checkpoint.
func TestCheckpointsRetainAndIncrease(t *testing.T) {
	cl, s, dir := checkpointCluster(t)
	run(t, s, `SET 'execution.checkpointing.interval' = '200ms';
		SET 'state.checkpoints.num-retained' = '2';
		SET 'parallelism.default' = '2';`+endlessAgg)
	id := startInsert(t, s, "INSERT INTO sink SELECT k, COUNT(*) FROM gen GROUP BY k;")
	jm := cl.JobManager()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	var last int64
	for last < 6 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d checkpoints completed within 30s", last)
		}
		cps, err := jm.Checkpoints(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		// NB: a new checkpoint's pointer is committed before the oldest's
		// is deleted, so 3 may show for a moment.
		if len(cps) > 3 {
			t.Fatalf("%d checkpoints retained, want at most 2 (3 while one is dropped): %+v", len(cps), cps)
		}
		for i, cp := range cps {
			if cp.ID < last && i == len(cps)-1 {
				t.Fatalf("latest checkpoint went from %d back to %d", last, cp.ID)
			}
			if i > 0 && cp.ID <= cps[i-1].ID {
				t.Fatalf("checkpoint ids not increasing: %+v", cps)
			}
		}
		if len(cps) > 0 {
			last = cps[len(cps)-1].ID
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := jm.CancelJob(ctx, id); err != nil {
		t.Fatal(err)
	}
	cps, err := jm.Checkpoints(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	retained := map[string]bool{}
	for _, cp := range cps {
		retained["chk-"+itoa(cp.ID)] = true
	}
	entries, err := os.ReadDir(filepath.Join(dir, "jobmanager", "checkpoints", id))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "chk-") || retained[e.Name()] {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimPrefix(e.Name(), "chk-"), 10, 64)
		if n >= cps[0].ID {
			continue // newer than the retained ones: in flight at the cancel
		}
		var files []string
		filepath.WalkDir(filepath.Join(dir, "jobmanager", "checkpoints", id, e.Name()), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return nil
		})
		if len(files) > 0 {
			t.Errorf("storage still holds files of %s, dropped before the retained %v: %v", e.Name(), retained, files)
		}
	}
}

// TestCheckpointStorageUnreachable points a job's checkpoints at storage
// that cannot be reached: every checkpoint fails, nothing is published in
// etcd, and the job (tolerating the failures) keeps running.
func TestCheckpointStorageUnreachable(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "braid")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "braid-secret")
	cl, s, _ := checkpointCluster(t)
	run(t, s, `SET 'execution.checkpointing.interval' = '200ms';
		SET 'execution.checkpointing.timeout' = '2s';
		SET 'execution.checkpointing.tolerable-failed-checkpoints' = '1000';
		SET 'state.checkpoints.dir' = 's3://nowhere/ckpt?endpoint=http://127.0.0.1:1&region=us-east-1&use_path_style=true';
		SET 'parallelism.default' = '2';`+endlessAgg)
	id := startInsert(t, s, "INSERT INTO sink SELECT k, COUNT(*) FROM gen GROUP BY k;")
	jm := cl.JobManager()
	time.Sleep(3 * time.Second)
	cps, err := jm.Checkpoints(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) != 0 {
		t.Fatalf("checkpoints published although storage is unreachable: %+v", cps)
	}
	if st := jm.Job(id).Status(); st != "RUNNING" {
		t.Fatalf("job is %s, want RUNNING", st)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
