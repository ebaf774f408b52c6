package scheduler

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// TestRestartPolicy runs testdata/restart.txt. "policy" starts a policy:
// type=<type> and the strategy's fields (attempts, delay, max-delay,
// multiplier, reset, jitter, interval, max-failures) and rnd=<draw> for a
// constant jitter draw. "fail at=<time> [class=<class>]" reports a failure
// at <time> after the start and prints the decision; "running at=<time>"
// says the job runs again. Rewrite with -rewrite.
func TestRestartPolicy(t *testing.T) {
	var p *RestartPolicy
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d *datadriven.TestData) time.Time {
		var s string
		d.ScanArgs(t, "at", &s)
		off, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("%s: %v", d.Pos, err)
		}
		return start.Add(off)
	}
	datadriven.RunTest(t, "testdata/restart.txt", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "policy":
			cfg, rnd := parsePolicy(t, d)
			p = NewRestartPolicy(cfg, rnd)
			return ""
		case "fail":
			class := types.ClassUnknown
			if d.HasArg("class") {
				var c string
				d.ScanArgs(t, "class", &c)
				class = parseClass(t, c)
			}
			restart, delay, reason := p.OnFailure(at(d), class)
			if !restart {
				return fmt.Sprintf("fail: %s\n", reason)
			}
			return fmt.Sprintf("restart after %s: %s\n", delay, reason)
		case "running":
			p.OnRunning(at(d))
			return ""
		}
		t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
		return ""
	})
}

func parsePolicy(t *testing.T, d *datadriven.TestData) (jobgraph.RestartStrategy, func() float64) {
	var cfg jobgraph.RestartStrategy
	if d.HasArg("nil") {
		return cfg, nil
	}
	var rnd func() float64
	for _, a := range d.CmdArgs {
		v := a.Vals[0]
		dur := func() time.Duration {
			x, err := time.ParseDuration(v)
			if err != nil {
				t.Fatalf("%s: %s: %v", d.Pos, a.Key, err)
			}
			return x
		}
		num := func() float64 {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %s: %v", d.Pos, a.Key, err)
			}
			return f
		}
		switch a.Key {
		case "type":
			cfg.Type = v
		case "attempts":
			cfg.Attempts = int(num())
		case "delay":
			cfg.Delay = dur()
		case "max-delay":
			cfg.MaxDelay = dur()
		case "multiplier":
			cfg.BackoffMultiplier = num()
		case "reset":
			cfg.ResetBackoffThreshold = dur()
		case "jitter":
			cfg.JitterFactor = num()
		case "interval":
			cfg.FailureRateInterval = dur()
		case "max-failures":
			cfg.MaxFailuresPerInterval = int(num())
		case "rnd":
			draw := num()
			rnd = func() float64 { return draw }
		default:
			t.Fatalf("%s: unknown argument %q", d.Pos, a.Key)
		}
	}
	return cfg, rnd
}

func parseClass(t *testing.T, s string) types.ErrorClass {
	for c := types.ClassUnknown; c <= types.ClassLostPeer; c++ {
		if c.String() == s || (s == "lost-peer" && c == types.ClassLostPeer) {
			return c
		}
	}
	t.Fatalf("unknown class %q", s)
	return 0
}

// TestRestartPolicyJitter checks that the default jitter source stays
// within ±jitter of the backoff.
func TestRestartPolicyJitter(t *testing.T) {
	cfg := jobgraph.RestartStrategy{Type: jobgraph.RestartExponentialDelay, Delay: time.Second, MaxDelay: time.Minute,
		BackoffMultiplier: 1, ResetBackoffThreshold: time.Hour, JitterFactor: 0.1, Attempts: 1 << 30}
	p := NewRestartPolicy(cfg, nil)
	now := time.Now()
	for i := 0; i < 200; i++ {
		ok, d, reason := p.OnFailure(now, types.ClassExternal)
		if !ok || d < 900*time.Millisecond || d > 1100*time.Millisecond {
			t.Fatalf("failure %d: %v %s %s", i, ok, d, reason)
		}
	}
}
