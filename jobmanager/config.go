package jobmanager

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"

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
	Checkpoint *braidv1.CheckpointConfig
	// CheckpointDir is where jobs keep their checkpoints unless they set
	// state.checkpoints.dir: a directory or file:// URI, or
	// s3://bucket/prefix?endpoint=...&region=.... Empty means
	// DataDir/checkpoints.
	CheckpointDir string
	// ResultBufferBytes bounds the results of a SELECT that the job manager
	// holds back until a checkpoint covers them (when the job takes
	// checkpoints); a job that exceeds it fails. DefaultResultBufferBytes
	// when zero.
	ResultBufferBytes int64
}

func (c *Config) setDefaults() error {
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
	if c.DataDir == "" && (len(c.Etcd) == 0 || len(c.Kafka) == 0) {
		return errors.New("jobmanager: a data directory is needed for the embedded etcd and broker (set --data-dir, or --etcd and --kafka)")
	}
	return nil
}
