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
	verbose := fs.Bool("verbose", false, "print the server processes' output (cluster-join-spill)")
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
	if *verbose {
		cluster.Log = stderr
	}
	runners := map[string]func(context.Context) (bench.Result, error){
		"local-exchange":     func(ctx context.Context) (bench.Result, error) { return bench.LocalExchange(ctx, exchange) },
		"remote-shuffle":     func(ctx context.Context) (bench.Result, error) { return bench.RemoteShuffle(ctx, exchange) },
		"join":               func(ctx context.Context) (bench.Result, error) { return bench.JoinHot(ctx, join) },
		"join-spill":         func(ctx context.Context) (bench.Result, error) { return bench.JoinSpill(ctx, join) },
		"cluster-join-spill": func(ctx context.Context) (bench.Result, error) { return bench.ClusterJoinSpill(ctx, cluster) },
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
			r, err := runners[n](ctx)
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, r)
		}
	}
	return nil
}
