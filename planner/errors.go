package planner

import (
	"fmt"

	"github.com/braidflow/braid/sql/ast"
)

// Error is a user error in a statement, at a position of its source.
type Error struct {
	Pos ast.Pos
	Msg string
}

func (e *Error) Error() string {
	if !e.Pos.IsValid() {
		return "sql: " + e.Msg
	}
	return fmt.Sprintf("sql: line %d, column %d: %s", e.Pos.Line, e.Pos.Col, e.Msg)
}

// errorf returns a positioned user error.
func errorf(pos ast.Pos, format string, args ...any) error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// unsupported reports a feature Braid does not run yet.
func unsupported(pos ast.Pos, what string) error {
	return errorf(pos, "%s is not supported yet", what)
}
