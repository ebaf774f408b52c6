package jobmanager

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/connectors"
	"github.com/braidflow/braid/internal/clientauth"
	"github.com/braidflow/braid/internal/grpcrecover"
	"github.com/braidflow/braid/internal/memberauth"
	"github.com/braidflow/braid/internal/msgsize"
	"github.com/braidflow/braid/internal/netaddr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/metastore"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/scheduler"
)

// JobManager is the control-plane server. Create it with New, then Start;
// Close stops it. Its methods are safe for concurrent use.
type JobManager struct {
	cfg Config
	log *zap.Logger

	etcd   *metastore.EmbeddedEtcd // nil with external etcd
	broker *connectors.Broker      // nil with an external Kafka
	store  *metastore.Store
	pool   *scheduler.SlotPool
	// waits are the jobs waiting for slots (slotwait.go).
	waits slotWaits

	lis     net.Listener
	grpc    *grpc.Server
	health  *health.Server
	httpSrv *http.Server
	httpLis net.Listener
	metrics *metrics

	// ctx lives from Start to Close; background goroutines watch it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// advertise names this job manager in the leader election (HA).
	advertise string
	// deposed is closed when this job manager lost its leadership (HA).
	deposed chan struct{}
	// members authenticates task managers and this job manager's calls to
	// them.
	members *memberauth.Members
	// clients authenticates the callers of ClientService.
	clients *clientauth.Authenticator
	// jobEnded wakes the job store's sweep (buffered, never blocks).
	jobEnded chan struct{}

	mu struct {
		sync.Mutex
		gateway Gateway
		jobs    map[string]*Job
		// ended lists the ended jobs still in jobs, oldest first.
		ended []string
		// tms are the live task managers by id.
		tms map[string]metastore.TaskManagerInfo
		// incarnations are the live registrations' tokens, by task
		// manager id (see RegisterTaskManagerResponse.incarnation).
		incarnations map[string]string
		// conns are client connections to task managers by address.
		conns map[string]*grpc.ClientConn
		// resumed are jobs of an earlier run to restart once serving.
		resumed []*Job
		started bool
		closed  bool
		// lead is the term this job manager leads in (HA); nil before it
		// won and without HA. It stays set after the term ends, so the
		// writes of a deposed leader stay fenced.
		lead *metastore.Leadership
		// leading: with HA, this job manager took over and serves.
		leading bool
		// abandoned: the jobs are left to another job manager, their
		// statuses not recorded and their subtasks not canceled.
		abandoned bool
	}
}

// New checks cfg and returns a job manager that is not yet serving.
func New(cfg Config) (*JobManager, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	members, err := memberauth.New(cfg.Members)
	if err != nil {
		return nil, fmt.Errorf("jobmanager: %w", err)
	}
	clients, err := clientauth.New(cfg.Clients)
	if err != nil {
		return nil, fmt.Errorf("jobmanager: %w", err)
	}
	jm := &JobManager{cfg: cfg, log: cfg.Logger.Named("jobmanager"), pool: scheduler.NewSlotPool(), deposed: make(chan struct{}), members: members, clients: clients,
		jobEnded: make(chan struct{}, 1)}
	jm.mu.gateway = cfg.Gateway
	if jm.mu.gateway == nil {
		jm.mu.gateway = NewSQLGateway(jm)
	}
	jm.mu.jobs = map[string]*Job{}
	jm.mu.tms = map[string]metastore.TaskManagerInfo{}
	jm.mu.incarnations = map[string]string{}
	jm.mu.conns = map[string]*grpc.ClientConn{}
	jm.metrics = newMetrics(jm)
	return jm, nil
}

// SetGateway installs the SQL gateway. It may be called before or after
// Start; calls in flight keep the gateway they started with.
func (jm *JobManager) SetGateway(g Gateway) {
	jm.mu.Lock()
	jm.mu.gateway = g
	jm.mu.Unlock()
}

