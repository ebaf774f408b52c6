package parser

import (
	"strings"

	"github.com/braidflow/braid/sql/ast"
)

// expr parses a full expression. Precedence, loosest first: OR, AND, NOT,
// comparisons (= <> < <= > >= IS BETWEEN IN LIKE SIMILAR), ||, + -,
// * / %, unary + -, postfix [i] and .field. Each node's position is where
// its text starts.
func (p *parser) expr() ast.Expr {
	p.expect("expression")
	left := p.andExpr()
	for n := 1; p.isKw("OR"); n++ {
		p.i++
		left = &ast.Binary{Pos: left.Position(), Op: ast.OpOr, L: left, R: p.andExpr()}
		p.checkChain(n, left)
	}
	return left
}

func (p *parser) andExpr() ast.Expr {
	left := p.notExpr()
	for n := 1; p.isKw("AND"); n++ {
		p.i++
		left = &ast.Binary{Pos: left.Position(), Op: ast.OpAnd, L: left, R: p.notExpr()}
		p.checkChain(n, left)
	}
	return left
}

// notExpr parses [NOT ...] comparison.
//
// NB: a run of NOTs is read in a loop, not by recursion, each NOT opening a
// level of nesting, so that NOT NOT ... NOT x fails at MaxNestingDepth
// with an error instead of growing the stack once per NOT.
func (p *parser) notExpr() ast.Expr {
	var first, last *ast.Unary
	n := 0
	for p.peekKw("NOT") {
		u := &ast.Unary{Pos: p.pos(), Op: ast.OpNot}
		p.enter(u.Pos, "expression")
		n++
		p.i++
		if last == nil {
			first = u
		} else {
			last.X = u
		}
		last = u
	}
	if last == nil {
		return p.cmpExpr()
	}
	last.X = p.cmpExpr()
	p.depth -= n
	return first
}

var cmpOps = map[string]ast.BinaryOp{
	"=": ast.OpEq, "<>": ast.OpNe, "!=": ast.OpNe, "<": ast.OpLt,
	"<=": ast.OpLe, ">": ast.OpGt, ">=": ast.OpGe,
}

func (p *parser) cmpExpr() ast.Expr {
	left := p.concatExpr()
	for n := 0; ; n++ {
		p.checkChain(n, left)
		pos := left.Position()
		t := p.tok()
		if t.kind == tokOp {
			op, ok := cmpOps[t.text]
			if !ok {
				return left
			}
			p.i++
			left = &ast.Binary{Pos: pos, Op: op, L: left, R: p.concatExpr()}
			continue
		}
		if t.kind != tokIdent {
			return left
		}
		if t.upper == "IS" {
			p.i++
			not := p.acceptKw("NOT")
			switch {
			case p.acceptKw("NULL"):
				left = &ast.IsExpr{Pos: pos, X: left, Not: not, What: "NULL"}
			case p.acceptKw("TRUE"):
				left = &ast.IsExpr{Pos: pos, X: left, Not: not, What: "TRUE"}
			case p.acceptKw("FALSE"):
				left = &ast.IsExpr{Pos: pos, X: left, Not: not, What: "FALSE"}
			case p.acceptKw("UNKNOWN"):
				left = &ast.IsExpr{Pos: pos, X: left, Not: not, What: "UNKNOWN"}
			case p.acceptKw("JSON"):
				what := "JSON"
				for _, k := range []string{"VALUE", "SCALAR", "ARRAY", "OBJECT"} {
					if p.acceptKw(k) {
						what += " " + k
						break
					}
				}
				left = &ast.IsExpr{Pos: pos, X: left, Not: not, What: what}
			case p.acceptKw("DISTINCT FROM"):
				op := ast.OpDistinct
				if not {
					op = ast.OpNotDistinct
				}
				left = &ast.Binary{Pos: pos, Op: op, L: left, R: p.concatExpr()}
			default:
				p.unexpected()
			}
			continue
		}
		not := false
		if t.upper == "NOT" {
			switch p.peek(1).upper {
			case "BETWEEN", "IN", "LIKE", "SIMILAR":
				not = true
				p.i++
			default:
				return left
			}
		}
		switch {
		case p.acceptKw("BETWEEN"):
			b := &ast.Between{Pos: pos, X: left, Not: not}
			if p.acceptKw("ASYMMETRIC") {
				b.Mode = "ASYMMETRIC"
			} else if p.acceptKw("SYMMETRIC") {
				b.Mode = "SYMMETRIC"
			}
			b.Low = p.concatExpr()
			p.expectKw("AND")
			b.High = p.concatExpr()
			left = b
		case p.acceptKw("IN"):
			in := &ast.InExpr{Pos: pos, X: left, Not: not}
			open := p.pos()
			p.expectOp("(")
			p.enter(open, "expression")
			if p.startsQuery() {
				in.Query = p.query()
			} else {
				in.List = p.exprList()
			}
			p.expectOp(")")
			p.leave()
			left = in
		case p.acceptKw("LIKE"):
			left = p.likeTail(&ast.LikeExpr{Pos: pos, X: left, Not: not})
		case p.acceptKw("SIMILAR TO"):
			left = p.likeTail(&ast.LikeExpr{Pos: pos, X: left, Not: not, Similar: true})
		default:
			if not {
				p.unexpected()
			}
			return left
		}
	}
}

