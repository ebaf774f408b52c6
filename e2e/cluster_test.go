package e2e

import (
	"bufio"
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
	"testing"
	"time"

	"github.com/braidflow/braid/internal/memberauth"
)

// processCluster is a jobmanager and task managers, each its own process, on
// loopback.
type processCluster struct {
	t        *testing.T
	endpoint string
	httpAddr string
	dir      string
	jm       *exec.Cmd
	// jms are the job managers of a highly available cluster (jm is then
	// nil).
	jms    []*exec.Cmd
	tms    []*exec.Cmd
	tmArgs [][]string
	exited map[*exec.Cmd]chan struct{}
	mu     sync.Mutex
	logs   map[string]*strings.Builder
}

func startProcessCluster(t *testing.T, taskManagers, slots int) *processCluster {
	t.Helper()
	c := &processCluster{t: t, dir: t.TempDir(), logs: map[string]*strings.Builder{}, exited: map[*exec.Cmd]chan struct{}{}}
	port, httpPort := freePort(t), freePort(t)
	c.endpoint = fmt.Sprintf("127.0.0.1:%d", port)
	c.httpAddr = fmt.Sprintf("127.0.0.1:%d", httpPort)
	c.jm = c.startJobManager()
	for i := 0; i < taskManagers; i++ {
		name := fmt.Sprintf("taskmanager-%d", i)
		args := []string{"--jobmanager", c.endpoint, "--listen", "127.0.0.1:0", "--slots", strconv.Itoa(slots),
			"--data-dir", filepath.Join(c.dir, name), "--state-cache", "64MB", "--id", fmt.Sprintf("e2e-tm-%d", i),
			"--cluster-secret-file", c.secretFile()}
		c.tmArgs = append(c.tmArgs, args)
		c.tms = append(c.tms, c.start(name, filepath.Join(bin, "taskmanager"), args...))
	}
	t.Cleanup(c.stop)
	c.waitTaskManagers(taskManagers, 60*time.Second)
	return c
}

func (c *processCluster) startJobManager() *exec.Cmd {
	return c.start("jobmanager", filepath.Join(bin, "jobmanager"),
		"--listen", c.endpoint, "--http", c.httpAddr, "--data-dir", filepath.Join(c.dir, "jm"),
		"--cluster-secret-file", c.secretFile())
}

// secretFile is the cluster secret every member of c is given, created on
// first use.
func (c *processCluster) secretFile() string {
	path := filepath.Join(c.dir, "cluster-secret")
	if _, err := memberauth.LoadOrCreateSecret(path); err != nil {
		c.t.Fatal(err)
	}
	return path
}

// restartJobManager kills the job manager with SIGKILL and starts it again
// on the same addresses and data directory.
func (c *processCluster) restartJobManager() {
	c.jm.Process.Signal(syscall.SIGKILL)
	<-c.exited[c.jm]
	c.jm = c.startJobManager()
}

func (c *processCluster) start(name, path string, args ...string) *exec.Cmd {
	c.t.Helper()
	cmd := exec.Command(path, args...)
	log := &strings.Builder{}
	c.mu.Lock()
	c.logs[name] = log
	c.mu.Unlock()
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			c.mu.Lock()
			log.WriteString(sc.Text() + "\n")
			c.mu.Unlock()
		}
	}()
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("starting %s: %v", name, err)
	}
	exited := make(chan struct{})
	c.exited[cmd] = exited
	go func() { cmd.Wait(); pw.Close(); close(exited) }()
	return cmd
}

// waitTaskManagers polls the job manager's metrics until n task managers are
// registered.
func (c *processCluster) waitTaskManagers(n int, timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if got, err := c.registered(); err == nil && got == n {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatalf("%d task managers did not register within %s\n%s", n, timeout, c.Logs())
}

// metric reads one sample of the job manager's /metrics, by its name with
// labels as printed; 0 when absent.
func (c *processCluster) metric(sample string) float64 {
	c.t.Helper()
	resp, err := http.Get("http://" + c.httpAddr + "/metrics")
	if err != nil {
		c.t.Fatalf("metrics: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f
		}
	}
	return 0
}

// registered reads the registered task manager gauge from /metrics.
func (c *processCluster) registered() (int, error) {
	resp, err := http.Get("http://" + c.httpAddr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "braid_jobmanager_task_managers ") {
			v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(line, "braid_jobmanager_task_managers ")), 64)
			return int(v), err
		}
	}
	return 0, fmt.Errorf("no braid_jobmanager_task_managers metric")
}

// Logs returns everything the processes printed, for failure messages.
func (c *processCluster) Logs() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var sb strings.Builder
	for name, l := range c.logs {
		fmt.Fprintf(&sb, "=== %s\n%s", name, tail(l.String(), 4000))
	}
	return sb.String()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// kill sends SIGKILL to task manager i.
func (c *processCluster) kill(i int) {
	c.tms[i].Process.Signal(syscall.SIGKILL)
}

// restartTaskManager kills task manager i with SIGKILL, waits for it to
// exit and starts it again with the same id, data directory and slots (on
// another port).
func (c *processCluster) restartTaskManager(i int) {
	c.kill(i)
	<-c.exited[c.tms[i]]
	c.tms[i] = c.start(fmt.Sprintf("taskmanager-%d", i), filepath.Join(bin, "taskmanager"), c.tmArgs[i]...)
}

// procs returns every process of the cluster.
func (c *processCluster) procs() []*exec.Cmd {
	ps := append(append([]*exec.Cmd(nil), c.tms...), c.jms...)
	if c.jm != nil {
		ps = append(ps, c.jm)
	}
	return ps
}

func (c *processCluster) stop() {
	for _, p := range c.procs() {
		if p.Process != nil {
			p.Process.Signal(syscall.SIGTERM)
		}
	}
	done := make(chan struct{})
	go func() {
		for _, p := range c.procs() {
			<-c.exited[p]
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		for _, p := range c.procs() {
			p.Process.Kill()
		}
	}
	if c.t.Failed() {
		c.t.Logf("cluster logs:\n%s", c.Logs())
	}
	os.RemoveAll(c.dir)
}

// taskManagerID returns the id task manager i printed at start.
func (c *processCluster) taskManagerID(i int) string {
	c.t.Helper()
	c.mu.Lock()
	log := c.logs[fmt.Sprintf("taskmanager-%d", i)].String()
	c.mu.Unlock()
	for _, line := range strings.Split(log, "\n") {
		if id, ok := strings.CutPrefix(line, "taskmanager id "); ok {
			return strings.TrimSpace(id)
		}
	}
	c.t.Fatalf("task manager %d printed no id:\n%s", i, log)
	return ""
}
