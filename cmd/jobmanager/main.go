// Command jobmanager runs a Braid job manager.
//
//	jobmanager --listen :6123 --http :8081 --data-dir /var/lib/braid --etcd etcd:2379 --kafka kafka:9092
//
// Without --etcd it runs an embedded etcd, and without --kafka an embedded
// Kafka-protocol broker, both under --data-dir.
//
// With --ha several job managers share one etcd and one Kafka (both
// required): one leads, the others stand by and take over when its lease
// (--leader-lease) lapses. A leader that loses its leadership exits with
// status 3, to be started again as a standby.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/braidflow/braid/jobmanager"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
)

func main() {
	listen := flag.String("listen", jobmanager.DefaultListen, "gRPC listen address")
	httpAddr := flag.String("http", jobmanager.DefaultHTTP, `HTTP address of /healthz and /metrics ("" disables)`)
	dataDir := flag.String("data-dir", "braid-data", "directory of the embedded etcd and broker")
	etcd := flag.String("etcd", "", "comma-separated etcd endpoints (empty: run an embedded etcd)")
	kafka := flag.String("kafka", "", "comma-separated Kafka bootstrap servers (empty: run an embedded broker)")
	heartbeat := flag.Duration("heartbeat-timeout", jobmanager.DefaultHeartbeatTimeout, "a task manager silent this long is lost")
	cpInterval := flag.Duration("checkpoint-interval", 0, "default execution.checkpointing.interval of jobs (0: jobs take no checkpoints unless they set it)")
	cpTimeout := flag.Duration("checkpoint-timeout", 10*time.Minute, "default execution.checkpointing.timeout")
	cpMinPause := flag.Duration("checkpoint-min-pause", 0, "default execution.checkpointing.min-pause")
	cpConcurrent := flag.Int("checkpoint-max-concurrent", 1, "default execution.checkpointing.max-concurrent-checkpoints")
	cpTolerable := flag.Int("checkpoint-tolerable-failures", 0, "default execution.checkpointing.tolerable-failed-checkpoints")
	cpMode := flag.String("checkpoint-mode", "EXACTLY_ONCE", "default execution.checkpointing.mode: EXACTLY_ONCE or AT_LEAST_ONCE")
	cpRetained := flag.Int("checkpoints-retained", 1, "default state.checkpoints.num-retained")
	ha := flag.Bool("ha", false, "high availability: campaign for leadership with the other job managers on --etcd (requires --etcd and --kafka)")
	leaderLease := flag.Duration("leader-lease", jobmanager.DefaultLeaderLease, "with --ha, a leader silent this long is replaced (whole seconds)")
	advertise := flag.String("advertise", "", "address task managers and clients reach this job manager at (default: the listen address, hostname for an unspecified host)")
	checkpointDir := flag.String("checkpoint-dir", "", "default checkpoint storage: a directory, file:// or s3://bucket/prefix?endpoint=...&region=... URI (empty: <data-dir>/checkpoints)")
	flag.Parse()

	if *cpMode != "EXACTLY_ONCE" && *cpMode != "AT_LEAST_ONCE" {
		fmt.Fprintf(os.Stderr, "jobmanager: --checkpoint-mode %q: want EXACTLY_ONCE or AT_LEAST_ONCE\n", *cpMode)
		os.Exit(2)
	}
	cpDefaults := &braidv1.CheckpointConfig{
		IntervalMs: cpInterval.Milliseconds(), TimeoutMs: cpTimeout.Milliseconds(), MinPauseMs: cpMinPause.Milliseconds(),
		MaxConcurrent: int32(*cpConcurrent), TolerableFailed: int32(*cpTolerable), AtLeastOnce: *cpMode == "AT_LEAST_ONCE",
		NumRetained: int32(*cpRetained),
	}

	log, err := zap.NewProduction()
	if err != nil {
		fmt.Fprintln(os.Stderr, "jobmanager:", err)
		os.Exit(1)
	}
	defer log.Sync()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	jm, err := jobmanager.New(jobmanager.Config{
		Listen: *listen, HTTP: *httpAddr, DataDir: *dataDir,
		Etcd: splitList(*etcd), Kafka: splitList(*kafka),
		Logger: log, HeartbeatTimeout: *heartbeat, CheckpointDir: *checkpointDir, Checkpoint: cpDefaults,
		HA: *ha, LeaderLease: *leaderLease, Advertise: *advertise,
	})
	if err == nil {
		jm.SetGateway(jobmanager.NewSQLGateway(jm))
		startCtx, cancel := context.WithTimeout(ctx, time.Minute)
		err = jm.Start(startCtx)
		cancel()
	}
	if err != nil {
		log.Error("job manager did not start", zap.Error(err))
		os.Exit(1)
	}
	fmt.Println("jobmanager listening on", jm.Addr())
	if a := jm.HTTPAddr(); a != "" {
		fmt.Println("jobmanager http on", a)
	}
	fmt.Println("jobmanager brokers", strings.Join(jm.Brokers(), ","))
	code := 0
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case <-jm.Deposed():
		log.Error("lost the leadership; exiting so that this job manager is started again as a standby")
		code = 3
	}
	if err := jm.Close(); err != nil {
		log.Error("shutdown", zap.Error(err))
		code = max(code, 1)
	}
	if code != 0 {
		log.Sync()
		os.Exit(code)
	}
}

// splitList splits a comma-separated flag, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
