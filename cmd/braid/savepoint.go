package main

import (
	"context"
	"flag"
	"fmt"
	"io"
)

const savepointUsage = `Usage:
  braid savepoint [--endpoint host:port] [--dir URI] JOB_ID
  braid stop [--endpoint host:port] [--savepoint [--dir URI]] JOB_ID

Each takes --token TOKEN (default: $BRAID_TOKEN) for a job manager that authenticates clients.
`

// runSavepoint is "braid savepoint JOB_ID".
func runSavepoint(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return savepointCommand(ctx, "savepoint", args, stdout, stderr)
}

// runStop is "braid stop JOB_ID".
func runStop(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return savepointCommand(ctx, "stop", args, stdout, stderr)
}

func savepointCommand(ctx context.Context, cmd string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("braid "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	endpoint := fs.String("endpoint", defaultEndpoint, "job manager `host:port`, or several comma-separated (highly available job managers: calls go to the leader)")
	token := tokenFlag(fs)
	dialOpts := tlsFlags(fs)
	dir := fs.String("dir", "", "copy the savepoint under `URI`/<job id>/ (a path, file:// or s3://)")
	withSavepoint := cmd == "savepoint"
	if cmd == "stop" {
		fs.BoolVar(&withSavepoint, "savepoint", false, "take a savepoint before stopping; the job ends FINISHED")
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	pos := fs.Args()
	if len(pos) > 0 {
		// Flags may also follow the job id.
		if err := parseFlags(fs, pos[1:]); err != nil {
			return err
		}
		pos = append(pos[:1], fs.Args()...)
	}
	if len(pos) != 1 || (*dir != "" && !withSavepoint) {
		fmt.Fprint(stderr, savepointUsage)
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
	if cmd == "savepoint" {
		id, path, err := c.TriggerSavepoint(ctx, pos[0], *dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Savepoint of job %s completed: %s\n", id, path)
		return nil
	}
	id, path, err := c.StopJob(ctx, pos[0], withSavepoint, *dir)
	if err != nil {
		return err
	}
	if path == "" {
		fmt.Fprintf(stdout, "Job %s stopped (canceled).\n", id)
	} else {
		fmt.Fprintf(stdout, "Job %s stopped with savepoint %s\n", id, path)
	}
	return nil
}
