package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"time"
)

// Defaults of RecoveryOptions.
const (
	DefaultRecoveryKills = 5
	DefaultRecoveryRate  = 20_000
)

// RecoveryOptions configure Recovery. Zero values take defaults.
type RecoveryOptions struct {
	// Kills is the number of task manager SIGKILLs.
	Kills int
	// JobManagerRestarts is the number of job manager SIGKILLs after them;
	// negative takes the default, 1.
	JobManagerRestarts int
	// Rate is the source's rows per second.
	Rate int
	// BinDir, Dir, Timeout and Log are as in ClusterOptions.
	BinDir  string
	Dir     string
	Timeout time.Duration
	Log     io.Writer
}

// Recovery measures how fast a checkpointing job comes back after a
// process dies. It starts a jobmanager and two taskmanagers (--slots 1
// each, so the job's two subtasks of each vertex sit on both), each its own
// process, and submits at parallelism 2 an unbounded GROUP BY over a
// datagen table (opts.Rate random rows per second in 100,000 groups) into a
// blackhole sink, with a checkpoint every second and the fixed-delay restart
// strategy (100ms delay). The sink is not transactional, so the figures
// leave out an exactly-once sink's recovery.
//
// Then, opts.Kills times, once the job is RUNNING and has completed a
// checkpoint, after a random 0.3-1.3s (so kills land anywhere in the
// checkpoint interval), it SIGKILLs a task manager (the two in turn) and
// starts it again at once with its id and data directory. Per kill it
// measures, from the kill: running, until the job manager has counted the
// failure (braid_jobmanager_job_restarts_total rose) and the job is RUNNING
// again (polled every 20ms); checkpoint, until the first checkpoint of the
// new attempt completed. Then, opts.JobManagerRestarts times, it SIGKILLs
// the job manager and starts it again on its addresses and data directory,
// and measures from the kill: jm-running, until the new job manager reports
// the job RUNNING; jm-checkpoint, until it completed a checkpoint of it.
//
// The Result's Elapsed is the whole run (Rows is 0: no throughput); the extras are the nearest-rank p50 and
// p99 of each figure (with fewer than 100 kills p99 is the maximum) and the
// Details list every kill.
func Recovery(ctx context.Context, opts RecoveryOptions) (Result, error) {
	if opts.Kills <= 0 {
		opts.Kills = DefaultRecoveryKills
	}
	if opts.JobManagerRestarts < 0 {
		opts.JobManagerRestarts = 1
	}
	if opts.Rate <= 0 {
		opts.Rate = DefaultRecoveryRate
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultClusterTimeout
	}
	binDir, err := checkBinaries(opts.BinDir)
	if err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	dir, err := os.MkdirTemp(opts.Dir, "braid-bench-recovery-")
	if err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	defer os.RemoveAll(dir)
	s, err := startServers(ctx, serverSpec{binDir: binDir, dir: dir, taskManagers: 2, slots: 1, stateCache: DefaultClusterStateCache, log: opts.Log})
	if err != nil {
		return Result{}, err
	}
	defer s.stop()

	start := time.Now()
	job, err := s.submit(ctx, recoverySQL(opts.Rate))
	if err != nil {
		return Result{}, s.pc.fail(fmt.Errorf("bench: submitting the job: %w", err))
	}
	defer s.cancelJob(ctx, job)
	rec := &recoverer{s: s, job: job}
	if _, err := rec.waitCheckpoint(ctx, 0); err != nil {
		return Result{}, s.pc.fail(fmt.Errorf("bench: the job's first checkpoint: %w", err))
	}
	rng := rand.New(rand.NewPCG(uint64(start.UnixNano()), 7))
	r := Result{}
	var running, checkpointed []time.Duration
	for k := 0; k < opts.Kills; k++ {
		time.Sleep(time.Duration(300+rng.IntN(1000)) * time.Millisecond)
		run, cp, err := rec.killTaskManager(ctx, k%2)
		if err != nil {
			return Result{}, s.pc.fail(fmt.Errorf("bench: task manager kill %d: %w", k+1, err))
		}
		running, checkpointed = append(running, run), append(checkpointed, cp)
		r.Details = append(r.Details, fmt.Sprintf("kill=%d taskmanager=%d running=%s checkpoint=%s", k+1, k%2, secs(run), secs(cp)))
	}
	var jmRunning, jmCheckpointed []time.Duration
	for k := 0; k < opts.JobManagerRestarts; k++ {
		time.Sleep(time.Duration(300+rng.IntN(1000)) * time.Millisecond)
		run, cp, err := rec.restartJobManager(ctx)
		if err != nil {
			return Result{}, s.pc.fail(fmt.Errorf("bench: job manager restart %d: %w", k+1, err))
		}
		jmRunning, jmCheckpointed = append(jmRunning, run), append(jmCheckpointed, cp)
		r.Details = append(r.Details, fmt.Sprintf("jm-restart=%d jm-running=%s jm-checkpoint=%s", k+1, secs(run), secs(cp)))
	}
	details := r.Details
	r = newResult("recovery", 0, time.Since(start))
	r.Details = details
	r.Extra["kills"] = strconv.Itoa(opts.Kills)
	r.Extra["rate"] = strconv.Itoa(opts.Rate)
	r.Extra["running-p50"] = secs(percentile(running, 50))
	r.Extra["running-p99"] = secs(percentile(running, 99))
	r.Extra["checkpoint-p50"] = secs(percentile(checkpointed, 50))
	r.Extra["checkpoint-p99"] = secs(percentile(checkpointed, 99))
	if len(jmRunning) > 0 {
		r.Extra["jm-restarts"] = strconv.Itoa(len(jmRunning))
		r.Extra["jm-running-p50"] = secs(percentile(jmRunning, 50))
		r.Extra["jm-checkpoint-p50"] = secs(percentile(jmCheckpointed, 50))
	}
	return r, nil
}

