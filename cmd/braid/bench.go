package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/braidflow/braid/bench"
)

const benchUsage = `Usage: braid bench <benchmark> [flags]

Benchmarks:
  local-exchange      1 producer hash-partitioning into 4 local channels (--rows)
  remote-shuffle      the same over loopback gRPC between two exchanges (--rows)
  join                inner join probing a hot key set in the state cache (--rows, --keys, --state-cache)
  join-spill          inner join of --keys distinct keys per side spilling to Pebble (--keys, --state-cache)
  all                 the four above
  cluster-join-spill  the spilling join as SQL on a jobmanager and a taskmanager
                      process (--keys, --state-cache); binaries from $BRAID_BIN or
                      beside this executable

Checkpointing (separate jobmanager and taskmanager processes, as cluster-join-spill):
  checkpoint-size     a join's growing state checkpointed every --interval (10s)
                      until a checkpoint holds --state-gb (1): duration, state and
                      uploaded bytes of the first and the later checkpoints
  checkpoint-overhead rows/s of a join (--keys per side) and a GROUP BY (--rows)
                      without checkpoints and with one every --interval (10s)
  recovery            a 1s-checkpointing job on 2 task managers: --kills SIGKILLs
                      of a task manager (5), then --jm-restarts of the job manager
                      (1); time to RUNNING and to the next checkpoint

Each result is one line: name, rows, seconds, rows/s, rows/s per core
(rows/s divided by GOMAXPROCS), then benchmark-specific figures.

Flags:
`

// runBench is "braid bench": it runs the named benchmarks of package bench
// and prints one line per result.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("braid bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, benchUsage)
		fs.PrintDefaults()
	}
	rows := fs.Int64("rows", 0, "rows to send or probe (default: per benchmark)")
	keys := fs.Int("keys", 0, "hot keys (join) or distinct keys per side (join-spill, cluster-join-spill) (default: per benchmark)")
	stateCache := fs.String("state-cache", "", "state cache budget, e.g. 64MB or 256MiB (default: 256MiB for join, 64MB for the spilling joins)")
	count := fs.Int("count", 1, "run each benchmark this many times")
	verbose := fs.Bool("verbose", false, "print the server processes' output (the cluster benchmarks)")
	stateGB := fs.Float64("state-gb", 0, "checkpoint-size: stop at a checkpoint of this much state, in GiB (default 1)")
	interval := fs.Duration("interval", 0, "checkpoint-size, checkpoint-overhead: the checkpoint interval (default 10s)")
	kills := fs.Int("kills", 0, "recovery: task manager SIGKILLs (default 5)")
	jmRestarts := fs.Int("jm-restarts", -1, "recovery: job manager SIGKILLs and restarts after them (default 1)")
	var name string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if name == "" && fs.NArg() > 0 {
		name = fs.Arg(0)
	} else if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "braid bench: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	var cacheBytes int64
	if *stateCache != "" {
		n, err := bench.ParseSize(*stateCache)
		if err != nil {
			fmt.Fprintf(stderr, "braid bench: --state-cache: %v\n", err)
			return errUsage
		}
		cacheBytes = n
	}
	exchange := bench.ExchangeOptions{Rows: *rows}
	join := bench.JoinOptions{Rows: *rows, Keys: *keys, CacheBytes: cacheBytes}
	cluster := bench.ClusterOptions{Keys: *keys, StateCache: *stateCache}
	size := bench.CheckpointSizeOptions{StateBytes: int64(*stateGB * (1 << 30)), Interval: *interval, StateCache: *stateCache}
	overhead := bench.OverheadOptions{JoinKeys: *keys, AggRows: *rows, Interval: *interval, StateCache: *stateCache}
	recovery := bench.RecoveryOptions{Kills: *kills, JobManagerRestarts: *jmRestarts}
	if *verbose {
		cluster.Log, size.Log, overhead.Log, recovery.Log = stderr, stderr, stderr, stderr
	}
	one := func(f func(context.Context) (bench.Result, error)) func(context.Context) ([]bench.Result, error) {
		return func(ctx context.Context) ([]bench.Result, error) {
			r, err := f(ctx)
			return []bench.Result{r}, err
		}
	}
	runners := map[string]func(context.Context) ([]bench.Result, error){
		"local-exchange":     one(func(ctx context.Context) (bench.Result, error) { return bench.LocalExchange(ctx, exchange) }),
		"remote-shuffle":     one(func(ctx context.Context) (bench.Result, error) { return bench.RemoteShuffle(ctx, exchange) }),
		"join":               one(func(ctx context.Context) (bench.Result, error) { return bench.JoinHot(ctx, join) }),
		"join-spill":         one(func(ctx context.Context) (bench.Result, error) { return bench.JoinSpill(ctx, join) }),
		"cluster-join-spill": one(func(ctx context.Context) (bench.Result, error) { return bench.ClusterJoinSpill(ctx, cluster) }),
		"checkpoint-size":    one(func(ctx context.Context) (bench.Result, error) { return bench.CheckpointSize(ctx, size) }),
		"checkpoint-overhead": func(ctx context.Context) ([]bench.Result, error) {
			return bench.CheckpointOverhead(ctx, overhead)
		},
		"recovery": one(func(ctx context.Context) (bench.Result, error) { return bench.Recovery(ctx, recovery) }),
	}
	names := []string{name}
	switch {
	case name == "all":
		names = []string{"local-exchange", "remote-shuffle", "join", "join-spill"}
	case name == "":
		fs.Usage()
		return errUsage
	case runners[name] == nil:
		fmt.Fprintf(stderr, "braid bench: unknown benchmark %q\n\n", name)
		fs.Usage()
		return errUsage
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	for _, n := range names {
		for i := 0; i < max(*count, 1); i++ {
			rs, err := runners[n](ctx)
			if err != nil {
				return err
			}
			for _, r := range rs {
				fmt.Fprintln(stdout, r)
				for _, d := range r.Details {
					fmt.Fprintln(stdout, "   ", d)
				}
			}
		}
	}
	return nil
}
