package jobmanager

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/braidflow/braid/checkpoint"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/metastore"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/scheduler"
)

// savepointTimeout bounds how long a client waits for a savepoint.
const savepointTimeout = 10 * time.Minute

// savepointOutcome is how a savepoint ended: its manifest's URI, or why it
// failed.
type savepointOutcome struct {
	id   int64
	path string
	err  error
}

// savepoint triggers a savepoint on the run and waits for it to complete;
// with stop, a stop-with-savepoint. It returns the savepoint's id and
// manifest URI.
func (r *checkpointRun) savepoint(ctx context.Context, stop bool) (int64, string, error) {
	ch := make(chan savepointOutcome, 1)
	ev := func(now time.Time) []checkpoint.Action {
		id, acts := r.coord.TriggerSavepoint(now, stop)
		if id == 0 {
			ch <- savepointOutcome{err: errors.New("the job cannot take a savepoint now: it is stopping, a task finished without a final checkpoint, or its checkpoints failed")}
			return nil
		}
		r.log.Info("savepoint triggered", zap.Int64("checkpoint", id), zap.Bool("stop", stop))
		r.waiters[id] = ch
		return acts
	}
	select {
	case r.events <- ev:
	case <-r.stopped:
		return 0, "", errors.New("the job's attempt ended before the savepoint was triggered")
	case <-ctx.Done():
		return 0, "", ctx.Err()
	}
	select {
	case o := <-ch:
		return o.id, o.path, o.err
	case <-r.stopped:
		return 0, "", errors.New("the job's attempt ended before the savepoint completed")
	case <-ctx.Done():
		return 0, "", ctx.Err()
	}
}

// runningJob returns the live job id names (a full id or a prefix of
// exactly one live job's id) when it is RUNNING, and its checkpoint run.
func (jm *JobManager) runningJob(id string) (*Job, *checkpointRun, error) {
	j := jm.job(id)
	if j == nil && id != "" {
		jm.mu.Lock()
		var found []*Job
		for jid, cand := range jm.mu.jobs {
			if cand != nil && strings.HasPrefix(jid, id) && !terminal(cand.Status()) {
				found = append(found, cand)
			}
		}
		jm.mu.Unlock()
		if len(found) > 1 {
			return nil, nil, status.Errorf(codes.InvalidArgument, "job id prefix %s matches %d running jobs", id, len(found))
		}
		if len(found) == 1 {
			j = found[0]
		}
	}
	if j == nil {
		return nil, nil, notFound(id)
	}
	j.mu.Lock()
	st, cp := j.statusLocked(), j.mu.cp
	j.mu.Unlock()
	if st != StatusRunning || cp == nil {
		return nil, nil, status.Errorf(codes.FailedPrecondition, "job %s is %s, not RUNNING: no savepoint can be taken", j.id, st)
	}
	return j, cp, nil
}

// TriggerSavepoint takes a savepoint of a running job and returns the URI
// of its manifest: in the job's checkpoint storage, or, when dir is set, of
// its copy under <dir>/<job id>/savepoint-<id>/. The job keeps running.
func (jm *JobManager) TriggerSavepoint(ctx context.Context, id, dir string) (jobID, path string, err error) {
	return jm.takeSavepoint(ctx, id, dir, false)
}

func (jm *JobManager) takeSavepoint(ctx context.Context, id, dir string, stop bool) (jobID, path string, err error) {
	j, cp, err := jm.runningJob(id)
	if err != nil {
		return "", "", err
	}
	ctx, cancel := context.WithTimeout(ctx, savepointTimeout)
	defer cancel()
	spID, p, err := cp.savepoint(ctx, stop)
	if err != nil {
		return j.id, "", status.Errorf(codes.Aborted, "job %s: %v", j.id, err)
	}
	if stop {
		// NB: before the copy: the sources stopped at the savepoint, so
		// the job ends whether or not the copy succeeds.
		jm.awaitStopped(ctx, j)
	}
	if dir != "" {
		if p, err = copySavepoint(ctx, cp.uri, spID, joinStorageURI(dir, j.id)); err != nil {
			return j.id, "", status.Errorf(codes.Unavailable, "job %s: savepoint %d completed but copying it to %s failed: %v", j.id, spID, dir, err)
		}
	}
	jm.log.Info("savepoint completed", zap.String("job", j.id), zap.Int64("checkpoint", spID), zap.String("path", p), zap.Bool("stop", stop))
	return j.id, p, nil
}

// stopTimeout bounds how long a stopped job's subtasks may take to end
// after the savepoint that stopped them completed.
const stopTimeout = 30 * time.Second

// awaitStopped waits for job j, whose sources stopped at a completed
// savepoint, to end: each subtask ends once it heard of the savepoint. If
// that takes longer than stopTimeout the job is finished and its subtasks
// canceled: everything the savepoint covers is committed, so nothing is
// lost.
func (jm *JobManager) awaitStopped(ctx context.Context, j *Job) {
	t := time.NewTimer(stopTimeout)
	defer t.Stop()
	select {
	case <-j.Done():
		return
	case <-t.C:
		jm.log.Warn("stopped job's subtasks did not end; canceling them", zap.String("job", j.id))
	case <-ctx.Done():
	}
	// NB: finish first, so that subtasks failing as they are canceled are
	// not taken for a failure to restart from.
	j.finish(StatusFinished, "")
	jm.cancelOnTaskManagers(j, "")
}

