package jobgraph

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/types"
)

// Session option keys Braid reads besides the checkpointing and restart
// ones (options.go).
const (
	OptLocalTimeZone = "table.local-time-zone"
	// OptMaxStringBytes is Braid's own limit on the string and binary
	// values functions build (Session.MaxStringBytes).
	OptMaxStringBytes = expr.MaxStringBytesOption
	// OptSourceBatchSize is Braid's own: the most rows a source puts in
	// one batch (Session.SourceBatchRows).
	OptSourceBatchSize  = "braid.exec.source.batch-size"
	OptParallelism      = "parallelism.default"
	OptTableParallelism = "table.exec.resource.default-parallelism"
	OptMaxParallelism   = "pipeline.max-parallelism"
	OptStateTTL         = "table.exec.state.ttl"
	OptSourceIdle       = "table.exec.source.idle-timeout"
	OptAutoWatermark    = "pipeline.auto-watermark-interval"
	OptRuntimeMode      = "execution.runtime-mode"
	// OptSinkUpsertMaterialize is Flink's: whether an upsert sink gets a
	// SinkUpsertMaterializer (auto, force, none).
	OptSinkUpsertMaterialize = "table.exec.sink.upsert-materialize"
	OptDMLSync               = "table.dml-sync"
	OptResultMode            = "sql-client.execution.result-mode"
	OptMaxColumnWidth        = "sql-client.display.max-column-width"
	OptSavepointPath         = "execution.savepoint.path"
	OptSavepointIgnore       = "execution.savepoint.ignore-unclaimed-state"
	// OptSlotRequestTimeout is how long a job waits for slots; the job
	// manager reads it when it submits the session's jobs.
	OptSlotRequestTimeout = "slot.request.timeout"
	maxMaxParallelism     = types.UpperBoundMaxParallelism
)

// The values of execution.runtime-mode Braid runs (Flink's AUTOMATIC is
// refused).
const (
	RuntimeModeStreaming = "streaming"
	RuntimeModeBatch     = "batch"
)

// knownOptions maps every key a session may SET to the check of its value.
// Braid refuses other keys: a misspelt option silently ignored is a job
// that runs without the checkpoints its author asked for. No prefix is
// passed through, because nothing in Braid reads free-form session keys
// (connector options go in a table's WITH clause, not in SET).
var knownOptions = map[string]func(key, v string) error{
	OptLocalTimeZone: func(_, v string) error {
		_, err := types.LoadZone(v)
		return err
	},
	OptMaxStringBytes: func(key, v string) error {
		_, err := parseByteSize(key, v)
		return err
	},
	OptSourceBatchSize: intRange(1, MaxSourceBatchRows),
	OptParallelism:     intRange(1, maxMaxParallelism),
	OptMaxParallelism:  intRange(1, maxMaxParallelism),
	OptTableParallelism: func(key, v string) error {
		if strings.TrimSpace(v) == "-1" {
			return nil
		}
		return intRange(1, maxMaxParallelism)(key, v)
	},
	OptStateTTL:              duration(0),
	OptSourceIdle:            duration(0),
	OptAutoWatermark:         duration(0),
	OptRuntimeMode:           oneOf(RuntimeModeStreaming, RuntimeModeBatch),
	OptSinkUpsertMaterialize: oneOf("AUTO", "FORCE", "NONE"),
	OptDMLSync:               oneOf("true", "false"),
	OptResultMode:            oneOf("table", "tableau", "changelog"),
	OptMaxColumnWidth:        intRange(1, 1<<20),
	OptSavepointPath:         nonEmpty,
	OptSavepointIgnore:       oneOf("true", "false"),
	OptSlotRequestTimeout:    duration(1),

	OptCheckpointInterval: func(key, v string) error {
		_, err := ResolveCheckpointing(map[string]string{key: v}, nil)
		return err
	},
	OptCheckpointTimeout:     duration(1),
	OptCheckpointMinPause:    duration(0),
	OptCheckpointMaxConc:     intRange(1, 1<<31-1),
	OptCheckpointTolerable:   intRange(0, 1<<31-1),
	OptCheckpointMode:        oneOf("EXACTLY_ONCE", "AT_LEAST_ONCE"),
	OptCheckpointRetained:    intRange(1, 1<<31-1),
	OptCheckpointRetainedNew: intRange(1, 1<<31-1),
	OptCheckpointDir:         nonEmpty,
	OptCheckpointDirNew:      nonEmpty,

	OptRestartType: func(key, v string) error {
		_, err := restartType(v, key, false)
		return err
	},
	OptRestartTypeLegacy: func(key, v string) error {
		_, err := restartType(v, key, false)
		return err
	},
	OptFixedDelayAttempts:  intRange(0, 1<<31-1),
	OptFixedDelayDelay:     duration(0),
	OptExpInitialBackoff:   duration(1),
	OptExpMaxBackoff:       duration(1),
	OptExpMultiplier:       floatAtLeast(1),
	OptExpResetThreshold:   duration(1),
	OptExpJitter:           floatRange(0, 1),
	OptExpAttempts:         intRange(1, 1<<31-1),
	OptFailureRateMax:      intRange(1, 1<<31-1),
	OptFailureRateInterval: duration(1),
	OptFailureRateDelay:    duration(0),
}