func (p *parser) likeTail(l *ast.LikeExpr) ast.Expr {
	l.Pattern = p.concatExpr()
	if p.acceptKw("ESCAPE") {
		l.Escape = p.concatExpr()
	}
	return l
}

func (p *parser) concatExpr() ast.Expr {
	left := p.addExpr()
	for n := 1; p.peekOp("||"); n++ {
		p.i++
		left = &ast.Binary{Pos: left.Position(), Op: ast.OpConcat, L: left, R: p.addExpr()}
		p.checkChain(n, left)
	}
	return left
}

func (p *parser) addExpr() ast.Expr {
	left := p.mulExpr()
	for n := 1; ; n++ {
		var op ast.BinaryOp
		switch {
		case p.peekOp("+"):
			op = ast.OpAdd
		case p.peekOp("-"):
			op = ast.OpSub
		default:
			return left
		}
		p.i++
		left = &ast.Binary{Pos: left.Position(), Op: op, L: left, R: p.mulExpr()}
		p.checkChain(n, left)
	}
}

func (p *parser) mulExpr() ast.Expr {
	left := p.unaryExpr()
	for n := 1; ; n++ {
		var op ast.BinaryOp
		switch {
		case p.peekOp("*"):
			op = ast.OpMul
		case p.peekOp("/"):
			op = ast.OpDiv
		case p.peekOp("%"):
			op = ast.OpMod
		default:
			return left
		}
		p.i++
		left = &ast.Binary{Pos: left.Position(), Op: op, L: left, R: p.unaryExpr()}
		p.checkChain(n, left)
	}
}

// unaryExpr parses [+|-]... postfix.
//
// NB: like notExpr, it reads a run of signs in a loop, each sign opening a
// level of nesting. A "(" right after the run opens none: the printer
// writes "- -x" as "-(-x)", and that must nest no deeper than what it was
// printed from.
func (p *parser) unaryExpr() ast.Expr {
	var first, last *ast.Unary
	n := 0
	for {
		var op ast.UnaryOp
		switch {
		case p.peekOp("-"):
			op = ast.OpNeg
		case p.peekOp("+"):
			op = ast.OpPlus
		}
		if op == "" {
			break
		}
		u := &ast.Unary{Pos: p.pos(), Op: op}
		p.enter(u.Pos, "expression")
		n++
		p.i++
		if last == nil {
			first = u
		} else {
			last.X = u
		}
		last = u
	}
	if last == nil {
		return p.postfixExpr()
	}
	p.signEnd = p.i
	last.X = p.postfixExpr()
	p.depth -= n
	return first
}

func (p *parser) postfixExpr() ast.Expr {
	x := p.primary()
	for n := 0; ; n++ {
		p.checkChain(n, x)
		switch {
		case p.peekOp("["):
			p.enter(p.pos(), "expression")
			p.i++
			x = &ast.Index{Pos: x.Position(), X: x, Index: p.expr()}
			p.expectOp("]")
			p.leave()
		case p.peekOp("."):
			p.i++
			x = &ast.FieldAccess{Pos: x.Position(), X: x, Field: p.ident()}
		default:
			return x
		}
	}
}

