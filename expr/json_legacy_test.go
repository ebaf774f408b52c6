package expr

import (
	"encoding/json"

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
