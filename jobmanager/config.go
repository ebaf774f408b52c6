package jobmanager

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/braidflow/braid/connectors"
	"github.com/braidflow/braid/internal/clientauth"
	"github.com/braidflow/braid/internal/memberauth"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/metastore"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
)

// Defaults of Config.
const (
	DefaultListen           = ":6123"
	DefaultHTTP             = ":8081"
	DefaultHeartbeatTimeout = 6 * time.Second
)

// Gateway serves the SQL part of ClientService: sessions and script
// execution. The job manager delegates these three RPCs to it and serves the
// rest (ListJobs, DescribeJob, CancelJob) itself.
type Gateway interface {
	OpenSession(context.Context, *braidv1.OpenSessionRequest) (*braidv1.OpenSessionResponse, error)
	CloseSession(context.Context, *braidv1.CloseSessionRequest) (*braidv1.CloseSessionResponse, error)
	Execute(*braidv1.ExecuteRequest, grpc.ServerStreamingServer[braidv1.ExecuteResponse]) error
}

// Config configures a JobManager. The zero value of each field selects its
// default.
type Config struct {
	// Listen is the gRPC address; DefaultListen when empty. ":0" or
	// "127.0.0.1:0" picks a free port (see JobManager.Addr).
	Listen string
	// HTTP is the address of /healthz and /metrics; "" disables the HTTP
	// server. The jobmanager command defaults it to DefaultHTTP.
	HTTP string
	// DataDir holds the embedded etcd and broker data, when those run.
	DataDir string
	// Etcd lists external etcd endpoints; when empty the job manager runs an
	// embedded etcd server in DataDir/etcd on free ports.
	Etcd []string
	// EtcdTLS names the PEM files of a TLS connection to the external
	// etcd (--etcd-cert, --etcd-key, --etcd-ca); empty: plain text. It
	// needs Etcd.
	EtcdTLS metastore.TLSFiles
	// EtcdPrefix is the key prefix in etcd; "/braid" when empty.
	EtcdPrefix string
	// Kafka lists the bootstrap servers of the cluster's default log; when
	// empty the job manager runs an embedded broker in DataDir/kafka.
	Kafka []string
	// Logger is the server's logger; a no-op logger when nil.
	Logger *zap.Logger
	// Gateway serves OpenSession, CloseSession and Execute; nil installs the
	// SQL gateway (NewSQLGateway). See also JobManager.SetGateway.
	Gateway Gateway
	// HeartbeatTimeout is the task managers' lease TTL: a task manager that
	// does not heartbeat for this long is lost. DefaultHeartbeatTimeout when
	// zero. etcd leases have whole-second TTLs, so it is rounded up.
	HeartbeatTimeout time.Duration
	// Checkpoint is the cluster's default checkpointing configuration, which
	// a session's execution.checkpointing.* options override; nil means
	// Flink's defaults (checkpoints disabled).
	Checkpoint *jobgraph.CheckpointConfig
	// CheckpointOptions give the cluster's defaults as job options
	// (execution.checkpointing.* and state.checkpoints.num-retained, with
	// Flink's values, as the jobmanager command's flags carry them); New
	// resolves them over Checkpoint and refuses a bad one.
	CheckpointOptions map[string]string
	// CheckpointDir is where jobs keep their checkpoints unless they set
	// state.checkpoints.dir: a directory or file:// URI, or
	// s3://bucket/prefix?endpoint=...&region=.... Empty means
	// DataDir/checkpoints.
	CheckpointDir string
	// HA makes this job manager one of several sharing Etcd and Kafka: it
	// campaigns for leadership and runs the cluster only while it leads,
	// standing by otherwise (see leader.go). It requires Etcd and Kafka.
	HA bool
	// LeaderLease is the TTL of the leader's lease (HA): a leader that stops
	// renewing it is replaced about this long later. DefaultLeaderLease when
	// zero; rounded up to whole seconds.
	LeaderLease time.Duration
	// Advertise is the address others reach this job manager at, which it
	// campaigns with (HA) and standbys hand to clients and task managers.
	// Empty means the listen address, with an unspecified host replaced by
	// the hostname.
	Advertise string
	// ResultBufferBytes bounds the results of a SELECT that the job manager
	// holds back until a checkpoint covers them (when the job takes
	// checkpoints); a job that exceeds it fails. DefaultResultBufferBytes
	// when zero.
	ResultBufferBytes int64
	// Members says how the cluster's members authenticate each other:
	// mutual TLS when its certificate files are set, and/or the cluster
	// secret. Without certificates and without Members.Secret, the secret
	// is read from ClusterSecretFile, which is created (with a random
	// secret) on first start; by default <DataDir>/cluster-secret. Task
	// managers must be given the same secret (see ClusterSecret).
	Members memberauth.Config
	// Allow, when set, limits the connectors users may create tables with
	// and the hosts those may reach (--allowed-connectors,
	// --allowed-hosts); nil allows everything.
	Allow *connectors.Allowlist
	// JobStore says how long ended jobs are kept (jobstore.* options).
	JobStore JobStoreConfig
	// Clients says how the callers of ClientService authenticate: with the
	// tokens of a tokens file and/or JSON Web Tokens of an issuer (see
	// package internal/clientauth). When it enables neither, every caller
	// is the anonymous admin, which New allows only when Listen is a
	// loopback address or Insecure is set.
	Clients clientauth.Config
	// Insecure allows the anonymous admin on a listen address other
	// machines can reach (--insecure).
	Insecure bool
	// ClusterSecretFile holds the cluster secret; see Members. With HA
	// every job manager must read the same secret, so it must be given
	// (or certificates) rather than created in each data directory.
	ClusterSecretFile string
	// Limits bound sessions, planning and the wait for slots (limits.go).
	Limits Limits
}

