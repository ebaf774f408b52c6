package checkpoint

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Flink's defaults for the settings of Config (execution.checkpointing.*
// and state.checkpoints.num-retained).
const (
	DefaultTimeout       = 10 * time.Minute
	DefaultMaxConcurrent = 1
	DefaultNumRetained   = 1
)

// Config is how a job checkpoints. The zero value of a field means its
// default.
type Config struct {
	// Interval between periodic checkpoint triggers; zero means no
	// periodic checkpoints (savepoints are still possible).
	Interval time.Duration
	// Timeout after which a checkpoint that still misses acknowledgements
	// is aborted. Default 10 minutes.
	Timeout time.Duration
	// MinPause is the least time between the completion of a checkpoint
	// and the trigger of the next periodic one. While it is non-zero no
	// periodic checkpoint is triggered while another is pending.
	MinPause time.Duration
	// MaxConcurrent bounds the checkpoints (savepoints included) pending
	// at once when a periodic one is due. Default 1. Savepoints ignore it.
	MaxConcurrent int
	// TolerableFailed is how many consecutive checkpoint failures
	// (timeouts, declines, failed commits) the job survives; one more
	// fails it. Default 0; negative means any number. Savepoint failures
	// do not count.
	TolerableFailed int
	// NumRetained is how many completed checkpoints, savepoints not
	// counted, are kept. Default 1.
	NumRetained int
	// NextID, if higher than the highest retained id + 1, is the first id
	// to use: the caller's record of ids that an earlier attempt may have
	// used for checkpoints that never completed, so that their leftover
	// files are never mistaken for a new checkpoint's.
	NextID int64
}

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxConcurrent <= 0 {
		c.MaxConcurrent = DefaultMaxConcurrent
	}
	if c.NumRetained <= 0 {
		c.NumRetained = DefaultNumRetained
	}
	return c
}

// Completed is a completed checkpoint or savepoint as the coordinator
// retains it.
type Completed struct {
	ID          int64
	ManifestKey string
	// Keys are the storage keys the manifest references (Manifest.Keys),
	// without the manifest itself.
	Keys      []string
	Savepoint bool
}

// An Action is something the caller of a Coordinator must do. The
// concrete types are Trigger, CommitManifest, Notify, Abort, Delete and
// FailJob. The caller performs a call's actions in order.
type Action interface {
	fmt.Stringer
	action()
}

// Trigger asks the sources to start checkpoint ID: each records its
// position and emits a barrier.
type Trigger struct {
	ID        int64
	Savepoint bool
	// Stop makes a savepoint stop the job: the sources emit nothing after
	// its barrier, and once it completes the tasks end without flushing.
	Stop            bool
	TimestampUnixMs int64
	Sources         []TaskID
}

// CommitManifest says every task acknowledged checkpoint ID. The caller
// writes the manifest (WriteManifest at ManifestKey, with the Subtasks),
// then commits the pointer to it in etcd, and reports the outcome with
// Committed or CommitFailed. Until then the checkpoint cannot time out.
type CommitManifest struct {
	ID              int64
	Savepoint       bool
	TimestampUnixMs int64
	ManifestKey     string
	Subtasks        []SubtaskState // sorted by vertex, then subtask
}

// Manifest returns the manifest to write for a, with the job's details.
func (a CommitManifest) Manifest(jobID string, maxParallelism int, vertices []VertexInfo) *Manifest {
	return &Manifest{
		JobID:           jobID,
		CheckpointID:    a.ID,
		Savepoint:       a.Savepoint,
		TimestampUnixMs: a.TimestampUnixMs,
		MaxParallelism:  maxParallelism,
		Vertices:        vertices,
		Subtasks:        a.Subtasks,
	}
}

// Notify tells every task that checkpoint ID completed (transactional
// sinks commit, uploaders Seed the handle) or was aborted.
type Notify struct {
	ID        int64
	Completed bool
	Savepoint bool
}

// Abort reports that checkpoint ID failed and why: to log, and to answer
// a savepoint request. A Notify and a Delete for its files follow it.
type Abort struct {
	ID        int64
	Savepoint bool
	Reason    string
}

