package scheduler

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// RestartPolicy decides, failure by failure, whether a job restarts and
// after what delay. It is pure: the caller passes the time and performs the
// restart. A RestartPolicy is not safe for concurrent use; the job's loop
// owns it.
//
// The strategies follow Flink's:
//
//   - none: never restart.
//   - fixed-delay: restart after Delay, at most Attempts times over the
//     job's life.
//   - exponential-delay: restart after a backoff that starts at Delay and
//     is multiplied by BackoffMultiplier at each failure, up to MaxDelay,
//     each with a random jitter of ±JitterFactor of it. Once the job has
//     run for ResetBackoffThreshold without failing, the backoff and the
//     attempt count start over. At most Attempts restarts between resets.
//   - failure-rate: restart after Delay unless more than
//     MaxFailuresPerInterval failures fall within FailureRateInterval.
//
// NB: a failure of class types.ClassUser is never restarted, whatever the
// strategy. Flink restarts any failure except an unrecoverable one (a
// SuppressRestartsException, or an error its ThrowableClassifier marks
// NON_RECOVERABLE), which fails the job at once, and it treats a user
// function's exception as recoverable. In Braid a user error comes from
// the query or its data (a record that does not parse, a division by zero
// that fails the job): the job is deterministic, so a restart replays the
// same input from the last checkpoint and fails on the same record, and
// restarting only burns the attempts and delays the report. So Braid treats
// a user error as Flink treats SuppressRestartsException. External,
// internal, lost-peer and unclassified failures follow the strategy.
type RestartPolicy struct {
	cfg jobgraph.RestartStrategy
	rnd func() float64

	// restarts counts the restarts granted: over the job's life for
	// fixed-delay, since the last backoff reset for exponential-delay.
	restarts int
	// backoff is exponential-delay's next delay before jitter; 0 until the
	// first failure.
	backoff time.Duration
	// runningSince is when the job last started running; zero while it
	// is not running.
	runningSince time.Time
	// failures holds failure-rate's failure times within the interval.
	failures []time.Time
}

// NewRestartPolicy returns the policy for cfg, as resolved by
// jobgraph.ResolveRestartStrategy; the zero cfg never restarts. rnd returns
// jitter draws in [0, 1); nil uses math/rand.
func NewRestartPolicy(cfg jobgraph.RestartStrategy, rnd func() float64) *RestartPolicy {
	if rnd == nil {
		rnd = rand.Float64
	}
	return &RestartPolicy{cfg: cfg, rnd: rnd}
}

// OnFailure records a failure of the given class at now and says whether
// to restart and after what delay. reason explains the decision, for the
// job's log and its failure message: "restart strategy none", "fixed-delay:
// 3 restart attempts exhausted", "failure-rate: 2 failures within 1m0s".
func (p *RestartPolicy) OnFailure(now time.Time, class types.ErrorClass) (restart bool, delay time.Duration, reason string) {
	running := p.runningSince
	p.runningSince = time.Time{}
	if p.cfg.Type == jobgraph.RestartNone || p.cfg.Type == "" {
		return false, 0, "restart strategy none"
	}
	if class == types.ClassUser {
		return false, 0, "a user error is not restarted: the job would replay the same input and fail again"
	}
	switch p.cfg.Type {
	case jobgraph.RestartFixedDelay:
		if p.restarts >= p.cfg.Attempts {
			return false, 0, fmt.Sprintf("fixed-delay: %d restart attempts exhausted", p.cfg.Attempts)
		}
		p.restarts++
		d := p.cfg.Delay
		return true, d, fmt.Sprintf("fixed-delay: restart %d of %d after %s", p.restarts, p.cfg.Attempts, d)
	case jobgraph.RestartExponentialDelay:
		return p.exponential(now, running)
	case jobgraph.RestartFailureRate:
		return p.failureRate(now)
	}
	return false, 0, fmt.Sprintf("unknown restart strategy %q", p.cfg.Type)
}

// OnRunning tells the policy that the job runs again at now: every subtask
// of the restarted job is running. exponential-delay resets its backoff
// when the job then runs for reset-backoff-threshold without failing.
func (p *RestartPolicy) OnRunning(now time.Time) {
	if p.runningSince.IsZero() {
		p.runningSince = now
	}
}

func (p *RestartPolicy) exponential(now, running time.Time) (bool, time.Duration, string) {
	initial, maxDelay := p.cfg.Delay, p.cfg.MaxDelay
	if !running.IsZero() && now.Sub(running) >= p.cfg.ResetBackoffThreshold {
		// The job ran stably: this failure starts a new series.
		p.backoff, p.restarts = 0, 0
	}
	if p.restarts >= p.cfg.Attempts {
		return false, 0, fmt.Sprintf("exponential-delay: %d restart attempts exhausted without %s of stable running",
			p.cfg.Attempts, p.cfg.ResetBackoffThreshold)
	}
	if p.backoff == 0 {
		p.backoff = initial
	} else {
		next := time.Duration(float64(p.backoff) * p.cfg.BackoffMultiplier)
		if next > maxDelay || next < 0 { // < 0: overflow
			next = maxDelay
		}
		p.backoff = next
	}
	p.restarts++
	d := p.backoff
	if j := p.cfg.JitterFactor; j > 0 {
		d += time.Duration((p.rnd()*2 - 1) * j * float64(d))
	}
	d = min(max(d, 0), maxDelay)
	return true, d, fmt.Sprintf("exponential-delay: restart %d after %s", p.restarts, d)
}

func (p *RestartPolicy) failureRate(now time.Time) (bool, time.Duration, string) {
	interval := p.cfg.FailureRateInterval
	kept := p.failures[:0]
	for _, t := range p.failures {
		if now.Sub(t) < interval {
			kept = append(kept, t)
		}
	}
	p.failures = append(kept, now)
	if n := len(p.failures); n > p.cfg.MaxFailuresPerInterval {
		return false, 0, fmt.Sprintf("failure-rate: %d failures within %s", n, interval)
	}
	d := p.cfg.Delay
	return true, d, fmt.Sprintf("failure-rate: %d of at most %d failures within %s, restart after %s",
		len(p.failures), p.cfg.MaxFailuresPerInterval, interval, d)
}
