package jobgraph

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/braidflow/braid/types"
)

// Checkpointing option keys, as Flink names them. Flink 2.0 moved
// state.checkpoints.num-retained and state.checkpoints.dir under
// execution.checkpointing.*; both spellings are read, the newer one wins.
const (
	OptCheckpointInterval    = "execution.checkpointing.interval"
	OptCheckpointTimeout     = "execution.checkpointing.timeout"
	OptCheckpointMinPause    = "execution.checkpointing.min-pause"
	OptCheckpointMaxConc     = "execution.checkpointing.max-concurrent-checkpoints"
	OptCheckpointTolerable   = "execution.checkpointing.tolerable-failed-checkpoints"
	OptCheckpointMode        = "execution.checkpointing.mode"
	OptCheckpointRetained    = "state.checkpoints.num-retained"
	OptCheckpointRetainedNew = "execution.checkpointing.num-retained"
	OptCheckpointDir         = "state.checkpoints.dir"
	OptCheckpointDirNew      = "execution.checkpointing.dir"
)

// Restart-strategy option keys, as Flink names them. restart-strategy is
// the key Flink read before 1.17 and still accepts.
const (
	OptRestartType       = "restart-strategy.type"
	OptRestartTypeLegacy = "restart-strategy"

	OptFixedDelayAttempts = "restart-strategy.fixed-delay.attempts"
	OptFixedDelayDelay    = "restart-strategy.fixed-delay.delay"

	OptExpInitialBackoff = "restart-strategy.exponential-delay.initial-backoff"
	OptExpMaxBackoff     = "restart-strategy.exponential-delay.max-backoff"
	OptExpMultiplier     = "restart-strategy.exponential-delay.backoff-multiplier"
	OptExpResetThreshold = "restart-strategy.exponential-delay.reset-backoff-threshold"
	OptExpJitter         = "restart-strategy.exponential-delay.jitter-factor"
	OptExpAttempts       = "restart-strategy.exponential-delay.attempts-before-reset-backoff"

	OptFailureRateMax      = "restart-strategy.failure-rate.max-failures-per-interval"
	OptFailureRateInterval = "restart-strategy.failure-rate.failure-rate-interval"
	OptFailureRateDelay    = "restart-strategy.failure-rate.delay"
)

// Restart strategy types, as RestartStrategy.Type holds them.
const (
	RestartNone             = "none"
	RestartFixedDelay       = "fixed-delay"
	RestartExponentialDelay = "exponential-delay"
	RestartFailureRate      = "failure-rate"
)

// Flink's defaults (CheckpointingOptions, RestartStrategyOptions as of
// Flink 1.19/2.x).
const (
	defaultCheckpointTimeout = 10 * time.Minute
	defaultMaxConcurrent     = 1
	defaultNumRetained       = 1
	// minCheckpointInterval is Flink's smallest checkpoint interval.
	minCheckpointInterval = 10 * time.Millisecond

	defaultFixedDelayAttempts = 1
	defaultRestartDelay       = time.Second // fixed-delay.delay, failure-rate.delay

	defaultInitialBackoff = time.Second
	defaultMaxBackoff     = time.Minute
	defaultMultiplier     = 1.5
	defaultResetThreshold = time.Hour
	defaultJitter         = 0.1
	// InfiniteAttempts is exponential-delay's default
	// attempts-before-reset-backoff ("infinite" in Flink: Integer.MAX_VALUE).
	InfiniteAttempts = math.MaxInt32

	defaultFailureRateMax      = 1
	defaultFailureRateInterval = time.Minute
)

// DefaultCheckpointConfig returns Flink's checkpointing defaults:
// checkpoints disabled (interval 0), a 10 min timeout, no minimum pause,
// one checkpoint at a time, no tolerated failures, exactly-once, one
// retained checkpoint, and the cluster's directory.
func DefaultCheckpointConfig() CheckpointConfig {
	return CheckpointConfig{
		Timeout:       defaultCheckpointTimeout,
		MaxConcurrent: defaultMaxConcurrent,
		NumRetained:   defaultNumRetained,
	}
}