// Delete removes checkpoints that are no longer retained and files no
// checkpoint references. The caller first removes the etcd pointers of
// Checkpoints, then deletes Keys and every key under Prefixes from
// storage; a failure to delete leaves an orphan file, which is harmless,
// so it is logged and not retried. NB: never delete files before their
// pointer is gone, or a crash in between leaves a pointer to nothing.
type Delete struct {
	Checkpoints []int64
	Keys        []string // sorted
	Prefixes    []string // each ends with "/"; sorted
}

// FailJob says the job must fail (and restart per its strategy):
// consecutive checkpoint failures exceeded Config.TolerableFailed.
type FailJob struct{ Reason string }

func (Trigger) action()        {}
func (CommitManifest) action() {}
func (Notify) action()         {}
func (Abort) action()          {}
func (Delete) action()         {}
func (FailJob) action()        {}

func (a Trigger) String() string {
	stop := ""
	if a.Stop {
		stop = " stop"
	}
	return fmt.Sprintf("trigger%s%s id=%d ts=%d sources=%s", savepointWord(a.Savepoint), stop, a.ID, a.TimestampUnixMs, tasksString(a.Sources))
}

func (a CommitManifest) String() string {
	var ts []TaskID
	var keys []string
	for _, s := range a.Subtasks {
		ts = append(ts, s.Task())
		keys = append(keys, s.Backend.Keys()...)
	}
	sort.Strings(keys)
	return fmt.Sprintf("commit-manifest%s id=%d key=%s subtasks=%s files=[%s]", savepointWord(a.Savepoint), a.ID, a.ManifestKey, tasksString(ts), strings.Join(keys, " "))
}

func (a Notify) String() string {
	outcome := "aborted"
	if a.Completed {
		outcome = "completed"
	}
	return fmt.Sprintf("notify%s id=%d %s", savepointWord(a.Savepoint), a.ID, outcome)
}

func (a Abort) String() string {
	return fmt.Sprintf("abort%s id=%d reason=%q", savepointWord(a.Savepoint), a.ID, a.Reason)
}

func (a Delete) String() string {
	return fmt.Sprintf("delete checkpoints=%v keys=[%s] prefixes=[%s]", a.Checkpoints, strings.Join(a.Keys, " "), strings.Join(a.Prefixes, " "))
}

func (a FailJob) String() string { return fmt.Sprintf("fail-job reason=%q", a.Reason) }

func savepointWord(sp bool) string {
	if sp {
		return " savepoint"
	}
	return ""
}

func tasksString(ts []TaskID) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.String()
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func sortTasks(ts []TaskID) {
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].Vertex != ts[j].Vertex {
			return ts[i].Vertex < ts[j].Vertex
		}
		return ts[i].Subtask < ts[j].Subtask
	})
}

// pending is a triggered checkpoint that has not completed or aborted.
type pending struct {
	id        int64
	savepoint bool
	stop      bool
	triggered time.Time
	acks      map[TaskID]SubtaskState
	// committing is set once every task acked: the caller is writing the
	// manifest and the etcd pointer, and only Committed or CommitFailed
	// resolves the checkpoint now.
	committing bool
}

// keys returns the storage keys of p's acknowledged states.
func (p *pending) keys() []string {
	var keys []string
	for _, s := range p.acks {
		keys = append(keys, s.Backend.Keys()...)
	}
	return dedupSorted(keys)
}

func dedupSorted(keys []string) []string {
	sort.Strings(keys)
	out := keys[:0]
	for i, k := range keys {
		if i == 0 || k != keys[i-1] {
			out = append(out, k)
		}
	}
	return out
}

// deletedMemory is how many Delete actions' keys the coordinator
// remembers in order to refuse an acknowledgement that references a
// deleted file (see Ack).
const deletedMemory = 16

