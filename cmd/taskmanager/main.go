// Command taskmanager runs a Braid task manager.
//
//	taskmanager --jobmanager jobmanager:6123 --listen :6124 --slots 4 --data-dir /var/lib/braid --state-cache 256MiB
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"go.uber.org/zap"

	_ "github.com/braidflow/braid/connectors" // registers every source and sink
	"github.com/braidflow/braid/taskmanager"
)

func main() {
	jm := flag.String("jobmanager", "127.0.0.1:6123", "the job manager's gRPC address")
	listen := flag.String("listen", taskmanager.DefaultListen, "listen address of TaskService and DataService")
	advertise := flag.String("advertise", "", "address others reach this task manager at (default: the listen address, hostname for an unspecified host)")
	slots := flag.Int("slots", taskmanager.DefaultSlots, "number of slots")
	dataDir := flag.String("data-dir", "", "directory of local state (default: a temporary directory)")
	stateCache := flag.String("state-cache", "256MiB", "state cache budget, e.g. 256MB, 64MiB, 1GiB")
	id := flag.String("id", "", "task manager id (default: hostname-port)")
	flag.Parse()

	cache, err := parseSize(*stateCache)
	if err != nil {
		fmt.Fprintln(os.Stderr, "taskmanager: --state-cache:", err)
		os.Exit(2)
	}
	log, err := zap.NewProduction()
	if err != nil {
		fmt.Fprintln(os.Stderr, "taskmanager:", err)
		os.Exit(1)
	}
	defer log.Sync()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tm, err := taskmanager.New(taskmanager.Config{
		JobManager: *jm, Listen: *listen, Advertise: *advertise, Slots: *slots,
		DataDir: *dataDir, StateCacheBytes: cache, ID: *id, Logger: log,
	})
	if err == nil {
		err = tm.Start(ctx)
	}
	if err != nil {
		log.Error("task manager did not start", zap.Error(err))
		os.Exit(1)
	}
	fmt.Println("taskmanager listening on", tm.Addr())
	fmt.Println("taskmanager id", tm.ID())
	<-ctx.Done()
	log.Info("shutting down")
	if err := tm.Close(); err != nil {
		log.Error("shutdown", zap.Error(err))
		os.Exit(1)
	}
}

// parseSize parses a byte size: a number with an optional unit, decimal
// (KB, MB, GB) or binary (KiB, MiB, GiB), case-insensitive; "B" or no unit
// is bytes.
func parseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	units := []struct {
		suffix string
		mult   int64
	}{
		{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
		{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
		{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1},
	}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a size like 256MB or 64MiB", s)
	}
	return int64(n * float64(mult)), nil
}