// StopJob stops a running job. With savepoint it takes a
// stop-with-savepoint (copied under dir when set), as Flink's stop does:
// the sources emit nothing after its barrier, and once it completes the
// subtasks end without flushing (no end of input, no final watermark) and
// the job is FINISHED; a job restored from the savepoint goes on from
// there. If the savepoint fails, the sources resume, the job keeps running
// and the error is returned. Without savepoint the job is canceled.
func (jm *JobManager) StopJob(ctx context.Context, id string, savepoint bool, dir string) (jobID, path string, err error) {
	if !savepoint {
		j, _, err := jm.runningJob(id)
		if err != nil {
			if status.Code(err) == codes.FailedPrecondition {
				return id, "", jm.CancelJob(ctx, id)
			}
			return id, "", err
		}
		return j.id, "", jm.CancelJob(ctx, j.id)
	}
	return jm.takeSavepoint(ctx, id, dir, true)
}

// copySavepoint copies savepoint id (its manifest and every file it
// references) from the storage at from to the same keys of the storage at
// to, and returns the URI of the copy's manifest. The manifest is copied
// last, so a copy cut short has none.
func copySavepoint(ctx context.Context, from string, id int64, to string) (string, error) {
	src, err := checkpoint.OpenStorage(ctx, from)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst, err := checkpoint.OpenStorage(ctx, to)
	if err != nil {
		return "", err
	}
	defer dst.Close()
	manifest := checkpoint.ManifestKey(id, true)
	m, err := checkpoint.ReadManifest(ctx, src, manifest)
	if err != nil {
		return "", err
	}
	// NB: the files the manifest references, not only those under the
	// savepoint's directory: the final state of a task that finished
	// before the savepoint lives in the checkpoint it finished with.
	for _, k := range m.Keys() {
		if err := copyObject(ctx, src, dst, k); err != nil {
			return "", err
		}
	}
	if err := copyObject(ctx, src, dst, manifest); err != nil {
		return "", err
	}
	return dst.Resolve(manifest), nil
}

func copyObject(ctx context.Context, src, dst *checkpoint.Storage, key string) error {
	r, err := src.Get(ctx, key)
	if err != nil {
		return err
	}
	defer r.Close()
	_, _, err = dst.Put(ctx, key, io.Reader(r))
	return err
}

// ResolveSavepointPath turns what a user names a savepoint (or retained
// checkpoint) by into its manifest URI: the URI Braid printed
// (base#savepoint-<id>/_metadata), the savepoint's directory or its
// _metadata file, as a URI or a plain local path.
func ResolveSavepointPath(p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return "", errors.New("empty savepoint path")
	}
	if strings.Contains(p, "#") {
		if _, _, err := checkpoint.Split(p); err != nil {
			return "", err
		}
		return p, nil
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme == "" || len(u.Scheme) == 1 { // NB: C:\ is a path
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		u = &url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/_metadata")
	dir := path.Base(u.Path)
	if !isCheckpointDir(dir) {
		return "", fmt.Errorf("savepoint path %s: expected a savepoint-<id> or chk-<id> directory or its _metadata file", p)
	}
	u.Path = path.Dir(u.Path)
	return u.String() + "#" + dir + "/_metadata", nil
}

func isCheckpointDir(name string) bool {
	for _, prefix := range []string{"savepoint-", "chk-"} {
		if n, ok := strings.CutPrefix(name, prefix); ok {
			if _, err := strconv.ParseInt(n, 10, 64); err == nil {
				return true
			}
		}
	}
	return false
}

// initialRestore is the restore of a job's first attempt: the savepoint
// graph.Savepoint names (execution.savepoint.path), nil without one. It
// reads the manifest and refuses the job when the savepoint holds state
// that no operator of graph claims, unless the graph says to drop it
// (execution.savepoint.ignore-unclaimed-state).
func (jm *JobManager) initialRestore(ctx context.Context, graph *jobgraph.Graph) (*braidv1.RestoreSpec, error) {
	p := graph.Savepoint.Path
	if p == "" {
		return nil, nil
	}
	uri, err := ResolveSavepointPath(p)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	ignore := graph.Savepoint.IgnoreUnclaimedState
	base, key, err := checkpoint.Split(uri)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	st, err := checkpoint.OpenStorage(ctx, base)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "savepoint %s: %v", uri, err)
	}
	defer st.Close()
	m, err := checkpoint.ReadManifest(ctx, st, key)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "savepoint %s: %v", uri, err)
	}
	if _, lost := checkpoint.MatchVertices(m, checkpoint.VerticesOf(graph)); len(lost) > 0 && !ignore {
		return nil, status.Error(codes.FailedPrecondition, (&checkpoint.UnclaimedStateError{Path: uri, Unclaimed: lost}).Error())
	}
	return &braidv1.RestoreSpec{CheckpointId: m.CheckpointID, Manifest: uri, IgnoreUnclaimedState: ignore}, nil
}