// Coordinator is the checkpoint coordinator of one running job attempt, a
// pure state machine: its methods take an event, with the time it happened,
// and return the actions the caller must perform, in order. It starts no
// goroutine, reads no clock and does no I/O, so the caller's loop owns all
// of that and a test drives it with logical time. It is not safe for
// concurrent use; one loop owns it.
//
// Checkpoint ids increase, continue above the highest retained one, and
// savepoints take theirs from the same sequence. Events about an id that
// is unknown, already resolved or in the wrong phase are ignored (they
// return no actions): a late ack of an aborted checkpoint is normal.
//
// Deletion: the coordinator is the only component that deletes checkpoint
// files. It counts references from retained checkpoints (savepoints
// included) and never deletes a key that one of them, or an
// acknowledgement of a pending checkpoint, references. Savepoints are never
// deleted: the user owns them. A commit whose outcome is unknown deletes
// nothing until the caller reports the outcome.
type Coordinator struct {
	cfg     Config
	tasks   map[TaskID]bool
	sources []TaskID

	nextID   int64
	pending  map[int64]*pending
	retained []Completed // ascending id
	refs     map[string]int

	lastTrigger   time.Time // of the last periodic checkpoint, or the start
	lastCompleted time.Time // of the last checkpoint (not savepoint)
	completedOnce bool

	failures int  // consecutive failed checkpoints
	finished bool // a task finished with no state to carry: no more triggers
	failed   bool // FailJob was returned: no more triggers
	stopped  bool // a stop-with-savepoint completed: no more triggers

	// ended marks the sources whose data ended (SourceEnded). Once every
	// source's data ended, the next checkpoint is triggered at once
	// (finalTriggered): the final checkpoint, after which the tasks finish.
	ended          map[TaskID]bool
	allEnded       bool
	finalTriggered bool
	// last holds each task's state in the latest completed checkpoint or
	// savepoint that it acknowledged; carried holds the states that
	// finished tasks contribute to every later checkpoint.
	last    map[TaskID]taskState
	carried map[TaskID]SubtaskState
	// latestDone is the latest completed checkpoint or savepoint; once the
	// job is ending (allEnded or stopped) its notice is repeated every
	// renotifyEvery, so a task waiting for it to finish is not stuck on a
	// lost notice.
	latestDone   Notify
	lastNotifyAt time.Time

	// deleted remembers keys of the last deletedMemory Delete actions
	// (key -> deletion number), so that an ack that references one (a
	// task reusing a file it wrongly believes retained) aborts its
	// checkpoint instead of completing a checkpoint that cannot restore.
	deleted    map[string]int
	deletions  int
	pruneBelow int
}

// NewCoordinator returns the coordinator of a job attempt whose subtasks
// are tasks, of which sources receive the triggers. retained are the
// checkpoints and savepoints already completed (from etcd and their
// manifests), in any order; the coordinator adopts their references. If
// more checkpoints are retained than cfg.NumRetained allows, the extra
// ones are dropped at the next completion. now starts the first interval.
func NewCoordinator(cfg Config, tasks []TaskID, sources []TaskID, retained []Completed, now time.Time) *Coordinator {
	c := &Coordinator{
		cfg:         cfg.withDefaults(),
		tasks:       map[TaskID]bool{},
		sources:     append([]TaskID(nil), sources...),
		nextID:      1,
		pending:     map[int64]*pending{},
		refs:        map[string]int{},
		lastTrigger: now,
		deleted:     map[string]int{},
		ended:       map[TaskID]bool{},
		last:        map[TaskID]taskState{},
		carried:     map[TaskID]SubtaskState{},
	}
	for _, t := range tasks {
		c.tasks[t] = true
	}
	sortTasks(c.sources)
	c.retained = append([]Completed(nil), retained...)
	sort.Slice(c.retained, func(i, j int) bool { return c.retained[i].ID < c.retained[j].ID })
	for i, r := range c.retained {
		r.Keys = dedupSorted(append([]string(nil), r.Keys...))
		c.retained[i] = r
		for _, k := range r.Keys {
			c.refs[k]++
		}
		c.nextID = max(c.nextID, r.ID+1)
	}
	c.nextID = max(c.nextID, c.cfg.NextID)
	return c
}

