package parser

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/braidflow/braid/sql/ast"
)

type tokKind uint8

const (
	tokEOF tokKind = iota
	// tokIdent is a bare word: a keyword or an identifier. upper holds it
	// upper-cased for keyword tests.
	tokIdent
	// tokQuotedIdent is a back-quoted identifier; text is unescaped.
	tokQuotedIdent
	// tokString is a '...' literal; text is unescaped.
	tokString
	// tokBinary is X'..'; text holds the hex digits.
	tokBinary
	// tokNumber keeps the literal's exact text.
	tokNumber
	// tokOp is an operator or punctuation; text is the operator.
	tokOp
	tokHintStart // "/*+"
	tokHintEnd   // "*/" closing a hint
	// tokIllegal is a lexical error; text holds the message.
	tokIllegal
)

type token struct {
	kind  tokKind
	text  string
	upper string
	pos   ast.Pos
	end   int // byte offset just past the token
}

// lexer turns SQL text into tokens. It works on the string directly and
// tracks line and rune column as it goes.
type lexer struct {
	src    string
	off    int
	line   int
	col    int
	inHint bool
}

func newLexer(src string) *lexer { return &lexer{src: src, line: 1, col: 1} }

// advance moves past n bytes, keeping line and column current.
func (l *lexer) advance(n int) {
	for end := l.off + n; l.off < end; l.off++ {
		c := l.src[l.off]
		if c == '\n' {
			l.line++
			l.col = 1
		} else if c&0xC0 != 0x80 {
			l.col++
		}
	}
}

func (l *lexer) pos() ast.Pos { return ast.Pos{Offset: l.off, Line: l.line, Col: l.col} }

// tokens is the token stream of src, lexed on demand: at(i) runs the lexer
// only as far as token i. The stream ends with a tokEOF; a lexical error
// becomes a tokIllegal and lexing resumes after it.
//
// NB: lexing on demand lets an error near the start of a long hostile text
// end the parse without lexing the rest, and the tokens live in chunks that
// never move, so lexing never copies what it lexed and a *token stays valid.
type tokens struct {
	lex      *lexer
	chunks   [][]token
	n        int  // tokens lexed so far
	eof      bool // the last token lexed is the tokEOF
	released int  // chunks before this one are released
	spare    []token
}

// chunkBits sets the tokens per chunk: 256, 18 KiB.
const chunkBits = 8

func newTokens(src string) *tokens { return &tokens{lex: newLexer(src)} }

// at returns token i, or the tokEOF for any i past it.
func (ts *tokens) at(i int) *token {
	for i >= ts.n {
		if ts.eof {
			i = ts.n - 1
			break
		}
		ts.lexOne()
	}
	return &ts.chunks[i>>chunkBits][i&(1<<chunkBits-1)]
}

// release lets the chunks wholly before token i-1 go: the parser reads no
// token before i-1 again. ParseScript releases what each statement, or the
// text skipped after an error, leaves behind, so that its memory is that of
// the longest statement; the last chunk released is reused.
func (ts *tokens) release(i int) {
	for ; ts.released < (i-1)>>chunkBits; ts.released++ {
		ts.spare = ts.chunks[ts.released]
		ts.chunks[ts.released] = nil
	}
}

