package render

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/types"
)

// Printer is a client.Handler that prints what a script produces: status
// lines as the SQL client does ("[INFO] <message>", then "Job ID: <id>" when
// the statement started a job) and every query result in Format. It is used
// by one Execute at a time.
type Printer struct {
	Format Format
	// Out receives results. StatusOut receives status lines; nil means Out.
	Out, StatusOut io.Writer
	// Loc is the zone TIMESTAMP_LTZ values are shown in; nil means UTC.
	Loc *time.Location
	// Spaced adds an empty line after each statement's output, as the
	// interactive client does.
	Spaced bool

	cur Result
	err error
}

var _ client.Handler = (*Printer)(nil)

func (p *Printer) statusOut() io.Writer {
	if p.StatusOut != nil {
		return p.StatusOut
	}
	return p.Out
}

func (p *Printer) fail(err error) {
	if p.err == nil && err != nil {
		p.err = err
	}
}

// Status prints a statement's one-line outcome.
func (p *Printer) Status(_ int, msg, jobID string) {
	w := p.statusOut()
	_, err := fmt.Fprintf(w, "[INFO] %s\n", msg)
	p.fail(err)
	if jobID != "" {
		_, err = fmt.Fprintf(w, "Job ID: %s\n", jobID)
		p.fail(err)
	}
	p.space(w)
}

// Schema starts rendering a result.
// An insert-only result of a statement such as SHOW prints as a table once
// complete when the format is tableau, as Flink's client prints it; one
// that is text (EXPLAIN, SHOW CREATE TABLE: see IsRawText) prints as it
// is. TIMESTAMP_LTZ values show in the session's zone unless Loc is set.
func (p *Printer) Schema(_ int, res client.ResultInfo) {
	loc := p.Loc
	if loc == nil {
		loc = res.Location
	}
	if p.Format == FormatTableau && IsRawText(res) {
		p.cur = NewRaw(p.Out)
		return
	}
	if !res.Changelog && p.Format == FormatTableau {
		t := NewTable(p.Out, res.Columns, loc, 0)
		t.OrderBy(res.Order)
		p.cur = t
		return
	}
	r, err := NewResult(p.Format, p.Out, res.Columns, loc)
	p.fail(err)
	// NB: the streaming tableau and the changelog show changes as they
	// arrive; only the materialized TSV prints the final rows in order.
	if t, ok := r.(*TSV); ok {
		t.OrderBy(res.Order)
	}
	p.cur = r
}

// Batch renders the rows of b.
func (p *Printer) Batch(_ int, b types.Batch) {
	if p.cur != nil {
		p.fail(p.cur.Batch(b))
	}
}

// End completes the result.
func (p *Printer) End(int, string) {
	if p.cur != nil {
		p.fail(p.cur.End())
		p.cur = nil
		p.space(p.Out)
	}
}

// Interrupt closes a result the user stopped, with the footer that says so.
// It does nothing when no result is open.
func (p *Printer) Interrupt() {
	if p.cur != nil {
		p.fail(p.cur.Cancelled())
		p.cur = nil
		p.space(p.Out)
	}
}

// Err returns the first write error.
func (p *Printer) Err() error { return p.err }

func (p *Printer) space(w io.Writer) {
	if p.Spaced {
		_, err := io.WriteString(w, "\n")
		p.fail(err)
	}
}

// ExecFunc runs a script in a session and reports to h: it is
// (*client.Session).Execute with follow bound.
type ExecFunc func(ctx context.Context, script string, h client.Handler) error

// SessionExec binds a session and follow into an ExecFunc.
func SessionExec(s *client.Session, follow bool) ExecFunc {
	return func(ctx context.Context, script string, h client.Handler) error {
		return s.Execute(ctx, script, follow, h)
	}
}

// RunScript runs script through exec and prints its output with p. When
// ctx is cancelled the open result gets its "terminated" footer and the
// context's error is returned; otherwise the first error of the run or of
// printing.
func RunScript(ctx context.Context, exec ExecFunc, script string, p *Printer) error {
	err := exec(ctx, script, p)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, context.Canceled) {
			p.Interrupt()
		}
		return err
	}
	return p.Err()
}

// ErrorLine is how the client reports an error: "[ERROR] <message>".
func ErrorLine(err error) string { return "[ERROR] " + err.Error() }
