package connectors

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// Broker is the embedded Kafka-protocol broker that holds managed tables when
// the cluster has no Kafka of its own: one franz-go kfake broker on loopback
// that persists its log under a data directory.
type Broker struct {
	cluster *kfake.Cluster
	dir     string
	addrs   []string
	logger  *zap.Logger
	kfake   kfakeLogger
	once    sync.Once
}

// embeddedMaxMessageBytes is the embedded broker's largest produce batch:
// the managed sinks' producer batch limit.
const embeddedMaxMessageBytes = 64 << 20

// cleanShutdownFile, in the broker's data directory, says that the last
// broker on the directory was closed (Close) rather than killed. Braid
// writes it, not kfake; StartEmbeddedBroker removes it before serving.
const cleanShutdownFile = "braid-clean-shutdown"

// crashRecoveryTimeout bounds the scan of the log after an unclean
// shutdown (see abortCrashedTxns).
const crashRecoveryTimeout = 10 * time.Minute

// StartEmbeddedBroker starts one broker on 127.0.0.1:port (0 picks a free
// port) that keeps its data in dir, creating dir if needed. A broker started
// again on the same dir serves what the previous one had persisted. Every
// produced batch is synced to disk before it is acknowledged, so a row an
// INSERT reported written survives a crash or power loss of the process.
// Produce batches may be as large as the sinks make them (64 MiB). The
// caller owns the broker and must Close it.
//
// When the previous broker on dir did not Close (the process was killed),
// the transactions it left open are aborted, with abort markers written to
// the log, before the broker serves: see abortCrashedTxns.
func StartEmbeddedBroker(dir string, port int, logger *zap.Logger) (*Broker, error) {
	if logger == nil {
		logger = zap.NewNop()
	}
	if dir == "" {
		return nil, fmt.Errorf("connectors: embedded broker needs a data directory")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("connectors: embedded broker data dir: %w", err)
	}
	clean, err := cleanlyClosed(dir)
	if err != nil {
		return nil, err
	}
	if !clean {
		if err := recoverEmbeddedLog(dir, logger); err != nil {
			return nil, err
		}
	}
	// From here on a crash must be detected at the next start.
	if err := os.Remove(filepath.Join(dir, cleanShutdownFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("connectors: embedded broker data dir %s: %w", dir, err)
	}
	if err := syncDir(dir); err != nil {
		return nil, fmt.Errorf("connectors: embedded broker data dir %s: %w", dir, err)
	}
	kl := kfakeLogger{l: logger.Named("kfake"), errors: new(atomic.Int64)}
	c, err := newKfake(dir, port, kl)
	if err != nil {
		return nil, fmt.Errorf("connectors: start embedded broker on 127.0.0.1:%d with data dir %s: %w", port, dir, err)
	}
	b := &Broker{cluster: c, dir: dir, addrs: c.ListenAddrs(), logger: logger, kfake: kl}
	logger.Info("embedded broker started", zap.Strings("addrs", b.addrs), zap.String("dir", dir))
	return b, nil
}

func newKfake(dir string, port int, logger kfakeLogger) (*kfake.Cluster, error) {
	return kfake.NewCluster(
		kfake.Ports(port),
		kfake.DataDir(dir),
		kfake.ClusterID("braid-embedded"),
		kfake.DefaultNumPartitions(1),
		kfake.SyncWrites(),
		kfake.BrokerConfigs(map[string]string{"message.max.bytes": strconv.Itoa(embeddedMaxMessageBytes)}),
		kfake.WithLogger(logger),
	)
}

// cleanlyClosed reports whether dir is new or was last closed by Close.
func cleanlyClosed(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("connectors: embedded broker data dir: %w", err)
	}
	if len(entries) == 0 {
		return true, nil
	}
	_, err = os.Stat(filepath.Join(dir, cleanShutdownFile))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("connectors: embedded broker data dir: %w", err)
	}
	return true, nil
}

// recoverEmbeddedLog starts a broker on dir on a port of its own, that no
// client knows, aborts the transactions that a crash left open, and closes
// it again, cleanly.
func recoverEmbeddedLog(dir string, logger *zap.Logger) error {
	kl := kfakeLogger{l: logger.Named("kfake"), errors: new(atomic.Int64)}
	c, err := newKfake(dir, 0, kl)
	if err != nil {
		return fmt.Errorf("connectors: recover embedded broker data dir %s: %w", dir, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), crashRecoveryTimeout)
	defer cancel()
	start := time.Now()
	n, err := abortCrashedTxns(ctx, c.ListenAddrs())
	c.Close()
	if err != nil {
		return fmt.Errorf("connectors: recover embedded broker data dir %s after a crash: %w", dir, err)
	}
	logger.Info("embedded broker recovered after an unclean shutdown", zap.String("dir", dir),
		zap.Int("aborted_transactions", n), zap.Duration("took", time.Since(start)))
	return nil
}

