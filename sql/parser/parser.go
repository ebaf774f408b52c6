package parser

import (
	"strconv"
	"strings"

	"github.com/braidflow/braid/sql/ast"
)

// ParseScript parses a script of ';'-separated statements. Empty
// statements are skipped. Positions and spans are relative to src. On
// errors it returns the statements that parsed and an ErrorList; after an
// error the parser resumes at the next ';'. A script longer than
// MaxScriptBytes is an error without a position, and is not parsed.
func ParseScript(src string) ([]ast.Statement, error) {
	if len(src) > MaxScriptBytes {
		return nil, scriptTooLong(len(src))
	}
	p := newParser(src)
	var stmts []ast.Statement
	for p.tok().kind != tokEOF && len(p.errs) < maxErrors {
		p.toks.release(p.i)
		if p.acceptOp(";") {
			continue
		}
		if s := p.statementOrSkip(); s != nil {
			stmts = append(stmts, s)
		}
	}
	return stmts, p.errs.err()
}

// ParseStatement parses exactly one statement, optionally followed by ';'.
func ParseStatement(src string) (ast.Statement, error) {
	p := newParser(src)
	var s ast.Statement
	p.run(func() {
		for p.acceptOp(";") {
		}
		s = p.statement()
		p.checkTreeDepth(s)
		for p.acceptOp(";") {
		}
		p.expectEOF()
	})
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return s, nil
}

// ParseExpr parses one scalar expression, as stored in the catalog for
// computed columns and watermarks.
func ParseExpr(src string) (ast.Expr, error) {
	p := newParser(src)
	var e ast.Expr
	p.run(func() {
		e = p.expr()
		p.expectEOF()
		p.checkTreeDepth(e)
	})
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return e, nil
}

// ParseType parses one SQL type.
func ParseType(src string) (*ast.Type, error) {
	p := newParser(src)
	var t *ast.Type
	p.run(func() {
		t = p.typ()
		p.expectEOF()
		p.checkTreeDepth(t)
	})
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return t, nil
}

type parser struct {
	src  string
	toks *tokens
	i    int
	errs ErrorList
	// expected collects what the parser tested for at token index expAt, so
	// an error there can say what would have been accepted.
	expected []string
	expAt    int
	// depth is the number of levels of nesting open at the cursor (see
	// MaxNestingDepth).
	depth int
	// signEnd is the token index just past the last run of prefix signs:
	// a "(" there opens no level of its own.
	signEnd int
	// parenRun is startsQuery's last scan: the tokens from from to end-1
	// are "(", and end is the token that decides the answer.
	parenRun struct{ from, end int }
	// scanned counts the tokens startsQuery has looked at, for tests.
	scanned int
}

func newParser(src string) *parser {
	p := &parser{src: src, toks: newTokens(src), signEnd: -1}
	p.parenRun.end = -1
	return p
}

// bailout unwinds the parse of one statement after an error.
type bailout struct{}

// run calls f, turning a bailout into a recorded error. Each run starts at
// nesting depth 0.
func (p *parser) run(f func()) (ok bool) {
	p.depth = 0
	defer func() {
		if r := recover(); r != nil {
			if _, isBail := r.(bailout); !isBail {
				panic(r)
			}
			ok = false
		}
	}()
	f()
	return true
}

// statementOrSkip parses one statement; after an error it skips to the
// next top-level ';' and returns nil.
func (p *parser) statementOrSkip() ast.Statement {
	var s ast.Statement
	if p.run(func() {
		s = p.statement()
		p.checkTreeDepth(s)
		if p.tok().kind != tokEOF {
			p.expectOp(";")
		}
	}) {
		return s
	}
	for t := p.tok(); t.kind != tokEOF; t = p.tok() {
		p.toks.release(p.i)
		p.i++
		if t.kind == tokOp && t.text == ";" {
			break
		}
	}
	return nil
}

func (p *parser) tok() *token { return p.toks.at(p.i) }

