package jobgraph

import (
	"fmt"
	"time"

	"github.com/braidflow/braid/types"
)

// CheckpointConfig is a job's checkpointing, resolved from Flink's
// execution.checkpointing.* options (ResolveCheckpointing). Durations are
// whole milliseconds on the wire.
type CheckpointConfig struct {
	// Interval between periodic checkpoints; 0 disables them (the job
	// still takes savepoints). At least 10 ms otherwise.
	Interval time.Duration
	// Timeout aborts a checkpoint that has not completed; positive.
	Timeout time.Duration
	// MinPause is the least time between the end of one checkpoint and
	// the start of the next.
	MinPause time.Duration
	// MaxConcurrent checkpoints in flight, at least 1.
	MaxConcurrent int
	// TolerableFailed consecutive failed checkpoints before the job fails.
	TolerableFailed int
	// AtLeastOnce disables barrier alignment (mode AT_LEAST_ONCE).
	AtLeastOnce bool
	// NumRetained completed checkpoints are kept, at least 1.
	NumRetained int
	// Dir is state.checkpoints.dir when the job set it; "" means the
	// cluster's default.
	Dir string
}

// Enabled reports whether the job takes periodic checkpoints.
func (c CheckpointConfig) Enabled() bool { return c.Interval > 0 }

// Validate checks c's ranges, as ResolveCheckpointing produces them.
func (c CheckpointConfig) Validate() error {
	switch {
	case c.Interval < 0 || c.Interval > 0 && c.Interval < minCheckpointInterval:
		return fmt.Errorf("checkpoint interval %v must be 0 (disabled) or at least %v", c.Interval, minCheckpointInterval)
	case c.Timeout <= 0:
		return fmt.Errorf("checkpoint timeout %v must be positive", c.Timeout)
	case c.MinPause < 0:
		return fmt.Errorf("checkpoint min pause %v must not be negative", c.MinPause)
	case c.MaxConcurrent < 1:
		return fmt.Errorf("max concurrent checkpoints %d must be at least 1", c.MaxConcurrent)
	case c.TolerableFailed < 0:
		return fmt.Errorf("tolerable failed checkpoints %d must not be negative", c.TolerableFailed)
	case c.NumRetained < 1:
		return fmt.Errorf("retained checkpoints %d must be at least 1", c.NumRetained)
	}
	return nil
}

// RestartStrategy is a job's restart strategy, resolved from Flink's
// restart-strategy.* options (ResolveRestartStrategy); the fields a type
// does not use are zero.
type RestartStrategy struct {
	// Type is RestartNone, RestartFixedDelay, RestartExponentialDelay or
	// RestartFailureRate.
	Type string
	// Attempts: fixed-delay's restarts over the job's life;
	// exponential-delay's between backoff resets.
	Attempts int
	// Delay before a restart: exponential-delay's initial backoff.
	Delay time.Duration
	// MaxDelay caps exponential-delay's backoff.
	MaxDelay time.Duration
	// BackoffMultiplier grows exponential-delay's backoff, at least 1.
	BackoffMultiplier float64
	// ResetBackoffThreshold is how long exponential-delay's job must run
	// without failing for its backoff to start over.
	ResetBackoffThreshold time.Duration
	// JitterFactor is exponential-delay's random jitter, in [0, 1].
	JitterFactor float64
	// FailureRateInterval and MaxFailuresPerInterval bound failure-rate's
	// failures.
	FailureRateInterval    time.Duration
	MaxFailuresPerInterval int
}

// Validate checks s's type and the ranges of the fields it uses, as
// ResolveRestartStrategy produces them.
func (s RestartStrategy) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s restart strategy: %s", s.Type, fmt.Sprintf(format, args...))
	}
	switch s.Type {
	case RestartNone:
	case RestartFixedDelay:
		if s.Attempts < 0 || s.Delay < 0 {
			return bad("attempts %d and delay %v must not be negative", s.Attempts, s.Delay)
		}
	case RestartExponentialDelay:
		switch {
		case s.Delay <= 0 || s.MaxDelay < s.Delay:
			return bad("initial backoff %v must be positive and at most the max backoff %v", s.Delay, s.MaxDelay)
		case !(s.BackoffMultiplier >= 1):
			return bad("backoff multiplier %v must be at least 1", s.BackoffMultiplier)
		case s.ResetBackoffThreshold <= 0:
			return bad("reset backoff threshold %v must be positive", s.ResetBackoffThreshold)
		case !(s.JitterFactor >= 0 && s.JitterFactor <= 1):
			return bad("jitter factor %v is outside [0, 1]", s.JitterFactor)
		case s.Attempts < 1:
			return bad("attempts before reset %d must be at least 1", s.Attempts)
		}
	case RestartFailureRate:
		if s.MaxFailuresPerInterval < 1 || s.FailureRateInterval <= 0 || s.Delay < 0 {
			return bad("max failures %d and interval %v must be positive, delay %v not negative",
				s.MaxFailuresPerInterval, s.FailureRateInterval, s.Delay)
		}
	default:
		return fmt.Errorf("unknown restart strategy %q (use %s, %s, %s or %s)", s.Type,
			RestartNone, RestartFixedDelay, RestartExponentialDelay, RestartFailureRate)
	}
	return nil
}

// Validate checks that s's time zone loads and its string limit and batch
// size are in range.
func (s Session) Validate() error {
	if s.MaxStringBytes < 0 || s.MaxStringBytes > MaxMaxStringBytes {
		return fmt.Errorf("invalid value '%d' for '%s': it must be from 1 to %d bytes (1 GiB)", s.MaxStringBytes, OptMaxStringBytes, MaxMaxStringBytes)
	}
	if s.SourceIdleTimeout < 0 {
		return fmt.Errorf("invalid value '%s' for '%s': it must not be negative", s.SourceIdleTimeout, OptSourceIdle)
	}
	if s.AutoWatermarkInterval < 0 {
		return fmt.Errorf("invalid value '%s' for '%s': it must not be negative", s.AutoWatermarkInterval, OptAutoWatermark)
	}
	if s.SourceBatchRows < 0 || s.SourceBatchRows > MaxSourceBatchRows {
		return fmt.Errorf("invalid value '%d' for '%s': it must be an integer from 1 to %d", s.SourceBatchRows, OptSourceBatchSize, MaxSourceBatchRows)
	}
	_, err := types.LoadZone(s.TimeZone)
	return err
}
