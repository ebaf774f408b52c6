package taskmanager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/braidflow/braid/checkpoint"
	"github.com/braidflow/braid/jobgraph"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/runtime"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

// checkpointable is what the task manager needs of a subtask to run
// checkpoints; runtime subtasks have it, test stand-ins may not.
type checkpointable interface {
	IsSource() bool
	TriggerCheckpoint(id int64, stop bool) error
	NotifyCheckpoint(id int64, completed bool)
}

// snapshotQueue bounds the snapshots of one subtask waiting for upload.
const snapshotQueue = 8

// snapshotter takes one subtask's snapshots: it uploads them in the
// background, one after another, acknowledges each to the job manager and
// removes the local Pebble checkpoint. It implements runtime.SnapshotHandler.
type snapshotter struct {
	tm       *TaskManager
	j        *runningJob
	vertex   int
	subtask  int
	uploader *checkpoint.Uploader
	queue    chan snapshotItem
	once     sync.Once
	// handles are the backend handles of checkpoints acknowledged and not
	// yet known complete; owned by loop.
	handles map[int64]*checkpoint.BackendHandle
}

// snapshotItem is a snapshot to upload, or (snap nil) the news that
// checkpoint completed: its files may be reused from then on.
type snapshotItem struct {
	snap      *runtime.Snapshot
	completed int64
}

var _ runtime.SnapshotHandler = (*snapshotter)(nil)

func newSnapshotter(tm *TaskManager, j *runningJob, vertex, subtask int, seed *checkpoint.BackendHandle) *snapshotter {
	s := &snapshotter{tm: tm, j: j, vertex: vertex, subtask: subtask, queue: make(chan snapshotItem, snapshotQueue),
		handles:  map[int64]*checkpoint.BackendHandle{},
		uploader: checkpoint.NewUploader(j.storage, fmt.Sprintf("shared/%d-%d", vertex, subtask))}
	if seed != nil {
		s.uploader.Seed(seed)
	}
	return s
}

// Snapshot queues snap for upload; a full queue declines it.
func (s *snapshotter) Snapshot(snap runtime.Snapshot) {
	s.start()
	select {
	case s.queue <- snapshotItem{snap: &snap}:
	default:
		os.RemoveAll(snap.BackendDir)
		s.Decline(snap.ID, fmt.Errorf("%d snapshots already wait for upload", snapshotQueue))
	}
}

// completed tells the uploader that checkpoint id completed, so the state
// files it uploaded for id may be reused by later checkpoints (only files
// of a completed checkpoint are). A notice that does not fit is dropped:
// the files are uploaded again, which costs time, never correctness.
func (s *snapshotter) completed(id int64) {
	s.start()
	select {
	case s.queue <- snapshotItem{completed: id}:
	default:
	}
}

func (s *snapshotter) start() {
	s.once.Do(func() {
		s.j.uploads.Add(1)
		go s.loop()
	})
}

// Decline tells the job manager that the subtask cannot take part in
// checkpoint id.
func (s *snapshotter) Decline(id int64, reason error) {
	s.ack(&braidv1.CheckpointAck{CheckpointId: id, Declined: true, Reason: reason.Error()})
}

func (s *snapshotter) loop() {
	defer s.j.uploads.Done()
	for {
		select {
		case it := <-s.queue:
			if it.snap != nil {
				s.upload(*it.snap)
				continue
			}
			for id, h := range s.handles {
				if id == it.completed {
					s.uploader.Seed(h)
				}
				if id <= it.completed {
					delete(s.handles, id)
				}
			}
		case <-s.j.ctx.Done():
			for {
				select {
				case it := <-s.queue:
					if it.snap != nil {
						os.RemoveAll(it.snap.BackendDir)
					}
				default:
					return
				}
			}
		}
	}
}

func (s *snapshotter) upload(snap runtime.Snapshot) {
	st := checkpoint.SubtaskState{Vertex: s.vertex, Subtask: s.subtask, Operators: snap.Operators}
	savepoint := s.j.isSavepoint(snap.ID)
	if snap.BackendDir != "" {
		defer os.RemoveAll(snap.BackendDir)
		start := time.Now()
		s.uploader.Full = savepoint
		h, n, err := s.uploader.Upload(s.j.ctx, snap.BackendDir, fmt.Sprintf("%s/%d-%d", checkpoint.Dir(snap.ID, savepoint), s.vertex, s.subtask))
		if err != nil {
			s.Decline(snap.ID, fmt.Errorf("upload state: %w", err))
			return
		}
		st.Backend = h
		if !savepoint {
			s.handles[snap.ID] = h
		}
		s.tm.log.Debug("state uploaded", zap.String("job", s.j.id), zap.Int64("checkpoint", snap.ID),
			zap.Int("vertex", s.vertex), zap.Int("subtask", s.subtask), zap.Int64("uploaded_bytes", n),
			zap.Int64("total_bytes", h.Size()), zap.Duration("took", time.Since(start)))
	}
	b, err := json.Marshal(&st)
	if err != nil {
		s.Decline(snap.ID, err)
		return
	}
	s.ack(&braidv1.CheckpointAck{CheckpointId: snap.ID, State: b})
}