func (p *parser) primary() ast.Expr {
	t := p.tok()
	pos := t.pos
	switch t.kind {
	case tokNumber:
		p.i++
		return &ast.Literal{Pos: pos, Kind: ast.LitNumber, Value: t.text}
	case tokString:
		p.i++
		return &ast.Literal{Pos: pos, Kind: ast.LitString, Value: t.text}
	case tokBinary:
		p.i++
		return &ast.Literal{Pos: pos, Kind: ast.LitBinary, Value: t.text}
	case tokOp:
		if t.text == "(" {
			return p.parenExpr()
		}
	case tokQuotedIdent:
		return p.nameExpr()
	case tokIdent:
		if e := p.keywordExpr(t); e != nil {
			return e
		}
		if !ast.IsReserved(t.text) {
			return p.nameExpr()
		}
	}
	p.expect("expression")
	p.unexpected()
	return nil
}

// parenExpr parses (query), (expr) or the row (expr, expr, ...).
func (p *parser) parenExpr() ast.Expr {
	pos := p.pos()
	if p.i != p.signEnd {
		p.enter(pos, "expression")
		defer p.leave()
	}
	p.i++
	if p.startsQuery() {
		q := p.query()
		p.expectOp(")")
		return &ast.Subquery{Pos: pos, Query: q}
	}
	e := p.expr()
	if p.peekOp(",") {
		p.i++
		r := &ast.RowCtor{Pos: pos, Implicit: true, Items: append([]ast.Expr{e}, p.exprList()...)}
		p.expectOp(")")
		return r
	}
	p.expectOp(")")
	return e
}

// keywordExpr parses expressions introduced by a keyword; nil if t does
// not start one. The forms with operands open a level of nesting.
func (p *parser) keywordExpr(t *token) ast.Expr {
	pos := t.pos
	switch t.upper {
	case "TRUE", "FALSE":
		p.i++
		return &ast.Literal{Pos: pos, Kind: ast.LitBool, Value: t.upper}
	case "NULL":
		p.i++
		return &ast.Literal{Pos: pos, Kind: ast.LitNull}
	case "UNKNOWN":
		p.i++
		return &ast.Literal{Pos: pos, Kind: ast.LitUnknown}
	case "DATE", "TIME", "TIMESTAMP":
		if p.peek(1).kind == tokString {
			p.i++
			return &ast.Literal{Pos: pos, Kind: dateTimeKinds[t.upper], Value: p.next().text}
		}
	case "INTERVAL":
		return p.intervalLit()
	case "CURRENT_TIMESTAMP", "CURRENT_DATE", "CURRENT_TIME", "LOCALTIMESTAMP", "LOCALTIME":
		p.i++
		return &ast.FuncCall{Pos: pos, Name: nameOf(t), NoParens: true}
	case "MATCH_RECOGNIZE":
		p.errorAt(pos, "MATCH_RECOGNIZE is not supported yet")
	}
	if !p.startsForm(t) {
		return nil
	}
	p.enter(pos, "expression")
	defer p.leave()
	return p.keywordForm(t)
}

var dateTimeKinds = map[string]ast.LitKind{"DATE": ast.LitDate, "TIME": ast.LitTime, "TIMESTAMP": ast.LitTimestamp}

// parenForms are the keywords that start a form with operands when "("
// follows them; otherwise they are names.
var parenForms = map[string]bool{
	"TRY_CAST": true, "EXTRACT": true, "TIMESTAMPDIFF": true, "TIMESTAMPADD": true,
	"TRIM": true, "POSITION": true, "SUBSTRING": true, "ROW": true, "DESCRIPTOR": true,
	"FLOOR": true, "CEIL": true, "CEILING": true, "OVERLAY": true, "LEFT": true, "RIGHT": true,
	"JSON_OBJECT": true, "JSON_ARRAY": true, "JSON_VALUE": true, "JSON_QUERY": true, "JSON_EXISTS": true,
}

// startsForm reports whether t starts a keyword form with operands, which
// keywordForm parses.
func (p *parser) startsForm(t *token) bool {
	next := p.peek(1)
	switch t.upper {
	case "CASE", "CAST", "EXISTS", "TABLE":
		return true
	case "ARRAY", "MAP":
		return next.kind == tokOp && next.text == "["
	}
	return parenForms[t.upper] && next.kind == tokOp && next.text == "("
}

