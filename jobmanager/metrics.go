package jobmanager

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the job manager's Prometheus metrics, in a registry of its
// own so several job managers can live in one process.
type metrics struct {
	reg         *prometheus.Registry
	jobsEnded   *prometheus.CounterVec
	checkpoints *prometheus.CounterVec
	// checkpointDuration observes each completed checkpoint's time from
	// its trigger to the commit of its pointer in etcd.
	checkpointDuration prometheus.Histogram
	restarts           prometheus.Counter
}

func newMetrics(jm *JobManager) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.jobsEnded = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "braid", Subsystem: "jobmanager", Name: "jobs_ended_total",
		Help: "Jobs that reached a terminal status, by status.",
	}, []string{"status"})
	for _, s := range []string{StatusFinished, StatusFailed, StatusCanceled} {
		m.jobsEnded.WithLabelValues(s)
	}
	m.checkpoints = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "braid", Subsystem: "jobmanager", Name: "checkpoints_total",
		Help: "Checkpoints that ended, by outcome (completed, aborted).",
	}, []string{"outcome"})
	m.checkpointDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "braid", Subsystem: "jobmanager", Name: "checkpoint_duration_seconds",
		Help:    "Time from the trigger of a completed checkpoint to the commit of its pointer.",
		Buckets: prometheus.ExponentialBuckets(0.025, 2, 14), // 25ms to about 3.4 minutes
	})
	m.restarts = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "braid", Subsystem: "jobmanager", Name: "job_restarts_total",
		Help: "Restarts of jobs after a failure.",
	})
	m.reg.MustRegister(
		m.jobsEnded, m.checkpoints, m.checkpointDuration, m.restarts,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "braid", Subsystem: "jobmanager", Name: "task_managers",
			Help: "Registered task managers.",
		}, func() float64 { return float64(len(jm.pool.Snapshot())) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "braid", Subsystem: "jobmanager", Name: "free_slots",
			Help: "Unused slots over all registered task managers.",
		}, func() float64 {
			free := 0
			for _, tm := range jm.pool.Snapshot() {
				free += tm.Slots - tm.Used
			}
			return float64(free)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "braid", Subsystem: "jobmanager", Name: "running_jobs",
			Help: "Jobs that have not reached a terminal status.",
		}, func() float64 { return float64(jm.runningJobs()) }),
	)
	return m
}

func (m *metrics) jobEnded(status string) { m.jobsEnded.WithLabelValues(status).Inc() }

// checkpointEnded counts a checkpoint's outcome; took is the completed
// one's duration from its trigger (ignored for an aborted one).
func (m *metrics) checkpointEnded(completed bool, took time.Duration) {
	outcome := "aborted"
	if completed {
		outcome = "completed"
		// NB: observed before the count, so a reader that sees the count
		// rise also sees the duration in the histogram's sum.
		m.checkpointDuration.Observe(took.Seconds())
	}
	m.checkpoints.WithLabelValues(outcome).Inc()
}

// handler serves /healthz, /readyz (see health.go) and /metrics.
func (m *metrics) handler(jm *JobManager) http.Handler {
	mux := http.NewServeMux()
	jm.serveHealth(mux)
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	return mux
}

func (jm *JobManager) runningJobs() int {
	jm.mu.Lock()
	jobs := make([]*Job, 0, len(jm.mu.jobs))
	for _, j := range jm.mu.jobs {
		if j != nil {
			jobs = append(jobs, j)
		}
	}
	jm.mu.Unlock()
	n := 0
	for _, j := range jobs {
		if !terminal(j.Status()) {
			n++
		}
	}
	return n
}
