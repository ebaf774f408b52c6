package jobmanager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/braidflow/braid/checkpoint"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/metastore"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/scheduler"
)

// checkpointing reports whether graph takes periodic checkpoints.
func checkpointing(g *jobgraph.Graph) bool {
	return g.Checkpoint.Enabled()
}

// checkpointStorageURI is where job j keeps its checkpoints: the job's
// state.checkpoints.dir, else the cluster's --checkpoint-dir, else
// DataDir/checkpoints; a directory per job under it.
func (jm *JobManager) checkpointStorageURI(j *Job) string {
	base := j.graph.Checkpoint.Dir
	if base == "" {
		base = jm.cfg.CheckpointDir
	}
	if base == "" {
		base = filepath.Join(jm.cfg.DataDir, "checkpoints")
	}
	return joinStorageURI(base, j.id)
}

// joinStorageURI appends elem to the path of a storage URI (a plain path,
// file:// or s3://), before any query.
func joinStorageURI(base, elem string) string {
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" {
		abs, aerr := filepath.Abs(base)
		if aerr != nil {
			abs = base
		}
		return "file://" + filepath.ToSlash(filepath.Join(abs, elem))
	}
	u.Path = path.Join(u.Path, elem)
	return u.String()
}

// cpTick is how often a checkpoint run checks its timers.
const cpTick = 50 * time.Millisecond

// openRetry is how often a checkpoint run retries opening its storage.
const openRetry = time.Second

// checkpointRun coordinates the checkpoints of one attempt of a job: the
// coordinator state machine, and the one goroutine (loop) that feeds it
// events and performs its actions: triggers and notices to task managers,
// manifests to checkpoint storage, pointers to etcd, deletions.
type checkpointRun struct {
	jm      *JobManager
	j       *Job
	attempt int32
	tmAddrs map[string]string
	// sources lists, per task manager, its source subtasks.
	sources  map[string][]*braidv1.SubtaskRef
	vertices []checkpoint.VertexInfo
	uri      string
	log      *zap.Logger

	events   chan func(now time.Time) []checkpoint.Action
	done     chan struct{}
	stopped  chan struct{}
	stopOnce sync.Once

	// Owned by loop.
	storage *checkpoint.Storage
	coord   *checkpoint.Coordinator
	latest  int64 // id of the job's latest checkpoint in etcd
	// waiters wait for the outcome of the savepoints they triggered.
	waiters map[int64]chan savepointOutcome
}

// startCheckpoints starts coordinating the checkpoints of the job's
// current attempt. Every job has a run: one without periodic checkpoints
// (interval 0) takes savepoints only.
func (j *Job) startCheckpoints() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.mu.lc.Status().Terminal() || j.mu.cp != nil {
		return
	}
	r := &checkpointRun{jm: j.jm, j: j, attempt: j.mu.attempt, tmAddrs: j.mu.tmAddrs,
		sources: map[string][]*braidv1.SubtaskRef{}, uri: j.jm.checkpointStorageURI(j), waiters: map[int64]chan savepointOutcome{},
		log:    j.jm.log.With(zap.String("job", j.id), zap.Int32("attempt", j.mu.attempt)),
		events: make(chan func(time.Time) []checkpoint.Action, 256), done: make(chan struct{}), stopped: make(chan struct{})}
	var tasks, sources, ended []checkpoint.TaskID
	for _, p := range j.mu.placements {
		t := checkpoint.TaskID{Vertex: int(p.Vertex), Subtask: int(p.Subtask)}
		tasks = append(tasks, t)
		if v := j.vertex(p.Vertex); v != nil && len(v.Chain) > 0 && isSourceVertex(j.graph, v) {
			sources = append(sources, t)
			r.sources[p.TaskManagerId] = append(r.sources[p.TaskManagerId], &braidv1.SubtaskRef{Vertex: p.Vertex, Subtask: p.Subtask})
		}
		// NB: a fast source's data may end before the run starts.
		if st := j.mu.subtasks[subtaskKey{p.Vertex, p.Subtask}]; st != nil && st.dataEnded {
			ended = append(ended, t)
		}
	}
	for _, t := range ended {
		r.post(func(now time.Time) []checkpoint.Action { return r.coord.SourceEnded(t, now) })
	}
	r.vertices = checkpoint.VerticesOf(j.graph)
	j.mu.cp = r
	j.jm.wg.Add(1)
	go func() {
		defer j.jm.wg.Done()
		defer close(r.stopped)
		r.loop(tasks, sources)
	}()
}