// KnownOptions returns, sorted, every key a session may SET.
func KnownOptions() []string {
	keys := make([]string, 0, len(knownOptions))
	for k := range knownOptions {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// CheckOption validates SET 'key' = 'value': the key must be one Braid
// reads, and the value must parse as that option's type. The error of an
// unknown key names the closest known keys: "unknown option
// 'execution.checkpointing.intervall' (did you mean
// 'execution.checkpointing.interval'?)".
func CheckOption(key, value string) error {
	check, ok := knownOptions[key]
	if !ok {
		return fmt.Errorf("unknown option '%s'%s", key, suggestion(key))
	}
	return check(key, value)
}

// suggestion lists the known keys closest to key: those within a small
// edit distance, else those that share its longest dotted prefix.
func suggestion(key string) string {
	near := closestOptions(key, 3)
	switch len(near) {
	case 0:
		return " (SET; lists the session's options; docs/sql.md lists those Braid reads)"
	case 1:
		return fmt.Sprintf(" (did you mean '%s'?)", near[0])
	}
	quoted := make([]string, len(near))
	for i, k := range near {
		quoted[i] = "'" + k + "'"
	}
	return fmt.Sprintf(" (did you mean %s or %s?)", strings.Join(quoted[:len(quoted)-1], ", "), quoted[len(quoted)-1])
}

func closestOptions(key string, n int) []string {
	type cand struct {
		key  string
		dist int
	}
	byDist := func(cs []cand) []string {
		sort.Slice(cs, func(i, j int) bool {
			if cs[i].dist != cs[j].dist {
				return cs[i].dist < cs[j].dist
			}
			return cs[i].key < cs[j].key
		})
		out := []string{}
		for i := 0; i < len(cs) && i < n; i++ {
			out = append(out, cs[i].key)
		}
		return out
	}
	limit := max(2, len(key)/5)
	var near []cand
	all := KnownOptions()
	for _, k := range all {
		if d := types.EditDistance(key, k); d <= limit {
			near = append(near, cand{k, d})
		}
	}
	if len(near) > 0 {
		return byDist(near)
	}
	// No key is close as a whole: offer the keys of the deepest group the
	// key names ("restart-strategy.fixed-delay.tries" -> the fixed-delay
	// options).
	for prefix := key; ; {
		i := strings.LastIndexByte(prefix, '.')
		if i <= 0 {
			return nil
		}
		prefix = prefix[:i+1]
		for _, k := range all {
			if strings.HasPrefix(k, prefix) {
				near = append(near, cand{k, types.EditDistance(key, k)})
			}
		}
		if len(near) > 0 {
			return byDist(near)
		}
		prefix = prefix[:i]
	}
}

func intRange(lo, hi int64) func(key, v string) error {
	return func(key, v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("invalid value '%s' for '%s': it must be an integer from %d to %d", v, key, lo, hi)
		}
		return nil
	}
}

func duration(minMs int64) func(key, v string) error {
	return func(key, v string) error {
		_, err := parseDurationOption(key, v, minMs)
		return err
	}
}

func floatAtLeast(lo float64) func(key, v string) error {
	return func(key, v string) error {
		_, err := parseFloatOption(key, v, lo, math.Inf(1))
		return err
	}
}

func floatRange(lo, hi float64) func(key, v string) error {
	return func(key, v string) error {
		_, err := parseFloatOption(key, v, lo, hi)
		return err
	}
}

func oneOf(values ...string) func(key, v string) error {
	return func(key, v string) error {
		for _, ok := range values {
			if strings.EqualFold(strings.TrimSpace(v), ok) {
				return nil
			}
		}
		return fmt.Errorf("invalid value '%s' for '%s': use %s", v, key, strings.Join(values, " or "))
	}
}

func nonEmpty(key, v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("invalid value '' for '%s': it must not be empty", key)
	}
	return nil
}