// abortCrashedTxns writes an abort marker for every transaction in the
// log of the broker at addrs that has no end marker, and returns how many
// partitions got one.
//
// NB: kfake does not write such markers itself. When it loads a data
// directory that a killed process left, it treats the transactions that
// were open as aborted in memory only ("implicitly abort in-flight
// transactions" in its persist.go): it lists them as aborted in fetch
// responses, but their partitions get no abort marker. A read_committed
// consumer (franz-go's, like Java's) skips a producer's batches from the
// first offset of an aborted transaction until that producer's abort
// marker, so without the marker it also skips every later transaction of
// the same producer id: a restored exactly-once sink fences its
// transactional id, gets the same producer id back, and everything it
// commits afterwards stays invisible to read_committed readers (and its
// recovery waits in vain for its own probe in the marker topic). A later
// crash makes it worse: kfake's next replay pairs the unmarked records
// with that producer's next commit marker and serves them as committed.
// Writing the markers, as a real transaction coordinator would, gives the
// log what both need. It must happen before any client can use the
// producer id again, hence the private broker of recoverEmbeddedLog.
func abortCrashedTxns(ctx context.Context, addrs []string) (int, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()), kgo.KeepControlRecords())
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topics, err := adm.ListTopicsWithInternal(ctx)
	if err != nil {
		return 0, fmt.Errorf("list topics: %w", err)
	}
	if err := topics.Error(); err != nil {
		return 0, fmt.Errorf("list topics: %w", err)
	}
	if len(topics) == 0 {
		return 0, nil
	}
	starts, err := adm.ListStartOffsets(ctx, topics.Names()...)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return 0, fmt.Errorf("list start offsets: %w", err)
	}
	ends, err := adm.ListEndOffsets(ctx, topics.Names()...)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return 0, fmt.Errorf("list end offsets: %w", err)
	}
	type tp struct {
		topic string
		part  int32
	}
	assign := map[string]map[int32]kgo.Offset{}
	want := map[tp]int64{} // last offset still to read
	starts.Each(func(o kadm.ListedOffset) {
		end, ok := ends.Lookup(o.Topic, o.Partition)
		if !ok || end.Offset <= o.Offset {
			return
		}
		if assign[o.Topic] == nil {
			assign[o.Topic] = map[int32]kgo.Offset{}
		}
		assign[o.Topic][o.Partition] = kgo.NewOffset().At(o.Offset)
		want[tp{o.Topic, o.Partition}] = end.Offset - 1
	})
	if len(want) == 0 {
		return 0, nil
	}
	// open holds, per partition, the producers whose last transactional
	// batch has no end marker after it, with the batch's epoch.
	open := map[tp]map[int64]int16{}
	cl.AddConsumePartitions(assign)
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("read the log: %w", err)
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			ferr = fmt.Errorf("read %s[%d]: %w", t, p, err)
		})
		if ferr != nil {
			return 0, ferr
		}
		fs.EachRecord(func(r *kgo.Record) {
			k := tp{r.Topic, r.Partition}
			switch {
			case r.Attrs.IsControl():
				delete(open[k], r.ProducerID)
			case r.Attrs.IsTransactional():
				if open[k] == nil {
					open[k] = map[int64]int16{}
				}
				open[k][r.ProducerID] = r.ProducerEpoch
			}
			if last, ok := want[k]; ok && r.Offset >= last {
				delete(want, k)
			}
		})
	}
	// One marker per producer, for every partition it left open.
	byPID := map[int64]*kmsg.WriteTxnMarkersRequestMarker{}
	n := 0
	for k, pids := range open {
		for pid, epoch := range pids {
			m := byPID[pid]
			if m == nil {
				mk := kmsg.NewWriteTxnMarkersRequestMarker()
				m = &mk
				m.ProducerID, m.ProducerEpoch, m.Committed = pid, epoch, false
				byPID[pid] = m
			}
			mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
			mt.Topic = k.topic
			mt.Partitions = []int32{k.part}
			m.Topics = append(m.Topics, mt)
			n++
		}
	}
	if n == 0 {
		return 0, nil
	}
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	for _, m := range byPID {
		req.Markers = append(req.Markers, *m)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return 0, fmt.Errorf("write abort markers: %w", err)
	}
	for _, m := range resp.Markers {
		for _, t := range m.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return 0, fmt.Errorf("write abort marker of producer %d to %s[%d]: %w", m.ProducerID, t.Topic, p.Partition, err)
				}
			}
		}
	}
	return n, nil
}

// syncDir makes the creation and removal of files in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Addrs returns the broker's bootstrap addresses ("127.0.0.1:port").
func (b *Broker) Addrs() []string { return append([]string(nil), b.addrs...) }

// Close stops the broker after writing its state to the data directory. It is
// idempotent.
func (b *Broker) Close() error {
	var err error
	b.once.Do(func() {
		before := b.kfake.errors.Load()
		b.cluster.Close()
		// kfake does not return its persistence errors, it logs them: only
		// a close without any counts as clean.
		if b.kfake.errors.Load() == before {
			err = markCleanShutdown(b.dir)
		}
		b.logger.Info("embedded broker stopped", zap.Strings("addrs", b.addrs))
	})
	return err
}

// markCleanShutdown writes cleanShutdownFile into dir, durably.
func markCleanShutdown(dir string) error {
	f, err := os.Create(filepath.Join(dir, cleanShutdownFile))
	if err == nil {
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("connectors: embedded broker data dir %s: %w", dir, err)
	}
	return nil
}

// kfakeLogger sends kfake's messages to zap; kfake's info and debug chatter
// is per request, so only warnings and errors pass. It counts the errors.
type kfakeLogger struct {
	l      *zap.Logger
	errors *atomic.Int64
}

func (k kfakeLogger) Logf(level kfake.LogLevel, format string, args ...any) {
	switch level {
	case kfake.LogLevelError:
		k.errors.Add(1)
		k.l.Error(fmt.Sprintf(format, args...))
	case kfake.LogLevelWarn:
		k.l.Warn(fmt.Sprintf(format, args...))
	}
}