func (jm *JobManager) gateway() Gateway {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	return jm.mu.gateway
}

// Start brings up etcd (embedded unless configured), the broker (embedded
// unless configured), the gRPC and HTTP servers and the membership watch.
// With HA it starts as a standby and campaigns in the background: it takes
// over once it leads (see leader.go). ctx bounds start-up only. On error
// everything started is stopped again.
func (jm *JobManager) Start(ctx context.Context) (err error) {
	jm.mu.Lock()
	if jm.mu.started {
		jm.mu.Unlock()
		return errors.New("jobmanager: already started")
	}
	jm.mu.started = true
	jm.mu.Unlock()
	jm.ctx, jm.cancel = context.WithCancel(context.Background())
	// NB: the listeners come first. The embedded etcd and broker take
	// ephemeral ports, and one of them could otherwise take the fixed
	// address of a job manager restarted right after its predecessor was
	// killed (the address is free again, so the kernel may hand it out).
	lis, err := net.Listen("tcp", jm.cfg.Listen)
	if err != nil {
		return fmt.Errorf("jobmanager: listen on %s: %w", jm.cfg.Listen, err)
	}
	var httpLis net.Listener
	if jm.cfg.HTTP != "" {
		if httpLis, err = net.Listen("tcp", jm.cfg.HTTP); err != nil {
			lis.Close()
			return fmt.Errorf("jobmanager: listen on %s (http): %w", jm.cfg.HTTP, err)
		}
	}
	served := false
	defer func() {
		if err != nil {
			if !served {
				lis.Close()
				if httpLis != nil {
					httpLis.Close()
				}
			}
			jm.Close()
		}
	}()

	endpoints := jm.cfg.Etcd
	if len(endpoints) == 0 {
		jm.etcd, err = metastore.StartEmbeddedEtcd(filepath.Join(jm.cfg.DataDir, "etcd"), 0, 0, jm.cfg.Logger)
		if err != nil {
			return err
		}
		endpoints = jm.etcd.Endpoints()
		jm.log.Info("embedded etcd started", zap.Strings("endpoints", endpoints))
	}
	etcdTLS, err := jm.cfg.EtcdTLS.Config()
	if err != nil {
		return fmt.Errorf("jobmanager: %w", err)
	}
	jm.store, err = metastore.Connect(ctx, endpoints, jm.cfg.EtcdPrefix, jm.cfg.Logger, metastore.WithTLS(etcdTLS))
	if err != nil {
		return err
	}
	jm.store.SetStatusCheck(scheduler.CheckTransition)
	if len(jm.cfg.Kafka) == 0 {
		jm.broker, err = connectors.StartEmbeddedBroker(filepath.Join(jm.cfg.DataDir, "kafka"), 0, jm.cfg.Logger)
		if err != nil {
			return err
		}
		jm.log.Info("embedded broker started", zap.Strings("addresses", jm.broker.Addrs()))
	}
	// NB: after the broker, whose address resumed jobs need. With HA the
	// leader does it when it wins.
	if !jm.cfg.HA {
		if err := jm.forgetEarlierRun(ctx); err != nil {
			return err
		}
	}

	served = true
	jm.serveGRPC(lis)
	jm.advertise = netaddr.Advertise(jm.cfg.Advertise, jm.lis.Addr())
	if httpLis != nil {
		jm.serveHTTP(httpLis)
	}
	if jm.cfg.HA {
		jm.wg.Add(1)
		go func() {
			defer jm.wg.Done()
			jm.campaign()
		}()
	} else {
		jm.takeCharge()
	}
	if jm.AnonymousClients() {
		jm.log.Warn("clients are not authenticated: every caller is the anonymous admin", zap.String("address", jm.Addr()), zap.Bool("insecure", jm.cfg.Insecure))
	}
	jm.log.Info("job manager started", zap.String("address", jm.Addr()), zap.String("http", jm.HTTPAddr()), zap.Bool("ha", jm.cfg.HA))
	return nil
}

