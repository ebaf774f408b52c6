package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/braidflow/braid/client/render"
)

const jobsUsage = `Usage:
  braid jobs list [--endpoint host:port]
  braid jobs describe [--endpoint host:port] JOB_ID
  braid jobs cancel [--endpoint host:port] JOB_ID
  braid jobs rescale [--endpoint host:port] JOB_ID --parallelism N

Each takes --token TOKEN (default: $BRAID_TOKEN) for a job manager that authenticates clients,
and --tls-ca FILE (default: $BRAID_TLS_CA) for one whose members use mutual TLS; see "braid jobs list -h".
`

// runJobs is "braid jobs list|describe|cancel".
func runJobs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, jobsUsage)
		return errUsage
	}
	sub := args[0]
	fs := flag.NewFlagSet("braid jobs "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	endpoint := fs.String("endpoint", defaultEndpoint, "job manager `host:port`, or several comma-separated (highly available job managers: calls go to the leader)")
	token := tokenFlag(fs)
	dialOpts := tlsFlags(fs)
	parallelism := 0
	if sub == "rescale" {
		fs.IntVar(&parallelism, "parallelism", 0, "the job's new parallelism `N`")
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	// Flags may also follow the job id.
	pos := fs.Args()
	if len(pos) > 0 {
		if err := parseFlags(fs, pos[1:]); err != nil {
			return err
		}
		pos = append(pos[:1], fs.Args()...)
	}
	wantID := sub == "describe" || sub == "cancel" || sub == "rescale"
	switch {
	case sub == "rescale" && parallelism < 1:
		fmt.Fprint(stderr, "braid jobs rescale: --parallelism N (N >= 1) is required\n")
		return errUsage
	case sub != "list" && !wantID:
		fmt.Fprintf(stderr, "braid jobs: unknown subcommand %q\n\n%s", sub, jobsUsage)
		return errUsage
	case wantID && len(pos) != 1, !wantID && len(pos) != 0:
		fmt.Fprint(stderr, jobsUsage)
		return errUsage
	}

	opts, err := dialOpts()
	if err != nil {
		return err
	}
	c, err := dial(ctx, *endpoint, *token, opts...)
	if err != nil {
		return err
	}
	defer c.Close()
	switch sub {
	case "list":
		jobs, err := c.ListJobs(ctx)
		if err != nil {
			return err
		}
		return render.JobList(stdout, jobs, time.Now(), time.Local)
	case "describe":
		d, err := c.DescribeJob(ctx, pos[0])
		if err != nil {
			return err
		}
		return render.JobDetail(stdout, d, time.Now(), time.Local)
	case "rescale":
		id, path, err := c.RescaleJob(ctx, pos[0], parallelism)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Job %s rescaled to parallelism %d from savepoint %s\n", id, parallelism, path)
		return nil
	default:
		if err := c.CancelJob(ctx, pos[0]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Cancellation of job %s requested.\n", pos[0])
		return nil
	}
}
