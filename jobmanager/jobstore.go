package jobmanager

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/braidflow/braid/metastore"
	"github.com/braidflow/braid/types"
)

// DefaultJobStoreExpiration is how long an ended job is kept: Flink's
// default of jobstore.expiration-time, 3600 s.
const DefaultJobStoreExpiration = time.Hour

// JobStoreConfig says how long the job manager keeps jobs that ended
// (FINISHED, CANCELED or FAILED), as Flink's jobstore.* options do. An
// expired job is forgotten: its etcd record, its checkpoint pointers and
// its graph file (see graphstore.go) are deleted, and it leaves the job
// manager's memory, so ListJobs no longer shows it and DescribeJob answers
// NotFound. Its checkpoints' and savepoints' files stay, for a user to
// restore from.
type JobStoreConfig struct {
	// ExpirationTime is how long after its end a job is kept
	// (jobstore.expiration-time). DefaultJobStoreExpiration when zero;
	// negative keeps ended jobs until MaxCapacity drops them.
	ExpirationTime time.Duration
	// MaxCapacity bounds how many ended jobs are kept; beyond it the
	// earliest ended go first (jobstore.max-capacity). Zero or negative:
	// unlimited, Flink's default.
	MaxCapacity int
}

// Job store options, by Flink's names.
const (
	OptionJobStoreExpiration  = "jobstore.expiration-time"
	OptionJobStoreMaxCapacity = "jobstore.max-capacity"
)

// ParseJobStoreOptions reads jobstore.expiration-time (seconds, as in
// Flink, or a duration with a unit: "3600", "10 min", "2s") and
// jobstore.max-capacity (a count; -1 is unlimited) from opts. Missing
// options keep their defaults; other keys are refused.
func ParseJobStoreOptions(opts map[string]string) (JobStoreConfig, error) {
	var c JobStoreConfig
	for k, v := range opts {
		v = strings.TrimSpace(v)
		switch k {
		case OptionJobStoreExpiration:
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				if n <= 0 {
					return c, fmt.Errorf("%s: %q is not a positive number of seconds", k, v)
				}
				c.ExpirationTime = time.Duration(n) * time.Second
				continue
			}
			d, err := types.ParseDuration(v)
			if err != nil {
				return c, fmt.Errorf("%s: %v", k, err)
			}
			if d <= 0 {
				return c, fmt.Errorf("%s: %q is not positive", k, v)
			}
			c.ExpirationTime = d
		case OptionJobStoreMaxCapacity:
			n, err := strconv.Atoi(v)
			if err != nil || n == 0 || n < -1 {
				return c, fmt.Errorf("%s: %q is not a positive count (or -1, unlimited)", k, v)
			}
			c.MaxCapacity = n
		default:
			return c, fmt.Errorf("unknown job store option %q", k)
		}
	}
	return c, nil
}

func (c *JobStoreConfig) setDefaults() {
	if c.ExpirationTime == 0 {
		c.ExpirationTime = DefaultJobStoreExpiration
	}
}

// sweepEvery is how often the job manager looks for expired jobs, besides
// each time a job ends: a tenth of the expiration time, within 100 ms..1 min.
func (c JobStoreConfig) sweepEvery() time.Duration {
	d := time.Minute
	if c.ExpirationTime > 0 {
		d = min(d, max(c.ExpirationTime/10, 100*time.Millisecond))
	}
	return d
}

// endedJob is an ended job as expiredJobs sees it.
type endedJob struct {
	id    string
	endMs int64
}

// expiredJobs returns which of the ended jobs to forget at nowMs under c:
// those that ended at least c.ExpirationTime ago, and the earliest ended
// beyond c.MaxCapacity. It is pure; ended is not changed.
func expiredJobs(ended []endedJob, nowMs int64, c JobStoreConfig) []string {
	byEnd := append([]endedJob(nil), ended...)
	sort.Slice(byEnd, func(a, b int) bool {
		if byEnd[a].endMs != byEnd[b].endMs {
			return byEnd[a].endMs < byEnd[b].endMs
		}
		return byEnd[a].id < byEnd[b].id
	})
	over := 0
	if c.MaxCapacity > 0 {
		over = max(len(byEnd)-c.MaxCapacity, 0)
	}
	var out []string
	for i, e := range byEnd {
		old := c.ExpirationTime > 0 && nowMs-e.endMs >= c.ExpirationTime.Milliseconds()
		if i < over || old {
			out = append(out, e.id)
		}
	}
	return out
}

// expireJobs forgets expired jobs until the job manager closes or is
// deposed: every sweepEvery, and whenever a job ends.
func (jm *JobManager) expireJobs() {
	t := time.NewTicker(jm.cfg.JobStore.sweepEvery())
	defer t.Stop()
	for {
		select {
		case <-jm.ctx.Done():
			return
		case <-jm.deposed:
			return
		case <-t.C:
		case <-jm.jobEnded:
		}
		jm.sweepJobs()
	}
}

// sweepJobs forgets the ended jobs that expiredJobs selects.
func (jm *JobManager) sweepJobs() {
	if jm.abandoned() {
		return
	}
	ctx, cancel := context.WithTimeout(jm.ctx, rpcTimeout)
	defer cancel()
	recs, err := jm.store.ListJobs(ctx)
	if err != nil {
		jm.log.Warn("list jobs to expire", zap.Error(err))
		return
	}
	byID := map[string]*metastore.JobRecord{}
	var ended []endedJob
	for _, r := range recs {
		if !terminal(r.Status) {
			continue
		}
		if j := jm.job(r.ID); j != nil && !terminal(j.Status()) {
			continue
		}
		end := r.EndUnixMs
		if end == 0 {
			end = r.StartUnixMs
		}
		byID[r.ID] = r
		ended = append(ended, endedJob{id: r.ID, endMs: end})
	}
	for _, id := range expiredJobs(ended, time.Now().UnixMilli(), jm.cfg.JobStore) {
		jm.forgetJob(ctx, byID[id])
	}
}

// forgetJob deletes an expired job from etcd, then its graph file, and
// drops it from memory. NB: when the etcd delete fails its outcome is
// unknown, so the file stays (the next sweep tries again).
func (jm *JobManager) forgetJob(ctx context.Context, rec *metastore.JobRecord) {
	if err := jm.store.DeleteJobAs(ctx, jm.leadership(), rec.ID); err != nil {
		jm.log.Warn("delete expired job", zap.String("job", rec.ID), zap.Error(err))
		return
	}
	jm.mu.Lock()
	delete(jm.mu.jobs, rec.ID)
	for i, id := range jm.mu.ended {
		if id == rec.ID {
			jm.mu.ended = append(jm.mu.ended[:i:i], jm.mu.ended[i+1:]...)
			break
		}
	}
	jm.mu.Unlock()
	if rec.GraphRef != nil {
		if err := deleteGraphFile(ctx, rec.GraphRef); err != nil {
			jm.log.Warn("delete expired job's graph file", zap.String("job", rec.ID), zap.String("file", rec.GraphRef.URI), zap.Error(err))
		}
	}
	jm.log.Info("expired job forgotten", zap.String("job", rec.ID), zap.String("status", rec.Status))
}
