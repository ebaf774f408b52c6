package expr

import (
	"strconv"
	"strings"
	"time"
)

// A datePattern is a compiled Java SimpleDateFormat / DateTimeFormatter
// pattern ("yyyy-MM-dd HH:mm:ss.SSS"). Supported letters: y M d H h k K m
// s S a E D; quoted text ('T', ” for a quote); other characters are
// literal. S runs give the leading digits of the fraction (SSS ms,
// SSSSSSSSS ns), as Flink's formatter does.
type datePattern struct {
	toks []patTok
}

type patTok struct {
	letter byte // 0 for literal text
	count  int
	text   string
}

func compilePattern(p string) *datePattern {
	var toks []patTok
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\'':
			j := i + 1
			var sb strings.Builder
			for j < len(p) {
				if p[j] == '\'' {
					if j+1 < len(p) && p[j+1] == '\'' {
						sb.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				sb.WriteByte(p[j])
				j++
			}
			if j == i+1 && j < len(p) { // '' is a quote
				sb.WriteByte('\'')
			}
			toks = append(toks, patTok{text: sb.String()})
			i = j + 1
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			j := i
			for j < len(p) && p[j] == c {
				j++
			}
			toks = append(toks, patTok{letter: c, count: j - i})
			i = j
		default:
			toks = append(toks, patTok{text: string(c)})
			i++
		}
	}
	return &datePattern{toks: toks}
}

// patternCache compiles each distinct pattern once per kernel.
type patternCache struct {
	last    string
	lastPat *datePattern
	m       map[string]*datePattern
}

func (c *patternCache) get(p string) *datePattern {
	if c.lastPat != nil && c.last == p {
		return c.lastPat
	}
	if c.m == nil {
		c.m = map[string]*datePattern{}
	}
	dp, ok := c.m[p]
	if !ok {
		dp = compilePattern(p)
		if len(c.m) < 64 {
			c.m[p] = dp
		}
	}
	c.last, c.lastPat = p, dp
	return dp
}

