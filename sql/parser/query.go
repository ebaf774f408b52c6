package parser

import (
	"github.com/braidflow/braid/sql/ast"
)

// startsQuery reports whether the tokens at the cursor begin a query,
// looking through any number of opening parentheses.
//
// NB: each level of "((((" asks again one token further on. The answer is
// the same for every token of a run of "(", so the run is scanned once and
// remembered: parsing stays linear. The cursor never moves back, so one run
// is all there is to remember. A run longer than the levels left before
// MaxNestingDepth fails the parse whatever the answer, so the scan stops
// there (answering no) rather than lex a hostile run to its end.
func (p *parser) startsQuery() bool {
	if p.i < p.parenRun.from || p.i > p.parenRun.end {
		// One more "(" than the levels left, and one for a "(" after a
		// sign, which opens none.
		last := p.i + MaxNestingDepth - p.depth + 2
		end := p.i
		for t := p.toks.at(end); t.kind == tokOp && t.text == "(" && end < last; t = p.toks.at(end) {
			end++
		}
		p.scanned += end - p.i + 1
		p.parenRun.from, p.parenRun.end = p.i, end
	}
	t := p.toks.at(p.parenRun.end)
	return t.kind == tokIdent && (t.upper == "SELECT" || t.upper == "WITH" || t.upper == "VALUES")
}

// query parses [WITH ...] body [ORDER BY ...] [LIMIT ...] [OFFSET ...].
func (p *parser) query() *ast.Query {
	q := &ast.Query{Pos: p.pos()}
	if p.acceptKw("WITH") {
		for {
			c := &ast.CTE{Pos: p.pos(), Name: p.ident()}
			if p.peekOp("(") {
				c.Columns = p.identList()
			}
			p.expectKw("AS")
			open := p.pos()
			p.expectOp("(")
			p.enter(open, "query")
			c.Query = p.query()
			p.expectOp(")")
			p.leave()
			q.With = append(q.With, c)
			if !p.acceptOp(",") {
				break
			}
		}
	}
	q.Body = p.setExpr(1)
	p.queryTail(q)
	return q
}

func (p *parser) queryTail(q *ast.Query) {
	if p.acceptKw("ORDER BY") {
		q.OrderBy = p.orderItems()
	}
	if p.acceptKw("LIMIT") {
		q.Limit = p.expr()
	}
	if p.acceptKw("OFFSET") {
		q.Offset = p.expr()
		if !p.acceptKw("ROWS") {
			p.acceptKw("ROW")
		}
	}
	if p.acceptKw("FETCH") {
		if !p.acceptKw("FIRST") {
			p.expectKw("NEXT")
		}
		if q.Limit != nil {
			p.errorAt(p.pos(), "LIMIT and FETCH cannot both be given")
		}
		q.Limit = p.expr()
		if !p.acceptKw("ROWS") {
			p.expectKw("ROW")
		}
		p.expectKw("ONLY")
	}
}

func (p *parser) orderItems() []*ast.OrderItem {
	var items []*ast.OrderItem
	for {
		o := &ast.OrderItem{Pos: p.pos(), Expr: p.expr()}
		if p.acceptKw("DESC") {
			o.Desc = true
		} else if p.acceptKw("ASC") {
			o.Asc = true
		}
		if p.acceptKw("NULLS FIRST") {
			o.Nulls = "FIRST"
		} else if p.acceptKw("NULLS LAST") {
			o.Nulls = "LAST"
		}
		items = append(items, o)
		if !p.acceptOp(",") {
			return items
		}
	}
}

func setOpPrec(p *parser) (ast.SetOpKind, int) {
	switch {
	case p.isKw("UNION"):
		return ast.Union, 1
	case p.isKw("EXCEPT"):
		return ast.Except, 1
	case p.isKw("INTERSECT"):
		return ast.Intersect, 2
	}
	return "", 0
}

// setExpr parses set operations binding at least as tightly as min.
func (p *parser) setExpr(min int) ast.QueryExpr {
	left := p.queryPrimary()
	for n := 0; ; n++ {
		p.checkChain(n, left)
		op, prec := setOpPrec(p)
		if prec == 0 || prec < min {
			return left
		}
		s := &ast.SetOp{Pos: left.Position(), Op: op, L: left}
		p.i++
		if p.acceptKw("ALL") {
			s.All = true
		} else if p.acceptKw("DISTINCT") {
			s.Distinct = true
		}
		s.R = p.setExpr(prec + 1)
		left = s
	}
}