// ResolveCheckpointing reads Flink's execution.checkpointing.* options
// (interval, timeout, min-pause, max-concurrent-checkpoints,
// tolerable-failed-checkpoints, mode EXACTLY_ONCE or AT_LEAST_ONCE),
// state.checkpoints.num-retained and state.checkpoints.dir from settings,
// over defaults, into a new config. defaults is the job manager's cluster
// default (it is not modified); nil means Flink's (DefaultCheckpointConfig),
// and its zero timeout, max-concurrent and num-retained fields take Flink's
// values. An interval of 0 disables checkpoints: "0" turns off a cluster
// default, as Flink's interval option has no other off switch; a positive
// interval under 10 ms is refused, as Flink does. Durations are in Flink's
// syntax ("10 s", "1 min", "500ms"; a bare number is milliseconds). An
// error names the option and the bad value.
func ResolveCheckpointing(settings map[string]string, defaults *CheckpointConfig) (CheckpointConfig, error) {
	c := DefaultCheckpointConfig()
	if defaults != nil {
		c = *defaults
		def := DefaultCheckpointConfig()
		if c.Timeout <= 0 {
			c.Timeout = def.Timeout
		}
		if c.MaxConcurrent <= 0 {
			c.MaxConcurrent = def.MaxConcurrent
		}
		if c.NumRetained <= 0 {
			c.NumRetained = def.NumRetained
		}
	}
	r := optionReader{settings: settings}
	r.duration(OptCheckpointInterval, &c.Interval, 0)
	if c.Interval > 0 && c.Interval < minCheckpointInterval && r.err == nil {
		r.err = fmt.Errorf("invalid value '%s' for '%s': a checkpoint interval must be at least 10 ms (or 0 to disable checkpoints)", settings[OptCheckpointInterval], OptCheckpointInterval)
	}
	r.duration(OptCheckpointTimeout, &c.Timeout, time.Millisecond)
	r.duration(OptCheckpointMinPause, &c.MinPause, 0)
	r.int(OptCheckpointMaxConc, &c.MaxConcurrent, 1)
	r.int(OptCheckpointTolerable, &c.TolerableFailed, 0)
	if v, ok := settings[OptCheckpointMode]; ok && r.err == nil {
		switch strings.ToUpper(strings.TrimSpace(v)) {
		case "EXACTLY_ONCE":
			c.AtLeastOnce = false
		case "AT_LEAST_ONCE":
			c.AtLeastOnce = true
		default:
			r.err = fmt.Errorf("invalid value '%s' for '%s': use EXACTLY_ONCE or AT_LEAST_ONCE", v, OptCheckpointMode)
		}
	}
	r.int(OptCheckpointRetained, &c.NumRetained, 1)
	r.int(OptCheckpointRetainedNew, &c.NumRetained, 1)
	r.str(OptCheckpointDir, &c.Dir)
	r.str(OptCheckpointDirNew, &c.Dir)
	if r.err != nil {
		return CheckpointConfig{}, r.err
	}
	return c, nil
}

// ResolveRestartStrategy reads restart-strategy.type and the options of the
// chosen type from settings, with Flink's names and defaults:
//
//   - none (also off, disable): never restart.
//   - fixed-delay (fixeddelay): attempts 1, delay 1 s.
//   - exponential-delay (exponentialdelay): initial-backoff 1 s,
//     max-backoff 1 min, backoff-multiplier 1.5, reset-backoff-threshold
//     1 h, jitter-factor 0.1, attempts-before-reset-backoff infinite
//     (InfiniteAttempts).
//   - failure-rate (failurerate): max-failures-per-interval 1,
//     failure-rate-interval 1 min, delay 1 s.
//
// With no type set it follows Flink 1.19+: exponential-delay with its
// defaults when checkpointing is enabled, none when it is not (a job
// without checkpoints would restart from scratch, replaying everything).
// Options of the other types are ignored, as in Flink. An error names the
// option and the bad value.
func ResolveRestartStrategy(settings map[string]string, checkpointingEnabled bool) (RestartStrategy, error) {
	raw, key := settings[OptRestartType], OptRestartType
	if raw == "" {
		raw, key = settings[OptRestartTypeLegacy], OptRestartTypeLegacy
	}
	typ, err := restartType(raw, key, checkpointingEnabled)
	if err != nil {
		return RestartStrategy{}, err
	}
	s := RestartStrategy{Type: typ}
	r := optionReader{settings: settings}
	switch typ {
	case RestartFixedDelay:
		s.Attempts, s.Delay = defaultFixedDelayAttempts, defaultRestartDelay
		r.int(OptFixedDelayAttempts, &s.Attempts, 0)
		r.duration(OptFixedDelayDelay, &s.Delay, 0)
	case RestartExponentialDelay:
		s.Delay = defaultInitialBackoff
		s.MaxDelay = defaultMaxBackoff
		s.BackoffMultiplier = defaultMultiplier
		s.ResetBackoffThreshold = defaultResetThreshold
		s.JitterFactor = defaultJitter
		s.Attempts = InfiniteAttempts
		r.duration(OptExpInitialBackoff, &s.Delay, time.Millisecond)
		r.duration(OptExpMaxBackoff, &s.MaxDelay, time.Millisecond)
		r.float(OptExpMultiplier, &s.BackoffMultiplier, 1, math.Inf(1))
		r.duration(OptExpResetThreshold, &s.ResetBackoffThreshold, time.Millisecond)
		r.float(OptExpJitter, &s.JitterFactor, 0, 1)
		r.int(OptExpAttempts, &s.Attempts, 1)
		if r.err == nil && s.MaxDelay < s.Delay {
			r.err = fmt.Errorf("invalid value '%s' for '%s': it must not be less than '%s' (%s)",
				settings[OptExpMaxBackoff], OptExpMaxBackoff, OptExpInitialBackoff, s.Delay)
		}
	case RestartFailureRate:
		s.MaxFailuresPerInterval = defaultFailureRateMax
		s.FailureRateInterval = defaultFailureRateInterval
		s.Delay = defaultRestartDelay
		r.int(OptFailureRateMax, &s.MaxFailuresPerInterval, 1)
		r.duration(OptFailureRateInterval, &s.FailureRateInterval, time.Millisecond)
		r.duration(OptFailureRateDelay, &s.Delay, 0)
	}
	if r.err != nil {
		return RestartStrategy{}, r.err
	}
	return s, nil
}