func recoverySQL(rate int) string {
	return fmt.Sprintf(`SET 'execution.checkpointing.interval' = '1s';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '1000000';
SET 'restart-strategy.fixed-delay.delay' = '100ms';
SET 'parallelism.default' = '2';
CREATE TABLE ev (g BIGINT, v BIGINT) WITH ('connector'='datagen', 'rows-per-second'='%d',
  'fields.g.min'='0', 'fields.g.max'='99999', 'fields.v.min'='0', 'fields.v.max'='1000');
CREATE TABLE out (g BIGINT, c BIGINT, s BIGINT) WITH ('connector'='blackhole');
INSERT INTO out SELECT g, COUNT(*), SUM(v) FROM ev GROUP BY g;
`, rate)
}

// recoverer kills the servers of a running job and times its recovery.
type recoverer struct {
	s   *servers
	job string
}

// pollEvery is how often recovery is polled: the figures' resolution.
const pollEvery = 20 * time.Millisecond

// killTaskManager SIGKILLs task manager i, starts it again, and returns the
// times from the kill to the job RUNNING again and to its next checkpoint.
func (rc *recoverer) killTaskManager(ctx context.Context, i int) (running, checkpointed time.Duration, err error) {
	m, err := rc.s.metrics(ctx)
	if err != nil {
		return 0, 0, err
	}
	restarts := m[metricRestarts]
	t0 := time.Now()
	kill(rc.s.tms[i])
	if err := rc.s.startTaskManager(ctx, i); err != nil {
		return 0, 0, err
	}
	err = poll(ctx, pollEvery, func() (bool, error) {
		m, err := rc.s.metrics(ctx)
		if err != nil || m[metricRestarts] <= restarts {
			return false, err
		}
		st, err := rc.s.jobStatus(ctx, rc.job)
		if err != nil {
			return false, err
		}
		if st == "FAILED" || st == "CANCELED" || st == "FINISHED" {
			return false, fmt.Errorf("the job ended %s", st)
		}
		return st == "RUNNING", nil
	})
	if err != nil {
		return 0, 0, err
	}
	running = time.Since(t0)
	m, err = rc.s.metrics(ctx)
	if err != nil {
		return 0, 0, err
	}
	at, err := rc.waitCheckpoint(ctx, m[metricCompleted])
	if err != nil {
		return 0, 0, err
	}
	return running, at.Sub(t0), nil
}

// restartJobManager SIGKILLs the job manager, starts it again, and returns
// the times from the kill to the job RUNNING under the new job manager and
// to the new job manager's first completed checkpoint.
func (rc *recoverer) restartJobManager(ctx context.Context) (running, checkpointed time.Duration, err error) {
	t0 := time.Now()
	kill(rc.s.jm)
	if err := rc.s.startJobManager(ctx); err != nil {
		return 0, 0, err
	}
	err = poll(ctx, pollEvery, func() (bool, error) {
		st, err := rc.s.jobStatus(ctx, rc.job)
		if err != nil {
			return false, nil // not serving yet, or the job not yet resumed
		}
		if st == "FAILED" || st == "CANCELED" || st == "FINISHED" {
			return false, fmt.Errorf("the job ended %s", st)
		}
		return st == "RUNNING", nil
	})
	if err != nil {
		return 0, 0, err
	}
	running = time.Since(t0)
	at, err := rc.waitCheckpoint(ctx, 0) // the new process counts from 0
	if err != nil {
		return 0, 0, err
	}
	return running, at.Sub(t0), nil
}

// waitCheckpoint waits until the job manager counts more completed
// checkpoints than after, and returns when it saw that.
func (rc *recoverer) waitCheckpoint(ctx context.Context, after float64) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var at time.Time
	err := poll(ctx, pollEvery, func() (bool, error) {
		m, err := rc.s.metrics(ctx)
		if err != nil {
			return false, err
		}
		at = time.Now()
		return m[metricCompleted] > after, nil
	})
	return at, err
}
