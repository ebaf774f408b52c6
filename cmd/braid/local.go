package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/braidflow/braid/localcluster"
)

// runLocal is "braid local": a cluster on loopback until Ctrl-C.
func runLocal(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("braid local", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tms := fs.Int("task-managers", 2, "number of task managers")
	slots := fs.Int("slots", 2, "slots per task manager")
	dataDir := fs.String("data-dir", "", "directory for state, checkpoints and the embedded etcd and broker (default: a temporary directory, removed on exit)")
	verbose := fs.Bool("verbose", false, "log at info level (default: warnings and errors)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "braid local: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	level := zapcore.WarnLevel
	if *verbose {
		level = zapcore.InfoLevel
	}
	logger := newLogger(stderr, level)
	defer logger.Sync()

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	c, err := localcluster.Start(ctx, localcluster.Options{
		TaskManagers: *tms, Slots: *slots, DataDir: *dataDir, Logger: logger,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Braid local cluster: job manager at %s (%d task managers x %d slots)\n", c.Endpoint(), *tms, *slots)
	fmt.Fprintf(stdout, "Connect with: braid sql --endpoint %s   (Ctrl-C stops the cluster)\n", c.Endpoint())
	if b := c.JobManager().Brokers(); len(b) > 0 {
		fmt.Fprintf(stdout, "Kafka-protocol broker at %s: use it as 'properties.bootstrap.servers' of kafka tables (CREATE TABLE creates their topics)\n", strings.Join(b, ","))
	}
	if c.JobManager().AnonymousClients() {
		fmt.Fprintln(stdout, "Clients are not authenticated: every caller is admin (the job manager listens on loopback only).")
	}
	<-ctx.Done()
	fmt.Fprintln(stdout, "Stopping the local cluster.")
	return c.Close()
}

// startLocal starts the quiet two-task-manager cluster of "braid sql
// --local". The caller closes it.
func startLocal(ctx context.Context) (*localcluster.Cluster, error) {
	return localcluster.Start(ctx, localcluster.Options{TaskManagers: 2, Logger: zap.NewNop()})
}

// newLogger logs to w as console text at level and above.
func newLogger(w io.Writer, level zapcore.Level) *zap.Logger {
	enc := zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig())
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(w), level))
}