// isSourceVertex reports whether v has no inputs: its first operator is a
// source, which checkpoint triggers go to.
func isSourceVertex(g *jobgraph.Graph, v *jobgraph.Vertex) bool {
	for _, e := range g.Edges {
		if e.Target == v.ID {
			return false
		}
	}
	return true
}

// stop ends the run and waits for its loop. Safe on nil and more than once.
func (r *checkpointRun) stop() {
	if r == nil {
		return
	}
	r.stopOnce.Do(func() { close(r.done) })
	<-r.stopped
}

// post hands the loop an event; an event that does not fit is dropped (the
// checkpoint it concerns then times out).
func (r *checkpointRun) post(ev func(now time.Time) []checkpoint.Action) {
	select {
	case r.events <- ev:
	default:
		r.log.Warn("checkpoint event dropped: queue full")
	}
}

// sourceEnded tells the coordinator that a subtask's data ended (only
// sources' matter to it).
func (r *checkpointRun) sourceEnded(vertex, subtask int) {
	r.post(func(now time.Time) []checkpoint.Action {
		return r.coord.SourceEnded(checkpoint.TaskID{Vertex: vertex, Subtask: subtask}, now)
	})
}

func (r *checkpointRun) taskFinished(vertex, subtask int) {
	r.post(func(time.Time) []checkpoint.Action {
		return r.coord.TaskFinished(checkpoint.TaskID{Vertex: vertex, Subtask: subtask})
	})
}

// ack passes a subtask's acknowledgement (or refusal) to the coordinator.
func (r *checkpointRun) ack(a *braidv1.CheckpointAck) {
	t := checkpoint.TaskID{Vertex: int(a.Vertex), Subtask: int(a.Subtask)}
	if a.Declined {
		r.post(func(now time.Time) []checkpoint.Action {
			r.log.Info("checkpoint declined", zap.Int64("checkpoint", a.CheckpointId), zap.Stringer("task", t), zap.String("reason", a.Reason))
			return r.coord.Decline(a.CheckpointId, t, a.Reason, now)
		})
		return
	}
	var st checkpoint.SubtaskState
	if err := json.Unmarshal(a.State, &st); err != nil {
		reason := fmt.Sprintf("undecodable state handle: %v", err)
		r.post(func(now time.Time) []checkpoint.Action { return r.coord.Decline(a.CheckpointId, t, reason, now) })
		return
	}
	r.post(func(now time.Time) []checkpoint.Action { return r.coord.Ack(a.CheckpointId, t, st, now) })
}

