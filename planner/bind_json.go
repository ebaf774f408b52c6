package planner

import (
	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// jsonFuncs are the SQL/JSON functions whose clauses bindJSONCall passes.
var jsonFuncs = map[string]bool{
	"JSON_EXISTS": true, "JSON_VALUE": true, "JSON_QUERY": true, "JSON_OBJECT": true, "JSON_ARRAY": true,
}

// bindJSONCall binds a SQL/JSON call with its clauses (f.JSON), args being
// its bound arguments. The typed call carries each clause as a string
// literal argument (see expr's resolveJSONValue and friends); a DEFAULT
// expression is cast to the result type, as Calcite casts it, and one that
// cannot be is refused where it stands.
func bindJSONCall(sc *scope, f *ast.FuncCall, name string, args []*expr.Expr) (*expr.Expr, error) {
	j := f.JSON
	if j == nil {
		j = &ast.JSONClauses{}
	}
	if (name == "JSON_EXISTS" || name == "JSON_VALUE" || name == "JSON_QUERY") && len(args) == 2 {
		if err := expr.CheckJSONPath(args[1]); err != nil {
			return nil, errorf(f.Args[1].Position(), "%s: %s", name, err.Error())
		}
	}
	kind := func(b *ast.JSONBehavior, def string) string {
		if b == nil {
			return def
		}
		return b.Kind
	}
	switch name {
	case "JSON_OBJECT", "JSON_ARRAY":
		onNull := "NULL ON NULL"
		if name == "JSON_ARRAY" {
			onNull = "ABSENT ON NULL"
		}
		if j.OnNull != "" {
			onNull = j.OnNull + " ON NULL"
		}
		e, err := expr.ResolveJSONConstructor(name, onNull, args)
		if err != nil {
			return nil, errorf(f.Pos, "%s", err.Error())
		}
		return e, nil
	case "JSON_EXISTS":
		if f.JSON == nil {
			return resolve(f.Pos, name, args...)
		}
		return resolve(f.Pos, name, append(args, expr.StringLiteral(kind(j.OnError, "FALSE")))...)
	case "JSON_QUERY":
		if f.JSON == nil {
			return resolve(f.Pos, name, args...)
		}
		wrapper := j.Wrapper
		if wrapper == "" {
			wrapper = "WITHOUT ARRAY"
		}
		return resolve(f.Pos, name, append(args, expr.StringLiteral(wrapper),
			expr.StringLiteral(kind(j.OnEmpty, "NULL")), expr.StringLiteral(kind(j.OnError, "NULL")))...)
	}
	// JSON_VALUE
	if f.JSON == nil {
		return resolve(f.Pos, name, args...)
	}
	t := types.String
	if j.Returning != nil {
		var err error
		if t, err = bindType(j.Returning); err != nil {
			return nil, err
		}
		if t.Kind == types.KindVarChar {
			t = types.String
		}
	}
	t = t.WithNullable(true)
	out := append(args, expr.NullLiteral(t))
	for _, b := range []*ast.JSONBehavior{j.OnEmpty, j.OnError} {
		k := kind(b, "NULL")
		d := expr.NullLiteral(t)
		if k == "DEFAULT" {
			v, err := bindExpr(sc, b.Default)
			if err != nil {
				return nil, err
			}
			if v.Type.Kind != types.KindNull {
				if !expr.CanCast(v.Type, t) {
					return nil, errorf(b.Default.Position(), "cannot cast %s to %s: the DEFAULT of JSON_VALUE must be castable to its result type", v.Type, t.WithNullable(false))
				}
				d = expr.Cast(v, t.WithNullable(v.Type.Nullable()))
			}
		}
		out = append(out, expr.StringLiteral(k), d)
	}
	return resolve(f.Pos, name, out...)
}
