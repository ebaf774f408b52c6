package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/braidflow/braid/checkpoint"
)

// Defaults of CheckpointSizeOptions.
const (
	DefaultCheckpointStateBytes = 1 << 30
	DefaultCheckpointInterval   = 10 * time.Second
	DefaultCheckpointPayload    = 1000
	DefaultCheckpointTimeout    = 15 * time.Minute
)

// CheckpointSizeOptions configure CheckpointSize. Zero values take defaults.
type CheckpointSizeOptions struct {
	// StateBytes is the keyed state, as a completed checkpoint records it,
	// at which the run stops.
	StateBytes int64
	// Interval is execution.checkpointing.interval.
	Interval time.Duration
	// Payload is the length of the random string each input row carries.
	Payload int
	// StateCache is the task manager's --state-cache (default 64MB).
	StateCache string
	// BinDir, Dir, Timeout and Log are as in ClusterOptions.
	BinDir  string
	Dir     string
	Timeout time.Duration
	Log     io.Writer
}

// checkpointSample is one completed checkpoint as the runners saw it.
type checkpointSample struct {
	id int64
	// took is trigger to commit, from the job manager's histogram.
	took time.Duration
	// state is the size of every file the checkpoint references; uploaded
	// the size of those no earlier checkpoint referenced, which this one
	// therefore uploaded.
	state, uploaded int64
	// at is when the runner saw it, from the start of the job.
	at time.Duration
}

func (s checkpointSample) String() string {
	return fmt.Sprintf("checkpoint=%d at=%s took=%s state=%s uploaded=%s", s.id, secs(s.at), secs(s.took), mib(uint64(s.state)), mib(uint64(s.uploaded)))
}

// CheckpointSize measures checkpoints of a join whose keyed state grows,
// incrementally uploaded. It starts a jobmanager and one taskmanager
// (--slots 1), each its own process, and submits at parallelism 1 an
// unbounded regular join of two datagen tables on a unique key (each row a
// BIGINT key and an opts.Payload-character random string, generated as
// fast as the task manager takes them) into a blackhole sink, checkpointing
// every opts.Interval to the job manager's local checkpoint directory.
// Every state row stays: the state grows by two rows per key until a
// completed checkpoint records at least opts.StateBytes, and the job is
// then cancelled.
//
// For each completed checkpoint it reads the duration from the job
// manager's braid_jobmanager_checkpoint_duration_seconds histogram (the
// change of its sum when the completed count rises by one) and the
// checkpoint's manifest: state is the size of every state file it
// references, uploaded the size of the files no earlier checkpoint
// referenced (a reused SST keeps its storage key, so this is exactly what
// the task manager uploaded). The first checkpoint uploads all its state;
// the later ones only what Pebble wrote since (new SSTs, compactions'
// outputs). The run measures no throughput: Rows is 0; Elapsed runs from
// the submission to the last checkpoint, and the Details list every
// checkpoint.
func CheckpointSize(ctx context.Context, opts CheckpointSizeOptions) (Result, error) {
	if opts.StateBytes <= 0 {
		opts.StateBytes = DefaultCheckpointStateBytes
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultCheckpointInterval
	}
	if opts.Payload <= 0 {
		opts.Payload = DefaultCheckpointPayload
	}
	if opts.StateCache == "" {
		opts.StateCache = DefaultClusterStateCache
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultCheckpointTimeout
	}
	binDir, err := checkBinaries(opts.BinDir)
	if err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	dir, err := os.MkdirTemp(opts.Dir, "braid-bench-checkpoint-")
	if err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	defer os.RemoveAll(dir)
	s, err := startServers(ctx, serverSpec{binDir: binDir, dir: dir, taskManagers: 1, slots: 1, stateCache: opts.StateCache, log: opts.Log})
	if err != nil {
		return Result{}, err
	}
	defer s.stop()

	start := time.Now()
	job, err := s.submit(ctx, checkpointSizeSQL(opts.Interval, opts.Payload))
	if err != nil {
		return Result{}, s.pc.fail(fmt.Errorf("bench: submitting the join: %w", err))
	}
	defer s.cancelJob(ctx, job)
	w := &checkpointWatcher{s: s, job: job, start: start, seen: map[string]bool{}}
	err = poll(ctx, 100*time.Millisecond, func() (bool, error) {
		if err := w.update(ctx); err != nil {
			return false, err
		}
		n := len(w.samples)
		return n >= 3 && w.samples[n-1].state >= opts.StateBytes, nil
	})
	if err != nil {
		return Result{}, s.pc.fail(fmt.Errorf("bench: checkpoint-size after %d checkpoints: %w", len(w.samples), err))
	}
	last := w.samples[len(w.samples)-1]
	r := newResult("checkpoint-size", 0, last.at)
	first, later := w.samples[0], w.samples[1:]
	r.Extra["interval"] = opts.Interval.String()
	r.Extra["payload"] = strconv.Itoa(opts.Payload)
	r.Extra["checkpoints"] = strconv.Itoa(len(w.samples))
	r.Extra["aborted"] = strconv.Itoa(w.aborted)
	r.Extra["first-took"] = secs(first.took)
	r.Extra["first-state"] = mib(uint64(first.state))
	r.Extra["first-uploaded"] = mib(uint64(first.uploaded))
	var tooks []time.Duration
	var upShare []float64
	for _, c := range later {
		tooks = append(tooks, c.took)
		upShare = append(upShare, float64(c.uploaded)/float64(max(c.state, 1)))
	}
	r.Extra["later-took-p50"] = secs(percentile(tooks, 50))
	r.Extra["later-took-max"] = secs(percentile(tooks, 100))
	r.Extra["later-uploaded/state-p50"] = pct(medianFloat(upShare))
	r.Extra["last-took"] = secs(last.took)
	r.Extra["last-state"] = mib(uint64(last.state))
	r.Extra["last-uploaded"] = mib(uint64(last.uploaded))
	for _, c := range w.samples {
		r.Details = append(r.Details, c.String())
	}
	return r, nil
}

