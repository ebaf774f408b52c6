package expr

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/braidflow/braid/types"
)

// legacyExpr is a copy of Expr with the JSON methods Expr had before its
// encoder became iterative (braid up to e523d45): a MarshalJSON per node that
// lets encoding/json re-marshal each level. Its output is the oracle for the
// encoding that operator uids are hashed from; it is quadratic in depth, so
// tests use it on small trees only.
type legacyExpr struct {
	Op    Op
	Type  types.DataType
	Col   int
	Value any
	Func  string
	Args  []*legacyExpr
}

type legacyJSONExpr struct {
	Op    Op              `json:"op"`
	Type  types.DataType  `json:"type"`
	Col   int             `json:"col,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
	Func  string          `json:"func,omitempty"`
	Args  []*legacyExpr   `json:"args,omitempty"`
}

func (e *legacyExpr) MarshalJSON() ([]byte, error) {
	j := legacyJSONExpr{Op: e.Op, Type: e.Type, Col: e.Col, Func: e.Func, Args: e.Args}
	if e.Op == OpLiteral && e.Value != nil {
		raw, err := encodeValue(e.Value, e.Type)
		if err != nil {
			return nil, err
		}
		j.Value = raw
	}
	return json.Marshal(j)
}

func (e *legacyExpr) UnmarshalJSON(data []byte) error {
	var j legacyJSONExpr
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*e = legacyExpr{Op: j.Op, Type: j.Type, Col: j.Col, Func: j.Func, Args: j.Args}
	if j.Op == OpLiteral && len(j.Value) > 0 && string(j.Value) != "null" {
		v, err := decodeValue(j.Value, j.Type)
		if err != nil {
			return err
		}
		e.Value = v
	}
	return nil
}

func toLegacy(e *Expr) *legacyExpr {
	if e == nil {
		return nil
	}
	l := &legacyExpr{Op: e.Op, Type: e.Type, Col: e.Col, Value: e.Value, Func: e.Func}
	if e.Args != nil {
		l.Args = make([]*legacyExpr, len(e.Args))
		for i, a := range e.Args {
			l.Args[i] = toLegacy(a)
		}
	}
	return l
}

func fromLegacy(l *legacyExpr) *Expr {
	if l == nil {
		return nil
	}
	e := &Expr{Op: l.Op, Type: l.Type, Col: l.Col, Value: l.Value, Func: l.Func}
	if l.Args != nil {
		e.Args = make([]*Expr, len(l.Args))
		for i, a := range l.Args {
			e.Args[i] = fromLegacy(a)
		}
	}
	return e
}

// legacyString is Expr.String as it was before it wrote to one builder
// (it joined the strings of the arguments at every level, quadratic in
// depth): the oracle for the text of plans and messages.
func legacyString(e *Expr) string {
	switch e.Op {
	case OpColumn:
		return "$" + strconv.Itoa(e.Col)
	case OpLiteral:
		if e.Value == nil {
			return "NULL"
		}
		switch v := e.Value.(type) {
		case string:
			return "'" + strings.ReplaceAll(v, "'", "''") + "'"
		case decimal128.Num:
			return v.ToString(int32(e.Type.Scale))
		}
		return fmt.Sprint(e.Value)
	}
	parts := make([]string, len(e.Args))
	for i, a := range e.Args {
		parts[i] = legacyString(a)
	}
	if e.Func == "CAST" || e.Func == "TRY_CAST" {
		return fmt.Sprintf("%s(%s AS %v)", e.Func, strings.Join(parts, ", "), e.Type)
	}
	return e.Func + "(" + strings.Join(parts, ", ") + ")"
}
