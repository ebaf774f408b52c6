package planner

import (
	"context"
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

// stopped returns nil while ctx is live, and once it ended the error that
// stops planning: it wraps ctx.Err(), so callers tell a timeout
// (context.DeadlineExceeded) from a client that went away
// (context.Canceled). The planner checks it once per plan node it binds or
// builds, so planning stops within one node's work of ctx ending.
func stopped(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("planner: planning stopped: %w", err)
	}
	return nil
}