func (ts *tokens) lexOne() {
	if ts.n&(1<<chunkBits-1) == 0 {
		c := ts.spare
		if c == nil {
			c = make([]token, 1<<chunkBits)
		}
		ts.spare = nil
		ts.chunks = append(ts.chunks, c)
	}
	t := &ts.chunks[ts.n>>chunkBits][ts.n&(1<<chunkBits-1)]
	*t = ts.lex.next()
	ts.n++
	ts.eof = t.kind == tokEOF
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isIdentPart(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9' || c == '$'
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isDigit(c) && !(c >= 'a' && c <= 'f') && !(c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (l *lexer) skipSpaceAndComments() *token {
	for l.off < len(l.src) {
		c := l.src[l.off]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			l.advance(1)
		case c == '-' && strings.HasPrefix(l.src[l.off:], "--"):
			i := strings.IndexByte(l.src[l.off:], '\n')
			if i < 0 {
				i = len(l.src) - l.off
			}
			l.advance(i)
		case c == '/' && strings.HasPrefix(l.src[l.off:], "/*") && !strings.HasPrefix(l.src[l.off:], "/*+"):
			start := l.pos()
			i := strings.Index(l.src[l.off+2:], "*/")
			if i < 0 {
				l.advance(len(l.src) - l.off)
				return &token{kind: tokIllegal, text: "unterminated comment", pos: start, end: l.off}
			}
			l.advance(i + 4)
		default:
			return nil
		}
	}
	return nil
}

func (l *lexer) next() token {
	if t := l.skipSpaceAndComments(); t != nil {
		return *t
	}
	start := l.pos()
	if l.off >= len(l.src) {
		return token{kind: tokEOF, pos: start, end: l.off}
	}
	c := l.src[l.off]
	switch {
	case (c == 'x' || c == 'X') && l.off+1 < len(l.src) && l.src[l.off+1] == '\'':
		l.advance(1)
		t := l.quoted('\'', tokBinary, "unterminated binary literal")
		t.pos = start
		if t.kind == tokBinary && !isHex(t.text) {
			return token{kind: tokIllegal, text: "binary literal X'..' must hold hex digits", pos: start, end: t.end}
		}
		return t
	case isIdentStart(c):
		i := l.off + 1
		for i < len(l.src) && isIdentPart(l.src[i]) {
			i++
		}
		text := l.src[l.off:i]
		l.advance(i - l.off)
		return token{kind: tokIdent, text: text, upper: strings.ToUpper(text), pos: start, end: l.off}
	case isDigit(c) || c == '.' && l.off+1 < len(l.src) && isDigit(l.src[l.off+1]):
		return l.number(start)
	case c == '\'':
		return l.quoted('\'', tokString, "unterminated string literal")
	case c == '`':
		t := l.quoted('`', tokQuotedIdent, "unterminated quoted identifier")
		if t.kind == tokQuotedIdent && t.text == "" {
			return token{kind: tokIllegal, text: "empty quoted identifier", pos: start, end: l.off}
		}
		return t
	case c == '"':
		l.advance(1)
		return token{kind: tokIllegal, text: `unexpected '"': quote identifiers with back quotes (` + "`name`" + `) and strings with single quotes`, pos: start, end: l.off}
	}
	if l.inHint && strings.HasPrefix(l.src[l.off:], "*/") {
		l.inHint = false
		l.advance(2)
		return token{kind: tokHintEnd, text: "*/", pos: start, end: l.off}
	}
	if strings.HasPrefix(l.src[l.off:], "/*+") {
		l.inHint = true
		l.advance(3)
		return token{kind: tokHintStart, text: "/*+", pos: start, end: l.off}
	}
	op := ""
	if l.off+1 < len(l.src) {
		switch two := l.src[l.off : l.off+2]; two {
		case "<=", ">=", "<>", "!=", "||", "=>":
			op = two
		}
	}
	if op == "" {
		switch c {
		case '+', '-', '*', '/', '%', '=', '<', '>', '(', ')', ',', '.', ';', '[', ']':
			op = l.src[l.off : l.off+1]
		}
	}
	if op == "" {
		r := []rune(l.src[l.off:min(l.off+4, len(l.src))])[0]
		l.advance(len(string(r)))
		return token{kind: tokIllegal, text: "unexpected character " + quoteRune(r), pos: start, end: l.off}
	}
	l.advance(len(op))
	return token{kind: tokOp, text: op, pos: start, end: l.off}
}

func quoteRune(r rune) string {
	if r < ' ' || r == 0x7f {
		return fmt.Sprintf("U+%04X", r)
	}
	return "'" + string(r) + "'"
}

// number lexes digits [. digits] [e [+-] digits], keeping the exact text.
func (l *lexer) number(start ast.Pos) token {
	i := l.off
	for i < len(l.src) && isDigit(l.src[i]) {
		i++
	}
	if i < len(l.src) && l.src[i] == '.' {
		i++
		for i < len(l.src) && isDigit(l.src[i]) {
			i++
		}
	}
	if i < len(l.src) && (l.src[i] == 'e' || l.src[i] == 'E') {
		j := i + 1
		if j < len(l.src) && (l.src[j] == '+' || l.src[j] == '-') {
			j++
		}
		if j < len(l.src) && isDigit(l.src[j]) {
			for j < len(l.src) && isDigit(l.src[j]) {
				j++
			}
			i = j
		}
	}
	text := l.src[l.off:i]
	l.advance(i - l.off)
	if l.off < len(l.src) && isIdentStart(l.src[l.off]) {
		// NB: "1abc" is neither a number nor a name.
		j := l.off
		for j < len(l.src) && isIdentPart(l.src[j]) {
			j++
		}
		bad := text + l.src[l.off:j]
		l.advance(j - l.off)
		return token{kind: tokIllegal, text: "malformed number " + strconv.Quote(bad), pos: start, end: l.off}
	}
	return token{kind: tokNumber, text: text, pos: start, end: l.off}
}

// quoted lexes a literal delimited by q, where a doubled q stands for one.
func (l *lexer) quoted(q byte, kind tokKind, unterminated string) token {
	start := l.pos()
	l.advance(1)
	var b strings.Builder
	seg := l.off
	for i := l.off; i < len(l.src); i++ {
		if l.src[i] != q {
			continue
		}
		if i+1 < len(l.src) && l.src[i+1] == q {
			b.WriteString(l.src[seg : i+1])
			i++
			seg = i + 1
			continue
		}
		var text string
		if b.Len() == 0 {
			text = l.src[seg:i]
		} else {
			b.WriteString(l.src[seg:i])
			text = b.String()
		}
		l.advance(i + 1 - l.off)
		return token{kind: kind, text: text, pos: start, end: l.off}
	}
	l.advance(len(l.src) - l.off)
	return token{kind: tokIllegal, text: unterminated, pos: start, end: l.off}
}