// takeCharge starts running the cluster: the membership watch, the job
// store's expiry of ended jobs, and the restart of the jobs
// forgetEarlierRun resumed.
func (jm *JobManager) takeCharge() {
	events := jm.store.WatchTaskManagers(jm.ctx)
	jm.wg.Add(1)
	go func() {
		defer jm.wg.Done()
		jm.watchMembers(events)
	}()
	jm.wg.Add(1)
	go func() {
		defer jm.wg.Done()
		jm.expireJobs()
	}()
	jm.restartResumed()
}

func (jm *JobManager) serveGRPC(lis net.Listener) {
	jm.lis = lis
	opts := append(grpcrecover.ServerOptions(jm.log), msgsize.ControlServerOptions()...)
	// NB: members and clients are checked before the leader gate, so a
	// stranger does not learn where the leader is.
	opts = append(opts, jm.members.ServerOptions(memberMethod)...)
	opts = append(opts, jm.clients.ServerOptions(clientMethod)...)
	jm.grpc = grpc.NewServer(append(opts, jm.leaderGate()...)...)
	braidv1.RegisterClientServiceServer(jm.grpc, &clientService{jm: jm})
	braidv1.RegisterClusterServiceServer(jm.grpc, &clusterService{jm: jm})
	jm.health = health.NewServer()
	healthpb.RegisterHealthServer(jm.grpc, jm.health)
	reflection.Register(jm.grpc)
	jm.wg.Add(1)
	go func() {
		defer jm.wg.Done()
		if err := jm.grpc.Serve(lis); err != nil {
			jm.log.Error("grpc server stopped", zap.Error(err))
		}
	}()
}

func (jm *JobManager) serveHTTP(lis net.Listener) {
	jm.httpLis = lis
	jm.httpSrv = &http.Server{Handler: jm.metrics.handler(jm), ReadHeaderTimeout: 10 * time.Second}
	jm.wg.Add(1)
	go func() {
		defer jm.wg.Done()
		if err := jm.httpSrv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			jm.log.Error("http server stopped", zap.Error(err))
		}
	}()
}

// Addr returns the gRPC listen address with its port resolved; "" before
// Start.
func (jm *JobManager) Addr() string {
	if jm.lis == nil {
		return ""
	}
	return jm.lis.Addr().String()
}

// HTTPAddr returns the HTTP listen address, or "" when HTTP is disabled.
func (jm *JobManager) HTTPAddr() string {
	if jm.httpLis == nil {
		return ""
	}
	return jm.httpLis.Addr().String()
}

// Catalog returns the catalog persisted in etcd. Valid after Start.
func (jm *JobManager) Catalog() catalog.Store { return jm.store.Catalog() }

// Brokers returns the bootstrap servers of the cluster's default log.
func (jm *JobManager) Brokers() []string {
	if jm.broker != nil {
		return jm.broker.Addrs()
	}
	return append([]string(nil), jm.cfg.Kafka...)
}

// SlotsSnapshot returns the slots of the live task managers.
func (jm *JobManager) SlotsSnapshot() []scheduler.TaskManagerSlots { return jm.pool.Snapshot() }