// restartType normalises a restart-strategy.type value; "" picks Flink's
// default.
func restartType(v, key string, checkpointingEnabled bool) (string, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "":
		if checkpointingEnabled {
			return RestartExponentialDelay, nil
		}
		return RestartNone, nil
	case "none", "off", "disable":
		return RestartNone, nil
	case "fixed-delay", "fixeddelay":
		return RestartFixedDelay, nil
	case "exponential-delay", "exponentialdelay":
		return RestartExponentialDelay, nil
	case "failure-rate", "failurerate":
		return RestartFailureRate, nil
	}
	return "", fmt.Errorf("invalid value '%s' for '%s': use none, fixed-delay, exponential-delay or failure-rate", v, key)
}

// optionReader parses typed options out of a settings map, keeping the
// first error; a key that is absent leaves its target alone.
type optionReader struct {
	settings map[string]string
	err      error
}

func (r *optionReader) get(key string) (string, bool) {
	if r.err != nil {
		return "", false
	}
	v, ok := r.settings[key]
	return v, ok
}

// duration reads a duration of whole milliseconds, at least min.
func (r *optionReader) duration(key string, dst *time.Duration, min time.Duration) {
	v, ok := r.get(key)
	if !ok {
		return
	}
	n, err := parseDurationOption(key, v, min.Milliseconds())
	if err != nil {
		r.err = err
		return
	}
	*dst = ms(n)
}

// int reads an integer of 32 bits, at least min.
func (r *optionReader) int(key string, dst *int, min int32) {
	v, ok := r.get(key)
	if !ok {
		return
	}
	n, err := parseIntOption(key, v, min)
	if err != nil {
		r.err = err
		return
	}
	*dst = int(n)
}

func (r *optionReader) float(key string, dst *float64, min, max float64) {
	v, ok := r.get(key)
	if !ok {
		return
	}
	f, err := parseFloatOption(key, v, min, max)
	if err != nil {
		r.err = err
		return
	}
	*dst = f
}

func (r *optionReader) str(key string, dst *string) {
	if v, ok := r.get(key); ok {
		*dst = strings.TrimSpace(v)
	}
}

func parseDurationOption(key, v string, minMs int64) (int64, error) {
	d, err := types.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("invalid value '%s' for '%s': %v", v, key, err)
	}
	ms := d.Milliseconds()
	if ms < minMs {
		if minMs == 1 {
			return 0, fmt.Errorf("invalid value '%s' for '%s': it must be positive", v, key)
		}
		return 0, fmt.Errorf("invalid value '%s' for '%s': it must be at least %s", v, key, time.Duration(minMs)*time.Millisecond)
	}
	return ms, nil
}

func parseIntOption(key, v string, min int32) (int32, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil || int32(n) < min {
		return 0, fmt.Errorf("invalid value '%s' for '%s': it must be an integer of at least %d", v, key, min)
	}
	return int32(n), nil
}

func parseFloatOption(key, v string, min, max float64) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || f < min || f > max {
		if math.IsInf(max, 1) {
			return 0, fmt.Errorf("invalid value '%s' for '%s': it must be a number of at least %g", v, key, min)
		}
		return 0, fmt.Errorf("invalid value '%s' for '%s': it must be a number from %g to %g", v, key, min, max)
	}
	return f, nil
}

