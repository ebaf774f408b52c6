// Command braid is Braid's command line: the SQL client (scripted and
// interactive), job inspection, and a local cluster for one machine. It
// holds flags, configuration and signal handling only; the work is done in
// package client, client/render and localcluster.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/client/render"
)

// version is set at link time: -ldflags "-X main.version=v0.1.0".
var version = "dev"

// defaultEndpoint is the job manager's default client address.
const defaultEndpoint = "localhost:6123"

const usage = `Usage: braid <command> [flags]

Commands:
  sql       run SQL: a script with -f FILE, or an interactive prompt
  jobs      list, describe, cancel or rescale jobs (braid jobs list|describe ID|cancel ID|rescale ID --parallelism N)
  savepoint take a savepoint of a running job (braid savepoint ID [--dir URI])
  stop      stop a job, with --savepoint after taking one (braid stop ID [--savepoint] [--dir URI])
  local     run a local cluster (job manager and task managers) until Ctrl-C
  bench     run a benchmark (braid bench local-exchange|remote-shuffle|join|join-spill|all|cluster-join-spill)
  version   print the version
  help      print this help

Run "braid <command> -h" for the flags of a command.
`

// errUsage marks a command line that could not be understood; it exits 2
// and its message has been printed already.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches a command line and returns the exit status: 0, 1 for a
// failure (reported as "[ERROR] ..." on stderr) or 2 for a usage error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "sql":
		err = runSQL(ctx, rest, stdout, stderr)
	case "jobs":
		err = runJobs(ctx, rest, stdout, stderr)
	case "savepoint":
		err = runSavepoint(ctx, rest, stdout, stderr)
	case "stop":
		err = runStop(ctx, rest, stdout, stderr)
	case "local":
		err = runLocal(ctx, rest, stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintf(stdout, "braid %s (%s %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
	case "bench":
		err = runBench(ctx, rest, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "braid: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.Is(err, flag.ErrHelp):
		return 0
	}
	fmt.Fprintln(stderr, render.ErrorLine(err))
	return 1
}

// tokenEnv names the environment variable of the client token; --token
// wins over it.
const tokenEnv = "BRAID_TOKEN"

// tokenFlag defines --token on fs; dial connects with the token it holds,
// or BRAID_TOKEN's when it is empty.
func tokenFlag(fs *flag.FlagSet) *string {
	return fs.String("token", "", "bearer `TOKEN` to authenticate to the job manager with (default: $"+tokenEnv+")")
}

// dial connects to endpoint with token, or BRAID_TOKEN's when it is empty,
// and opts (the TLS of tlsFlags).
func dial(ctx context.Context, endpoint, token string, opts ...client.Option) (*client.Client, error) {
	if token == "" {
		token = os.Getenv(tokenEnv)
	}
	return client.Dial(ctx, endpoint, append(opts, client.WithToken(token))...)
}

// parseFlags parses args into fs, turning flag errors (already printed by
// fs) into errUsage.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	return nil
}
