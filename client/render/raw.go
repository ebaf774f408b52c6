package render

import (
	"bufio"
	"io"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/types"
)

// Raw prints the text of a one-column STRING result as it is, each value
// followed by a newline, with no header, border or footer: how Flink's SQL
// client prints EXPLAIN (its raw-content print style). It writes each
// batch as it arrives.
type Raw struct {
	w *bufio.Writer
}

var _ Result = (*Raw)(nil)

// NewRaw returns a Raw renderer writing to w.
func NewRaw(w io.Writer) *Raw { return &Raw{w: bufio.NewWriter(w)} }

// IsRawText reports whether a result is text a client prints as it is: a
// statement's result (insert-only, no job) of one STRING column named
// "result", as EXPLAIN, SHOW CREATE TABLE and SHOW CREATE VIEW return.
func IsRawText(res client.ResultInfo) bool {
	return !res.Changelog && res.JobID == "" && len(res.Columns) == 1 &&
		res.Columns[0].Name == "result" && res.Columns[0].Type.Kind == types.KindVarChar
}

// Batch writes the values of b; a NULL writes an empty line.
func (r *Raw) Batch(b types.Batch) error {
	for i := 0; i < b.NumRows(); i++ {
		if s, null := types.FormatValue(b.Column(0), i, types.String, nil); !null {
			r.w.WriteString(s)
		}
		r.w.WriteByte('\n')
	}
	return r.w.Flush()
}

// End flushes what is left.
func (r *Raw) End() error { return r.w.Flush() }

// Cancelled flushes what is left.
func (r *Raw) Cancelled() error { return r.w.Flush() }
