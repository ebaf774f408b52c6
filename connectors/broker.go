package connectors

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kfake"
	"go.uber.org/zap"
)

// Broker is the embedded Kafka-protocol broker that holds managed tables when
// the cluster has no Kafka of its own: one franz-go kfake broker on loopback
// that persists its log under a data directory.
type Broker struct {
	cluster *kfake.Cluster
	addrs   []string
	logger  *zap.Logger
	once    sync.Once
}

// embeddedMaxMessageBytes is the embedded broker's largest produce batch:
// the managed sinks' producer batch limit.
const embeddedMaxMessageBytes = 64 << 20

// StartEmbeddedBroker starts one broker on 127.0.0.1:port (0 picks a free
// port) that keeps its data in dir, creating dir if needed. A broker started
// again on the same dir serves what the previous one had persisted. Every
// produced batch is synced to disk before it is acknowledged, so a row an
// INSERT reported written survives a crash or power loss of the process.
// Produce batches may be as large as the sinks make them (64 MiB). The
// caller owns the broker and must Close it.
func StartEmbeddedBroker(dir string, port int, logger *zap.Logger) (*Broker, error) {
	if logger == nil {
		logger = zap.NewNop()
	}
	if dir == "" {
		return nil, fmt.Errorf("connectors: embedded broker needs a data directory")
	}
	c, err := kfake.NewCluster(
		kfake.Ports(port),
		kfake.DataDir(dir),
		kfake.ClusterID("braid-embedded"),
		kfake.DefaultNumPartitions(1),
		kfake.SyncWrites(),
		kfake.BrokerConfigs(map[string]string{"message.max.bytes": strconv.Itoa(embeddedMaxMessageBytes)}),
		kfake.WithLogger(kfakeLogger{logger.Named("kfake")}),
	)
	if err != nil {
		return nil, fmt.Errorf("connectors: start embedded broker on 127.0.0.1:%d with data dir %s: %w", port, dir, err)
	}
	b := &Broker{cluster: c, addrs: c.ListenAddrs(), logger: logger}
	logger.Info("embedded broker started", zap.Strings("addrs", b.addrs), zap.String("dir", dir))
	return b, nil
}

// Addrs returns the broker's bootstrap addresses ("127.0.0.1:port").
func (b *Broker) Addrs() []string { return append([]string(nil), b.addrs...) }

// Close stops the broker after writing its state to the data directory. It is
// idempotent.
func (b *Broker) Close() error {
	b.once.Do(func() {
		b.cluster.Close()
		b.logger.Info("embedded broker stopped", zap.Strings("addrs", b.addrs))
	})
	return nil
}

// kfakeLogger sends kfake's messages to zap; kfake's info and debug chatter
// is per request, so only warnings and errors pass.
type kfakeLogger struct{ l *zap.Logger }

func (k kfakeLogger) Logf(level kfake.LogLevel, format string, args ...any) {
	switch level {
	case kfake.LogLevelError:
		k.l.Error(fmt.Sprintf(format, args...))
	case kfake.LogLevelWarn:
		k.l.Warn(fmt.Sprintf(format, args...))
	}
}