func (p *parser) queryPrimary() ast.QueryExpr {
	switch {
	case p.isKw("SELECT"):
		return p.selectBlock()
	case p.isKw("VALUES"):
		return p.values()
	case p.isOp("("):
		p.enter(p.pos(), "query")
		defer p.leave()
		p.i++
		q := p.query()
		p.expectOp(")")
		if len(q.With) == 0 && len(q.OrderBy) == 0 && q.Limit == nil && q.Offset == nil {
			return q.Body
		}
		return q
	}
	p.unexpected()
	return nil
}

func (p *parser) values() *ast.Values {
	v := &ast.Values{Pos: p.pos()}
	p.expectKw("VALUES")
	for {
		if p.peekOp("(") {
			r := &ast.RowCtor{Pos: p.pos(), Implicit: true}
			p.i++
			r.Items = p.exprList()
			p.expectOp(")")
			v.Rows = append(v.Rows, r)
		} else {
			v.Rows = append(v.Rows, p.expr())
		}
		if !p.acceptOp(",") {
			return v
		}
	}
}

func (p *parser) exprList() []ast.Expr {
	var es []ast.Expr
	for {
		es = append(es, p.expr())
		if !p.acceptOp(",") {
			return es
		}
	}
}

func (p *parser) selectBlock() *ast.Select {
	s := &ast.Select{Pos: p.pos()}
	p.expectKw("SELECT")
	s.Hints = p.hints()
	if p.acceptKw("DISTINCT") {
		s.Distinct = true
	} else if p.acceptKw("ALL") {
		s.All = true
	}
	if len(s.Hints) == 0 {
		s.Hints = p.hints()
	}
	for {
		s.Items = append(s.Items, p.selectItem())
		if !p.acceptOp(",") {
			break
		}
	}
	if p.acceptKw("FROM") {
		s.From = p.tableExpr()
	}
	if p.acceptKw("WHERE") {
		s.Where = p.expr()
	}
	if p.acceptKw("GROUP BY") {
		s.GroupBy = p.groupBy()
	}
	if p.acceptKw("HAVING") {
		s.Having = p.expr()
	}
	if p.acceptKw("WINDOW") {
		for {
			w := &ast.NamedWindow{Pos: p.pos(), Name: p.ident()}
			p.expectKw("AS")
			w.Spec = p.windowSpec()
			s.Windows = append(s.Windows, w)
			if !p.acceptOp(",") {
				break
			}
		}
	}
	if p.peekKw("QUALIFY") {
		p.errorAt(p.pos(), "QUALIFY is not supported yet")
	}
	return s
}

func (p *parser) selectItem() *ast.SelectItem {
	it := &ast.SelectItem{Pos: p.pos()}
	// * or qualifier.*
	n := 0
	for isIdentTok(p.peek(n)) && p.peek(n+1).kind == tokOp && p.peek(n+1).text == "." {
		n += 2
	}
	if t := p.peek(n); t.kind == tokOp && t.text == "*" {
		st := &ast.Star{Pos: p.pos()}
		for !p.peekOp("*") {
			st.Qualifier = append(st.Qualifier, p.ident())
			p.i++ // "."
		}
		p.i++
		it.Expr = st
		return it
	}
	it.Expr = p.expr()
	if p.acceptKw("AS") {
		it.Alias = p.ident()
	} else if isIdentTok(p.tok()) {
		it.Alias = p.ident()
	}
	return it
}

func (p *parser) groupBy() []ast.Expr {
	var out []ast.Expr
	for {
		pos := p.pos()
		var kind string
		switch {
		case p.acceptKw("GROUPING SETS"):
			kind = "GROUPING SETS"
		case p.peekKw("ROLLUP") && p.peek(1).text == "(":
			p.i++
			kind = "ROLLUP"
		case p.peekKw("CUBE") && p.peek(1).text == "(":
			p.i++
			kind = "CUBE"
		}
		if kind == "" {
			out = append(out, p.expr())
		} else {
			g := &ast.GroupingSets{Pos: pos, Kind: kind}
			p.expectOp("(")
			for {
				g.Sets = append(g.Sets, p.groupingSet())
				if !p.acceptOp(",") {
					break
				}
			}
			p.expectOp(")")
			out = append(out, g)
		}
		if !p.acceptOp(",") {
			return out
		}
	}
}

func (p *parser) groupingSet() []ast.Expr {
	if p.peekOp("(") {
		if p.peek(1).kind == tokOp && p.peek(1).text == ")" {
			p.i += 2
			return []ast.Expr{}
		}
		p.i++
		es := p.exprList()
		p.expectOp(")")
		return es
	}
	return []ast.Expr{p.expr()}
}