// RescaleJob changes the parallelism of a running job: it takes a
// savepoint, cancels the current attempt, sets every vertex except collect
// sinks and VALUES sources to parallelism, and deploys the next attempt
// from the savepoint under the same job id. It returns the savepoint's URI.
// When the new attempt cannot be placed, the old parallelism is restored
// and the job restarts from the savepoint in the background.
func (jm *JobManager) RescaleJob(ctx context.Context, id string, parallelism int) (jobID, path string, err error) {
	j, _, err := jm.runningJob(id)
	if err != nil {
		return id, "", err
	}
	maxP := j.graph.MaxParallelism
	if parallelism < 1 || parallelism > maxP {
		return j.id, "", status.Errorf(codes.InvalidArgument, "parallelism %d is outside 1..%d (the job's max parallelism)", parallelism, maxP)
	}
	if why := j.unrestartable(); why != "" {
		return j.id, "", status.Errorf(codes.FailedPrecondition, "job %s cannot be rescaled: %s", j.id, why)
	}
	if err := rescaled(j.graph, parallelism).Validate(); err != nil {
		return j.id, "", status.Errorf(codes.InvalidArgument, "job %s cannot run at parallelism %d: %v", j.id, parallelism, err)
	}
	jobID, path, err = jm.TriggerSavepoint(ctx, j.id, "")
	if err != nil {
		return jobID, "", err
	}
	if !j.step(func(lc *scheduler.JobLifecycle) []scheduler.Action {
		return lc.Rescale("rescaling to parallelism " + strconv.Itoa(parallelism))
	}) {
		st := j.Status()
		return j.id, path, status.Errorf(codes.Aborted, "job %s became %s during the rescale; savepoint %s was taken", j.id, st, path)
	}
	j.mu.Lock()
	attempt := j.mu.lc.NextAttempt()
	j.mu.Unlock()
	old := setParallelism(j.graph, parallelism)
	jm.log.Info("job rescaling", zap.String("job", j.id), zap.Int("parallelism", parallelism), zap.String("savepoint", path))
	if err := jm.redeploy(j, attempt); err != nil {
		for i, v := range j.graph.Vertices {
			v.Parallelism = old[i]
		}
		// NB: the lifecycle retries the restart at the old parallelism.
		j.deployFailed(attempt, err)
		return j.id, path, status.Errorf(codes.ResourceExhausted, "job %s: rescale to parallelism %d failed (%v); it restarts from savepoint %s at its old parallelism", j.id, parallelism, err, path)
	}
	// NB: recorded, so a job manager that resumes the job after a restart
	// or a takeover runs it at the new parallelism.
	if err := jm.recordGraph(ctx, j); err != nil {
		jm.log.Warn("rescaled job's graph not recorded; a resumed job runs at its old parallelism", zap.String("job", j.id), zap.Error(err))
	}
	return j.id, path, nil
}

// recordGraph rewrites job j's graph and placements in etcd.
func (jm *JobManager) recordGraph(ctx context.Context, j *Job) error {
	pg, err := j.graph.Proto()
	if err != nil {
		return err
	}
	graph, err := proto.Marshal(pg)
	if err != nil {
		return err
	}
	_, ps, _ := j.deployment()
	placements, err := encodePlacements(ps)
	if err != nil {
		return err
	}
	var prev *metastore.GraphRef
	rec := &metastore.JobRecord{ID: j.id, Graph: graph, Placements: placements}
	err = jm.recordJob(ctx, rec, jm.checkpointStorageURI(j), func(rec *metastore.JobRecord) (err error) {
		prev, err = jm.store.SetJobGraphAs(ctx, jm.leadership(), j.id, rec.Graph, rec.GraphRef, rec.Placements)
		return err
	})
	if err == nil && prev != nil && (rec.GraphRef == nil || prev.URI != rec.GraphRef.URI) {
		if err := deleteGraphFile(ctx, prev); err != nil {
			jm.log.Warn("delete the job's earlier graph file", zap.String("job", j.id), zap.String("file", prev.URI), zap.Error(err))
		}
	}
	return err
}

// setParallelism sets every vertex of g to p except those that must run
// at parallelism 1 (collect sinks, VALUES sources), and returns the old
// parallelism of each vertex.
func setParallelism(g *jobgraph.Graph, p int) []int {
	old := make([]int, len(g.Vertices))
	for i, v := range g.Vertices {
		old[i] = v.Parallelism
		if !v.HasKind(jobgraph.KindCollect) && !v.HasKind(jobgraph.KindValues) {
			v.Parallelism = p
		}
	}
	return old
}

// rescaled returns a copy of g, sharing its operators, with the
// parallelism setParallelism would give it.
func rescaled(g *jobgraph.Graph, p int) *jobgraph.Graph {
	c := *g
	c.Vertices = make([]*jobgraph.Vertex, len(g.Vertices))
	for i, v := range g.Vertices {
		cv := *v
		c.Vertices[i] = &cv
	}
	setParallelism(&c, p)
	return &c
}