func (c *Config) setDefaults() error {
	if err := c.Limits.setDefaults(); err != nil {
		return err
	}
	if len(c.CheckpointOptions) > 0 {
		cp, err := jobgraph.ResolveCheckpointing(c.CheckpointOptions, c.Checkpoint)
		if err != nil {
			return fmt.Errorf("jobmanager: checkpoint defaults: %w", err)
		}
		c.Checkpoint = &cp
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.EtcdPrefix == "" {
		c.EtcdPrefix = "/braid"
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.HeartbeatTimeout <= 0 {
		c.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if c.LeaderLease <= 0 {
		c.LeaderLease = DefaultLeaderLease
	}
	c.JobStore.setDefaults()
	if !c.EtcdTLS.Empty() && len(c.Etcd) == 0 {
		return errors.New("jobmanager: etcd TLS files (--etcd-cert, --etcd-key, --etcd-ca) are for an external etcd (--etcd host:port,...); the embedded etcd serves loopback in plain text")
	}
	if c.HA && len(c.Etcd) == 0 {
		return errors.New("jobmanager: high availability (--ha) needs an external etcd (--etcd host:port,...) shared by every job manager: an embedded etcd dies with its job manager")
	}
	if c.HA && len(c.Kafka) == 0 {
		return errors.New("jobmanager: high availability (--ha) needs an external Kafka (--kafka host:port,...) as the cluster's default log: managed tables in one job manager's embedded broker would be lost when another takes over")
	}
	if err := c.checkClients(); err != nil {
		return err
	}
	if c.DataDir == "" && (len(c.Etcd) == 0 || len(c.Kafka) == 0) {
		return errors.New("jobmanager: a data directory is needed for the embedded etcd and broker (set --data-dir, or --etcd and --kafka)")
	}
	return c.resolveSecret()
}

// resolveSecret reads or creates the cluster secret when the members
// authenticate with one (no certificates, no secret given).
func (c *Config) resolveSecret() error {
	tls := c.Members.CertFile != "" || c.Members.KeyFile != "" || c.Members.CAFile != ""
	if c.Members.Secret != "" || (tls && c.ClusterSecretFile == "") {
		return nil
	}
	path := c.ClusterSecretFile
	if path == "" {
		if c.HA {
			return errors.New("jobmanager: high availability (--ha) needs a cluster secret shared by every job manager (--cluster-secret-file) or member certificates (--tls-cert, --tls-key, --tls-ca)")
		}
		if c.DataDir == "" {
			return errors.New("jobmanager: the cluster secret needs a data directory to live in (set --data-dir or --cluster-secret-file)")
		}
		path = filepath.Join(c.DataDir, ClusterSecretName)
		secret, err := memberauth.LoadOrCreateSecret(path)
		if err != nil {
			return fmt.Errorf("jobmanager: %w", err)
		}
		c.Members.Secret = secret
		return nil
	}
	secret, err := memberauth.ReadSecret(path)
	if err != nil {
		return fmt.Errorf("jobmanager: %w", err)
	}
	c.Members.Secret = secret
	return nil
}

// checkClients refuses the anonymous admin (no client authentication) on
// an address other machines can reach, unless told Insecure.
func (c *Config) checkClients() error {
	if c.Clients.Enabled() || c.Insecure || loopback(c.Listen) {
		return nil
	}
	port := "6123"
	if _, p, err := net.SplitHostPort(c.Listen); err == nil {
		port = p
	}
	return fmt.Errorf("jobmanager: clients are not authenticated and %s is not a loopback address: anyone who reaches it could run and cancel jobs. "+
		"Give --client-tokens-file and/or --jwt-issuer with --jwt-jwks-file, listen on loopback (--listen %s), or pass --insecure", c.Listen, net.JoinHostPort("127.0.0.1", port))
}

// loopback reports whether the listen address addr accepts connections
// from this machine only: its host is localhost or a loopback IP
// (127.0.0.0/8, ::1). An empty host listens on every interface.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ClusterSecretName is the file of the cluster secret in a job manager's
// data directory.
const ClusterSecretName = "cluster-secret"
