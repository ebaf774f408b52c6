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

// DefaultMaxColumnWidth is the width of columns whose type has no natural
// width (STRING, DOUBLE, ...), Flink's sql-client.display.max-column-width.
const DefaultMaxColumnWidth = 30

// nullText is how the tableau shows SQL NULL.
const nullText = "<NULL>"

// Tableau prints a streaming result as Flink's SQL client does in tableau
// mode: a header framed by borders, then one row per change as it arrives,
// with the row kind in a leading "op" column, and a footer counting rows.
// Column widths come from the types alone, so rows can be printed before the
// result is complete. Tableau is not safe for concurrent use.
type Tableau struct {
	w      *bufio.Writer
	cols   []client.ResultColumn
	widths []int // widths[0] is the op column
	loc    *time.Location
	border string
	rows   int
	line   []byte
	err    error
}

var _ Result = (*Tableau)(nil)

// NewTableau prints the header of a result with cols to w and returns the
// renderer for its rows. TIMESTAMP_LTZ values are shown in loc (nil: UTC);
// maxWidth <= 0 means DefaultMaxColumnWidth.
func NewTableau(w io.Writer, cols []client.ResultColumn, loc *time.Location, maxWidth int) *Tableau {
	if maxWidth <= 0 {
		maxWidth = DefaultMaxColumnWidth
	}
	t := &Tableau{w: bufio.NewWriter(w), cols: cols, loc: loc}
	t.widths = append(t.widths, 2)
	names := []string{"op"}
	for _, c := range cols {
		t.widths = append(t.widths, max(displayWidth(c.Name), typeWidth(c.Type, maxWidth)))
		names = append(names, c.Name)
	}
	var b strings.Builder
	b.WriteByte('+')
	for _, w := range t.widths {
		b.WriteString(strings.Repeat("-", w+2))
		b.WriteByte('+')
	}
	b.WriteByte('\n')
	t.border = b.String()
	t.writeString(t.border)
	t.writeRow(names)
	t.writeString(t.border)
	t.flush()
	return t
}

// typeWidth is the column width Flink derives from a type, raised to fit
// "<NULL>".
func typeWidth(t types.DataType, maxWidth int) int {
	n := maxWidth
	switch t.Kind {
	case types.KindTinyInt:
		n = 4
	case types.KindSmallInt:
		n = 6
	case types.KindInt:
		n = 11
	case types.KindBigInt:
		n = 20
	case types.KindDecimal:
		n = t.Precision + 2
	case types.KindBoolean:
		n = 5
	case types.KindDate:
		n = 10
	case types.KindTime:
		n = 8
		if t.Precision > 0 {
			n = 9 + t.Precision
		}
	case types.KindTimestamp, types.KindTimestampLTZ:
		switch {
		case t.Precision == 0:
			n = 19
		case t.Precision <= 3:
			n = 23
		case t.Precision <= 6:
			n = 26
		default:
			n = 29
		}
	}
	return max(n, len(nullText))
}

// Batch prints the rows of b. b stays owned by the caller.
func (t *Tableau) Batch(b types.Batch) error {
	cells := make([]string, len(t.widths))
	for i := 0; i < b.NumRows(); i++ {
		cells[0] = b.Kind(i).String()
		for c := range t.cols {
			s, null := types.FormatValue(b.Column(c), i, t.cols[c].Type, t.loc)
			if null {
				s = nullText
			}
			cells[c+1] = s
		}
		t.writeRow(cells)
		t.rows++
	}
	return t.flush()
}

// End prints the closing border (when there were rows) and the footer
// "Received a total of N rows".
func (t *Tableau) End() error {
	if t.rows > 0 {
		t.writeString(t.border)
	}
	t.writeString("Received a total of " + countRows(t.rows) + "\n")
	return t.flush()
}

// Cancelled prints the footer of a query the user stopped.
func (t *Tableau) Cancelled() error {
	t.writeString("Query terminated, received a total of " + countRows(t.rows) + "\n")
	return t.flush()
}

// countRows is "N rows", or "N row" when N <= 1, as Flink words it.
func countRows(n int) string {
	if n <= 1 {
		return strconv.Itoa(n) + " row"
	}
	return strconv.Itoa(n) + " rows"
}

func (t *Tableau) writeRow(cells []string) {
	l := append(t.line[:0], '|')
	for i, c := range cells {
		l = append(l, ' ')
		l = append(l, fit(c, t.widths[i])...)
		l = append(l, " |"...)
	}
	l = append(l, '\n')
	t.line = l
	t.write(l)
}

func (t *Tableau) writeString(s string) {
	if t.err == nil {
		_, t.err = t.w.WriteString(s)
	}
}

func (t *Tableau) write(b []byte) {
	if t.err == nil {
		_, t.err = t.w.Write(b)
	}
}

func (t *Tableau) flush() error {
	if t.err == nil {
		t.err = t.w.Flush()
	}
	return t.err
}
