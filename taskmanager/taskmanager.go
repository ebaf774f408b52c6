package taskmanager

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/braidflow/braid/internal/grpcrecover"
	"github.com/braidflow/braid/internal/leaderhint"
	"github.com/braidflow/braid/internal/memberauth"
	"github.com/braidflow/braid/internal/msgsize"
	"github.com/braidflow/braid/internal/netaddr"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/shuffle"
)

// TaskManager is the worker server. Create it with New, then Start; Close
// stops it. Its methods are safe for concurrent use.
type TaskManager struct {
	cfg     Config
	log     *zap.Logger
	tempDir bool // DataDir was created by New and is removed by Close

	lis      net.Listener
	addr     string // advertised
	id       string
	grpc     *grpc.Server
	health   *health.Server
	exchange *shuffle.Exchange
	// jm reaches the leading job manager; cluster calls it.
	jm      *jmLink
	cluster braidv1.ClusterServiceClient

	// ctx lives from Start to Close.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	registered     chan struct{} // closed after the first registration
	registeredOnce sync.Once

	mu struct {
		sync.Mutex
		jobs    map[string]*runningJob
		started bool
		closing bool
		// incarnation is the job manager's token of the live
		// registration, sent with every later ClusterService call.
		incarnation string
	}
}

// New checks cfg and returns a task manager that is not yet serving.
func New(cfg Config) (*TaskManager, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	tm := &TaskManager{cfg: cfg, log: cfg.Logger.Named("taskmanager"), registered: make(chan struct{})}
	if tm.cfg.DataDir == "" {
		dir, err := os.MkdirTemp("", "braid-tm-")
		if err != nil {
			return nil, fmt.Errorf("taskmanager: create a data directory: %w", err)
		}
		tm.cfg.DataDir, tm.tempDir = dir, true
	}
	tm.mu.jobs = map[string]*runningJob{}
	return tm, nil
}

// Start listens, serves TaskService, DataService and health, and starts
// registering with the job manager in the background (see WaitRegistered).
// ctx bounds start-up only.
func (tm *TaskManager) Start(ctx context.Context) error {
	tm.mu.Lock()
	if tm.mu.started {
		tm.mu.Unlock()
		return errors.New("taskmanager: already started")
	}
	tm.mu.started = true
	tm.mu.Unlock()

	// NB: state left by an earlier run (a crash, SIGKILL) is never trusted
	// or reused: jobs restart from their checkpoints, not from local files.
	if tm.cfg.DataDir != "" {
		if err := os.RemoveAll(filepath.Join(tm.cfg.DataDir, "jobs")); err != nil {
			return fmt.Errorf("taskmanager: removing state of an earlier run: %w", err)
		}
	}

	lis, err := net.Listen("tcp", tm.cfg.Listen)
	if err != nil {
		return fmt.Errorf("taskmanager: listen on %s: %w", tm.cfg.Listen, err)
	}
	tm.lis = lis
	tm.addr = netaddr.Advertise(tm.cfg.Advertise, lis.Addr())
	tm.id = tm.cfg.ID
	if tm.id == "" {
		tm.id = defaultID(tm.addr)
	}
	tm.log = tm.log.With(zap.String("task_manager", tm.id))
	members, err := memberauth.New(tm.cfg.Members)
	if err != nil {
		lis.Close()
		return fmt.Errorf("taskmanager: %w", err)
	}
	dial := append(members.DialOptions(), memberauth.Identify(tm.id, tm.incarnation)...)
	link, err := newJMLink(tm.cfg.JobManager, append(dial, msgsize.ControlDialOptions()...)...)
	if err != nil {
		lis.Close()
		return err
	}
	tm.jm = link
	tm.cluster = braidv1.NewClusterServiceClient(link)
	tm.ctx, tm.cancel = context.WithCancel(context.Background())

	tm.exchange = shuffle.NewExchange(shuffle.ExchangeOptions{Logger: tm.log,
		Pool: shuffle.NewConnPool(append(shuffle.DialOptions(), members.DialOptions()...)...)})
	// NB: the data service's options apply to the whole server: its
	// message size limit (msgsize.Data, which TaskService's
	// msgsize.Control equals) and the fixed flow-control windows that make
	// backpressure reach senders.
	opts := append(grpcrecover.ServerOptions(tm.log), shuffle.ServerOptions()...)
	opts = append(opts, grpc.MaxSendMsgSize(msgsize.Control))
	tm.grpc = grpc.NewServer(append(opts, members.ServerOptions(memberMethod)...)...)
	braidv1.RegisterTaskServiceServer(tm.grpc, &taskService{tm: tm})
	braidv1.RegisterDataServiceServer(tm.grpc, tm.exchange)
	tm.health = health.NewServer()
	healthpb.RegisterHealthServer(tm.grpc, tm.health)
	reflection.Register(tm.grpc)
	tm.wg.Add(2)
	go func() {
		defer tm.wg.Done()
		if err := tm.grpc.Serve(lis); err != nil {
			tm.log.Error("grpc server stopped", zap.Error(err))
		}
	}()
	go func() {
		defer tm.wg.Done()
		tm.membership()
	}()
	tm.log.Info("task manager started", zap.String("address", tm.addr), zap.Int("slots", tm.cfg.Slots), zap.String("job_manager", tm.cfg.JobManager))
	return nil
}