// ack sends a (positive or declining) acknowledgement. One that cannot be
// delivered is logged: the checkpoint then times out.
func (s *snapshotter) ack(a *braidv1.CheckpointAck) {
	a.JobId, a.Attempt, a.Vertex, a.Subtask, a.TaskManagerId = s.j.id, s.j.attempt, int32(s.vertex), int32(s.subtask), s.tm.id
	ctx, cancel := context.WithTimeout(s.j.ctx, 10*time.Second)
	defer cancel()
	if _, err := s.tm.cluster.AcknowledgeCheckpoint(ctx, a); err != nil && s.j.ctx.Err() == nil {
		s.tm.log.Warn("acknowledge checkpoint", zap.String("job", s.j.id), zap.Int64("checkpoint", a.CheckpointId), zap.Error(err))
	}
}

// restoreError marks a deploy that failed because its checkpoint cannot be
// read (a file missing, truncated or damaged): the job manager fails the
// job rather than retrying, since retrying reads the same files.
type restoreError struct{ err error }

func (e *restoreError) Error() string { return e.err.Error() }
func (e *restoreError) Unwrap() error { return e.err }

// restoreSource is a deploy's restore: the checkpoint's manifest, read once
// for every subtask the deploy starts.
type restoreSource struct {
	id       int64
	storage  *checkpoint.Storage
	manifest *checkpoint.Manifest
	// match maps the job's vertex ids to the manifest's, by operator uid
	// (checkpoint.MatchVertices).
	match map[int]int
}

// openRestore reads the manifest a deploy of graph restores from, and
// refuses it when graph lacks operators the checkpoint has state for,
// unless the spec says to drop that state.
func openRestore(ctx context.Context, spec *braidv1.RestoreSpec, graph *jobgraph.Graph) (*restoreSource, error) {
	if spec == nil || spec.CheckpointId == 0 {
		return nil, nil
	}
	base, key, err := checkpoint.Split(spec.Manifest)
	if err != nil {
		return nil, err
	}
	st, err := checkpoint.OpenStorage(ctx, base)
	if err != nil {
		return nil, err
	}
	m, err := checkpoint.ReadManifest(ctx, st, key)
	if err != nil {
		st.Close()
		return nil, &restoreError{fmt.Errorf("restore checkpoint %d: %w", spec.CheckpointId, err)}
	}
	match, unclaimed := checkpoint.MatchVertices(m, checkpoint.VerticesOf(graph))
	if len(unclaimed) > 0 && !spec.IgnoreUnclaimedState {
		st.Close()
		return nil, &checkpoint.UnclaimedStateError{Path: spec.Manifest, Unclaimed: unclaimed}
	}
	return &restoreSource{id: spec.CheckpointId, storage: st, manifest: m, match: match}, nil
}

func (r *restoreSource) Close() {
	if r != nil {
		r.storage.Close()
	}
}

// restoreSubtask fills stateDir/db with the subtask's keyed state from the
// checkpoint and returns what its operators restore from, and the backend
// handle the subtask's uploader can reuse. When the vertex ran at another
// parallelism, the subtask takes the key groups it now owns from every old
// subtask whose range overlaps its own, and its operators get every old
// subtask's operator state (see operators.Restore).
func (r *restoreSource) restoreSubtask(ctx context.Context, vertex, subtask, parallelism int, stateDir string) (runtime.RestoreInfo, *checkpoint.BackendHandle, error) {
	info := runtime.RestoreInfo{ID: r.id, Operators: map[string][][]byte{}}
	from, ok := r.match[vertex]
	if !ok {
		return info, nil, nil // a vertex whose operators the checkpoint does not know starts empty
	}
	old := -1
	for _, v := range r.manifest.Vertices {
		if v.ID == from {
			old = v.Parallelism
		}
	}
	if old < 0 {
		return info, nil, nil
	}
	db := filepath.Join(stateDir, "db")
	if err := os.RemoveAll(db); err != nil {
		return info, nil, err
	}
	if old != parallelism {
		return info, nil, r.restoreRescaled(ctx, &info, from, subtask, old, parallelism, stateDir)
	}
	st := r.manifest.Subtask(from, subtask)
	if st == nil {
		return info, nil, nil
	}
	for uid, b := range st.Operators {
		info.Operators[uid] = [][]byte{b}
	}
	if st.Backend == nil {
		return info, nil, nil
	}
	if err := checkpoint.Download(ctx, r.storage, st.Backend, db); err != nil {
		return info, nil, &restoreError{fmt.Errorf("restore checkpoint %d: %w", r.id, err)}
	}
	return info, st.Backend, nil
}