// Close cancels the running jobs' bookkeeping, stops the servers and the
// embedded etcd and broker. Without HA, jobs running on task managers are
// canceled and recorded CANCELED; with HA they are left as they are and the
// leadership is resigned, so a standby takes them over at once. It is safe
// to call more than once.
func (jm *JobManager) Close() error {
	jm.mu.Lock()
	if jm.mu.closed {
		jm.mu.Unlock()
		return nil
	}
	jm.mu.closed = true
	if jm.cfg.HA {
		jm.mu.abandoned, jm.mu.leading = true, false
	}
	jobs := jm.liveJobsLocked()
	lead := jm.mu.lead
	jm.mu.Unlock()

	for _, j := range jobs {
		j.finish(StatusCanceled, "job manager shut down")
	}
	if jm.health != nil {
		jm.health.Shutdown()
	}
	if jm.grpc != nil {
		stopGRPC(jm.grpc, 2*time.Second)
	}
	if jm.httpSrv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		jm.httpSrv.Shutdown(ctx)
		cancel()
	}
	if jm.cancel != nil {
		jm.cancel()
	}
	jm.wg.Wait()

	jm.mu.Lock()
	for addr, c := range jm.mu.conns {
		c.Close()
		delete(jm.mu.conns, addr)
	}
	jm.mu.Unlock()

	var errs []error
	if lead != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if err := lead.Resign(ctx); err != nil {
			jm.log.Warn("resign leadership", zap.Error(err))
		}
		cancel()
	}
	if jm.store != nil {
		errs = append(errs, jm.store.Close())
	}
	if jm.broker != nil {
		errs = append(errs, jm.broker.Close())
	}
	if jm.etcd != nil {
		errs = append(errs, jm.etcd.Close())
	}
	return errors.Join(errs...)
}

// stopGRPC stops s gracefully, forcing it after grace (open result streams
// would otherwise hold it forever).
func stopGRPC(s *grpc.Server, grace time.Duration) {
	done := make(chan struct{})
	go func() {
		s.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(grace):
		s.Stop()
		<-done
	}
}

// memberMethod reports whether only cluster members may call method: the
// ClusterService, which task managers call.
func memberMethod(method string) bool {
	return strings.HasPrefix(method, "/braid.v1.ClusterService/")
}

// clientMethod reports whether the callers of method must authenticate as
// clients: the ClientService.
func clientMethod(method string) bool {
	return strings.HasPrefix(method, "/braid.v1.ClientService/")
}

// AnonymousClients reports whether clients go unauthenticated, every caller
// being the anonymous admin (Config.Clients enables no method).
func (jm *JobManager) AnonymousClients() bool { return !jm.clients.Enabled() }

// MemberConfig returns how this job manager's cluster authenticates its
// members, with the cluster secret resolved: what a task manager of the
// cluster is configured with (localcluster gives it to its task managers).
func (jm *JobManager) MemberConfig() memberauth.Config { return jm.cfg.Members }

// taskClient returns a TaskService client for the task manager at addr,
// reusing one connection per address.
func (jm *JobManager) taskClient(addr string) (braidv1.TaskServiceClient, error) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	if c, ok := jm.mu.conns[addr]; ok {
		return braidv1.NewTaskServiceClient(c), nil
	}
	c, err := grpc.NewClient(addr, append(jm.members.DialOptions(), msgsize.ControlDialOptions()...)...)
	if err != nil {
		return nil, fmt.Errorf("jobmanager: connect to task manager at %s: %w", addr, err)
	}
	jm.mu.conns[addr] = c
	return braidv1.NewTaskServiceClient(c), nil
}

// probe reports whether the task manager at addr answers a health check
// within half a second.
func (jm *JobManager) probe(addr string) bool {
	if _, err := jm.taskClient(addr); err != nil {
		return false
	}
	jm.mu.Lock()
	conn := jm.mu.conns[addr]
	jm.mu.Unlock()
	if conn == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(jm.ctx, 500*time.Millisecond)
	defer cancel()
	_, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	return err == nil
}