// renotifyEvery is how often the notice of the latest completed checkpoint
// is repeated while the job ends (see Coordinator.latestDone).
const renotifyEvery = 5 * time.Second

// taskState is a task's acknowledged state in a completed checkpoint.
type taskState struct {
	id    int64
	state SubtaskState
}

// Tick advances time: it aborts checkpoints that missed their timeout
// (each counts as a failure) and triggers a checkpoint when one is due: the
// final checkpoint as soon as every source's data ended and fewer than
// MaxConcurrent checkpoints are pending, else a periodic one when Interval
// has passed since the last periodic trigger, MinPause since the last
// completed checkpoint, fewer than MaxConcurrent checkpoints are pending,
// and no task has finished without a state to carry. A trigger that is
// held back happens at the first Tick that allows it; ticks should come
// often compared with the interval. While the job ends it also repeats the
// latest completion notice every renotifyEvery.
func (c *Coordinator) Tick(now time.Time) []Action {
	var acts []Action
	for _, p := range c.sortedPending() {
		if !p.committing && !now.Before(p.triggered.Add(c.cfg.Timeout)) {
			acts = append(acts, c.abort(p, fmt.Sprintf("expired after %v", c.cfg.Timeout), true)...)
		}
	}
	switch {
	case c.finalDue():
		c.finalTriggered = true
		acts = append(acts, c.trigger(now, false, false))
	case c.periodicDue(now):
		acts = append(acts, c.trigger(now, false, false))
	}
	if (c.allEnded || c.stopped) && c.latestDone.ID > 0 && !now.Before(c.lastNotifyAt.Add(renotifyEvery)) {
		c.lastNotifyAt = now
		acts = append(acts, c.latestDone)
	}
	return acts
}

// canTrigger reports whether any checkpoint may be triggered at all.
func (c *Coordinator) canTrigger() bool {
	return !c.failed && !c.finished && !c.stopped && len(c.liveSources()) > 0
}

func (c *Coordinator) finalDue() bool {
	return c.allEnded && !c.finalTriggered && c.canTrigger() && len(c.pending) < c.cfg.MaxConcurrent
}

func (c *Coordinator) periodicDue(now time.Time) bool {
	if !c.canTrigger() || c.cfg.Interval <= 0 || now.Before(c.lastTrigger.Add(c.cfg.Interval)) {
		return false
	}
	if len(c.pending) >= c.cfg.MaxConcurrent {
		return false
	}
	if c.cfg.MinPause > 0 {
		for _, p := range c.pending {
			if !p.savepoint {
				return false
			}
		}
		if c.completedOnce && now.Before(c.lastCompleted.Add(c.cfg.MinPause)) {
			return false
		}
	}
	return true
}

// liveSources returns the sources that have not finished.
func (c *Coordinator) liveSources() []TaskID {
	var out []TaskID
	for _, t := range c.sources {
		if _, done := c.carried[t]; !done {
			out = append(out, t)
		}
	}
	return out
}

// SourceEnded records that source task t's data ended: it waits for a
// checkpoint taken after that point. Once every source's data ended, the
// final checkpoint is triggered at the next Tick (it is returned now when
// due), whatever the interval.
func (c *Coordinator) SourceEnded(t TaskID, now time.Time) []Action {
	if !c.tasks[t] || c.ended[t] {
		return nil
	}
	c.ended[t] = true
	for _, s := range c.sources {
		if !c.ended[s] {
			return nil
		}
	}
	c.allEnded = true
	return c.Tick(now)
}

// TriggerSavepoint triggers a savepoint now, regardless of the interval,
// MinPause and MaxConcurrent, and returns its id. It returns id 0 and no
// actions when no checkpoint can be taken any more (a task finished with
// no state to carry, or the job is failing or stopped). With stop it is a stop-with-savepoint: once
// it completes nothing more is triggered. The savepoint resolves like a checkpoint, reported with
// Savepoint set; its tasks upload it in full (Uploader.Full), it is never
// deleted, it does not count against NumRetained, and its failure does not
// count against TolerableFailed.
func (c *Coordinator) TriggerSavepoint(now time.Time, stop bool) (id int64, acts []Action) {
	if !c.canTrigger() {
		return 0, nil
	}
	t := c.trigger(now, true, stop)
	return t.ID, []Action{t}
}