// restoreRescaled restores a subtask of a vertex whose state is that of the
// checkpoint's vertex, which ran at parallelism old and now runs at
// parallelism: keyed state is merged and clipped to the
// subtask's key-group range, operator state is handed over whole.
func (r *restoreSource) restoreRescaled(ctx context.Context, info *runtime.RestoreInfo, vertex, subtask, old, parallelism int, stateDir string) error {
	info.Rescaled = true
	maxP := r.manifest.MaxParallelism
	if maxP <= 0 {
		maxP = types.DefaultMaxParallelism
	}
	mine := types.KeyGroupRangeFor(subtask, parallelism, maxP)
	var srcs []string
	tmp := filepath.Join(stateDir, "rescale")
	defer os.RemoveAll(tmp)
	for i := 0; i < old; i++ {
		st := r.manifest.Subtask(vertex, i)
		if st == nil {
			continue
		}
		for uid, b := range st.Operators {
			ops := info.Operators[uid]
			for len(ops) < i {
				ops = append(ops, nil)
			}
			info.Operators[uid] = append(ops, b)
		}
		theirs := types.KeyGroupRangeFor(i, old, maxP)
		if st.Backend == nil || theirs.End < mine.Start || theirs.Start > mine.End {
			continue
		}
		dir := filepath.Join(tmp, fmt.Sprint(i))
		if err := checkpoint.Download(ctx, r.storage, st.Backend, dir); err != nil {
			return &restoreError{fmt.Errorf("restore checkpoint %d: %w", r.id, err)}
		}
		srcs = append(srcs, dir)
	}
	if len(srcs) == 0 {
		return nil
	}
	db := filepath.Join(stateDir, "db")
	if err := state.RestoreRanges(db, srcs, mine, state.Options{KeyGroups: mine, MaxParallelism: maxP}); err != nil {
		os.RemoveAll(db)
		return fmt.Errorf("restore checkpoint %d: rescale vertex %d from %d to %d subtasks: %w", r.id, vertex, old, parallelism, err)
	}
	return nil
}

// openJobStorage opens the checkpoint storage of a job attempt, if it has
// any.
func openJobStorage(ctx context.Context, uri string) (*checkpoint.Storage, error) {
	if uri == "" {
		return nil, nil
	}
	st, err := checkpoint.OpenStorage(ctx, uri)
	if err != nil {
		return nil, fmt.Errorf("open checkpoint storage: %w", err)
	}
	return st, nil
}

// triggerCheckpoint passes a checkpoint trigger to the listed source
// subtasks of the job's current attempt.
func (tm *TaskManager) triggerCheckpoint(req *braidv1.TriggerCheckpointRequest) error {
	j := tm.jobAttempt(req.JobId, req.Attempt)
	if j == nil {
		return fmt.Errorf("job %s attempt %d is not running here", req.JobId, req.Attempt)
	}
	if req.Savepoint {
		j.markSavepoint(req.CheckpointId)
	}
	var errs []error
	for _, ref := range req.Subtasks {
		s := j.subtask(int(ref.Vertex), int(ref.Subtask))
		if s == nil {
			errs = append(errs, fmt.Errorf("subtask %d of vertex %d is not running here", ref.Subtask, ref.Vertex))
			continue
		}
		if err := s.TriggerCheckpoint(req.CheckpointId, req.Stop); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// notifyCheckpoint passes a checkpoint's outcome to every subtask of the
// job's current attempt.
func (tm *TaskManager) notifyCheckpoint(req *braidv1.NotifyCheckpointRequest) {
	j := tm.jobAttempt(req.JobId, req.Attempt)
	if j == nil {
		return
	}
	j.forgetSavepoint(req.CheckpointId)
	for _, s := range j.allSubtasks() {
		s.NotifyCheckpoint(req.CheckpointId, req.Completed)
	}
	if req.Completed {
		for _, sn := range j.allSnapshotters() {
			sn.completed(req.CheckpointId)
		}
	}
}

func (tm *TaskManager) jobAttempt(id string, attempt int32) *runningJob {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	j := tm.mu.jobs[id]
	if j == nil || j.attempt != attempt {
		return nil
	}
	return j
}