func (r *checkpointRun) loop(tasks, sources []checkpoint.TaskID) {
	ctx, cancel := context.WithCancel(r.jm.ctx)
	defer cancel()
	go func() {
		select {
		case <-r.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	// NB: retried: a job whose data ended waits for its final checkpoint,
	// so storage that is unreachable for a while must not disable
	// checkpoints for the rest of the attempt.
	for warned := false; ; {
		err := r.open(ctx, tasks, sources)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
		if !warned {
			r.log.Warn("cannot open checkpoint storage; retrying", zap.String("storage", r.uri), zap.Error(err))
			warned = true
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(openRetry):
		}
	}
	defer r.storage.Close()
	t := time.NewTicker(cpTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			r.perform(ctx, r.coord.Tick(now))
		case ev := <-r.events:
			r.perform(ctx, ev(time.Now()))
		}
	}
}

// open opens the storage and builds the coordinator over the checkpoints
// the job already has.
func (r *checkpointRun) open(ctx context.Context, tasks, sources []checkpoint.TaskID) error {
	st, err := checkpoint.OpenStorage(ctx, r.uri)
	if err != nil {
		return err
	}
	r.storage = st
	retained, err := r.retained(ctx)
	if err != nil {
		st.Close()
		return err
	}
	cfg := r.j.graph.Checkpoint
	ccfg := checkpoint.Config{
		Interval:        cfg.Interval,
		Timeout:         cfg.Timeout,
		MinPause:        cfg.MinPause,
		MaxConcurrent:   cfg.MaxConcurrent,
		TolerableFailed: cfg.TolerableFailed,
		NumRetained:     cfg.NumRetained,
		NextID:          r.j.nextCheckpointID(),
	}
	r.coord = checkpoint.NewCoordinator(ccfg, tasks, sources, retained, time.Now())
	return nil
}

// retained reads the job's completed checkpoints from etcd and their
// manifests from storage.
func (r *checkpointRun) retained(ctx context.Context) ([]checkpoint.Completed, error) {
	ptrs, err := r.jm.store.ListCheckpoints(ctx, r.j.id)
	if err != nil {
		return nil, err
	}
	var out []checkpoint.Completed
	for _, p := range ptrs {
		if p.ID > r.latest {
			r.latest = p.ID
		}
		_, key, err := checkpoint.Split(p.Path)
		if err != nil {
			return nil, err
		}
		m, err := checkpoint.ReadManifest(ctx, r.storage, key)
		if err != nil {
			return nil, err
		}
		out = append(out, checkpoint.Completed{ID: p.ID, ManifestKey: key, Keys: m.Keys(), Savepoint: p.Savepoint})
	}
	return out, nil
}

// perform carries out the coordinator's actions in order; actions that
// follow from an outcome (a commit) are performed in turn.
func (r *checkpointRun) perform(ctx context.Context, acts []checkpoint.Action) {
	for len(acts) > 0 {
		a := acts[0]
		acts = acts[1:]
		switch a := a.(type) {
		case checkpoint.Trigger:
			r.j.sawCheckpointID(a.ID)
			r.trigger(a)
		case checkpoint.CommitManifest:
			acts = append(acts, r.commit(ctx, a)...)
		case checkpoint.Notify:
			if w := r.waiters[a.ID]; w != nil && a.Completed {
				// NB: a savepoint's notices are delivered before its waiter
				// hears of it, so that sinks commit before a stop cancels.
				r.notifyWait(a)
				delete(r.waiters, a.ID)
				w <- savepointOutcome{id: a.ID, path: r.storage.Resolve(checkpoint.ManifestKey(a.ID, true))}
				continue
			}
			r.notify(a)
		case checkpoint.Abort:
			r.log.Warn("checkpoint aborted", zap.Int64("checkpoint", a.ID), zap.String("reason", a.Reason))
			r.jm.metrics.checkpointEnded(false, 0)
			if w := r.waiters[a.ID]; w != nil {
				delete(r.waiters, a.ID)
				w <- savepointOutcome{id: a.ID, err: fmt.Errorf("savepoint %d aborted: %s", a.ID, a.Reason)}
			}
		case checkpoint.Delete:
			r.delete(ctx, a)
		case checkpoint.FailJob:
			// NB: on a goroutine of its own: the failure stops this loop.
			go r.j.step(func(lc *scheduler.JobLifecycle) []scheduler.Action {
				return lc.CheckpointsFailing(a.Reason, time.Now())
			})
		}
	}
}

// trigger sends the trigger to every task manager of the attempt (those
// without sources learn whether it is a savepoint).
func (r *checkpointRun) trigger(a checkpoint.Trigger) {
	r.toTaskManagers("trigger checkpoint", a.ID, func(ctx context.Context, c braidv1.TaskServiceClient, tmID string) error {
		_, err := c.TriggerCheckpoint(ctx, &braidv1.TriggerCheckpointRequest{JobId: r.j.id, Attempt: r.attempt, CheckpointId: a.ID,
			TimestampUnixMs: a.TimestampUnixMs, Subtasks: r.liveSources(a, tmID), Savepoint: a.Savepoint, Stop: a.Stop})
		return err
	})
}

// liveSources returns the source subtasks on task manager tmID that
// trigger a goes to (finished ones get none).
func (r *checkpointRun) liveSources(a checkpoint.Trigger, tmID string) []*braidv1.SubtaskRef {
	live := map[checkpoint.TaskID]bool{}
	for _, t := range a.Sources {
		live[t] = true
	}
	var out []*braidv1.SubtaskRef
	for _, ref := range r.sources[tmID] {
		if live[checkpoint.TaskID{Vertex: int(ref.Vertex), Subtask: int(ref.Subtask)}] {
			out = append(out, ref)
		}
	}
	return out
}

// toTaskManagers calls call for every task manager of the attempt, each in
// its own goroutine with an RPC timeout; failures are logged (what was
// lost shows as a checkpoint timing out). The returned group is done when
// every call returned.
func (r *checkpointRun) toTaskManagers(what string, id int64, call func(ctx context.Context, c braidv1.TaskServiceClient, tmID string) error) *sync.WaitGroup {
	var wg sync.WaitGroup
	for tmID, addr := range r.tmAddrs {
		r.jm.wg.Add(1)
		wg.Add(1)
		go func() {
			defer r.jm.wg.Done()
			defer wg.Done()
			c, err := r.jm.taskClient(addr)
			if err == nil {
				ctx, cancel := context.WithTimeout(r.jm.ctx, rpcTimeout)
				err = call(ctx, c, tmID)
				cancel()
			}
			if err != nil {
				r.log.Debug(what, zap.Int64("checkpoint", id), zap.String("task_manager", tmID), zap.Error(err))
			}
		}()
	}
	return &wg
}

// commit writes the manifest and commits its pointer in etcd, then tells
// the coordinator how it went.
func (r *checkpointRun) commit(ctx context.Context, a checkpoint.CommitManifest) []checkpoint.Action {
	m := a.Manifest(r.j.id, int(r.j.graph.MaxParallelism), r.vertices)
	if err := checkpoint.WriteManifest(ctx, r.storage, a.ManifestKey, m); err != nil {
		return r.coord.CommitFailed(a.ID, err, false, time.Now())
	}
	ptr := metastore.CheckpointPointer{ID: a.ID, Path: r.storage.Resolve(a.ManifestKey), Savepoint: a.Savepoint, CompletedUnixMs: time.Now().UnixMilli()}
	// NB: fenced by the leader's term with HA: a deposed leader's commit
	// fails with ErrFenced and the checkpoint is aborted.
	err := r.jm.store.CommitCheckpoint(ctx, r.jm.leadership(), r.j.id, ptr, r.latest)
	if err != nil && !errors.Is(err, metastore.ErrConflict) && !errors.Is(err, metastore.ErrFenced) {
		// NB: the outcome is unknown: read it back before anything is
		// deleted.
		cur, ok, rerr := r.jm.store.LatestCheckpoint(ctx, r.j.id)
		if rerr != nil {
			r.coord.CommitFailed(a.ID, err, true, time.Now())
			return nil // the checkpoint stays committing; its files stay
		}
		if ok && cur.ID == a.ID {
			err = nil
		}
	}
	if err != nil {
		return r.coord.CommitFailed(a.ID, err, false, time.Now())
	}
	r.latest = a.ID
	r.j.checkpointCompleted(a.ID)
	took := time.Since(time.UnixMilli(a.TimestampUnixMs))
	r.log.Info("checkpoint completed", zap.Int64("checkpoint", a.ID), zap.Int("subtasks", len(a.Subtasks)), zap.Duration("took", took))
	r.jm.metrics.checkpointEnded(true, took)
	return r.coord.Committed(a.ID, time.Now())
}

// notifyWait is notify, returning once every task manager answered or
// timed out.
func (r *checkpointRun) notifyWait(a checkpoint.Notify) {
	r.notify(a).Wait()
}

// notify tells every task manager of the attempt a checkpoint's outcome.
func (r *checkpointRun) notify(a checkpoint.Notify) *sync.WaitGroup {
	return r.toTaskManagers("notify checkpoint", a.ID, func(ctx context.Context, c braidv1.TaskServiceClient, _ string) error {
		_, err := c.NotifyCheckpoint(ctx, &braidv1.NotifyCheckpointRequest{JobId: r.j.id, Attempt: r.attempt, CheckpointId: a.ID, Completed: a.Completed})
		return err
	})
}

// delete removes dropped checkpoints: their etcd pointers first, then
// their files. A file that cannot be deleted is logged and left behind.
func (r *checkpointRun) delete(ctx context.Context, d checkpoint.Delete) {
	for _, id := range d.Checkpoints {
		if err := r.jm.store.DeleteCheckpoint(ctx, r.j.id, id); err != nil {
			r.log.Warn("delete checkpoint pointer; its files stay", zap.Int64("checkpoint", id), zap.Error(err))
			return
		}
	}
	keys := append([]string(nil), d.Keys...)
	for _, p := range d.Prefixes {
		ks, err := r.storage.List(ctx, p)
		if err != nil {
			r.log.Debug("list checkpoint files", zap.String("prefix", p), zap.Error(err))
			continue
		}
		keys = append(keys, ks...)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := r.storage.Delete(ctx, k); err != nil {
			r.log.Debug("delete checkpoint file", zap.String("key", k), zap.Error(err))
		}
	}
}

// nextCheckpointID is the first id a new attempt's coordinator may use:
// above every id an earlier attempt triggered.
func (j *Job) nextCheckpointID() int64 {
	j.cpMu.Lock()
	defer j.cpMu.Unlock()
	return j.cpNext
}

func (j *Job) sawCheckpointID(id int64) {
	j.cpMu.Lock()
	defer j.cpMu.Unlock()
	if id >= j.cpNext {
		j.cpNext = id + 1
	}
}

// checkpointAck routes a subtask's acknowledgement to the current
// attempt's checkpoint run.
func (j *Job) checkpointAck(a *braidv1.CheckpointAck) {
	j.mu.Lock()
	cp := j.mu.cp
	ok := cp != nil && a.Attempt == j.mu.attempt && cp.attempt == a.Attempt
	// NB: a task manager acknowledges only for the subtasks placed on it.
	if st := j.mu.subtasks[subtaskKey{a.Vertex, a.Subtask}]; st == nil || st.tmID != a.TaskManagerId {
		ok = false
	}
	j.mu.Unlock()
	if ok {
		cp.ack(a)
	}
}

// Checkpoints returns job id's retained completed checkpoints and
// savepoints, oldest first, as etcd records them.
func (jm *JobManager) Checkpoints(ctx context.Context, id string) ([]metastore.CheckpointPointer, error) {
	return jm.store.ListCheckpoints(ctx, id)
}

// checkpointSummary describes j's checkpointing for DescribeJob; nil when
// it takes no checkpoints.
func (jm *JobManager) checkpointSummary(ctx context.Context, j *Job) *braidv1.CheckpointSummary {
	if !checkpointing(j.graph) {
		return nil
	}
	j.mu.Lock()
	sum := &braidv1.CheckpointSummary{IntervalMs: j.graph.Checkpoint.Interval.Milliseconds(), Attempt: j.mu.attempt, Restarts: j.mu.lc.Restarts()}
	j.mu.Unlock()
	if cp, ok, err := jm.store.LatestCheckpoint(ctx, j.id); err == nil && ok {
		sum.LatestId, sum.LatestUnixMs = cp.ID, cp.CompletedUnixMs
	}
	return sum
}