// keywordForm parses the form startsForm found at t.
func (p *parser) keywordForm(t *token) ast.Expr {
	pos := t.pos
	switch t.upper {
	case "CASE":
		return p.caseExpr()
	case "CAST", "TRY_CAST":
		p.i++
		p.expectOp("(")
		c := &ast.Cast{Pos: pos, Try: t.upper == "TRY_CAST", X: p.expr()}
		p.expectKw("AS")
		c.Type = p.typ()
		p.expectOp(")")
		return c
	case "EXISTS":
		p.i++
		p.expectOp("(")
		e := &ast.Exists{Pos: pos, Query: p.query()}
		p.expectOp(")")
		return e
	case "EXTRACT":
		p.i += 2
		e := &ast.Extract{Pos: pos, Unit: p.timeUnit(extractUnits)}
		p.expectKw("FROM")
		e.X = p.expr()
		p.expectOp(")")
		return e
	case "TIMESTAMPDIFF", "TIMESTAMPADD":
		p.i += 2
		unit := p.timeUnit(diffUnits)
		p.expectOp(",")
		a := p.expr()
		p.expectOp(",")
		b := p.expr()
		p.expectOp(")")
		if t.upper == "TIMESTAMPDIFF" {
			return &ast.TimestampDiff{Pos: pos, Unit: unit, A: a, B: b}
		}
		return &ast.TimestampAdd{Pos: pos, Unit: unit, N: a, T: b}
	case "TRIM":
		return p.trim()
	case "POSITION":
		p.i += 2
		a := p.concatExpr()
		if p.acceptKw("IN") {
			b := p.expr()
			p.expectOp(")")
			return &ast.FuncCall{Pos: pos, Name: nameOf(t), Args: []ast.Expr{a, b}}
		}
		return p.callTail(pos, nameOf(t), a)
	case "SUBSTRING":
		p.i += 2
		x := p.expr()
		if p.acceptKw("FROM") {
			args := []ast.Expr{x, p.expr()}
			if p.acceptKw("FOR") {
				args = append(args, p.expr())
			}
			p.expectOp(")")
			return &ast.FuncCall{Pos: pos, Name: nameOf(t), Args: args}
		}
		return p.callTail(pos, nameOf(t), x)
	case "ROW":
		p.i += 2
		r := &ast.RowCtor{Pos: pos}
		if !p.peekOp(")") {
			r.Items = p.exprList()
		}
		p.expectOp(")")
		return r
	case "ARRAY", "MAP":
		p.i += 2
		var items []ast.Expr
		if !p.peekOp("]") {
			items = p.exprList()
		}
		p.expectOp("]")
		if t.upper == "ARRAY" {
			return &ast.ArrayCtor{Pos: pos, Items: items}
		}
		if len(items)%2 != 0 {
			p.errorAt(pos, "MAP[...] needs an even number of items (key, value, ...)")
		}
		return &ast.MapCtor{Pos: pos, Items: items}
	case "DESCRIPTOR":
		p.i++
		return &ast.Descriptor{Pos: pos, Columns: p.identList()}
	case "JSON_OBJECT", "JSON_ARRAY", "JSON_VALUE", "JSON_QUERY", "JSON_EXISTS":
		return p.jsonCall(t)
	case "LEFT", "RIGHT":
		// The string functions LEFT(s, n) and RIGHT(s, n); the words are
		// reserved for joins, which never start an expression.
		p.i += 2
		return p.callArgs(pos, nameOf(t))
	case "OVERLAY":
		// OVERLAY(s PLACING r FROM start [FOR len]), a call of four or
		// three arguments.
		p.i += 2
		f := &ast.FuncCall{Pos: pos, Name: nameOf(t), Args: []ast.Expr{p.expr()}}
		p.expectKw("PLACING")
		f.Args = append(f.Args, p.expr())
		p.expectKw("FROM")
		f.Args = append(f.Args, p.expr())
		if p.acceptKw("FOR") {
			f.Args = append(f.Args, p.expr())
		}
		p.expectOp(")")
		return f
	case "FLOOR", "CEIL", "CEILING":
		// FLOOR(x TO unit), or an ordinary call FLOOR(x).
		p.i += 2
		x := p.expr()
		if p.acceptKw("TO") {
			e := &ast.FloorCeil{Pos: pos, Ceil: t.upper != "FLOOR", X: x, Unit: p.timeUnit(extractUnits)}
			p.expectOp(")")
			return e
		}
		return p.callTail(pos, nameOf(t), x)
	case "TABLE":
		p.i++
		a := &ast.TableArg{Pos: pos, Name: p.objectName()}
		p.partitionBy(a)
		return a
	}
	panic("parser: keywordForm called without a form")
}

