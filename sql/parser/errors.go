package parser

import (
	"fmt"
	"strings"

	"github.com/braidflow/braid/sql/ast"
)

// Error is a syntax error at a position in the parsed text, or, with a
// zero Pos, an error of the whole text (it is too long).
type Error struct {
	Pos ast.Pos
	Msg string
}

// Error returns "sql: line L, column C: MSG", or "sql: MSG" without a
// position.
func (e *Error) Error() string {
	if e.Pos.Line == 0 {
		return "sql: " + e.Msg
	}
	return fmt.Sprintf("sql: line %d, column %d: %s", e.Pos.Line, e.Pos.Col, e.Msg)
}

// ErrorList is the errors of one parse, in source order. The parser stops
// after maxErrors of them.
type ErrorList []*Error

// maxErrors is how many errors a parse collects before it gives up.
const maxErrors = 10

// Error joins the messages, one per line.
func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap returns the individual errors.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// err returns nil for an empty list, the list otherwise.
func (l ErrorList) err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}