// trigger starts checkpoint or savepoint nextID at the live sources; the
// finished tasks' states are in it from the start.
func (c *Coordinator) trigger(now time.Time, savepoint, stop bool) Trigger {
	id := c.nextID
	c.nextID++
	p := &pending{id: id, savepoint: savepoint, stop: stop, triggered: now, acks: map[TaskID]SubtaskState{}}
	for t, st := range c.carried {
		p.acks[t] = st
	}
	c.pending[id] = p
	if !savepoint {
		c.lastTrigger = now
	}
	return Trigger{ID: id, Savepoint: savepoint, Stop: stop, TimestampUnixMs: now.UnixMilli(), Sources: c.liveSources()}
}

// Ack records task t's state for checkpoint id. When every task has
// acknowledged, it returns CommitManifest. The coordinator keeps st (its
// Vertex and Subtask are set from t); the caller must not modify it after.
// A second ack from the same task is ignored. An ack whose state
// references a file the coordinator recently deleted aborts the checkpoint
// (a failure): completing it would leave a checkpoint that cannot restore.
func (c *Coordinator) Ack(id int64, t TaskID, st SubtaskState, now time.Time) []Action {
	p := c.pending[id]
	if p == nil || p.committing || !c.tasks[t] {
		return nil
	}
	if _, dup := p.acks[t]; dup {
		return nil
	}
	st.Vertex, st.Subtask = t.Vertex, t.Subtask
	p.acks[t] = st
	for _, k := range st.Backend.Keys() {
		if _, gone := c.deleted[k]; gone {
			return c.abort(p, fmt.Sprintf("task %v references %s, which was deleted", t, k), true)
		}
	}
	if len(p.acks) < len(c.tasks) {
		return nil
	}
	return []Action{c.commitManifest(p)}
}

// commitManifest moves p, acknowledged by every task, to committing.
func (c *Coordinator) commitManifest(p *pending) CommitManifest {
	p.committing = true
	subtasks := make([]SubtaskState, 0, len(p.acks))
	for _, s := range p.acks {
		subtasks = append(subtasks, s)
	}
	sort.Slice(subtasks, func(i, j int) bool {
		a, b := subtasks[i], subtasks[j]
		return a.Vertex < b.Vertex || (a.Vertex == b.Vertex && a.Subtask < b.Subtask)
	})
	return CommitManifest{
		ID:              p.id,
		Savepoint:       p.savepoint,
		TimestampUnixMs: p.triggered.UnixMilli(),
		ManifestKey:     ManifestKey(p.id, p.savepoint),
		Subtasks:        subtasks,
	}
}

// Decline aborts checkpoint id because task t could not take it (a
// failure). It is ignored once the checkpoint is committing.
func (c *Coordinator) Decline(id int64, t TaskID, reason string, now time.Time) []Action {
	p := c.pending[id]
	if p == nil || p.committing || !c.tasks[t] {
		return nil
	}
	return c.abort(p, fmt.Sprintf("declined by task %v: %s", t, reason), true)
}

