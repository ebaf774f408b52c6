package parser

import (
	"github.com/braidflow/braid/sql/ast"
)

// typ parses a SQL type with its [NOT] NULL suffix and any postfix ARRAY
// or MULTISET.
func (p *parser) typ() *ast.Type {
	t := p.baseType()
	p.nullability(t)
	for n := 1; p.peekKw("ARRAY") || p.peekKw("MULTISET"); n++ {
		w := &ast.Type{Pos: t.Pos, Name: p.tok().upper, Elem: t, Postfix: true}
		p.i++
		p.nullability(w)
		t = w
		p.checkChain(n, t)
	}
	return t
}

func (p *parser) nullability(t *ast.Type) {
	if p.acceptKw("NOT NULL") {
		t.Null = ast.NotNull
	} else if p.acceptKw("NULL") {
		t.Null = ast.Null
	}
}

func (p *parser) baseType() *ast.Type {
	p.expect("type")
	tk := p.tok()
	if tk.kind != tokIdent && tk.kind != tokQuotedIdent {
		p.unexpected()
	}
	t := &ast.Type{Pos: tk.pos, Name: tk.upper}
	if tk.kind == tokQuotedIdent {
		t.Name, t.Quoted = tk.text, true
	}
	p.i++
	switch t.Name {
	case "DOUBLE":
		if p.acceptKw("PRECISION") {
			t.Name = "DOUBLE PRECISION"
		}
	case "ARRAY", "MULTISET":
		p.enter(t.Pos, "type")
		p.expectOp("<")
		t.Elem = p.typ()
		p.expectOp(">")
		p.leave()
		return t
	case "MAP":
		p.enter(t.Pos, "type")
		p.expectOp("<")
		t.Key = p.typ()
		p.expectOp(",")
		t.Value = p.typ()
		p.expectOp(">")
		p.leave()
		return t
	case "ROW":
		p.enter(t.Pos, "type")
		defer p.leave()
		close := ">"
		if p.peekOp("(") {
			t.Parens = true
			close = ")"
			p.i++
		} else {
			p.expectOp("<")
		}
		if !p.peekOp(close) {
			for {
				f := &ast.RowField{Pos: p.pos(), Name: p.ident()}
				f.Type = p.typ()
				if p.tok().kind == tokString {
					f.Comment = p.next().text
				}
				t.Fields = append(t.Fields, f)
				if !p.acceptOp(",") {
					break
				}
			}
		}
		p.expectOp(close)
		return t
	case "INTERVAL":
		t.Interval = p.intervalQualifier()
		return t
	case "CHARACTER", "CHAR", "BINARY":
		if p.acceptKw("VARYING") {
			t.Name = map[string]string{"CHARACTER": "CHARACTER VARYING", "CHAR": "CHAR VARYING", "BINARY": "BINARY VARYING"}[t.Name]
		}
	}
	t.Args = p.optIntArgs()
	switch t.Name {
	case "TIME", "TIMESTAMP":
		switch {
		case p.acceptKw("WITHOUT TIME ZONE"):
			t.TimeZone = "WITHOUT TIME ZONE"
		case p.acceptKw("WITH LOCAL TIME ZONE"):
			t.TimeZone = "WITH LOCAL TIME ZONE"
		case p.isKw("WITH TIME ZONE"):
			p.errorAt(p.pos(), t.Name+" WITH TIME ZONE is not supported; use WITH LOCAL TIME ZONE")
		}
	}
	return t
}
