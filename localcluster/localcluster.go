// Package localcluster runs a whole Braid cluster in one process: an
// embedded etcd, an embedded Kafka-protocol broker, one job manager and N
// task managers, all on loopback with ports the kernel picks. It is what
// `braid local` and the end-to-end tests start.
//
//	c, err := localcluster.Start(ctx, localcluster.Options{TaskManagers: 2})
//	if err != nil { ... }
//	defer c.Close()
//	conn, err := grpc.NewClient(c.Endpoint(), ...)
package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/braidflow/braid/internal/clientauth"
	"github.com/braidflow/braid/internal/memberauth"
	"github.com/braidflow/braid/jobmanager"
	"github.com/braidflow/braid/taskmanager"
)

// DefaultGateway, when set, builds the SQL gateway that Start installs on
// the job manager when Options.Gateway is nil. The gateway package sets it
// from an init function, so importing that package is enough.
var DefaultGateway func(*jobmanager.JobManager) jobmanager.Gateway

// Options configure Start. Zero values select defaults.
type Options struct {
	// TaskManagers is the number of task managers; 2 when zero.
	TaskManagers int
	// Slots is each task manager's slot count; 2 when zero.
	Slots int
	// DataDir holds everything the cluster writes; a temporary directory,
	// removed by Close, when empty.
	DataDir string
	// StateCacheBytes is each task manager's state cache budget.
	StateCacheBytes int64
	// HTTP is the job manager's HTTP address; "" disables it.
	HTTP string
	// HeartbeatTimeout is the task managers' lease; the job manager's
	// default when zero.
	HeartbeatTimeout time.Duration
	Logger           *zap.Logger
	// Gateway serves SQL sessions; DefaultGateway's when nil.
	Gateway jobmanager.Gateway
	// Members says how the job manager and task managers authenticate
	// each other; zero: with a cluster secret the job manager creates.
	Members memberauth.Config
	// Clients says how clients authenticate; zero: they do not, and every
	// caller is the anonymous admin (the job manager listens on loopback).
	Clients clientauth.Config
	// Limits bound the job manager's sessions, planning and slot waits;
	// zero fields select their defaults.
	Limits jobmanager.Limits
	// JobStore says how long the job manager keeps ended jobs; its
	// defaults when zero.
	JobStore jobmanager.JobStoreConfig
}

// Cluster is a running local cluster.
type Cluster struct {
	dir     string
	tempDir bool
	jm      *jobmanager.JobManager
	tms     []*taskmanager.TaskManager
}

// Start brings up the cluster and returns once every task manager is
// registered with the job manager, or fails (stopping what it started)
// when ctx ends first.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	if opts.TaskManagers <= 0 {
		opts.TaskManagers = 2
	}
	if opts.Slots <= 0 {
		opts.Slots = 2
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	c = &Cluster{dir: opts.DataDir}
	if c.dir == "" {
		if c.dir, err = os.MkdirTemp("", "braid-local-"); err != nil {
			return nil, fmt.Errorf("localcluster: create a data directory: %w", err)
		}
		c.tempDir = true
	}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()

	c.jm, err = jobmanager.New(jobmanager.Config{
		Listen: "127.0.0.1:0", HTTP: opts.HTTP, DataDir: filepath.Join(c.dir, "jobmanager"),
		Logger: opts.Logger, Gateway: opts.Gateway, HeartbeatTimeout: opts.HeartbeatTimeout, Members: opts.Members,
		Clients:  opts.Clients,
		Limits:   opts.Limits,
		JobStore: opts.JobStore,
	})
	if err != nil {
		return nil, err
	}
	if opts.Gateway == nil && DefaultGateway != nil {
		c.jm.SetGateway(DefaultGateway(c.jm))
	}
	if err := c.jm.Start(ctx); err != nil {
		return nil, err
	}
	for i := range opts.TaskManagers {
		tm, err := c.AddTaskManager(ctx, taskmanager.Config{
			Slots: opts.Slots, StateCacheBytes: opts.StateCacheBytes, ID: fmt.Sprintf("tm-%d", i), Logger: opts.Logger,
		})
		if err != nil {
			return nil, err
		}
		_ = tm
	}
	for _, tm := range c.tms {
		if err := tm.WaitRegistered(ctx); err != nil {
			return nil, err
		}
	}
	return c, c.waitSlots(ctx)
}

// AddTaskManager starts one more task manager with cfg, filling in the job
// manager's address, a loopback listen address, a data directory and the
// cluster's member credentials when they are empty. It does not wait for the registration.
func (c *Cluster) AddTaskManager(ctx context.Context, cfg taskmanager.Config) (*taskmanager.TaskManager, error) {
	if cfg.JobManager == "" {
		cfg.JobManager = c.jm.Addr()
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.DataDir == "" {
		cfg.DataDir = filepath.Join(c.dir, fmt.Sprintf("taskmanager-%d", len(c.tms)))
	}
	if cfg.Members == (memberauth.Config{}) {
		cfg.Members = c.jm.MemberConfig()
	}
	tm, err := taskmanager.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := tm.Start(ctx); err != nil {
		return nil, err
	}
	c.tms = append(c.tms, tm)
	return tm, nil
}

// waitSlots waits until the job manager's pool shows every task manager.
func (c *Cluster) waitSlots(ctx context.Context) error {
	for {
		if len(c.jm.SlotsSnapshot()) >= len(c.tms) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("localcluster: task managers not registered: %w", ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Endpoint returns the job manager's gRPC address (host:port).
func (c *Cluster) Endpoint() string { return c.jm.Addr() }

// JobManager returns the cluster's job manager.
func (c *Cluster) JobManager() *jobmanager.JobManager { return c.jm }

// TaskManagers returns the cluster's task managers, in start order.
func (c *Cluster) TaskManagers() []*taskmanager.TaskManager {
	return append([]*taskmanager.TaskManager(nil), c.tms...)
}

// Close stops the task managers, then the job manager (with its etcd and
// broker), and removes a temporary data directory.
func (c *Cluster) Close() error {
	var errs []error
	for _, tm := range c.tms {
		errs = append(errs, tm.Close())
	}
	if c.jm != nil {
		errs = append(errs, c.jm.Close())
	}
	if c.tempDir {
		errs = append(errs, os.RemoveAll(c.dir))
	}
	return errors.Join(errs...)
}
