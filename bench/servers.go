package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/internal/memberauth"
)

// serverSpec describes a multi-process cluster for the checkpoint runners.
type serverSpec struct {
	binDir       string
	dir          string // holds every process's data directory
	taskManagers int
	slots        int
	stateCache   string
	log          io.Writer
}

// servers is a jobmanager and task managers, each its own process, on
// fixed loopback ports, so that any of them can be killed and started again
// where it was: the job manager on its addresses and data directory, a task
// manager with its id and data directory.
type servers struct {
	pc       *procCluster
	endpoint string
	httpAddr string
	cpDir    string // the job manager's --checkpoint-dir
	jmArgs   []string
	jm       *proc
	tmArgs   [][]string
	tms      []*proc
}

// checkBinaries resolves binDir (see BinDir) and checks the server
// binaries are in it.
func checkBinaries(binDir string) (string, error) {
	if binDir == "" {
		d, err := BinDir()
		if err != nil {
			return "", err
		}
		binDir = d
	}
	for _, name := range []string{"jobmanager", "taskmanager"} {
		if _, err := os.Stat(filepath.Join(binDir, name)); err != nil {
			return "", fmt.Errorf("bench: no %s binary in %s (build with `make` or `go build -o DIR ./cmd/...` and set BRAID_BIN=DIR): %w", name, binDir, err)
		}
	}
	return binDir, nil
}

// clusterSecret creates the cluster secret of a benchmark's servers in dir
// and returns its path.
func clusterSecret(dir string) (string, error) {
	path := filepath.Join(dir, "cluster-secret")
	if _, err := memberauth.LoadOrCreateSecret(path); err != nil {
		return "", fmt.Errorf("bench: %w", err)
	}
	return path, nil
}

// startServers starts the job manager and the task managers and waits until
// every task manager has registered. On error the processes it started are
// stopped.
func startServers(ctx context.Context, spec serverSpec) (*servers, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	s := &servers{pc: &procCluster{log: spec.log},
		endpoint: "127.0.0.1:" + strconv.Itoa(ports[0]), httpAddr: "127.0.0.1:" + strconv.Itoa(ports[1]),
		cpDir: filepath.Join(spec.dir, "checkpoints")}
	secret, err := clusterSecret(spec.dir)
	if err != nil {
		return nil, err
	}
	s.jmArgs = []string{filepath.Join(spec.binDir, "jobmanager"), "--listen", s.endpoint, "--http", s.httpAddr,
		"--data-dir", filepath.Join(spec.dir, "jm"), "--checkpoint-dir", s.cpDir, "--cluster-secret-file", secret}
	if err := s.startJobManager(ctx); err != nil {
		s.stop()
		return nil, err
	}
	for i := 0; i < spec.taskManagers; i++ {
		s.tmArgs = append(s.tmArgs, []string{filepath.Join(spec.binDir, "taskmanager"),
			"--jobmanager", s.endpoint, "--listen", "127.0.0.1:0", "--slots", strconv.Itoa(spec.slots),
			"--state-cache", spec.stateCache, "--data-dir", filepath.Join(spec.dir, fmt.Sprintf("tm-%d", i)),
			"--id", fmt.Sprintf("bench-tm-%d", i), "--cluster-secret-file", secret})
		s.tms = append(s.tms, nil)
		if err := s.startTaskManager(ctx, i); err != nil {
			s.stop()
			return nil, err
		}
	}
	if err := waitTaskManagers(ctx, s.httpAddr, spec.taskManagers); err != nil {
		err = s.pc.fail(err)
		s.stop()
		return nil, err
	}
	return s, nil
}

func (s *servers) startJobManager(ctx context.Context) error {
	jm, err := s.pc.start(ctx, "jobmanager", s.jmArgs[0], s.jmArgs[1:]...)
	if err != nil {
		return err
	}
	s.jm = jm
	if _, err := jm.waitLine(ctx, "jobmanager listening on "); err != nil {
		return s.pc.fail(err)
	}
	return nil
}

func (s *servers) startTaskManager(ctx context.Context, i int) error {
	tm, err := s.pc.start(ctx, fmt.Sprintf("taskmanager-%d", i), s.tmArgs[i][0], s.tmArgs[i][1:]...)
	if err != nil {
		return err
	}
	s.tms[i] = tm
	return nil
}

// kill sends SIGKILL to p and waits for it to exit.
func kill(p *proc) {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

func (s *servers) stop() { s.pc.stop() }

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// metrics reads the job manager's /metrics: each sample by its name with
// labels as printed, e.g. `braid_jobmanager_checkpoints_total{outcome="completed"}`.
func (s *servers) metrics(ctx context.Context) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.httpAddr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if strings.HasPrefix(line, "#") || i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}

// Metric names the checkpoint runners read.
const (
	metricCompleted   = `braid_jobmanager_checkpoints_total{outcome="completed"}`
	metricAborted     = `braid_jobmanager_checkpoints_total{outcome="aborted"}`
	metricDurationSum = `braid_jobmanager_checkpoint_duration_seconds_sum`
	metricRestarts    = `braid_jobmanager_job_restarts_total`
)

// session dials the job manager and opens a session; close releases both.
func (s *servers) session(ctx context.Context) (sess *client.Session, closeFn func(), err error) {
	cl, err := client.Dial(ctx, s.endpoint)
	if err != nil {
		return nil, nil, err
	}
	sess, err = cl.OpenSession(ctx, nil)
	if err != nil {
		cl.Close()
		return nil, nil, err
	}
	return sess, func() {
		sess.Close(context.WithoutCancel(ctx))
		cl.Close()
	}, nil
}

// submit runs script (settings, DDL and one unbounded INSERT) and returns
// the INSERT's job id; the job keeps running after it returns.
func (s *servers) submit(ctx context.Context, script string) (string, error) {
	sess, closeFn, err := s.session(ctx)
	if err != nil {
		return "", err
	}
	defer closeFn()
	h := &statusHandler{}
	if err := sess.Execute(ctx, script, false, h); err != nil {
		return "", err
	}
	if h.jobID == "" {
		return "", fmt.Errorf("bench: no job id from %q", script)
	}
	return h.jobID, nil
}

// jobStatus returns the job's status, dialing anew each time so that it
// works across job manager restarts.
func (s *servers) jobStatus(ctx context.Context, jobID string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cl, err := client.Dial(ctx, s.endpoint)
	if err != nil {
		return "", err
	}
	defer cl.Close()
	d, err := cl.DescribeJob(ctx, jobID)
	if err != nil {
		return "", err
	}
	return d.Job.Status, nil
}

// cancelJob cancels the job; errors are ignored (the servers stop next).
func (s *servers) cancelJob(ctx context.Context, jobID string) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if cl, err := client.Dial(ctx, s.endpoint); err == nil {
		_ = cl.CancelJob(ctx, jobID)
		cl.Close()
	}
}

// poll calls f every interval until it reports done, fails, or ctx ends.
func poll(ctx context.Context, interval time.Duration, f func() (done bool, err error)) error {
	for {
		done, err := f()
		if done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// ds; zero when ds is empty. With few samples a high percentile is the
// maximum.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(p/100*float64(len(s)) + 0.999999)
	return s[min(max(rank, 1), len(s))-1]
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) + "s" }
