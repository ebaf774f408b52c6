package render

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/types"
)

// Table prints a small, complete result the way Flink's SQL client prints
// the results of SHOW, DESCRIBE and other non-streaming statements: no op
// column, widths from the content (capped at the maximum column width), and
// a footer "N rows in set", "1 row in set" or "Empty set". Rows are held
// until End, so Table suits bounded, insert-only results only.
type Table struct {
	w        *bufio.Writer
	cols     []client.ResultColumn
	loc      *time.Location
	maxWidth int
	rows     [][]string
	order    rowOrder
	keys     [][]any // keys[i] holds the sort key values of rows[i]
}

var _ Result = (*Table)(nil)

// NewTable returns a renderer that prints cols and their rows at End.
func NewTable(w io.Writer, cols []client.ResultColumn, loc *time.Location, maxWidth int) *Table {
	if maxWidth <= 0 {
		maxWidth = DefaultMaxColumnWidth
	}
	return &Table{w: bufio.NewWriter(w), cols: cols, loc: loc, maxWidth: maxWidth}
}

// OrderBy makes End print the rows sorted by keys (stably), as the final
// result of an ORDER BY ... LIMIT query reads. Call it before the first
// Batch.
func (t *Table) OrderBy(keys []client.SortKey) { t.order = keys }

// Batch keeps the rows of b; retractions remove an equal earlier row.
func (t *Table) Batch(b types.Batch) error {
	for i := 0; i < b.NumRows(); i++ {
		cells := make([]string, len(t.cols))
		for c := range t.cols {
			s, null := types.FormatValue(b.Column(c), i, t.cols[c].Type, t.loc)
			if null {
				s = nullText
			}
			cells[c] = s
		}
		if b.Kind(i).IsRetract() {
			t.remove(cells)
			continue
		}
		t.rows = append(t.rows, cells)
		t.keys = append(t.keys, t.order.keyValues(b, i))
	}
	return nil
}

func (t *Table) remove(cells []string) {
	for i, r := range t.rows {
		if strings.Join(r, "\x00") == strings.Join(cells, "\x00") {
			t.rows = append(t.rows[:i], t.rows[i+1:]...)
			t.keys = append(t.keys[:i], t.keys[i+1:]...)
			return
		}
	}
}

// End prints the table and its footer.
func (t *Table) End() error {
	if len(t.rows) == 0 {
		t.w.WriteString("Empty set\n")
		return t.w.Flush()
	}
	if len(t.order) > 0 {
		idx := make([]int, len(t.rows))
		for i := range idx {
			idx[i] = i
		}
		t.order.sort(idx, t.keys)
		rows := make([][]string, len(idx))
		for i, j := range idx {
			rows[i] = t.rows[j]
		}
		t.rows, t.keys = rows, nil
	}
	widths := make([]int, len(t.cols))
	for c, col := range t.cols {
		widths[c] = displayWidth(col.Name)
		for _, r := range t.rows {
			widths[c] = max(widths[c], displayWidth(r[c]))
		}
		widths[c] = min(widths[c], t.maxWidth)
	}
	var border strings.Builder
	border.WriteByte('+')
	for _, w := range widths {
		border.WriteString(strings.Repeat("-", w+2))
		border.WriteByte('+')
	}
	border.WriteByte('\n')
	line := func(cells []string) {
		t.w.WriteByte('|')
		for c, s := range cells {
			t.w.WriteString(" " + fit(s, widths[c]) + " |")
		}
		t.w.WriteByte('\n')
	}
	t.w.WriteString(border.String())
	names := make([]string, len(t.cols))
	for i, c := range t.cols {
		names[i] = c.Name
	}
	line(names)
	t.w.WriteString(border.String())
	for _, r := range t.rows {
		line(r)
	}
	t.w.WriteString(border.String())
	if len(t.rows) == 1 {
		t.w.WriteString("1 row in set\n")
	} else {
		t.w.WriteString(strconv.Itoa(len(t.rows)) + " rows in set\n")
	}
	return t.w.Flush()
}

// Cancelled prints what arrived before the user stopped the statement.
func (t *Table) Cancelled() error { return t.End() }
