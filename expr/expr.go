package expr

import (
	"github.com/braidflow/braid/types"
)

// Op is the kind of an expression node.
type Op string

const (
	// OpColumn reads input column Col.
	OpColumn Op = "col"
	// OpLiteral is a constant; Value holds it (see Literal for the Go types).
	OpLiteral Op = "lit"
	// OpCall applies the function or operator Func to Args.
	OpCall Op = "call"
)

// Expr is a bound, typed expression over the columns of an input batch. It is
// plain data: the planner builds it, it travels inside operator configs as
// JSON, and Compile turns it into an evaluator on the task manager.
//
// Function and operator names in Func are upper case: "+", "-", "*", "/",
// "%", "=", "<>", "<", "<=", ">", ">=", "AND", "OR", "NOT", "IS NULL",
// "IS NOT NULL", "BETWEEN", "NOT BETWEEN", "IN", "NOT IN", "CASE", "CAST",
// "TRY_CAST", "NEG", "FROM_UNIXTIME", "TO_TIMESTAMP", "TIMESTAMPDIFF",
// "UNIX_TIMESTAMP", "CURRENT_TIMESTAMP", and the rest of the library.
type Expr struct {
	Op   Op             `json:"op"`
	Type types.DataType `json:"type"`
	// Col is the input column index for OpColumn.
	Col int `json:"col,omitempty"`
	// Value is the constant of an OpLiteral, in the Go form Literal documents.
	Value any `json:"value,omitempty"`
	// Func names the function of an OpCall.
	Func string  `json:"func,omitempty"`
	Args []*Expr `json:"args,omitempty"`
}

// Column returns a reference to input column i of type t.
func Column(i int, t types.DataType) *Expr { return &Expr{Op: OpColumn, Col: i, Type: t} }
