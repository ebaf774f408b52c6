package jobgraph

import (
	"strings"
	"testing"

	"github.com/braidflow/braid/types"
)

func TestResolveCheckpointing(t *testing.T) {
	flink := DefaultCheckpointConfig()
	cluster := &CheckpointConfig{Interval: ms(30000), Dir: "s3://b/ck"}
	for _, tc := range []struct {
		name     string
		settings map[string]string
		defaults *CheckpointConfig
		want     CheckpointConfig
		err      string
	}{
		{name: "flink defaults", want: CheckpointConfig{Timeout: ms(600000), MaxConcurrent: 1, NumRetained: 1}},
		{name: "cluster defaults fill zero fields", defaults: cluster,
			want: CheckpointConfig{Interval: ms(30000), Timeout: ms(600000), MaxConcurrent: 1, NumRetained: 1, Dir: "s3://b/ck"}},
		{name: "every option", settings: map[string]string{
			"execution.checkpointing.interval":                     "10 s",
			"execution.checkpointing.timeout":                      "1 min",
			"execution.checkpointing.min-pause":                    "500ms",
			"execution.checkpointing.max-concurrent-checkpoints":   "2",
			"execution.checkpointing.tolerable-failed-checkpoints": "3",
			"execution.checkpointing.mode":                         "at_least_once",
			"state.checkpoints.num-retained":                       "5",
			"state.checkpoints.dir":                                "file:///tmp/ck",
		}, want: CheckpointConfig{Interval: ms(10000), Timeout: ms(60000), MinPause: ms(500), MaxConcurrent: 2,
			TolerableFailed: 3, AtLeastOnce: true, NumRetained: 5, Dir: "file:///tmp/ck"}},
		{name: "flink 2 keys win", settings: map[string]string{
			"state.checkpoints.num-retained": "5", "execution.checkpointing.num-retained": "7",
			"state.checkpoints.dir": "/a", "execution.checkpointing.dir": "/b",
		}, want: CheckpointConfig{Timeout: ms(600000), MaxConcurrent: 1, NumRetained: 7, Dir: "/b"}},
		{name: "plain number is ms", settings: map[string]string{"execution.checkpointing.interval": "1500"},
			want: CheckpointConfig{Interval: ms(1500), Timeout: ms(600000), MaxConcurrent: 1, NumRetained: 1}},
		{name: "zero disables a cluster default", defaults: cluster, settings: map[string]string{"execution.checkpointing.interval": "0"},
			want: CheckpointConfig{Timeout: ms(600000), MaxConcurrent: 1, NumRetained: 1, Dir: "s3://b/ck"}},
		{name: "bad duration", settings: map[string]string{"execution.checkpointing.interval": "10 x"},
			err: "invalid value '10 x' for 'execution.checkpointing.interval': invalid duration '10 x': unknown unit 'x'"},
		{name: "interval too small", settings: map[string]string{"execution.checkpointing.interval": "5ms"},
			err: "'execution.checkpointing.interval': a checkpoint interval must be at least 10 ms"},
		{name: "zero timeout", settings: map[string]string{"execution.checkpointing.timeout": "0"},
			err: "invalid value '0' for 'execution.checkpointing.timeout': it must be positive"},
		{name: "bad mode", settings: map[string]string{"execution.checkpointing.mode": "twice"},
			err: "invalid value 'twice' for 'execution.checkpointing.mode'"},
		{name: "bad count", settings: map[string]string{"state.checkpoints.num-retained": "0"},
			err: "invalid value '0' for 'state.checkpoints.num-retained': it must be an integer of at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before CheckpointConfig
			if tc.defaults != nil {
				before = *tc.defaults
			}
			got, err := ResolveCheckpointing(tc.settings, tc.defaults)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
			if tc.defaults != nil && before != *tc.defaults {
				t.Errorf("defaults modified: %v", tc.defaults)
			}
		})
	}
	if flink != DefaultCheckpointConfig() {
		t.Error("DefaultCheckpointConfig changed")
	}
}