func nameOf(t *token) *ast.ObjectName {
	return &ast.ObjectName{Pos: t.pos, Parts: []*ast.Ident{{Pos: t.pos, Name: t.upper}}}
}

// nameExpr parses a dotted name: a column reference or a function call.
func (p *parser) nameExpr() ast.Expr {
	pos := p.pos()
	parts := []*ast.Ident{p.ident()}
	for p.peekOp(".") && isIdentTok(p.peek(1)) {
		p.i++
		parts = append(parts, p.ident())
	}
	if p.peekOp("(") {
		p.enter(pos, "expression")
		defer p.leave()
		p.i++
		return p.callArgs(pos, &ast.ObjectName{Pos: pos, Parts: parts})
	}
	return &ast.ColumnRef{Pos: pos, Parts: parts}
}

// callArgs parses a call's arguments after "(" and what follows ")".
func (p *parser) callArgs(pos ast.Pos, name *ast.ObjectName) ast.Expr {
	f := &ast.FuncCall{Pos: pos, Name: name}
	switch {
	case p.acceptOp(")"):
		return p.callSuffix(f)
	case p.peekOp("*"):
		p.i++
		f.Star = true
		p.expectOp(")")
		return p.callSuffix(f)
	case p.acceptKw("DISTINCT"):
		f.Distinct = true
	case p.acceptKw("ALL"):
	}
	return p.callTail(pos, name, nil, f)
}

// callTail parses the remaining arguments of a call, first being an
// argument already parsed (or nil), then ")" and the suffixes.
func (p *parser) callTail(pos ast.Pos, name *ast.ObjectName, first ast.Expr, fs ...*ast.FuncCall) ast.Expr {
	f := &ast.FuncCall{Pos: pos, Name: name}
	if len(fs) > 0 {
		f = fs[0]
	}
	if first != nil {
		f.Args = append(f.Args, first)
		if !p.acceptOp(",") {
			p.expectOp(")")
			return p.callSuffix(f)
		}
	}
	for {
		f.Args = append(f.Args, p.arg())
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")")
	return p.callSuffix(f)
}

// arg parses a call argument: an expression or name => expression. A
// subquery may be followed by PARTITION BY, as a table argument.
func (p *parser) arg() ast.Expr {
	if t := p.tok(); (isIdentTok(t) || t.kind == tokIdent) && p.peek(1).kind == tokOp && p.peek(1).text == "=>" {
		// NB: a reserved word names a parameter too (the window
		// functions' OFFSET =>).
		n := &ast.NamedArg{Pos: t.pos, Name: &ast.Ident{Pos: t.pos, Name: t.text, Quoted: t.kind == tokQuotedIdent}}
		p.i += 2
		n.Value = p.partitionedArg(p.expr())
		return n
	}
	return p.partitionedArg(p.expr())
}

// partitionedArg returns e, or for a subquery e followed by PARTITION BY
// the table argument (e) PARTITION BY cols.
func (p *parser) partitionedArg(e ast.Expr) ast.Expr {
	sq, ok := e.(*ast.Subquery)
	if !ok || !p.peekKw("PARTITION BY") {
		return e
	}
	a := &ast.TableArg{Pos: sq.Pos, Query: sq.Query}
	p.partitionBy(a)
	return a
}

// partitionBy parses the PARTITION BY col or PARTITION BY (cols, ...) of a
// table argument, if there is one.
func (p *parser) partitionBy(a *ast.TableArg) {
	if !p.acceptKw("PARTITION BY") {
		return
	}
	if p.peekOp("(") {
		p.i++
		a.PartitionBy = p.exprList()
		p.expectOp(")")
	} else {
		a.PartitionBy = []ast.Expr{p.concatExpr()}
	}
}

func (p *parser) callSuffix(f *ast.FuncCall) ast.Expr {
	if p.peekKw("FILTER") && p.peek(1).text == "(" {
		p.i += 2
		p.expectKw("WHERE")
		f.Filter = p.expr()
		p.expectOp(")")
	}
	if p.acceptKw("OVER") {
		if p.peekOp("(") {
			f.Over = p.windowSpec()
		} else {
			f.OverName = p.ident()
		}
	}
	return f
}