func pad(b []byte, v, width int) []byte {
	s := strconv.Itoa(v)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// format prints t's fields (t's own zone) by the pattern and returns the
// text and its length in bytes; when that is over max, it returns no text
// and keeps only the length, so that a long pattern (a letter prints up to
// six bytes) never builds more than max bytes.
func (p *datePattern) format(t time.Time, max int64) (string, int64) {
	b := make([]byte, 0, 32)
	var dropped int64
	for _, tk := range p.toks {
		if dropped > 0 || int64(len(b)) > max {
			dropped += int64(len(b))
			b = b[:0]
		}
		if tk.letter == 0 {
			b = append(b, tk.text...)
			continue
		}
		n := tk.count
		switch tk.letter {
		case 'y', 'u':
			if n == 2 {
				b = pad(b, t.Year()%100, 2)
			} else {
				b = pad(b, t.Year(), n)
			}
		case 'M', 'L':
			switch {
			case n >= 4:
				b = append(b, t.Month().String()...)
			case n == 3:
				b = append(b, t.Month().String()[:3]...)
			default:
				b = pad(b, int(t.Month()), n)
			}
		case 'd':
			b = pad(b, t.Day(), n)
		case 'D':
			b = pad(b, t.YearDay(), n)
		case 'H':
			b = pad(b, t.Hour(), n)
		case 'k':
			h := t.Hour()
			if h == 0 {
				h = 24
			}
			b = pad(b, h, n)
		case 'K':
			b = pad(b, t.Hour()%12, n)
		case 'h':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			b = pad(b, h, n)
		case 'm':
			b = pad(b, t.Minute(), n)
		case 's':
			b = pad(b, t.Second(), n)
		case 'S':
			frac := strconv.Itoa(t.Nanosecond() + 1_000_000_000)[1:]
			if n <= 9 {
				b = append(b, frac[:n]...)
			} else {
				b = append(b, frac...)
				b = append(b, strings.Repeat("0", n-9)...)
			}
		case 'a':
			if t.Hour() < 12 {
				b = append(b, "AM"...)
			} else {
				b = append(b, "PM"...)
			}
		case 'E':
			if n >= 4 {
				b = append(b, t.Weekday().String()...)
			} else {
				b = append(b, t.Weekday().String()[:3]...)
			}
		case 'Z':
			b = append(b, t.Format("-0700")...)
		case 'X', 'x':
			b = append(b, t.Format("-07:00")...)
		default:
			b = append(b, strings.Repeat(string(tk.letter), n)...)
		}
	}
	if n := dropped + int64(len(b)); n > max {
		return "", n
	}
	return string(b), int64(len(b))
}

func isNumericLetter(c byte) bool {
	switch c {
	case 'y', 'u', 'd', 'D', 'H', 'k', 'K', 'h', 'm', 's', 'S':
		return true
	}
	return false
}

// parse reads s by the pattern as a wall-clock reading in ns. Missing
// fields default to 1970-01-01 00:00:00.
func (p *datePattern) parse(s string) (int64, bool) {
	y, mo, d, h, mi, sec, ns := 1970, 1, 1, 0, 0, 0, 0
	pm, hasAmPm := false, false
	i := 0
	for k, tk := range p.toks {
		if tk.letter == 0 {
			if !strings.HasPrefix(s[i:], tk.text) {
				return 0, false
			}
			i += len(tk.text)
			continue
		}
		numeric := isNumericLetter(tk.letter) || ((tk.letter == 'M' || tk.letter == 'L') && tk.count <= 2)
		if numeric {
			maxN := 9
			if k+1 < len(p.toks) && p.toks[k+1].letter != 0 {
				maxN = tk.count // adjacent fields: fixed width
			}
			start := i
			v, next, ok := digits(s, i, maxN)
			if !ok {
				return 0, false
			}
			i = next
			switch tk.letter {
			case 'y', 'u':
				y = v
				if tk.count == 2 && next-start == 2 {
					y = 2000 + v
				}
			case 'M', 'L':
				mo = v
			case 'd':
				d = v
			case 'H', 'k':
				h = v % 24
			case 'h', 'K':
				h = v % 12
			case 'm':
				mi = v
			case 's':
				sec = v
			case 'S':
				w := next - start
				for ; w < 9; w++ {
					v *= 10
				}
				ns = v
			}
			continue
		}
		switch tk.letter {
		case 'M', 'L':
			found := false
			for m := time.January; m <= time.December; m++ {
				for _, name := range []string{m.String(), m.String()[:3]} {
					if len(s)-i >= len(name) && strings.EqualFold(s[i:i+len(name)], name) {
						mo, i, found = int(m), i+len(name), true
						break
					}
				}
				if found {
					break
				}
			}
			if !found {
				return 0, false
			}
		case 'a':
			if len(s)-i < 2 {
				return 0, false
			}
			switch strings.ToUpper(s[i : i+2]) {
			case "AM":
			case "PM":
				pm = true
			default:
				return 0, false
			}
			hasAmPm = true
			i += 2
		case 'E':
			found := false
			for wd := time.Sunday; wd <= time.Saturday; wd++ {
				for _, name := range []string{wd.String(), wd.String()[:3]} {
					if len(s)-i >= len(name) && strings.EqualFold(s[i:i+len(name)], name) {
						i, found = i+len(name), true
						break
					}
				}
				if found {
					break
				}
			}
			if !found {
				return 0, false
			}
		default:
			return 0, false
		}
	}
	if i != len(s) {
		return 0, false
	}
	if hasAmPm && pm {
		h += 12
	}
	if !validYMD(y, mo, d) || h > 23 || mi > 59 || sec > 59 {
		return 0, false
	}
	return time.Date(y, time.Month(mo), d, h, mi, sec, ns, time.UTC).UnixNano(), true
}