// checkpointSizeSQL is the growing join: unique keys on both sides, never
// bounded (a finished source would end the checkpoints).
func checkpointSizeSQL(interval time.Duration, payload int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "SET 'execution.checkpointing.interval' = '%dms';\nSET 'parallelism.default' = '1';\n", interval.Milliseconds())
	for _, t := range []string{"l", "r"} {
		fmt.Fprintf(&sb, `CREATE TABLE %s (k BIGINT, p STRING) WITH ('connector'='datagen', 'rows-per-second'='1000000000',
  'fields.k.kind'='sequence', 'fields.k.start'='1', 'fields.k.end'='1000000000000000', 'fields.p.length'='%d');
`, t, payload)
	}
	sb.WriteString("CREATE TABLE out (k BIGINT, a STRING, b STRING) WITH ('connector'='blackhole');\n")
	sb.WriteString("INSERT INTO out SELECT l.k, l.p, r.p FROM l JOIN r ON l.k = r.k;\n")
	return sb.String()
}

// checkpointWatcher follows a job's completed checkpoints through the job
// manager's metrics and the manifests in its checkpoint directory.
type checkpointWatcher struct {
	s     *servers
	job   string
	start time.Time

	samples []checkpointSample
	aborted int
	// count and sum are the completed counter and the duration histogram's
	// sum as last read.
	count, sum float64
	lastID     int64
	seen       map[string]bool // storage keys of earlier checkpoints
}

// update reads the metrics and, when checkpoints completed since the last
// call, adds a sample for the newest.
func (w *checkpointWatcher) update(ctx context.Context) error {
	m, err := w.s.metrics(ctx)
	if err != nil {
		return err
	}
	w.aborted = int(m[metricAborted])
	count, sum := m[metricCompleted], m[metricDurationSum]
	if count <= w.count {
		return nil
	}
	took := time.Duration((sum - w.sum) / (count - w.count) * float64(time.Second))
	w.count, w.sum = count, sum
	c, err := w.newest(ctx)
	if err != nil || c == nil {
		return err
	}
	c.took, c.at = took, time.Since(w.start)
	w.samples = append(w.samples, *c)
	return nil
}

// newest reads the manifest of the job's newest checkpoint above lastID.
func (w *checkpointWatcher) newest(ctx context.Context) (*checkpointSample, error) {
	jobDir := filepath.Join(w.s.cpDir, w.job)
	entries, err := os.ReadDir(jobDir)
	if err != nil {
		return nil, fmt.Errorf("bench: reading the checkpoint directory: %w", err)
	}
	id := int64(-1)
	for _, e := range entries {
		if n, ok := strings.CutPrefix(e.Name(), "chk-"); ok {
			if v, err := strconv.ParseInt(n, 10, 64); err == nil && v > w.lastID && v > id {
				if _, err := os.Stat(filepath.Join(jobDir, e.Name(), "_metadata")); err == nil {
					id = v
				}
			}
		}
	}
	if id < 0 {
		return nil, nil
	}
	st, err := checkpoint.OpenStorage(ctx, "file://"+jobDir)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	man, err := checkpoint.ReadManifest(ctx, st, checkpoint.ManifestKey(id, false))
	if err != nil {
		return nil, err
	}
	w.lastID = id
	c := &checkpointSample{id: id}
	for _, sub := range man.Subtasks {
		if sub.Backend == nil {
			continue
		}
		for _, f := range sub.Backend.Files {
			c.state += f.Size
			if !w.seen[f.Key] {
				w.seen[f.Key] = true
				c.uploaded += f.Size
			}
		}
	}
	return c, nil
}

func pct(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

func medianFloat(fs []float64) float64 {
	if len(fs) == 0 {
		return 0
	}
	s := append([]float64(nil), fs...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
