package ast

import "strings"

// printer accumulates SQL text. Nodes format themselves into it.
type printer struct {
	b strings.Builder
}

func (p *printer) str(s string) { p.b.WriteString(s) }

// list prints items separated by ", ".
func list[T Node](p *printer, items []T) {
	for i, it := range items {
		if i > 0 {
			p.str(", ")
		}
		it.format(p)
	}
}

func toString(n Node) string {
	var p printer
	n.format(&p)
	return p.b.String()
}

// Expression precedence levels, loosest first; the printer parenthesizes a
// child whose level is below what its position requires.
const (
	precOr = iota + 1
	precAnd
	precNot
	precCmp
	precConcat
	precAdd
	precMul
	precUnary
	precPostfix
	precAtom
)

func exprPrec(e Expr) int {
	switch e := e.(type) {
	case *Binary:
		return binaryPrec(e.Op)
	case *Unary:
		if e.Op == OpNot {
			return precNot
		}
		return precUnary
	case *IsExpr, *Between, *InExpr, *LikeExpr:
		return precCmp
	case *Index, *FieldAccess:
		return precPostfix
	case *NamedArg:
		return precOr - 1
	}
	return precAtom
}

func binaryPrec(op BinaryOp) int {
	switch op {
	case OpOr:
		return precOr
	case OpAnd:
		return precAnd
	case OpConcat:
		return precConcat
	case OpAdd, OpSub:
		return precAdd
	case OpMul, OpDiv, OpMod:
		return precMul
	}
	return precCmp
}

// sub prints e, parenthesized when its level is below min.
func (p *printer) sub(e Expr, min int) {
	if exprPrec(e) < min {
		p.str("(")
		e.format(p)
		p.str(")")
		return
	}
	e.format(p)
}
