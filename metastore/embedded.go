package metastore

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// readyTimeout bounds how long StartEmbeddedEtcd waits for the member to
// elect itself and serve clients.
const readyTimeout = 10 * time.Second

// EmbeddedEtcd is a real single-member etcd server run in-process on
// loopback. It is what the job manager runs when no external etcd is
// configured, and what tests use.
type EmbeddedEtcd struct {
	etcd      *embed.Etcd
	endpoints []string
	closeOnce sync.Once
}

// StartEmbeddedEtcd starts a single-member etcd server with its data under
// dir, listening for clients on 127.0.0.1:clientPort and for peers on
// 127.0.0.1:peerPort. A port of 0 picks a free port; the fixed 2379/2380
// defaults are never used implicitly. It returns once the member is leader
// and serving (typically well under a second), or an error. The caller owns
// the server and must Close it.
func StartEmbeddedEtcd(dir string, clientPort, peerPort int, logger *zap.Logger) (*EmbeddedEtcd, error) {
	if logger == nil {
		logger = zap.NewNop()
	}
	// NB: etcd needs the advertised peer URL to equal the listened one to
	// build its initial cluster, so a port of 0 is resolved to a concrete free
	// port before starting rather than handed to etcd.
	// Another process may take a port between freePort and the bind, so a
	// picked port is retried a few times.
	var (
		e   *embed.Etcd
		err error
	)
	for attempt := 0; ; attempt++ {
		cp, pp := clientPort, peerPort
		if cp == 0 {
			if cp, err = freePort(); err != nil {
				return nil, err
			}
		}
		if pp == 0 {
			if pp, err = freePort(); err != nil {
				return nil, err
			}
		}
		e, err = embed.StartEtcd(embedConfig(dir, cp, pp, logger))
		if err == nil {
			break
		}
		picked := clientPort == 0 || peerPort == 0
		if !picked || attempt == 2 || !isAddrInUse(err) {
			return nil, fmt.Errorf("metastore: start embedded etcd on client port %d, peer port %d: %w", cp, pp, err)
		}
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("metastore: embedded etcd failed: %w", err)
	case <-time.After(readyTimeout):
		e.Server.Stop()
		e.Close()
		return nil, errors.New("metastore: embedded etcd not ready within " + readyTimeout.String())
	}
	endpoints := make([]string, 0, len(e.Clients))
	for _, l := range e.Clients {
		endpoints = append(endpoints, l.Addr().String())
	}
	return &EmbeddedEtcd{etcd: e, endpoints: endpoints}, nil
}

// embedConfig tunes etcd for a single local member: short ticks so it
// elects itself at once, no metrics endpoint, no gateway, logging through the
// caller's logger at warn level and above.
func embedConfig(dir string, clientPort, peerPort int, logger *zap.Logger) *embed.Config {
	cfg := embed.NewConfig()
	cfg.Name = "braid"
	cfg.Dir = dir
	curl := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(clientPort))}
	purl := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(peerPort))}
	cfg.ListenClientUrls = []url.URL{curl}
	cfg.AdvertiseClientUrls = []url.URL{curl}
	cfg.ListenPeerUrls = []url.URL{purl}
	cfg.AdvertisePeerUrls = []url.URL{purl}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.InitialClusterToken = "braid-embedded"
	cfg.TickMs = 10
	cfg.ElectionMs = 50
	cfg.InitialElectionTickAdvance = true
	cfg.EnableGRPCGateway = false
	cfg.Metrics = "basic"
	cfg.ListenMetricsUrls = nil
	// 2 GiB: etcd's own default; stated so a local cluster never hits the
	// quota by surprise.
	cfg.QuotaBackendBytes = 2 << 30
	cfg.AutoCompactionMode = embed.CompactorModeRevision
	cfg.AutoCompactionRetention = "1000"
	etcdLog := logger.Named("etcd").WithOptions(zap.IncreaseLevel(zap.WarnLevel), zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return quietCore{c}
	}))
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(etcdLog)
	return cfg
}

func isAddrInUse(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE)
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("metastore: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Endpoints returns the client endpoints (host:port) to pass to Connect.
func (e *EmbeddedEtcd) Endpoints() []string {
	return append([]string(nil), e.endpoints...)
}

// Close stops the server and waits for its goroutines to end. It is safe to
// call more than once.
func (e *EmbeddedEtcd) Close() error {
	e.closeOnce.Do(e.etcd.Close)
	return nil
}

// benignEtcdMessages are warnings and errors a single-member embedded etcd
// logs on every start and stop; they say nothing about a problem here.
var benignEtcdMessages = []string{
	"Running http and grpc server on single port",
	"simple token is not cryptographically signed",
	"Failed to detect schema version",
	"failed to update storage version",
	"setting up serving from embedded etcd failed",
	"stopping insecure grpc server due to error",
	"stopped insecure grpc server due to error",
}

// quietCore drops benignEtcdMessages.
type quietCore struct{ zapcore.Core }

func (q quietCore) With(fields []zapcore.Field) zapcore.Core { return quietCore{q.Core.With(fields)} }

func (q quietCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	for _, m := range benignEtcdMessages {
		if strings.HasPrefix(e.Message, m) {
			return ce
		}
	}
	return q.Core.Check(e, ce)
}
