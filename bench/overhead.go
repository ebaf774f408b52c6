package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// Defaults of OverheadOptions.
const (
	DefaultOverheadJoinKeys = 1_000_000
	DefaultOverheadAggRows  = 25_000_000
	DefaultOverheadGroups   = 100_000
)

// OverheadOptions configure CheckpointOverhead. Zero values take defaults.
type OverheadOptions struct {
	// JoinKeys is the number of distinct keys per side of the join.
	JoinKeys int
	// AggRows is the number of input rows of the GROUP BY (over
	// DefaultOverheadGroups groups).
	AggRows int64
	// Interval is execution.checkpointing.interval of the checkpointed runs.
	Interval time.Duration
	// StateCache is the task manager's --state-cache (default 64MB).
	StateCache string
	// BinDir, Dir, Timeout and Log are as in ClusterOptions.
	BinDir  string
	Dir     string
	Timeout time.Duration
	Log     io.Writer
}

// CheckpointOverhead measures what periodic checkpoints cost a job's
// throughput. On a jobmanager and one taskmanager (--slots 1), each its own
// process, it runs each of two bounded INSERTs into a blackhole sink at
// parallelism 1 twice over the same input, first without checkpoints and
// then with execution.checkpointing.interval = opts.Interval:
//
//   - join: the regular join of two datagen tables of opts.JoinKeys
//     sequential keys each (cluster-join-spill's query, its state spilling
//     past a 64MB cache);
//   - aggregate: SELECT g, COUNT(*), SUM(v) ... GROUP BY g over opts.AggRows
//     seeded-random rows in DefaultOverheadGroups groups.
//
// A bounded INSERT returns when its job has finished; that is the timed
// part. Each query gives one Result for the checkpointed run (Rows its input
// rows, Elapsed its time) with, as extras, the run without checkpoints and
// the overhead: 1 - (rows/s with checkpoints) / (rows/s without). The
// default sizes make each run last about three intervals on a 2-core
// machine; a run shorter than an interval takes no checkpoint, and the
// checkpoints extra then says 0.
func CheckpointOverhead(ctx context.Context, opts OverheadOptions) ([]Result, error) {
	if opts.JoinKeys <= 0 {
		opts.JoinKeys = DefaultOverheadJoinKeys
	}
	if opts.AggRows <= 0 {
		opts.AggRows = DefaultOverheadAggRows
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultCheckpointInterval
	}
	if opts.StateCache == "" {
		opts.StateCache = DefaultClusterStateCache
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultClusterTimeout
	}
	binDir, err := checkBinaries(opts.BinDir)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	dir, err := os.MkdirTemp(opts.Dir, "braid-bench-overhead-")
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer os.RemoveAll(dir)
	s, err := startServers(ctx, serverSpec{binDir: binDir, dir: dir, taskManagers: 1, slots: 1, stateCache: opts.StateCache, log: opts.Log})
	if err != nil {
		return nil, err
	}
	defer s.stop()

	queries := []struct {
		name string
		rows int64
		ddl  string
		sql  string
	}{
		{"checkpoint-overhead-join", 2 * int64(opts.JoinKeys), clusterDDL(opts.JoinKeys), clusterInsert},
		{"checkpoint-overhead-agg", opts.AggRows, aggDDL(opts.AggRows), "INSERT INTO agg_out SELECT g, COUNT(*), SUM(v) FROM ev GROUP BY g;\n"},
	}
	var out []Result
	for i, q := range queries {
		db := fmt.Sprintf("CREATE DATABASE q%d;\nUSE q%d;\n", i, i)
		if err := s.run(ctx, db+q.ddl); err != nil {
			return nil, s.pc.fail(fmt.Errorf("bench: %s: creating tables: %w", q.name, err))
		}
		use := fmt.Sprintf("USE q%d;\n", i)
		off, _, err := s.timedRun(ctx, use+q.sql)
		if err != nil {
			return nil, s.pc.fail(fmt.Errorf("bench: %s without checkpoints: %w", q.name, err))
		}
		set := fmt.Sprintf("SET 'execution.checkpointing.interval' = '%dms';\n", opts.Interval.Milliseconds())
		on, cps, err := s.timedRun(ctx, use+set+q.sql)
		if err != nil {
			return nil, s.pc.fail(fmt.Errorf("bench: %s with checkpoints: %w", q.name, err))
		}
		r := newResult(q.name, q.rows, on)
		base := newResult(q.name, q.rows, off)
		r.Extra["interval"] = opts.Interval.String()
		r.Extra["checkpoints"] = strconv.Itoa(cps)
		r.Extra["no-checkpoints-seconds"] = strconv.FormatFloat(off.Seconds(), 'f', 3, 64)
		r.Extra["no-checkpoints-rows/s"] = humanRate(base.RowsPerSec)
		r.Extra["overhead"] = pct(1 - r.RowsPerSec/base.RowsPerSec)
		out = append(out, r)
	}
	return out, nil
}

// aggDDL declares the aggregate's bounded input: random groups and values
// from datagen's fixed seed, so every run reads the same rows.
func aggDDL(rows int64) string {
	return fmt.Sprintf(`CREATE TABLE ev (g BIGINT, v BIGINT) WITH ('connector'='datagen', 'number-of-rows'='%d', 'rows-per-second'='1000000000',
  'fields.g.min'='0', 'fields.g.max'='%d', 'fields.v.min'='0', 'fields.v.max'='1000');
CREATE TABLE agg_out (g BIGINT, c BIGINT, s BIGINT) WITH ('connector'='blackhole');
`, rows, DefaultOverheadGroups-1)
}

// run executes a script of statements that end by themselves.
func (s *servers) run(ctx context.Context, script string) error {
	sess, closeFn, err := s.session(ctx)
	if err != nil {
		return err
	}
	defer closeFn()
	return sess.Execute(ctx, script, false, &statusHandler{})
}

// timedRun executes script, whose last statement is a bounded INSERT, and
// returns how long that took and how many checkpoints completed meanwhile.
func (s *servers) timedRun(ctx context.Context, script string) (time.Duration, int, error) {
	before, err := s.metrics(ctx)
	if err != nil {
		return 0, 0, err
	}
	sess, closeFn, err := s.session(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer closeFn()
	// NB: the SET and USE statements before the INSERT take microseconds;
	// timing the whole script keeps the client out of the job's way.
	if !strings.Contains(script, "INSERT") {
		return 0, 0, fmt.Errorf("bench: no INSERT in %q", script)
	}
	start := time.Now()
	err = sess.Execute(ctx, script, false, &statusHandler{})
	elapsed := time.Since(start)
	if err != nil {
		return 0, 0, err
	}
	after, err := s.metrics(ctx)
	if err != nil {
		return 0, 0, err
	}
	return elapsed, int(after[metricCompleted] - before[metricCompleted]), nil
}
