package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/braidflow/braid/connectors"
	"github.com/braidflow/braid/metastore"
)

// haLease is the job managers' --leader-lease in these tests.
const haLease = 2 * time.Second

// haCluster is two highly available job managers on one etcd and one
// Kafka (both run in the test process) and task managers that know both.
type haCluster struct {
	*processCluster
	store   *metastore.Store
	addrs   []string // gRPC, one per job manager
	https   []string // HTTP, one per job manager
	jmArgs  [][]string
	etcdEps string
}

func startHACluster(t *testing.T, taskManagers, slots int) *haCluster {
	t.Helper()
	c := &haCluster{processCluster: &processCluster{t: t, dir: t.TempDir(), logs: map[string]*strings.Builder{}, exited: map[*exec.Cmd]chan struct{}{}}}
	etcd, err := metastore.StartEmbeddedEtcd(filepath.Join(c.dir, "etcd"), freePort(t), freePort(t), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	broker, err := connectors.StartEmbeddedBroker(filepath.Join(c.dir, "kafka"), freePort(t), zap.NewNop())
	if err != nil {
		etcd.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.store, err = metastore.Connect(ctx, etcd.Endpoints(), "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	// NB: cleanups run last first: the processes stop before etcd and
	// the broker they use.
	t.Cleanup(func() { broker.Close(); etcd.Close() })
	t.Cleanup(func() { c.store.Close() })
	c.etcdEps = strings.Join(etcd.Endpoints(), ",")
	for i := range 2 {
		c.addrs = append(c.addrs, fmt.Sprintf("127.0.0.1:%d", freePort(t)))
		c.https = append(c.https, fmt.Sprintf("127.0.0.1:%d", freePort(t)))
		c.jmArgs = append(c.jmArgs, []string{"--ha", "--etcd", c.etcdEps, "--kafka", strings.Join(broker.Addrs(), ","),
			"--leader-lease", haLease.String(), "--heartbeat-timeout", "3s",
			"--listen", c.addrs[i], "--http", c.https[i], "--data-dir", filepath.Join(c.dir, fmt.Sprintf("jm-%d", i)),
			// NB: every job manager must reach every checkpoint, and every
			// member have the cluster's secret.
			"--checkpoint-dir", filepath.Join(c.dir, "checkpoints"), "--cluster-secret-file", c.secretFile()})
		c.jms = append(c.jms, c.start(fmt.Sprintf("jobmanager-%d", i), filepath.Join(bin, "jobmanager"), c.jmArgs[i]...))
	}
	c.endpoint = strings.Join(c.addrs, ",")
	for i := 0; i < taskManagers; i++ {
		name := fmt.Sprintf("taskmanager-%d", i)
		args := []string{"--jobmanager", c.endpoint, "--listen", "127.0.0.1:0", "--slots", strconv.Itoa(slots),
			"--data-dir", filepath.Join(c.dir, name), "--state-cache", "64MB", "--id", fmt.Sprintf("e2e-tm-%d", i),
			"--cluster-secret-file", c.secretFile()}
		c.tmArgs = append(c.tmArgs, args)
		c.tms = append(c.tms, c.start(name, filepath.Join(bin, "taskmanager"), args...))
	}
	t.Cleanup(c.stop)
	c.waitLeader(-1, time.Minute)
	c.waitTaskManagers(taskManagers, time.Minute)
	return c
}

// leader returns the index of the leading job manager per etcd; -1 when
// none leads.
func (c *haCluster) leader() int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	who, err := c.store.Leader(ctx)
	if err != nil {
		return -1
	}
	for i, a := range c.addrs {
		if a == who {
			return i
		}
	}
	return -1
}

// waitLeader waits until a job manager other than not leads and answers
// on HTTP (where the task manager gauge is read), and returns it.
func (c *haCluster) waitLeader(not int, timeout time.Duration) int {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if i := c.leader(); i >= 0 && i != not {
			c.httpAddr = c.https[i]
			return i
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("no job manager took over within %s\n%s", timeout, c.Logs())
	return -1
}

// failover SIGKILLs the leading job manager, starts it again as a standby
// and waits until the other one leads with every task manager registered.
// It returns how long the takeover took.
func (c *haCluster) failover() time.Duration {
	c.t.Helper()
	old := c.waitLeader(-1, time.Minute)
	start := time.Now()
	c.jms[old].Process.Signal(syscall.SIGKILL)
	<-c.exited[c.jms[old]]
	c.jms[old] = c.start(fmt.Sprintf("jobmanager-%d", old), filepath.Join(bin, "jobmanager"), c.jmArgs[old]...)
	c.waitLeader(old, time.Minute)
	c.waitTaskManagers(len(c.tms), time.Minute)
	return time.Since(start)
}

// latestCheckpoint returns job id's latest checkpoint id in etcd; 0 when
// it has none.
func (c *haCluster) latestCheckpoint(id string) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cp, ok, err := c.store.LatestCheckpoint(ctx, id)
	if err != nil {
		c.t.Fatal(err)
	}
	if !ok {
		return 0
	}
	return cp.ID
}

// TestHAJobManagerFailover runs two job managers on one etcd and one Kafka
// with two task managers, and SIGKILLs the leader 3 times while the fault
// workload runs (a join and a GROUP BY into a managed upsert table, both
// checkpointing), starting the killed one again as a standby each time.
// The other job manager takes over within about the leader lease and
// resumes the jobs from the checkpoints etcd points to; their committed
// output equals the batch result and their checkpoint ids only increase.
func TestHAJobManagerFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a multi-process cluster; runs without -short (make test)")
	}
	cl := startHACluster(t, 2, 4)
	r := startFaultRun(t, cl.processCluster, envCount(t, "BRAID_FAULT_ROWS", 1_000_000))
	seen := map[string]int64{}
	checkIncreasing := func(when string) {
		for _, id := range []string{r.joinJob, r.aggJob} {
			got := cl.latestCheckpoint(id)
			if got < seen[id] {
				t.Errorf("%s: job %s's latest checkpoint went back from %d to %d", when, id, seen[id], got)
			}
			seen[id] = got
		}
	}
	n := 0
	failovers := r.inject(3, func(*rand.Rand) {
		n++
		checkIncreasing(fmt.Sprintf("before failover %d", n))
		took := cl.failover()
		t.Logf("failover %d: job manager %d leads after %s", n, cl.leader(), took.Round(time.Millisecond))
		checkIncreasing(fmt.Sprintf("after failover %d", n))
	})
	// The clients may lose the job manager they waited on.
	r.check(true)
	checkIncreasing("at the end")
	if failovers < 3 {
		t.Errorf("the join finished after %d failovers, before 3: raise BRAID_FAULT_ROWS", failovers)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, id := range []string{r.joinJob, r.aggJob} {
		cps, err := cl.store.ListCheckpoints(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(cps); i++ {
			if cps[i].ID <= cps[i-1].ID || cps[i].CompletedUnixMs < cps[i-1].CompletedUnixMs {
				t.Errorf("job %s: checkpoint %d (at %d) follows %d (at %d)", id, cps[i].ID, cps[i].CompletedUnixMs, cps[i-1].ID, cps[i-1].CompletedUnixMs)
			}
		}
		t.Logf("job %s: latest checkpoint %d, retained %d", id, seen[id], len(cps))
	}
}