// Committed reports that the manifest of checkpoint id is written and its
// etcd pointer committed. It returns Notify(completed); for a checkpoint
// it also resets the failure count, aborts older periodic checkpoints still
// collecting acknowledgements (subsumed; not failures), and drops the
// checkpoints beyond NumRetained with a Delete of every key no retained
// checkpoint or pending acknowledgement still references.
func (c *Coordinator) Committed(id int64, now time.Time) []Action {
	p := c.pending[id]
	if p == nil || !p.committing {
		return nil
	}
	delete(c.pending, id)
	n := Notify{ID: id, Completed: true, Savepoint: p.savepoint}
	acts := []Action{n}
	if id > c.latestDone.ID {
		c.latestDone, c.lastNotifyAt = n, now
	}
	for t, st := range p.acks {
		if prev, ok := c.last[t]; !ok || prev.id < id {
			c.last[t] = taskState{id: id, state: st}
		}
	}
	if p.stop {
		c.stopped = true
	}
	done := Completed{ID: id, ManifestKey: ManifestKey(id, p.savepoint), Keys: p.keys(), Savepoint: p.savepoint}
	// NB: adopt the new references before anything is deleted.
	for _, k := range done.Keys {
		c.refs[k]++
	}
	i := sort.Search(len(c.retained), func(i int) bool { return c.retained[i].ID > id })
	c.retained = append(c.retained[:i], append([]Completed{done}, c.retained[i:]...)...)
	if p.savepoint {
		return acts
	}
	c.failures = 0
	c.lastCompleted, c.completedOnce = now, true
	for _, q := range c.sortedPending() {
		if q.id < id && !q.savepoint && !q.committing {
			acts = append(acts, c.abort(q, fmt.Sprintf("subsumed by checkpoint %d", id), false)...)
		}
	}
	if d, ok := c.dropSubsumed(); ok {
		acts = append(acts, d)
	}
	return acts
}

// dropSubsumed drops the oldest checkpoints beyond NumRetained and returns
// the Delete for what only they referenced.
func (c *Coordinator) dropSubsumed() (Delete, bool) {
	n := 0
	for _, r := range c.retained {
		if !r.Savepoint {
			n++
		}
	}
	var d Delete
	kept := c.retained[:0]
	for _, r := range c.retained {
		if r.Savepoint || n <= c.cfg.NumRetained {
			kept = append(kept, r)
			continue
		}
		n--
		d.Checkpoints = append(d.Checkpoints, r.ID)
		if r.ManifestKey != "" {
			d.Keys = append(d.Keys, r.ManifestKey)
		}
		for _, k := range r.Keys {
			if c.refs[k]--; c.refs[k] <= 0 {
				delete(c.refs, k)
				d.Keys = append(d.Keys, k)
			}
		}
	}
	c.retained = kept
	if len(d.Checkpoints) == 0 {
		return Delete{}, false
	}
	d.Keys = c.unreferenced(d.Keys)
	c.remember(d.Keys)
	return d, true
}

// unreferenced returns keys, sorted, without those that a retained
// checkpoint or a pending checkpoint's acknowledgement references.
func (c *Coordinator) unreferenced(keys []string) []string {
	inPending := map[string]bool{}
	for _, p := range c.pending {
		for _, k := range p.keys() {
			inPending[k] = true
		}
	}
	var out []string
	for _, k := range dedupSorted(keys) {
		if c.refs[k] == 0 && !inPending[k] {
			out = append(out, k)
		}
	}
	return out
}

// remember records deleted keys for Ack's check, forgetting the keys of
// deletions older than the last deletedMemory.
func (c *Coordinator) remember(keys []string) {
	c.deletions++
	for _, k := range keys {
		c.deleted[k] = c.deletions
	}
	if c.deletions-c.pruneBelow > 2*deletedMemory {
		c.pruneBelow = c.deletions - deletedMemory
		for k, n := range c.deleted {
			if n <= c.pruneBelow {
				delete(c.deleted, k)
			}
		}
	}
}

// CommitFailed reports that writing the manifest or committing the etcd
// pointer of checkpoint id failed. With unknown set the outcome is unknown
// (an etcd request timed out): nothing is deleted and nothing is returned;
// the caller reads the pointer back and reports Committed or
// CommitFailed(unknown=false). Otherwise the checkpoint is aborted (a
// failure) and its files, manifest included, deleted.
func (c *Coordinator) CommitFailed(id int64, err error, unknown bool, now time.Time) []Action {
	p := c.pending[id]
	if p == nil || !p.committing || unknown {
		return nil
	}
	return c.abort(p, fmt.Sprintf("commit failed: %v", err), true)
}

