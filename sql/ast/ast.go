package ast

import (
	"strconv"
	"strings"
)

// Pos is a position in SQL source text. Offset is the byte offset from the
// start of the text handed to the parser; Line and Col are 1-based and Col
// counts runes. The zero Pos means "no position" (a node built by hand).
type Pos struct {
	Offset int
	Line   int
	Col    int
}

// Position returns p. Every node embeds a Pos, so every node has Position.
func (p Pos) Position() Pos { return p }

// IsValid reports whether p was set by the parser.
func (p Pos) IsValid() bool { return p.Line > 0 }

// Node is any piece of the syntax tree. String prints the node as SQL that
// parses back to an equal node (positions aside).
type Node interface {
	Position() Pos
	String() string
	format(p *printer)
}

// Statement is a top-level SQL statement.
type Statement interface {
	Node
	// Source is the statement's byte range in the text it was parsed from,
	// without the terminating ';'.
	Source() Span
	stmtNode()
}

// Expr is a scalar expression.
type Expr interface {
	Node
	exprNode()
}

// TableExpr is an item of a FROM clause.
type TableExpr interface {
	Node
	tableNode()
}

// QueryExpr is the body of a query: a *Select, *SetOp, *Values, or a nested
// *Query (one that has its own WITH, ORDER BY or LIMIT).
type QueryExpr interface {
	Node
	queryNode()
}

// Span is a byte range [Start, End) of source text.
type Span struct {
	Start int
	End   int
}

// Text returns the spanned part of src.
func (s Span) Text(src string) string {
	if s.Start < 0 || s.End > len(src) || s.Start > s.End {
		return ""
	}
	return src[s.Start:s.End]
}

// StmtBase is embedded in every statement: its position and source span.
type StmtBase struct {
	Pos
	Span Span
}

// Source returns the statement's source span.
func (s *StmtBase) Source() Span { return s.Span }

// Ident is an identifier as written: Name keeps its spelling (without the
// back quotes, with “ unescaped) and Quoted records whether it was
// back-quoted. Identifier matching is the binder's business.
type Ident struct {
	Pos
	Name   string
	Quoted bool
}

// NewIdent returns an unpositioned, unquoted identifier.
func NewIdent(name string) *Ident { return &Ident{Name: name} }

// ObjectName is a possibly qualified name of a table, view, database or
// function: 1 to 3 parts, [catalog.][database.]object.
type ObjectName struct {
	Pos
	Parts []*Ident
}

// Object returns the last part of the name.
func (n *ObjectName) Object() string {
	if len(n.Parts) == 0 {
		return ""
	}
	return n.Parts[len(n.Parts)-1].Name
}

// Strings returns the part names.
func (n *ObjectName) Strings() []string {
	out := make([]string, len(n.Parts))
	for i, p := range n.Parts {
		out[i] = p.Name
	}
	return out
}

// Option is a 'key' = 'value' pair of a WITH clause or a SET statement.
type Option struct {
	Pos
	Key   string
	Value string
}

// Hint is one hint of a /*+ ... */ comment: NAME, NAME(a, 'b') or
// NAME('k' = 'v', ...). Either Args or Options is set, never both.
type Hint struct {
	Pos
	Name    *Ident
	Args    []*HintArg
	Options []*HintOption
}

// HintArg is a positional hint argument: an identifier or a string literal.
type HintArg struct {
	Pos
	Value string
	// Literal reports a string literal rather than an identifier.
	Literal bool
}

// HintOption is a key = 'value' hint argument. KeyIdent reports whether the
// key was written as an identifier rather than a string literal.
type HintOption struct {
	Pos
	Key      string
	KeyIdent bool
	Value    string
}

// QuoteString returns s as a SQL string literal.
func QuoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// QuoteIdent returns name back-quoted, with “ escaping.
func QuoteIdent(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// NeedsQuotes reports whether name must be back-quoted to read back as the
// same identifier: it is empty, not a plain identifier, or a reserved word.
func NeedsQuotes(name string) bool {
	if name == "" {
		return true
	}
	for i, r := range name {
		switch {
		case r == '_' || r == '$' || r >= 0x80:
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case r >= '0' && r <= '9':
			if i == 0 {
				return true
			}
		default:
			return true
		}
	}
	if name[0] == '$' {
		return true
	}
	return IsReserved(name)
}

func itoa(i int) string { return strconv.Itoa(i) }