func (jm *JobManager) dropConn(addr string) {
	jm.mu.Lock()
	c := jm.mu.conns[addr]
	delete(jm.mu.conns, addr)
	jm.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// forgetEarlierRun drops what an earlier job manager left in etcd: its task
// manager registrations (live task managers learn it from their next
// heartbeat, cancel their subtasks and register again; dead ones would
// otherwise hold slots until their leases lapse). Its unfinished jobs are
// resumed from their latest checkpoint when they have one and can restart
// (see resumeJob); the others are recorded FAILED.
func (jm *JobManager) forgetEarlierRun(ctx context.Context) error {
	tms, err := jm.store.ListTaskManagers(ctx)
	if err != nil {
		return err
	}
	for _, tm := range tms {
		if err := jm.store.RemoveTaskManager(ctx, tm.ID); err != nil {
			return err
		}
	}
	jobs, err := jm.store.ListJobs(ctx)
	if err != nil {
		return err
	}
	for _, rec := range jobs {
		if scheduler.JobStatus(rec.Status).Terminal() {
			continue
		}
		msg, err := jm.resumeJob(ctx, rec)
		if err != nil {
			return err
		}
		if msg == "" {
			continue
		}
		if err := jm.store.SetJobStatusAs(ctx, jm.leadership(), rec.ID, StatusFailed, msg, time.Now().UnixMilli()); err != nil {
			jm.log.Warn("marking a job of an earlier run failed", zap.String("job", rec.ID), zap.Error(err))
		}
	}
	return nil
}

// resumeJob takes over a job that an earlier job manager ran: when it takes
// checkpoints and no client waits for its rows, it becomes RESTARTING here
// and is deployed again, from its latest completed checkpoint (or its
// beginning when it has none), once task managers register.
// Otherwise resumeJob returns why it cannot be resumed.
func (jm *JobManager) resumeJob(ctx context.Context, rec *metastore.JobRecord) (string, error) {
	pg, err := loadGraphRetrying(ctx, rec)
	if err != nil {
		return "the job manager restarted and could not read the job's graph: " + err.Error(), nil
	}
	g, err := jobgraph.FromProto(pg)
	if err != nil {
		return "the job manager restarted and could not read the job's graph: " + err.Error(), nil
	}
	for _, v := range g.Vertices {
		if v.HasKind(jobgraph.KindCollect) {
			return "the job manager restarted while the job streamed its rows to a client", nil
		}
	}
	// NB: a job that checkpoints and has no completed checkpoint yet starts
	// again from the beginning: its transactional sinks committed nothing.
	if !checkpointing(g) {
		return "the job manager restarted while the job ran, and the job takes no checkpoints to resume from", nil
	}
	j := newJob(jm, g, nil, nil)
	j.startMs, j.owner = rec.StartUnixMs, rec.Owner
	// NB: attempts of the resumed job count from this job manager's start
	// (in seconds), above any attempt the earlier one deployed, so task
	// managers replace whatever of the job they still run.
	j.mu.attempt = int32(time.Now().Unix() - resumeEpoch)
	j.mu.lc.Resume(j.mu.attempt)
	if rec.Status != StatusRestarting {
		if err := jm.store.SetJobStatusAs(ctx, jm.leadership(), rec.ID, StatusRestarting, "the job manager restarted", 0); err != nil {
			return "", err
		}
	}
	jm.mu.Lock()
	jm.mu.jobs[j.id] = j
	jm.mu.resumed = append(jm.mu.resumed, j)
	jm.mu.Unlock()
	jm.log.Info("resuming job of an earlier run", zap.String("job", j.id))
	return "", nil
}

// resumeEpoch is subtracted from the Unix time that numbers a resumed job's
// attempts, keeping them in an int32.
const resumeEpoch = 1_700_000_000

// restartResumed starts the restart of the jobs resumeJob took over.
func (jm *JobManager) restartResumed() {
	jm.mu.Lock()
	jobs := jm.mu.resumed
	jm.mu.resumed = nil
	jm.mu.Unlock()
	for _, j := range jobs {
		jm.wg.Add(1)
		go func() {
			defer jm.wg.Done()
			j.step(func(lc *scheduler.JobLifecycle) []scheduler.Action {
				return lc.RestartDelayElapsed(lc.NextAttempt(), time.Now())
			})
		}()
	}
}

// Store returns the job manager's etcd store. Valid after Start; it stays
// owned by the job manager.
func (jm *JobManager) Store() *metastore.Store { return jm.store }
