package metastore

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
	"go.uber.org/zap"
)

// testEtcd is one embedded etcd shared by the package's tests; each test
// works under its own key prefix.
var testEtcd *EmbeddedEtcd

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "metastore-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testEtcd, err = StartEmbeddedEtcd(dir, 0, 0, zap.NewNop())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	testEtcd.Close()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(leakOptions()...); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// leakOptions ignores goroutines that etcd's libraries start once per
// process and never stop.
func leakOptions() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
		goleak.IgnoreTopFunction("github.com/golang/glog.(*fileSink).flushDaemon"),
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
	}
}

var prefixSeq atomic.Int64

// newTestStore connects to the shared etcd under a prefix unique to t.
func newTestStore(t *testing.T) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	prefix := fmt.Sprintf("/test/%s-%d", strings.ReplaceAll(t.Name(), "/", "_"), prefixSeq.Add(1))
	s, err := Connect(ctx, testEtcd.Endpoints(), prefix, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func splitHostPort(hp string) (string, int, error) {
	host, p, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	return host, n, err
}

func itoa(n int) string { return strconv.Itoa(n) }

func leaseOf(id int64) clientv3.LeaseID { return clientv3.LeaseID(id) }
