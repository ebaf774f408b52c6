package jobmanager

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/braidflow/braid/connectors"
)

// Health over HTTP, as Kubernetes probes expect it:
//
//   - /healthz (liveness) is 200 while the job manager runs: it has started
//     and not been closed or deposed (a deposed leader is meant to be
//     restarted).
//   - /readyz (readiness) is 200 when every check passes, and 503 listing
//     the failed ones otherwise: etcd answers, the default log's brokers
//     answer, this job manager leads (always, without HA), and at least one
//     task manager is registered. A check can be left out with
//     ?exclude=NAME (repeatable): a chart whose task managers reach the job
//     manager through the Service it gates excludes "taskmanagers".
//
// Both print one line per check, "ok NAME" or "fail NAME: reason".

// readyTimeout bounds each readiness check.
const readyTimeout = time.Second

// check is one readiness check's outcome.
type check struct {
	name string
	err  error
}

func (jm *JobManager) live() error {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	switch {
	case jm.mu.closed:
		return fmt.Errorf("closed")
	case !jm.mu.started:
		return fmt.Errorf("starting")
	case jm.mu.abandoned:
		return fmt.Errorf("deposed: no longer the leader")
	}
	return nil
}

// readiness runs every check not in exclude.
func (jm *JobManager) readiness(ctx context.Context, exclude map[string]bool) []check {
	checks := []struct {
		name string
		run  func(context.Context) error
	}{
		{"started", func(context.Context) error { return jm.live() }},
		{"etcd", func(ctx context.Context) error {
			if jm.store == nil {
				return fmt.Errorf("not connected")
			}
			_, err := jm.store.Client().Get(ctx, jm.store.Prefix()+"/health")
			return err
		}},
		{"broker", func(ctx context.Context) error {
			brokers := jm.Brokers()
			if len(brokers) == 0 {
				return fmt.Errorf("no default log configured")
			}
			return connectors.PingBrokers(ctx, brokers)
		}},
		{"leader", func(context.Context) error {
			if !jm.serving() {
				return fmt.Errorf("a standby: another job manager leads")
			}
			return nil
		}},
		{"taskmanagers", func(context.Context) error {
			if len(jm.pool.Snapshot()) == 0 {
				return fmt.Errorf("no task manager registered")
			}
			return nil
		}},
	}
	var out []check
	for _, c := range checks {
		if exclude[c.name] {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, readyTimeout)
		out = append(out, check{c.name, c.run(cctx)})
		cancel()
	}
	return out
}

func writeChecks(w http.ResponseWriter, checks []check) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	var b strings.Builder
	code := http.StatusOK
	for _, c := range checks {
		if c.err != nil {
			code = http.StatusServiceUnavailable
			fmt.Fprintf(&b, "fail %s: %v\n", c.name, c.err)
		} else {
			fmt.Fprintf(&b, "ok %s\n", c.name)
		}
	}
	w.WriteHeader(code)
	w.Write([]byte(b.String()))
}

func (jm *JobManager) serveHealth(mux *http.ServeMux) {
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeChecks(w, []check{{"live", jm.live()}})
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		exclude := map[string]bool{}
		for _, v := range r.URL.Query()["exclude"] {
			exclude[v] = true
		}
		writeChecks(w, jm.readiness(r.Context(), exclude))
	})
}