// tableExpr parses a FROM clause: table primaries joined left to right.
func (p *parser) tableExpr() ast.TableExpr {
	left := p.tablePrimary()
	for n := 0; ; n++ {
		p.checkChain(n, left)
		pos := left.Position()
		var kind ast.JoinKind
		npos := p.pos()
		natural := p.acceptKw("NATURAL")
		switch {
		case p.acceptOp(","):
			kind = ast.CommaJoin
		case p.acceptKw("CROSS JOIN"):
			kind = ast.CrossJoin
		case p.acceptKw("JOIN"), p.acceptKwQuiet("INNER JOIN"):
			kind = ast.InnerJoin
		case p.acceptKw("LEFT JOIN"), p.acceptKwQuiet("LEFT OUTER JOIN"):
			kind = ast.LeftJoin
		case p.acceptKw("RIGHT JOIN"), p.acceptKwQuiet("RIGHT OUTER JOIN"):
			kind = ast.RightJoin
		case p.acceptKw("FULL JOIN"), p.acceptKwQuiet("FULL OUTER JOIN"):
			kind = ast.FullJoin
		default:
			if natural {
				p.expect("JOIN")
				p.unexpected()
			}
			return left
		}
		if natural && (kind == ast.CommaJoin || kind == ast.CrossJoin) {
			p.errorAt(npos, "a NATURAL join cannot be a CROSS JOIN")
		}
		j := &ast.Join{Pos: pos, Kind: kind, Natural: natural, L: left, R: p.tablePrimary()}
		if natural {
			if p.peekKw("ON") || p.peekKw("USING") {
				p.errorAt(p.pos(), "a NATURAL join cannot have an ON or USING clause")
			}
		} else if kind != ast.CommaJoin && kind != ast.CrossJoin {
			if p.acceptKw("ON") {
				j.On = p.expr()
			} else if p.acceptKw("USING") {
				j.Using = p.identList()
			}
		}
		left = j
	}
}

// tablePrimary parses a table name, a table function, UNNEST or a derived
// or parenthesised table; all but a name open a level of nesting.
func (p *parser) tablePrimary() ast.TableExpr {
	pos := p.pos()
	lateral := p.acceptKw("LATERAL")
	var t ast.TableExpr
	switch {
	case p.peekKw("TABLE") && p.peek(1).text == "(":
		p.enter(pos, "query")
		p.i += 2
		f := &ast.TableFunc{Pos: pos, Lateral: lateral}
		call, ok := p.expr().(*ast.FuncCall)
		if !ok || call.NoParens {
			p.errorAt(pos, "TABLE(...) needs a table function call")
		}
		f.Call = call
		p.expectOp(")")
		p.leave()
		f.Alias = p.tableAlias()
		t = f
	case p.isOp("(") && p.startsQuery():
		p.enter(pos, "query")
		p.i++
		d := &ast.DerivedTable{Pos: pos, Lateral: lateral, Query: p.query()}
		p.expectOp(")")
		p.leave()
		d.Alias = p.tableAlias()
		t = d
	case lateral:
		p.expect("TABLE")
		p.expect(`"("`)
		p.unexpected()
	case p.peekKw("UNNEST") && p.peek(1).text == "(":
		p.enter(pos, "query")
		p.i += 2
		u := &ast.Unnest{Pos: pos, Args: p.exprList()}
		p.expectOp(")")
		p.leave()
		u.WithOrdinality = p.acceptKw("WITH ORDINALITY")
		u.Alias = p.tableAlias()
		t = u
	case p.isOp("("):
		p.enter(pos, "query")
		p.i++
		pt := &ast.ParenTable{Pos: pos, Table: p.tableExpr()}
		p.expectOp(")")
		p.leave()
		t = pt
	default:
		n := &ast.TableName{Pos: pos, Name: p.objectName()}
		n.Hints = p.hints()
		if p.acceptKw("FOR SYSTEM_TIME AS OF") {
			n.SystemTime = p.expr()
		}
		n.Alias = p.tableAlias()
		t = n
	}
	if p.peekKw("MATCH_RECOGNIZE") {
		p.errorAt(p.pos(), "MATCH_RECOGNIZE is not supported yet")
	}
	return t
}

// tableAlias parses [AS] name [(cols)] if present.
func (p *parser) tableAlias() *ast.TableAlias {
	pos := p.pos()
	if !p.acceptKw("AS") && !isIdentTok(p.tok()) {
		return nil
	}
	a := &ast.TableAlias{Pos: pos, Name: p.ident()}
	if p.peekOp("(") {
		a.Columns = p.identList()
	}
	return a
}
