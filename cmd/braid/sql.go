package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/braidflow/braid/client/render"
)

// props collects repeated --set key=value flags.
type props map[string]string

func (p props) String() string { return fmt.Sprint(map[string]string(p)) }

func (p props) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want key=value, got %q", s)
	}
	p[strings.TrimSpace(k)] = strings.TrimSpace(v)
	return nil
}

// runSQL is "braid sql": a script with -f, else the interactive prompt.
func runSQL(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("braid sql", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("f", "", "run the statements of `FILE` as one script and exit")
	endpoint := fs.String("endpoint", defaultEndpoint, "job manager `host:port`, or several comma-separated (highly available job managers: calls go to the leader)")
	token := tokenFlag(fs)
	local := fs.Bool("local", false, "run on a local cluster started for this run")
	format := fs.String("format", "tableau", "result format: tableau, tsv (materialized final result) or changelog")
	follow := fs.Bool("follow", false, "keep queries over unbounded sources running (until Ctrl-C)")
	set := props{}
	fs.Var(set, "set", "session property `key=value` (repeatable)")
	dialOpts := tlsFlags(fs)
	fromSavepoint := fs.String("from-savepoint", "", "start the session's INSERTs from the savepoint at `URI` (sets execution.savepoint.path)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *fromSavepoint != "" {
		set["execution.savepoint.path"] = *fromSavepoint
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "braid sql: unexpected argument %q (a script is given with -f)\n", fs.Arg(0))
		return errUsage
	}
	f, err := render.ParseFormat(*format)
	if err != nil {
		fmt.Fprintln(stderr, "braid sql:", err)
		return errUsage
	}
	var script []byte
	if *file != "" {
		if script, err = os.ReadFile(*file); err != nil {
			return err
		}
	}

	// SIGINT: a script run stops; the interactive shell cancels the
	// running statement and keeps going.
	var sigs chan os.Signal
	if *file != "" {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt)
		defer stop()
	} else {
		sigs = make(chan os.Signal, 1)
		signal.Notify(sigs, os.Interrupt)
		defer signal.Stop(sigs)
	}

	addr := *endpoint
	opts, err := dialOpts()
	if err != nil {
		return err
	}
	if *local {
		c, err := startLocal(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		// NB: the local cluster serves loopback in plain text.
		addr, opts = c.Endpoint(), nil
	}
	cl, err := dial(ctx, addr, *token, opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	sess, err := cl.OpenSession(ctx, set)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		sess.Close(cctx)
	}()
	exec := render.SessionExec(sess, *follow)

	if *file == "" {
		sh := &render.Shell{Exec: exec, Out: stdout, Err: stderr, HistoryFile: historyFile(), Interrupts: sigs}
		return sh.Run(ctx)
	}
	p := &render.Printer{Format: f, Out: stdout}
	if f == render.FormatTSV {
		p.StatusOut = stderr // stdout holds exactly the TSV
	}
	return render.RunScript(ctx, exec, string(script), p)
}

// historyFile is ~/.braid_history, or "" (no history) without a home.
func historyFile() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".braid_history")
}