// windowSpec parses ( [name] [PARTITION BY ...] [ORDER BY ...] [frame] ).
func (p *parser) windowSpec() *ast.WindowSpec {
	w := &ast.WindowSpec{Pos: p.pos()}
	p.expectOp("(")
	if isIdentTok(p.tok()) && !p.peekKw("ROWS") && !p.peekKw("RANGE") {
		w.Ref = p.ident()
	}
	if p.acceptKw("PARTITION BY") {
		w.PartitionBy = p.exprList()
	}
	if p.acceptKw("ORDER BY") {
		w.OrderBy = p.orderItems()
	}
	if p.isKw("ROWS") || p.isKw("RANGE") {
		f := &ast.Frame{Pos: p.pos(), Rows: p.tok().upper == "ROWS"}
		p.i++
		if p.acceptKw("BETWEEN") {
			f.Start = p.frameBound()
			p.expectKw("AND")
			f.End = p.frameBound()
		} else {
			f.Start = p.frameBound()
		}
		w.Frame = f
	}
	p.expectOp(")")
	return w
}

func (p *parser) frameBound() *ast.FrameBound {
	b := &ast.FrameBound{Pos: p.pos()}
	switch {
	case p.acceptKw("UNBOUNDED PRECEDING"):
		b.Kind = "UNBOUNDED PRECEDING"
	case p.acceptKw("UNBOUNDED FOLLOWING"):
		b.Kind = "UNBOUNDED FOLLOWING"
	case p.acceptKw("CURRENT ROW"):
		b.Kind = "CURRENT ROW"
	default:
		b.Offset = p.concatExpr()
		switch {
		case p.acceptKw("PRECEDING"):
			b.Kind = "PRECEDING"
		case p.acceptKw("FOLLOWING"):
			b.Kind = "FOLLOWING"
		default:
			p.unexpected()
		}
	}
	return b
}

func (p *parser) caseExpr() ast.Expr {
	c := &ast.Case{Pos: p.pos()}
	p.i++
	if !p.isKw("WHEN") {
		c.Operand = p.expr()
	}
	for p.isKw("WHEN") {
		w := &ast.When{Pos: p.pos()}
		p.i++
		w.Cond = p.expr()
		p.expectKw("THEN")
		w.Result = p.expr()
		c.Whens = append(c.Whens, w)
	}
	if len(c.Whens) == 0 {
		p.unexpected()
	}
	if p.acceptKw("ELSE") {
		c.Else = p.expr()
	}
	p.expectKw("END")
	return c
}

func (p *parser) trim() ast.Expr {
	tr := &ast.Trim{Pos: p.pos()}
	p.i += 2
	for _, m := range []string{"BOTH", "LEADING", "TRAILING"} {
		if p.acceptKw(m) {
			tr.Mode = m
			break
		}
	}
	if p.acceptKw("FROM") {
		tr.X = p.expr()
	} else {
		e := p.expr()
		if p.acceptKw("FROM") {
			tr.Chars = e
			tr.X = p.expr()
		} else if tr.Mode != "" {
			p.unexpected()
		} else {
			tr.X = e
		}
	}
	p.expectOp(")")
	return tr
}

var (
	intervalUnits = units("YEAR MONTH DAY HOUR MINUTE SECOND YEARS MONTHS DAYS HOURS MINUTES SECONDS")
	extractUnits  = units("YEAR QUARTER MONTH WEEK DAY HOUR MINUTE SECOND MILLISECOND MICROSECOND NANOSECOND " +
		"DOW DOY ISODOW ISOYEAR EPOCH DECADE CENTURY MILLENNIUM")
	diffUnits = units("YEAR QUARTER MONTH WEEK DAY HOUR MINUTE SECOND MILLISECOND MICROSECOND NANOSECOND " +
		"SQL_TSI_YEAR SQL_TSI_QUARTER SQL_TSI_MONTH SQL_TSI_WEEK SQL_TSI_DAY SQL_TSI_HOUR SQL_TSI_MINUTE " +
		"SQL_TSI_SECOND SQL_TSI_FRAC_SECOND")
)