// Addr returns the address the task manager registered, with its port
// resolved; "" before Start.
func (tm *TaskManager) Addr() string { return tm.addr }

// ID returns the task manager's id; "" before Start.
func (tm *TaskManager) ID() string { return tm.id }

// WaitRegistered blocks until the task manager first registered with the
// job manager, or ctx ends.
func (tm *TaskManager) WaitRegistered(ctx context.Context) error {
	select {
	case <-tm.registered:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("taskmanager %s: not registered with the job manager at %s: %w", tm.id, tm.cfg.JobManager, ctx.Err())
	}
}

// membership registers with the job manager, retrying until it answers,
// then heartbeats, registering again whenever the job manager has lost it.
// With several job managers it registers with the leader: a standby's
// answer names it, and otherwise the addresses are tried in turn.
func (tm *TaskManager) membership() {
	backoff := 100 * time.Millisecond
	refusedOnce := false
	for tm.ctx.Err() == nil {
		interval, err := tm.register()
		if err != nil {
			if status.Code(err) == codes.Unauthenticated && !refusedOnce {
				refusedOnce = true
				tm.log.Error("the job manager refused this task manager as a stranger: give it the cluster's secret (--cluster-secret-file, the job manager's <data-dir>/cluster-secret) or member certificates (--tls-cert, --tls-key, --tls-ca)",
					zap.String("job_manager", tm.jm.current()))
			}
			tm.log.Debug("register with the job manager", zap.String("job_manager", tm.jm.current()), zap.Error(err))
			prev := tm.jm.current()
			if leader, _ := leaderhint.Parse(err); tm.jm.failed(err) && leader != "" && leader != prev {
				continue // a standby named another leader: go there at once
			}
			if !tm.sleep(backoff) {
				return
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		tm.registeredOnce.Do(func() { close(tm.registered) })
		tm.heartbeat(interval)
	}
}

// memberMethod reports whether only cluster members may call method: the
// TaskService (the job manager) and the DataService (other task managers).
func memberMethod(method string) bool {
	return strings.HasPrefix(method, "/braid.v1.TaskService/") || strings.HasPrefix(method, "/braid.v1.DataService/")
}

// incarnation is the token of this task manager's live registration.
func (tm *TaskManager) incarnation() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.mu.incarnation
}

func (tm *TaskManager) register() (time.Duration, error) {
	ctx, cancel := context.WithTimeout(tm.ctx, 5*time.Second)
	defer cancel()
	resp, err := tm.cluster.RegisterTaskManager(ctx, &braidv1.RegisterTaskManagerRequest{
		TaskManagerId: tm.id, Address: tm.addr, Slots: int32(tm.cfg.Slots),
	})
	if err != nil {
		return 0, err
	}
	tm.mu.Lock()
	tm.mu.incarnation = resp.Incarnation
	tm.mu.Unlock()
	tm.log.Info("registered with the job manager", zap.String("job_manager", tm.jm.current()))
	interval := time.Duration(resp.HeartbeatIntervalMs) * time.Millisecond
	if interval <= 0 {
		interval = 2 * time.Second
	}
	return interval, nil
}

// heartbeat renews the registration every interval until the job manager
// answers known=false or tm closes. Failed heartbeats are retried at the
// next tick: the lease tolerates a couple of them. With several job
// managers it also ends when the job manager says it no longer leads, or
// has not answered for maxMissedHeartbeats ticks: the task manager then
// cancels its subtasks (the next leader redeploys them from their
// checkpoints) and registers with the leader.
func (tm *TaskManager) heartbeat(interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	missed := 0
	for {
		select {
		case <-tm.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(tm.ctx, interval)
		resp, err := tm.cluster.Heartbeat(ctx, &braidv1.HeartbeatRequest{TaskManagerId: tm.id})
		cancel()
		if err != nil {
			tm.log.Debug("heartbeat", zap.Error(err))
			if _, hint := leaderhint.Parse(err); hint || tm.jm.several() {
				missed++
				if hint || missed >= maxMissedHeartbeats {
					tm.log.Warn("lost the leading job manager; cancelling this task manager's subtasks and registering with the leader",
						zap.String("job_manager", tm.jm.current()), zap.Error(err))
					tm.cancelAllJobs()
					tm.jm.failed(err)
					return
				}
			}
			continue
		}
		missed = 0
		if !resp.Known {
			// The job manager has failed every job that ran here (or it
			// restarted and lost them): their subtasks must stop too.
			tm.log.Warn("the job manager lost this task manager; cancelling its subtasks and registering again")
			tm.cancelAllJobs()
			return
		}
	}
}

// maxMissedHeartbeats is how many heartbeats in a row may fail before a
// task manager with several job managers looks for another leader. The job
// manager's lease of it (three intervals) has lapsed by then.
const maxMissedHeartbeats = 3

func (tm *TaskManager) sleep(d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-tm.ctx.Done():
		return false
	}
}

// Close stops heartbeats and status reports, cancels every running
// subtask, stops the servers and waits for its goroutines. It does not
// tell the job manager: to the cluster a closed task manager is one whose
// lease lapses. It is safe to call more than once.
func (tm *TaskManager) Close() error {
	tm.mu.Lock()
	if tm.mu.closing {
		tm.mu.Unlock()
		return nil
	}
	tm.mu.closing = true
	jobs := make([]*runningJob, 0, len(tm.mu.jobs))
	for _, j := range tm.mu.jobs {
		jobs = append(jobs, j)
	}
	started := tm.mu.started
	tm.mu.Unlock()
	if !started {
		return tm.removeTemp()
	}
	tm.cancel()
	for _, j := range jobs {
		j.cancel()
	}
	tm.health.Shutdown()
	done := make(chan struct{})
	go func() {
		tm.grpc.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		tm.grpc.Stop()
		<-done
	}
	for _, j := range jobs {
		j.wg.Wait()
		tm.exchange.UnregisterJob(j.id)
	}
	tm.wg.Wait()
	err := errors.Join(tm.exchange.Close(), tm.jm.close())
	return errors.Join(err, tm.removeTemp())
}

func (tm *TaskManager) removeTemp() error {
	if tm.tempDir {
		return os.RemoveAll(tm.cfg.DataDir)
	}
	return nil
}

func (tm *TaskManager) closing() bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.mu.closing
}