// ResolveSession reads the session settings the operators of a job use:
// table.local-time-zone, "UTC" when unset or empty,
// braid.exec.max-string-bytes, braid.exec.source.batch-size,
// table.exec.source.idle-timeout and pipeline.auto-watermark-interval
// (DefaultAutoWatermarkInterval when unset). The error names the option
// and the bad value.
func ResolveSession(settings map[string]string) (Session, error) {
	s := Session{TimeZone: strings.TrimSpace(settings[OptLocalTimeZone]), AutoWatermarkInterval: DefaultAutoWatermarkInterval}
	if s.TimeZone == "" {
		s.TimeZone = "UTC"
	}
	if v, ok := settings[OptMaxStringBytes]; ok {
		n, err := parseByteSize(OptMaxStringBytes, v)
		if err != nil {
			return Session{}, err
		}
		s.MaxStringBytes = n
	}
	if v, ok := settings[OptSourceIdle]; ok {
		ms, err := parseDurationOption(OptSourceIdle, v, 0)
		if err != nil {
			return Session{}, err
		}
		s.SourceIdleTimeout = time.Duration(ms) * time.Millisecond
	}
	if v, ok := settings[OptAutoWatermark]; ok {
		ms, err := parseDurationOption(OptAutoWatermark, v, 0)
		if err != nil {
			return Session{}, err
		}
		s.AutoWatermarkInterval = time.Duration(ms) * time.Millisecond
	}
	if v, ok := settings[OptSourceBatchSize]; ok {
		if err := intRange(1, MaxSourceBatchRows)(OptSourceBatchSize, v); err != nil {
			return Session{}, err
		}
		s.SourceBatchRows, _ = strconv.Atoi(strings.TrimSpace(v))
	}
	if v, ok := settings[OptRuntimeMode]; ok {
		if err := oneOf(RuntimeModeStreaming, RuntimeModeBatch)(OptRuntimeMode, v); err != nil {
			return Session{}, err
		}
		s.Batch = strings.EqualFold(strings.TrimSpace(v), RuntimeModeBatch)
	}
	if err := s.Validate(); err != nil {
		return Session{}, err
	}
	return s, nil
}

// ResolveSavepointRestore reads execution.savepoint.path and
// execution.savepoint.ignore-unclaimed-state ("true", in any case, drops
// unclaimed state). Without a path the job starts fresh.
func ResolveSavepointRestore(settings map[string]string) SavepointRestore {
	return SavepointRestore{
		Path:                 strings.TrimSpace(settings[OptSavepointPath]),
		IgnoreUnclaimedState: strings.EqualFold(strings.TrimSpace(settings[OptSavepointIgnore]), "true"),
	}
}

// ResolveMaxParallelism reads pipeline.max-parallelism, the number of key
// groups: an integer in [1, types.UpperBoundMaxParallelism], or
// types.DefaultMaxParallelism when unset. The error names the option and
// the bad value.
func ResolveMaxParallelism(settings map[string]string) (int, error) {
	v, ok := settings[OptMaxParallelism]
	if !ok {
		return types.DefaultMaxParallelism, nil
	}
	if err := intRange(1, maxMaxParallelism)(OptMaxParallelism, v); err != nil {
		return 0, err
	}
	n, _ := strconv.Atoi(strings.TrimSpace(v)) // NB: intRange parsed it
	return n, nil
}

// ResolveParallelism returns the default parallelism a session sets:
// table.exec.resource.default-parallelism, else parallelism.default, else
// fallback. A value that is not a positive integer (the table option's -1)
// sets nothing.
func ResolveParallelism(settings map[string]string, fallback int) int {
	for _, k := range []string{OptTableParallelism, OptParallelism} {
		if n, err := strconv.Atoi(settings[k]); err == nil && n > 0 {
			return n
		}
	}
	return fallback
}

// MaxSourceBatchRows is the largest braid.exec.source.batch-size.
const MaxSourceBatchRows = 65536

// MaxMaxStringBytes is the largest braid.exec.max-string-bytes: 1 GiB, so
// that a batch column of such values still fits Arrow's 2 GiB offsets.
const MaxMaxStringBytes = 1 << 30

// parseByteSize reads a size in bytes as Flink's memory sizes are
// written: a whole number with an optional unit b, k/kb, m/mb, g/gb
// (powers of 1024), any case, with or without a space ("16mb", "16 MB",
// "1048576"). It must come to 1 byte up to MaxMaxStringBytes.
func parseByteSize(key, v string) (int, error) {
	t := strings.ToLower(strings.TrimSpace(v))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 1 || n > MaxMaxStringBytes/mult {
		return 0, fmt.Errorf("invalid value '%s' for '%s': it must be a size from 1 byte to 1 GiB, such as '16mb' or '1048576'", v, key)
	}
	return int(n * mult), nil
}