// TaskFinished records that task t finished. A task finishes once a
// checkpoint it took after its data ended completed, so its state in the
// latest completed checkpoint it acknowledged is final: that state is
// carried into every later checkpoint, pending ones included (which may
// complete with it), and t gets no more triggers (Flink's FLIP-147). A
// task that finished without such a state (a job whose tasks end without
// a final checkpoint) stops all checkpoints instead: pending ones that t
// has not acknowledged can never complete and are aborted, not counting as
// failures.
func (c *Coordinator) TaskFinished(t TaskID) []Action {
	if !c.tasks[t] {
		return nil
	}
	if _, done := c.carried[t]; done {
		return nil
	}
	var acts []Action
	if last, ok := c.last[t]; ok && !c.finished {
		c.carried[t] = last.state
		for _, p := range c.sortedPending() {
			if _, acked := p.acks[t]; acked || p.committing {
				continue
			}
			p.acks[t] = last.state
			if len(p.acks) == len(c.tasks) {
				acts = append(acts, c.commitManifest(p))
			}
		}
		return acts
	}
	c.finished = true
	for _, p := range c.sortedPending() {
		if _, acked := p.acks[t]; !acked && !p.committing {
			acts = append(acts, c.abort(p, fmt.Sprintf("task %v finished", t), false)...)
		}
	}
	return acts
}

// abort resolves p as failed: Abort, Notify(aborted), and a Delete of the
// files only p wrote. A counted failure of a checkpoint may fail the job.
func (c *Coordinator) abort(p *pending, reason string, countFailure bool) []Action {
	delete(c.pending, p.id)
	acts := []Action{
		Abort{ID: p.id, Savepoint: p.savepoint, Reason: reason},
		Notify{ID: p.id, Savepoint: p.savepoint},
	}
	d := Delete{Keys: c.unreferenced(p.keys())}
	// Tasks that never acked may have uploaded private files too: those
	// sit under the checkpoint's directory, which nothing else uses, so
	// the whole directory goes and its keys need not be listed.
	dir := Dir(p.id, p.savepoint) + "/"
	if !c.referencesUnder(dir) {
		d.Prefixes = []string{dir}
		kept := d.Keys[:0]
		for _, k := range d.Keys {
			if !strings.HasPrefix(k, dir) {
				kept = append(kept, k)
			}
		}
		d.Keys = kept
	}
	c.remember(d.Keys)
	acts = append(acts, d)
	if countFailure && !p.savepoint {
		c.failures++
		if c.cfg.TolerableFailed >= 0 && c.failures > c.cfg.TolerableFailed && !c.failed {
			acts = append(acts, c.fail(reason)...)
		}
	}
	return acts
}

// referencesUnder says whether a retained checkpoint or a pending
// acknowledgement references a key under prefix. It should never: it
// guards the prefix deletion of an aborted checkpoint.
func (c *Coordinator) referencesUnder(prefix string) bool {
	for k := range c.refs {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	for _, p := range c.pending {
		for _, k := range p.keys() {
			if strings.HasPrefix(k, prefix) {
				return true
			}
		}
	}
	return false
}

// fail stops the coordinator from triggering, aborts the checkpoints still
// collecting acknowledgements and returns FailJob last.
func (c *Coordinator) fail(reason string) []Action {
	c.failed = true
	var acts []Action
	for _, p := range c.sortedPending() {
		if !p.committing {
			acts = append(acts, c.abort(p, "job failing", false)...)
		}
	}
	return append(acts, FailJob{Reason: fmt.Sprintf(
		"%d consecutive checkpoint failures exceed the %d tolerated; last: %s", c.failures, c.cfg.TolerableFailed, reason)})
}

func (c *Coordinator) sortedPending() []*pending {
	ps := make([]*pending, 0, len(c.pending))
	for _, p := range c.pending {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].id < ps[j].id })
	return ps
}

// Retained returns the retained checkpoints and savepoints, oldest first.
// The caller must not modify them.
func (c *Coordinator) Retained() []Completed { return append([]Completed(nil), c.retained...) }

// Pending returns the ids of the pending checkpoints, ascending.
func (c *Coordinator) Pending() []int64 {
	var ids []int64
	for _, p := range c.sortedPending() {
		ids = append(ids, p.id)
	}
	return ids
}