type unitSet struct {
	names []string
	set   map[string]bool
}

func units(s string) unitSet {
	u := unitSet{names: strings.Fields(s), set: map[string]bool{}}
	for _, n := range u.names {
		u.set[n] = true
	}
	return u
}

// timeUnit parses one of the bare time unit keywords in us.
func (p *parser) timeUnit(us unitSet) ast.TimeUnit {
	t := p.tok()
	if t.kind == tokIdent && us.set[t.upper] {
		p.i++
		return ast.TimeUnit(t.upper)
	}
	p.expect("time unit (" + strings.Join(us.names[:min(len(us.names), 8)], ", ") + ", ...)")
	p.unexpected()
	return ""
}

// intervalLit parses INTERVAL [+|-] ('value' | number) qualifier.
func (p *parser) intervalLit() ast.Expr {
	l := &ast.IntervalLit{Pos: p.pos()}
	p.i++
	if p.peekOp("-") {
		l.Negative = true
		p.i++
	} else if p.peekOp("+") {
		p.i++
	}
	switch t := p.tok(); t.kind {
	case tokString:
		l.Value = t.text
	case tokNumber:
		l.Value, l.Numeric = t.text, true
	default:
		p.expect("string literal")
		p.unexpected()
	}
	p.i++
	l.Qualifier = p.intervalQualifier()
	return l
}

func (p *parser) intervalQualifier() *ast.IntervalQualifier {
	q := &ast.IntervalQualifier{Pos: p.pos()}
	q.Start = p.timeUnit(intervalUnits)
	q.StartArgs = p.optIntArgs()
	if p.acceptKw("TO") {
		q.End = p.timeUnit(intervalUnits)
		q.EndArgs = p.optIntArgs()
	}
	return q
}

// optIntArgs parses an optional (n[, m]).
func (p *parser) optIntArgs() []int {
	if !p.peekOp("(") {
		return nil
	}
	p.i++
	args := []int{p.integer()}
	if p.acceptOp(",") {
		args = append(args, p.integer())
	}
	p.expectOp(")")
	return args
}

// jsonCall parses the SQL/JSON functions, whose clauses are keywords
// inside the parentheses: JSON_OBJECT([KEY] k VALUE v, ...), JSON_ARRAY(v,
// ...), each with [NULL|ABSENT] ON NULL; JSON_VALUE, JSON_QUERY and
// JSON_EXISTS (doc, path) with their RETURNING, WRAPPER, ON EMPTY and ON
// ERROR clauses. JSON_OBJECT's arguments are k1, v1, k2, v2, ...; the
// clauses go into the call's JSON field as written.
func (p *parser) jsonCall(t *token) ast.Expr {
	pos := t.pos
	p.i += 2
	f := &ast.FuncCall{Pos: pos, Name: nameOf(t)}
	switch t.upper {
	case "JSON_OBJECT", "JSON_ARRAY":
		for !p.peekOp(")") && !p.isJSONOnNull() {
			if t.upper == "JSON_OBJECT" {
				p.acceptKw("KEY")
				k := p.expr()
				p.expectKw("VALUE")
				f.Args = append(f.Args, k, p.expr())
			} else {
				f.Args = append(f.Args, p.expr())
			}
			if !p.acceptOp(",") {
				break
			}
		}
		switch {
		case p.acceptKw("NULL ON NULL"):
			f.JSON = &ast.JSONClauses{OnNull: "NULL"}
		case p.acceptKw("ABSENT ON NULL"):
			f.JSON = &ast.JSONClauses{OnNull: "ABSENT"}
		}
	default:
		f.Args = append(f.Args, p.expr())
		p.expectOp(",")
		f.Args = append(f.Args, p.expr())
		f.JSON = p.jsonClauses(t.upper)
	}
	p.expectOp(")")
	return f
}

func (p *parser) isJSONOnNull() bool {
	return p.peekKw("NULL ON NULL") || p.peekKw("ABSENT ON NULL")
}

// jsonReturning are the types JSON_VALUE ... RETURNING takes: those
// Flink's SqlJsonUtils converts a JSON scalar to, and the strings.
var jsonReturning = map[string]bool{
	"VARCHAR": true, "STRING": true, "BOOLEAN": true, "TINYINT": true, "SMALLINT": true, "INT": true, "INTEGER": true,
	"BIGINT": true, "FLOAT": true, "REAL": true, "DOUBLE": true, "DECIMAL": true, "DEC": true, "NUMERIC": true,
}

