package render

import (
	"bufio"
	"io"
	"strings"
	"time"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/types"
)

// tsvNull is how TSV and changelog output show SQL NULL.
const tsvNull = "NULL"

// TSV materializes a result and prints it when the result ends: a header
// line of column names, then one tab-separated line per row of the final
// result, in order of arrival, or in ORDER BY order when OrderBy was
// called. +I and +U add a row; -U and -D remove one
// equal row, the most recently added (as Flink's materialized view does); a
// retraction that matches no row is ignored. NULL prints as "NULL". Values
// are not escaped. TSV is not safe for concurrent use.
type TSV struct {
	w    io.Writer
	cols []client.ResultColumn
	loc  *time.Location

	rows  []string         // one formatted line per row (no newline); "" once removed
	live  []bool           // live[i] reports rows[i] still in the result
	index map[string][]int // line -> indexes of live rows with it, oldest first
	cells []string
	order rowOrder
	keys  [][]any // keys[i] holds the sort key values of rows[i]
}

var _ Result = (*TSV)(nil)

// NewTSV returns a TSV renderer for a result with cols, writing to w at End.
// TIMESTAMP_LTZ values are shown in loc (nil: UTC).
func NewTSV(w io.Writer, cols []client.ResultColumn, loc *time.Location) *TSV {
	return &TSV{w: w, cols: cols, loc: loc, index: map[string][]int{}, cells: make([]string, len(cols))}
}

// OrderBy makes End print the surviving rows sorted by keys (stably: rows
// with equal keys keep arrival order), as the final result of an ORDER BY
// ... LIMIT query reads. Call it before the first Batch.
func (t *TSV) OrderBy(keys []client.SortKey) { t.order = keys }

// Batch applies the changes of b to the materialized result.
func (t *TSV) Batch(b types.Batch) error {
	for i := 0; i < b.NumRows(); i++ {
		line := formatLine(t.cells, b, i, t.cols, t.loc)
		if b.Kind(i).IsAccumulate() {
			t.index[line] = append(t.index[line], len(t.rows))
			t.rows = append(t.rows, line)
			t.live = append(t.live, true)
			if len(t.order) > 0 {
				t.keys = append(t.keys, t.order.keyValues(b, i))
			}
			continue
		}
		idx := t.index[line]
		if len(idx) == 0 {
			continue
		}
		last := idx[len(idx)-1]
		t.live[last] = false
		t.rows[last] = ""
		if len(t.order) > 0 {
			t.keys[last] = nil
		}
		if len(idx) == 1 {
			delete(t.index, line)
		} else {
			t.index[line] = idx[:len(idx)-1]
		}
	}
	return nil
}

// formatLine prints row i of b as tab-separated values.
func formatLine(cells []string, b types.Batch, i int, cols []client.ResultColumn, loc *time.Location) string {
	for c := range cols {
		s, null := types.FormatValue(b.Column(c), i, cols[c].Type, loc)
		if null {
			s = tsvNull
		}
		cells[c] = s
	}
	return strings.Join(cells, "\t")
}

// End prints the header and the surviving rows.
func (t *TSV) End() error {
	bw := bufio.NewWriter(t.w)
	names := make([]string, len(t.cols))
	for i, c := range t.cols {
		names[i] = c.Name
	}
	bw.WriteString(strings.Join(names, "\t"))
	bw.WriteByte('\n')
	var idx []int
	for i := range t.rows {
		if t.live[i] {
			idx = append(idx, i)
		}
	}
	t.order.sort(idx, t.keys)
	for _, i := range idx {
		bw.WriteString(t.rows[i])
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// Cancelled prints what was materialized so far, as End does.
func (t *TSV) Cancelled() error { return t.End() }

// Changelog prints every change as it arrives: a header line "op" followed
// by the column names, then per row its kind (+I, -U, +U, -D) and its
// values, tab-separated, NULL as "NULL".
type Changelog struct {
	w     *bufio.Writer
	cols  []client.ResultColumn
	loc   *time.Location
	cells []string
	err   error
}

var _ Result = (*Changelog)(nil)

// NewChangelog prints the header line to w and returns the renderer.
func NewChangelog(w io.Writer, cols []client.ResultColumn, loc *time.Location) *Changelog {
	c := &Changelog{w: bufio.NewWriter(w), cols: cols, loc: loc, cells: make([]string, len(cols))}
	names := make([]string, 0, len(cols)+1)
	names = append(names, "op")
	for _, col := range cols {
		names = append(names, col.Name)
	}
	c.write(strings.Join(names, "\t"))
	c.flush()
	return c
}

// Batch prints the rows of b.
func (c *Changelog) Batch(b types.Batch) error {
	for i := 0; i < b.NumRows(); i++ {
		c.write(b.Kind(i).String() + "\t" + formatLine(c.cells, b, i, c.cols, c.loc))
	}
	return c.flush()
}

// End flushes; the changelog has no footer.
func (c *Changelog) End() error { return c.flush() }

// Cancelled flushes, as End.
func (c *Changelog) Cancelled() error { return c.flush() }

func (c *Changelog) write(line string) {
	if c.err != nil {
		return
	}
	if _, c.err = c.w.WriteString(line); c.err == nil {
		c.err = c.w.WriteByte('\n')
	}
}

func (c *Changelog) flush() error {
	if c.err == nil {
		c.err = c.w.Flush()
	}
	return c.err
}
