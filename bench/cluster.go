package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/types"
)

// Defaults of ClusterOptions.
const (
	DefaultClusterKeys       = 5_000_000
	DefaultClusterStateCache = "64MB"
	DefaultClusterTimeout    = 30 * time.Minute
	// ClusterRSSLimit is the task manager peak RSS the spilling join must
	// stay under (the requirement the cluster-join-spill runner checks).
	ClusterRSSLimit = 400 << 20
)

// ClusterOptions configure ClusterJoinSpill. Zero values take defaults.
type ClusterOptions struct {
	// Keys is the number of distinct keys per side.
	Keys int
	// StateCache is the task manager's --state-cache.
	StateCache string
	// BinDir holds the jobmanager and taskmanager binaries. When empty,
	// $BRAID_BIN, else the directory of the running executable.
	BinDir string
	// Dir is where the processes' temporary data directory is made;
	// os.TempDir() when empty. It is removed afterwards.
	Dir string
	// Timeout bounds the whole run.
	Timeout time.Duration
	// Log, when set, receives the processes' output as it is written.
	Log io.Writer
}

// BinDir returns where the server binaries are looked for: $BRAID_BIN when
// set, else the directory of the running executable.
func BinDir() (string, error) {
	if d := os.Getenv("BRAID_BIN"); d != "" {
		return d, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("bench: locating the braid executable: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return filepath.Dir(exe), nil
}

// ClusterJoinSpill runs the spilling join end to end, as a user would: it
// starts a jobmanager and one taskmanager (--slots 1 --state-cache
// opts.StateCache), each its own process, and submits through the client
// library two bounded datagen tables of opts.Keys sequential keys each and
// an INSERT of their inner join into a blackhole table. A bounded INSERT
// runs synchronously, so Execute returns when the job has finished; that is
// the timed part. Meanwhile the task manager's VmRSS (and its state
// directory's size) is sampled; at the end its VmHWM is read, which the
// kernel keeps exactly. Rows counts the input rows of both sides.
//
// Extras: tm-peak-rss (VmHWM, the figure to hold against ClusterRSSLimit),
// tm-peak-rss-sampled, tm-state-disk-peak (evidence of the spill to Pebble)
// and rss-under-400MiB.
func ClusterJoinSpill(ctx context.Context, opts ClusterOptions) (Result, error) {
	if opts.Keys <= 0 {
		opts.Keys = DefaultClusterKeys
	}
	if opts.StateCache == "" {
		opts.StateCache = DefaultClusterStateCache
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultClusterTimeout
	}
	if opts.BinDir == "" {
		d, err := BinDir()
		if err != nil {
			return Result{}, err
		}
		opts.BinDir = d
	}
	for _, name := range []string{"jobmanager", "taskmanager"} {
		if _, err := os.Stat(filepath.Join(opts.BinDir, name)); err != nil {
			return Result{}, fmt.Errorf("bench: no %s binary in %s (build with `make` or `go build -o DIR ./cmd/...` and set BRAID_BIN=DIR): %w", name, opts.BinDir, err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	dir, err := os.MkdirTemp(opts.Dir, "braid-bench-cluster-")
	if err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	defer os.RemoveAll(dir)

	c := &procCluster{log: opts.Log}
	defer c.stop()
	secret, err := clusterSecret(dir)
	if err != nil {
		return Result{}, err
	}
	jm, err := c.start(ctx, "jobmanager", filepath.Join(opts.BinDir, "jobmanager"),
		"--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "jm"), "--cluster-secret-file", secret)
	if err != nil {
		return Result{}, err
	}
	endpoint, err := jm.waitLine(ctx, "jobmanager listening on ")
	if err != nil {
		return Result{}, c.fail(err)
	}
	httpAddr, err := jm.waitLine(ctx, "jobmanager http on ")
	if err != nil {
		return Result{}, c.fail(err)
	}
	tmDir := filepath.Join(dir, "tm")
	tm, err := c.start(ctx, "taskmanager", filepath.Join(opts.BinDir, "taskmanager"),
		"--jobmanager", endpoint, "--listen", "127.0.0.1:0", "--slots", "1",
		"--state-cache", opts.StateCache, "--data-dir", tmDir, "--cluster-secret-file", secret)
	if err != nil {
		return Result{}, c.fail(err)
	}
	if err := waitTaskManagers(ctx, httpAddr, 1); err != nil {
		return Result{}, c.fail(err)
	}

	cl, err := client.Dial(ctx, endpoint)
	if err != nil {
		return Result{}, c.fail(err)
	}
	defer cl.Close()
	sess, err := cl.OpenSession(ctx, nil)
	if err != nil {
		return Result{}, c.fail(err)
	}
	defer sess.Close(context.WithoutCancel(ctx))
	h := &statusHandler{}
	if err := sess.Execute(ctx, clusterDDL(opts.Keys), false, h); err != nil {
		return Result{}, c.fail(fmt.Errorf("bench: creating tables: %w", err))
	}

	base, err := ReadProcMemory(tm.cmd.Process.Pid)
	if err != nil {
		return Result{}, c.fail(err)
	}
	smp := startSampler(tm.cmd.Process.Pid, tmDir)
	start := time.Now()
	err = sess.Execute(ctx, clusterInsert, false, h)
	elapsed := time.Since(start)
	peak := smp.stop()
	if err != nil {
		return Result{}, c.fail(fmt.Errorf("bench: the join job: %w", err))
	}
	final, err := ReadProcMemory(tm.cmd.Process.Pid)
	if err != nil {
		return Result{}, c.fail(err)
	}
	hwm := max(final.HWM, peak.rss)

	r := newResult("cluster-join-spill", 2*int64(opts.Keys), elapsed)
	r.Extra["keys-per-side"] = strconv.Itoa(opts.Keys)
	r.Extra["state-cache"] = opts.StateCache
	r.Extra["job"] = h.jobID
	r.Extra["tm-rss-before"] = mib(base.RSS)
	r.Extra["tm-peak-rss"] = mib(hwm)
	r.Extra["tm-peak-rss-sampled"] = mib(peak.rss)
	r.Extra["tm-rss-after"] = mib(final.RSS)
	r.Extra["tm-state-disk-peak"] = mib(uint64(peak.disk))
	r.Extra["rss-under-400MiB"] = strconv.FormatBool(hwm < ClusterRSSLimit)
	return r, nil
}

// clusterDDL declares the two bounded sequence sources and the sink. The
// rate is set far above what one core produces, so datagen never sleeps.
func clusterDDL(keys int) string {
	var sb strings.Builder
	for _, t := range []string{"l", "r"} {
		fmt.Fprintf(&sb, `CREATE TABLE %s (k BIGINT, v BIGINT) WITH ('connector'='datagen', 'number-of-rows'='%d',
  'fields.k.kind'='sequence', 'fields.k.start'='1', 'fields.k.end'='%d', 'rows-per-second'='1000000000');
`, t, keys, keys)
	}
	sb.WriteString("CREATE TABLE out (k BIGINT, a BIGINT, b BIGINT) WITH ('connector'='blackhole');\n")
	return sb.String()
}

const clusterInsert = "INSERT INTO out SELECT l.k, l.v, r.v FROM l JOIN r ON l.k = r.k;"

// statusHandler keeps the job id of the INSERT; the script has no results.
type statusHandler struct{ jobID string }

func (h *statusHandler) Status(_ int, _ string, jobID string) {
	if jobID != "" {
		h.jobID = jobID
	}
}
func (h *statusHandler) Schema(int, client.ResultInfo) {}
func (h *statusHandler) Batch(int, types.Batch)        {}
func (h *statusHandler) End(int, string)               {}

// waitTaskManagers polls the job manager's /metrics until n task managers
// are registered.
func waitTaskManagers(ctx context.Context, httpAddr string, n int) error {
	deadline := time.Now().Add(60 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		got, err := registeredTaskManagers(ctx, httpAddr)
		if err == nil && got >= n {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("bench: %d task managers did not register within 60s (last: %v)", n, last)
}

func registeredTaskManagers(ctx context.Context, httpAddr string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+httpAddr+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "braid_jobmanager_task_managers "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return int(f), err
		}
	}
	return 0, errors.New("no braid_jobmanager_task_managers metric")
}

// sampler polls a process's VmRSS and a directory's size until stopped.
type sampler struct {
	done chan struct{}
	wg   sync.WaitGroup
	peak samplePeak
}

type samplePeak struct {
	rss  uint64
	disk int64
}

func startSampler(pid int, dir string) *sampler {
	s := &sampler{done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			if m, err := ReadProcMemory(pid); err == nil {
				s.peak.rss = max(s.peak.rss, m.RSS)
			}
			if i%20 == 0 { // the directory walk is slower: once a second
				if sz, _, err := dirSize(dir); err == nil {
					s.peak.disk = max(s.peak.disk, sz)
				}
			}
			select {
			case <-s.done:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *sampler) stop() samplePeak {
	close(s.done)
	s.wg.Wait()
	return s.peak
}

// procCluster is the processes a cluster runner started.
type procCluster struct {
	log   io.Writer
	procs []*proc
}

// proc is one started server: its output is kept (the tail, for errors)
// and scanned for the lines waitLine asks for.
type proc struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
	mu     struct {
		sync.Mutex
		lines   []string // the last lines of output
		changed chan struct{}
	}
}

func (c *procCluster) start(ctx context.Context, name, path string, args ...string) (*proc, error) {
	p := &proc{name: name, cmd: exec.Command(path, args...), exited: make(chan struct{})}
	p.mu.changed = make(chan struct{})
	pr, pw := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = pw, pw
	// NB: the servers get their own process group, so a Ctrl-C meant for
	// braid bench does not kill them before stop has sampled and ended them.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: starting %s: %w", name, err)
	}
	c.procs = append(c.procs, p)
	go p.scan(pr, c.log)
	go func() {
		_ = p.cmd.Wait()
		pw.Close()
		close(p.exited)
	}()
	return p, nil
}

func (p *proc) scan(r io.Reader, log io.Writer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if log != nil {
			fmt.Fprintf(log, "[%s] %s\n", p.name, line)
		}
		p.mu.Lock()
		p.mu.lines = append(p.mu.lines, line)
		if len(p.mu.lines) > 200 {
			p.mu.lines = p.mu.lines[len(p.mu.lines)-100:]
		}
		close(p.mu.changed)
		p.mu.changed = make(chan struct{})
		p.mu.Unlock()
	}
	_, _ = io.Copy(io.Discard, r)
}

// waitLine waits for an output line starting with prefix and returns the
// rest of it.
func (p *proc) waitLine(ctx context.Context, prefix string) (string, error) {
	timeout := time.After(60 * time.Second)
	for seen := 0; ; {
		p.mu.Lock()
		lines, changed := p.mu.lines, p.mu.changed
		p.mu.Unlock()
		for _, l := range lines[min(seen, len(lines)):] {
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				return strings.TrimSpace(rest), nil
			}
		}
		seen = len(lines)
		select {
		case <-changed:
		case <-p.exited:
			return "", fmt.Errorf("bench: %s exited (%v) before printing %q", p.name, p.cmd.ProcessState, prefix)
		case <-timeout:
			return "", fmt.Errorf("bench: %s did not print %q within 60s", p.name, prefix)
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

func (p *proc) tail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	lines := p.mu.lines[max(0, len(p.mu.lines)-20):]
	return strings.Join(lines, "\n")
}

// fail adds the tail of every process's output to err.
func (c *procCluster) fail(err error) error {
	var sb strings.Builder
	for _, p := range c.procs {
		fmt.Fprintf(&sb, "\n=== %s (last lines)\n%s", p.name, p.tail())
	}
	return fmt.Errorf("%w%s", err, sb.String())
}

// stop ends the processes: SIGTERM, then SIGKILL after 10 s.
func (c *procCluster) stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
}
