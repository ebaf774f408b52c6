package render

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/width"
)

// runeWidth is the number of terminal columns r takes: 2 for East Asian
// wide and full-width characters, as Flink's client counts them, else 1.
func runeWidth(r rune) int {
	if r < 0x1100 {
		return 1
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// displayWidth is the number of terminal columns s takes.
func displayWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += runeWidth(r)
		i += size
	}
	return n
}

// truncated marks a value cut to fit its column.
const truncated = "..."

// fit returns s right-aligned in exactly w columns. A value wider than w is
// cut so that it ends in "..."; when a wide character would straddle the
// cut, the gap it leaves is padded on the left so the cell keeps its width.
func fit(s string, w int) string {
	dw := displayWidth(s)
	if dw <= w {
		return strings.Repeat(" ", w-dw) + s
	}
	keep := w - len(truncated)
	if keep < 0 {
		return truncated[:w]
	}
	used, cut := 0, 0
	for i, r := range s {
		rw := runeWidth(r)
		if used+rw > keep {
			cut = i
			break
		}
		used += rw
	}
	return strings.Repeat(" ", keep-used) + s[:cut] + truncated
}