func TestResolveRestartStrategy(t *testing.T) {
	expDefault := RestartStrategy{Type: "exponential-delay", Delay: ms(1000), MaxDelay: ms(60000), BackoffMultiplier: 1.5,
		ResetBackoffThreshold: ms(3600000), JitterFactor: 0.1, Attempts: InfiniteAttempts}
	for _, tc := range []struct {
		name     string
		settings map[string]string
		ckpt     bool
		want     RestartStrategy
		err      string
	}{
		{name: "unset without checkpoints", want: RestartStrategy{Type: "none"}},
		{name: "unset with checkpoints", ckpt: true, want: expDefault},
		{name: "off", ckpt: true, settings: map[string]string{"restart-strategy.type": "off"}, want: RestartStrategy{Type: "none"}},
		{name: "disable", settings: map[string]string{"restart-strategy.type": "disable"}, want: RestartStrategy{Type: "none"}},
		{name: "fixed-delay defaults", settings: map[string]string{"restart-strategy.type": "fixeddelay"},
			want: RestartStrategy{Type: "fixed-delay", Attempts: 1, Delay: ms(1000)}},
		{name: "fixed-delay", settings: map[string]string{"restart-strategy.type": "fixed-delay",
			"restart-strategy.fixed-delay.attempts": "3", "restart-strategy.fixed-delay.delay": "10 s",
			"restart-strategy.failure-rate.delay": "1 h"}, // another type's option is ignored
			want: RestartStrategy{Type: "fixed-delay", Attempts: 3, Delay: ms(10000)}},
		{name: "legacy key", settings: map[string]string{"restart-strategy": "fixed-delay"},
			want: RestartStrategy{Type: "fixed-delay", Attempts: 1, Delay: ms(1000)}},
		{name: "exponential-delay", settings: map[string]string{"restart-strategy.type": "exponentialdelay",
			"restart-strategy.exponential-delay.initial-backoff":               "100 ms",
			"restart-strategy.exponential-delay.max-backoff":                   "10 s",
			"restart-strategy.exponential-delay.backoff-multiplier":            "2",
			"restart-strategy.exponential-delay.reset-backoff-threshold":       "5 min",
			"restart-strategy.exponential-delay.jitter-factor":                 "0",
			"restart-strategy.exponential-delay.attempts-before-reset-backoff": "4"},
			want: RestartStrategy{Type: "exponential-delay", Delay: ms(100), MaxDelay: ms(10000), BackoffMultiplier: 2,
				ResetBackoffThreshold: ms(300000), JitterFactor: 0, Attempts: 4}},
		{name: "failure-rate defaults", settings: map[string]string{"restart-strategy.type": "failurerate"},
			want: RestartStrategy{Type: "failure-rate", MaxFailuresPerInterval: 1, FailureRateInterval: ms(60000), Delay: ms(1000)}},
		{name: "failure-rate", settings: map[string]string{"restart-strategy.type": "failure-rate",
			"restart-strategy.failure-rate.max-failures-per-interval": "3",
			"restart-strategy.failure-rate.failure-rate-interval":     "5 min",
			"restart-strategy.failure-rate.delay":                     "0"},
			want: RestartStrategy{Type: "failure-rate", MaxFailuresPerInterval: 3, FailureRateInterval: ms(300000)}},
		{name: "bad type", settings: map[string]string{"restart-strategy.type": "always"},
			err: "invalid value 'always' for 'restart-strategy.type': use none, fixed-delay, exponential-delay or failure-rate"},
		{name: "bad delay", settings: map[string]string{"restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.delay": "soon"},
			err: "invalid value 'soon' for 'restart-strategy.fixed-delay.delay'"},
		{name: "jitter out of range", ckpt: true, settings: map[string]string{"restart-strategy.exponential-delay.jitter-factor": "1.5"},
			err: "invalid value '1.5' for 'restart-strategy.exponential-delay.jitter-factor': it must be a number from 0 to 1"},
		{name: "multiplier below one", ckpt: true, settings: map[string]string{"restart-strategy.exponential-delay.backoff-multiplier": "0.5"},
			err: "it must be a number of at least 1"},
		{name: "max below initial", ckpt: true, settings: map[string]string{"restart-strategy.exponential-delay.max-backoff": "500 ms"},
			err: "invalid value '500 ms' for 'restart-strategy.exponential-delay.max-backoff': it must not be less than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveRestartStrategy(tc.settings, tc.ckpt)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestCheckOption(t *testing.T) {
	for _, tc := range []struct{ key, value, err string }{
		{"execution.checkpointing.interval", "10 s", ""},
		{"parallelism.default", "4", ""},
		{"table.exec.resource.default-parallelism", "-1", ""},
		{"table.local-time-zone", "Asia/Tokyo", ""},
		{"sql-client.execution.result-mode", "TABLEAU", ""},
		{"execution.savepoint.path", "file:///tmp/sp-1", ""},
		{"execution.checkpointing.intervall", "10 s",
			"unknown option 'execution.checkpointing.intervall' (did you mean 'execution.checkpointing.interval'?)"},
		{"restart-strategy.fixed-delay.tries", "3",
			"unknown option 'restart-strategy.fixed-delay.tries' (did you mean 'restart-strategy.fixed-delay.delay' or 'restart-strategy.fixed-delay.attempts'?)"},
		{"k", "v", "unknown option 'k' (SET; lists"},
		{"execution.checkpointing.interval", "soon", "invalid value 'soon' for 'execution.checkpointing.interval'"},
		{"restart-strategy.fixed-delay.delay", "1 fortnight", "invalid value '1 fortnight' for 'restart-strategy.fixed-delay.delay'"},
		{"parallelism.default", "0", "invalid value '0' for 'parallelism.default': it must be an integer from 1 to 32768"},
		{"table.dml-sync", "yes", "invalid value 'yes' for 'table.dml-sync': use true or false"},
		{"execution.runtime-mode", "batch", ""},
		{"execution.runtime-mode", "Streaming", ""},
		{"execution.runtime-mode", "automatic", "invalid value 'automatic' for 'execution.runtime-mode': use streaming or batch"},
		{"braid.exec.source.batch-size", "1", ""},
		{"braid.exec.source.batch-size", "0", "invalid value '0' for 'braid.exec.source.batch-size': it must be an integer from 1 to 65536"},
	} {
		err := CheckOption(tc.key, tc.value)
		if tc.err == "" {
			if err != nil {
				t.Errorf("CheckOption(%q, %q) = %v", tc.key, tc.value, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("CheckOption(%q, %q) = %v, want it to contain %q", tc.key, tc.value, err, tc.err)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"interval", "intervall", 1}} {
		if got := types.EditDistance(tc.a, tc.b); got != tc.d {
			t.Errorf("types.EditDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}

func TestResolveParallelism(t *testing.T) {
	if n, err := ResolveMaxParallelism(nil); n != types.DefaultMaxParallelism || err != nil {
		t.Errorf("unset max parallelism: %d, %v", n, err)
	}
	if n, err := ResolveMaxParallelism(map[string]string{OptMaxParallelism: " 256 "}); n != 256 || err != nil {
		t.Errorf("max parallelism 256: %d, %v", n, err)
	}
	if _, err := ResolveMaxParallelism(map[string]string{OptMaxParallelism: "2000000000"}); err == nil ||
		err.Error() != "invalid value '2000000000' for 'pipeline.max-parallelism': it must be an integer from 1 to 32768" {
		t.Errorf("max parallelism 2e9: %v", err)
	}
	for _, tc := range []struct {
		settings map[string]string
		want     int
	}{
		{nil, 3},
		{map[string]string{OptParallelism: "5"}, 5},
		{map[string]string{OptParallelism: "5", OptTableParallelism: "7"}, 7},
		{map[string]string{OptParallelism: "5", OptTableParallelism: "-1"}, 5},
	} {
		if got := ResolveParallelism(tc.settings, 3); got != tc.want {
			t.Errorf("ResolveParallelism(%v) = %d, want %d", tc.settings, got, tc.want)
		}
	}
}

func TestResolveSession(t *testing.T) {
	if s, err := ResolveSession(nil); s.TimeZone != "UTC" || err != nil {
		t.Errorf("unset: %+v, %v", s, err)
	}
	if s, err := ResolveSession(map[string]string{OptLocalTimeZone: " +08:00"}); s.TimeZone != "+08:00" || err != nil {
		t.Errorf("offset: %+v, %v", s, err)
	}
	if _, err := ResolveSession(map[string]string{OptLocalTimeZone: "Nowhere/Land"}); err == nil ||
		!strings.Contains(err.Error(), "invalid time zone 'Nowhere/Land' in table.local-time-zone") {
		t.Errorf("bad zone: %v", err)
	}
	if s, err := ResolveSession(map[string]string{OptSourceBatchSize: " 7"}); s.SourceBatchRows != 7 || err != nil {
		t.Errorf("batch size: %+v, %v", s, err)
	}
	if _, err := ResolveSession(map[string]string{OptSourceBatchSize: "65537"}); err == nil ||
		!strings.Contains(err.Error(), "from 1 to 65536") {
		t.Errorf("batch size too large: %v", err)
	}
	if s, err := ResolveSession(map[string]string{OptRuntimeMode: " BATCH"}); !s.Batch || err != nil {
		t.Errorf("batch mode: %+v, %v", s, err)
	}
	if s, err := ResolveSession(map[string]string{OptRuntimeMode: "streaming"}); s.Batch || err != nil {
		t.Errorf("streaming mode: %+v, %v", s, err)
	}
	if sp := ResolveSavepointRestore(map[string]string{OptSavepointPath: "/sp", OptSavepointIgnore: "True"}); sp != (SavepointRestore{Path: "/sp", IgnoreUnclaimedState: true}) {
		t.Errorf("savepoint %+v", sp)
	}
	if sp := ResolveSavepointRestore(map[string]string{OptSavepointIgnore: "false"}); sp != (SavepointRestore{}) {
		t.Errorf("no savepoint %+v", sp)
	}
}