func (p *parser) peek(n int) *token { return p.toks.at(p.i + n) }

func (p *parser) pos() ast.Pos { return p.tok().pos }

func (p *parser) next() *token {
	t := p.toks.at(p.i)
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

// lastEnd is the byte offset just past the last consumed token.
func (p *parser) lastEnd() int {
	if p.i == 0 {
		return 0
	}
	return p.toks.at(p.i - 1).end
}

func (p *parser) expect(what string) {
	if p.expAt != p.i {
		p.expAt = p.i
		p.expected = p.expected[:0]
	}
	p.expected = append(p.expected, what)
}

// isKw reports whether the next tokens are the bare words of kw (one or
// more words separated by single spaces), recording kw as expected.
func (p *parser) isKw(kw string) bool {
	p.expect(kw)
	return p.peekKw(kw)
}

// peekKw is isKw without recording an expectation.
func (p *parser) peekKw(kw string) bool {
	for n := 0; ; n++ {
		word, rest, more := strings.Cut(kw, " ")
		t := p.peek(n)
		if t.kind != tokIdent || t.upper != word {
			return false
		}
		if !more {
			return true
		}
		kw = rest
	}
}

func (p *parser) acceptKw(kw string) bool {
	if !p.isKw(kw) {
		return false
	}
	p.i += strings.Count(kw, " ") + 1
	return true
}

// acceptKwQuiet is acceptKw without recording an expectation, for
// spellings not worth listing in error messages.
func (p *parser) acceptKwQuiet(kw string) bool {
	if !p.peekKw(kw) {
		return false
	}
	p.i += strings.Count(kw, " ") + 1
	return true
}

func (p *parser) expectKw(kw string) {
	if !p.acceptKw(kw) {
		p.unexpected()
	}
}

// quotedOps caches the quoted operator names used in error messages.
var quotedOps = map[string]string{}

func init() {
	for _, op := range []string{"+", "-", "*", "/", "%", "||", "=", "<>", "!=", "<", "<=", ">", ">=", "(", ")", ",", ".", ";", "[", "]", "=>"} {
		quotedOps[op] = strconv.Quote(op)
	}
}

func (p *parser) isOp(op string) bool {
	q, ok := quotedOps[op]
	if !ok {
		q = strconv.Quote(op)
	}
	p.expect(q)
	return p.peekOp(op)
}

func (p *parser) peekOp(op string) bool {
	t := p.tok()
	return t.kind == tokOp && t.text == op
}

func (p *parser) acceptOp(op string) bool {
	if !p.isOp(op) {
		return false
	}
	p.i++
	return true
}

func (p *parser) expectOp(op string) {
	if !p.acceptOp(op) {
		p.unexpected()
	}
}

func (p *parser) expectEOF() {
	if p.tok().kind != tokEOF {
		p.unexpected()
	}
}

// errorAt records an error and bails out of the statement.
func (p *parser) errorAt(pos ast.Pos, msg string) {
	if n := len(p.errs); n == 0 || p.errs[n-1].Pos != pos {
		p.errs = append(p.errs, &Error{Pos: pos, Msg: msg})
	}
	panic(bailout{})
}

// unexpected reports the current token and what was expected there.
func (p *parser) unexpected() {
	t := p.tok()
	if t.kind == tokIllegal {
		p.errorAt(t.pos, t.text)
	}
	msg := "unexpected " + describe(p.src, t)
	if p.expAt == p.i && len(p.expected) > 0 {
		msg += ", expected " + joinExpected(p.expected)
	}
	p.errorAt(t.pos, msg)
}

func describe(src string, t *token) string {
	switch t.kind {
	case tokEOF:
		return "end of input"
	case tokString:
		return "string " + ast.QuoteString(truncate(t.text))
	case tokHintStart:
		return `hint "/*+"`
	}
	return strconv.Quote(truncate(src[t.pos.Offset:t.end]))
}

func truncate(s string) string {
	if len(s) > 32 {
		return s[:29] + "..."
	}
	return s
}

func joinExpected(exp []string) string {
	seen := make(map[string]bool, len(exp))
	var uniq []string
	for _, e := range exp {
		if !seen[e] {
			seen[e] = true
			uniq = append(uniq, e)
		}
	}
	if len(uniq) == 1 {
		return uniq[0]
	}
	return strings.Join(uniq[:len(uniq)-1], ", ") + " or " + uniq[len(uniq)-1]
}

// isIdentTok reports whether t can be used as an identifier: back-quoted,
// or a bare word that is not reserved.
func isIdentTok(t *token) bool {
	return t.kind == tokQuotedIdent || t.kind == tokIdent && !ast.IsReserved(t.text)
}

// ident parses an identifier.
func (p *parser) ident() *ast.Ident {
	p.expect("identifier")
	t := p.tok()
	if !isIdentTok(t) {
		p.unexpected()
	}
	p.i++
	return &ast.Ident{Pos: t.pos, Name: t.text, Quoted: t.kind == tokQuotedIdent}
}

// objectName parses name[.name...].
func (p *parser) objectName() *ast.ObjectName {
	n := &ast.ObjectName{Pos: p.pos()}
	n.Parts = append(n.Parts, p.ident())
	for p.peekOp(".") {
		p.i++
		n.Parts = append(n.Parts, p.ident())
	}
	return n
}

// identList parses ( ident, ... ).
func (p *parser) identList() []*ast.Ident {
	p.expectOp("(")
	var ids []*ast.Ident
	for {
		ids = append(ids, p.ident())
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")")
	return ids
}

// str parses a string literal.
func (p *parser) str() string {
	p.expect("string literal")
	t := p.tok()
	if t.kind != tokString {
		p.unexpected()
	}
	p.i++
	return t.text
}

func (p *parser) isStr() bool {
	p.expect("string literal")
	return p.tok().kind == tokString
}

// integer parses an unsigned integer literal.
func (p *parser) integer() int {
	p.expect("integer")
	t := p.tok()
	if t.kind != tokNumber {
		p.unexpected()
	}
	v, err := strconv.Atoi(t.text)
	if err != nil || v < 0 {
		p.errorAt(t.pos, "expected an integer, found "+strconv.Quote(t.text))
	}
	p.i++
	return v
}

// hints parses /*+ hint, ... */ if present.
func (p *parser) hints() []*ast.Hint {
	if p.tok().kind != tokHintStart {
		return nil
	}
	p.i++
	var hs []*ast.Hint
	for {
		h := &ast.Hint{Pos: p.pos()}
		h.Name = p.ident()
		if p.acceptOp("(") {
			p.hintArgs(h)
			p.expectOp(")")
		}
		hs = append(hs, h)
		if p.tok().kind == tokHintEnd {
			p.i++
			return hs
		}
		if !p.acceptOp(",") {
			p.expect(`"*/"`)
			p.unexpected()
		}
	}
}

func (p *parser) hintArgs(h *ast.Hint) {
	for {
		t := p.tok()
		pos := t.pos
		var val string
		lit := false
		switch {
		case t.kind == tokString:
			val, lit = t.text, true
		case t.kind == tokIdent || t.kind == tokQuotedIdent:
			val = t.text
		default:
			p.expect("identifier")
			p.expect("string literal")
			p.unexpected()
		}
		p.i++
		if p.acceptOp("=") {
			h.Options = append(h.Options, &ast.HintOption{Pos: pos, Key: val, KeyIdent: !lit, Value: p.str()})
		} else {
			h.Args = append(h.Args, &ast.HintArg{Pos: pos, Value: val, Literal: lit})
		}
		if !p.acceptOp(",") {
			break
		}
	}
	if len(h.Options) > 0 && len(h.Args) > 0 {
		p.errorAt(h.Pos, "hint "+h.Name.Name+" mixes key = value options with plain arguments")
	}
}