// jsonClauses reads the clauses after the path of JSON_VALUE, JSON_QUERY
// and JSON_EXISTS, in Calcite's order: RETURNING, the wrapper (JSON_QUERY),
// then ON EMPTY and ON ERROR in either order, each at most once. It
// returns nil when there are none.
func (p *parser) jsonClauses(fn string) *ast.JSONClauses {
	j := &ast.JSONClauses{}
	if p.acceptKw("RETURNING") {
		// NB: baseType, not typ: a NULL after the type starts NULL ON ...
		tat := p.pos()
		j.Returning = p.baseType()
		name := strings.ToUpper(j.Returning.Name)
		switch {
		case fn == "JSON_EXISTS":
			p.errorAt(tat, "JSON_EXISTS has no RETURNING clause")
		case fn == "JSON_VALUE" && (!jsonReturning[name] || j.Returning.Elem != nil):
			p.errorAt(tat, "JSON_VALUE with RETURNING "+j.Returning.String()+" is not supported yet")
		case fn == "JSON_QUERY" && (j.Returning.Elem != nil || name != "STRING" && name != "VARCHAR"):
			// An ARRAY needs composite types.
			p.errorAt(tat, "JSON_QUERY with RETURNING "+j.Returning.String()+" is not supported yet")
		}
	}
	if fn == "JSON_QUERY" {
		switch {
		case p.acceptKw("WITHOUT"):
			p.acceptKw("ARRAY")
			p.expectKw("WRAPPER")
			j.Wrapper = "WITHOUT ARRAY"
		case p.acceptKw("WITH"):
			j.Wrapper = "WITH UNCONDITIONAL ARRAY"
			if p.acceptKw("CONDITIONAL") {
				j.Wrapper = "WITH CONDITIONAL ARRAY"
			} else {
				p.acceptKw("UNCONDITIONAL")
			}
			p.acceptKw("ARRAY")
			p.expectKw("WRAPPER")
		}
	}
	for {
		at := p.pos()
		b := &ast.JSONBehavior{Pos: at}
		switch {
		case p.acceptKw("NULL"):
			b.Kind = "NULL"
		case p.acceptKw("ERROR"):
			b.Kind = "ERROR"
		case fn == "JSON_VALUE" && p.acceptKw("DEFAULT"):
			b.Kind, b.Default = "DEFAULT", p.expr()
		case fn == "JSON_QUERY" && p.acceptKw("EMPTY ARRAY"):
			b.Kind = "EMPTY ARRAY"
		case fn == "JSON_QUERY" && p.acceptKw("EMPTY OBJECT"):
			b.Kind = "EMPTY OBJECT"
		case fn == "JSON_EXISTS" && p.acceptKw("TRUE"):
			b.Kind = "TRUE"
		case fn == "JSON_EXISTS" && p.acceptKw("FALSE"):
			b.Kind = "FALSE"
		case fn == "JSON_EXISTS" && p.acceptKw("UNKNOWN"):
			b.Kind = "UNKNOWN"
		default:
			if *j == (ast.JSONClauses{}) {
				return nil
			}
			return j
		}
		p.expectKw("ON")
		onAt := p.pos()
		switch {
		case fn != "JSON_EXISTS" && p.acceptKw("EMPTY"):
			if j.OnEmpty != nil {
				p.errorAt(at, fn+" has two ON EMPTY clauses")
			}
			j.OnEmpty = b
		case p.acceptKw("ERROR"):
			if j.OnError != nil {
				p.errorAt(at, fn+" has two ON ERROR clauses")
			}
			j.OnError = b
		case fn == "JSON_EXISTS" && p.peekKw("EMPTY"):
			p.errorAt(onAt, "JSON_EXISTS has no ON EMPTY clause")
			p.i++
		default:
			p.unexpected()
			return j
		}
		if fn == "JSON_EXISTS" && b.Kind != "TRUE" && b.Kind != "FALSE" && b.Kind != "UNKNOWN" && b.Kind != "ERROR" {
			p.errorAt(at, "JSON_EXISTS takes TRUE, FALSE, UNKNOWN or ERROR ON ERROR, not "+b.Kind)
		}
	}
}
