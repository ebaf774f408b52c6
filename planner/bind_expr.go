package planner

import (
	"strings"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// aggregates are the aggregate functions the binder knows; aggBinder runs
// the supported ones.
var aggregates = map[string]bool{
	"COUNT": true, "SUM": true, "AVG": true, "MIN": true, "MAX": true,
	"LISTAGG": true, "COLLECT": true, "FIRST_VALUE": true, "LAST_VALUE": true,
	"STDDEV_POP": true, "STDDEV_SAMP": true, "VAR_POP": true, "VAR_SAMP": true,
	"STDDEV": true, "VARIANCE": true,
	"GROUPING": true, "GROUPING_ID": true, "GROUP_ID": true,
}

// bindExpr types an expression against the columns of sc.
func bindExpr(sc *scope, e ast.Expr) (*expr.Expr, error) {
	if i, ok := sc.pieces[e]; ok {
		return expr.Column(i, sc.cols[i].typ), nil
	}
	switch e := e.(type) {
	case *ast.Literal:
		return bindLiteral(e)
	case *ast.IntervalLit:
		return bindInterval(e)
	case *ast.ColumnRef:
		return bindColumnRef(sc, e)
	case *ast.Unary:
		x, err := bindExpr(sc, e.X)
		if err != nil {
			return nil, err
		}
		switch e.Op {
		case ast.OpPlus:
			return x, nil
		case ast.OpNeg:
			return resolve(e.Pos, "NEG", x)
		default:
			return resolve(e.Pos, "NOT", x)
		}
	case *ast.Binary:
		l, err := bindExpr(sc, e.L)
		if err != nil {
			return nil, err
		}
		r, err := bindExpr(sc, e.R)
		if err != nil {
			return nil, err
		}
		return resolve(e.Pos, string(e.Op), l, r)
	case *ast.IsExpr:
		x, err := bindExpr(sc, e.X)
		if err != nil {
			return nil, err
		}
		what := e.What
		if what == "UNKNOWN" {
			what = "NULL"
		}
		name := "IS " + what
		if e.Not {
			name = "IS NOT " + what
		}
		return resolve(e.Pos, name, x)
	case *ast.Between:
		if e.Mode == "SYMMETRIC" {
			return nil, unsupported(e.Pos, "BETWEEN SYMMETRIC")
		}
		args, err := bindExprs(sc, e.X, e.Low, e.High)
		if err != nil {
			return nil, err
		}
		name := "BETWEEN"
		if e.Not {
			name = "NOT BETWEEN"
		}
		return resolve(e.Pos, name, args...)
	case *ast.InExpr:
		if e.Query != nil {
			return nil, subqueryHere(e.Pos)
		}
		args, err := bindExprs(sc, append([]ast.Expr{e.X}, e.List...)...)
		if err != nil {
			return nil, err
		}
		name := "IN"
		if e.Not {
			name = "NOT IN"
		}
		return resolve(e.Pos, name, args...)
	case *ast.LikeExpr:
		if e.Similar {
			return nil, unsupported(e.Pos, "SIMILAR TO")
		}
		parts := []ast.Expr{e.X, e.Pattern}
		if e.Escape != nil {
			parts = append(parts, e.Escape)
		}
		args, err := bindExprs(sc, parts...)
		if err != nil {
			return nil, err
		}
		like, err := resolve(e.Pos, "LIKE", args...)
		if err != nil || !e.Not {
			return like, err
		}
		return resolve(e.Pos, "NOT", like)
	case *ast.FuncCall:
		return bindCall(sc, e)
	case *ast.Cast:
		x, err := bindExpr(sc, e.X)
		if err != nil {
			return nil, err
		}
		t, err := bindType(e.Type)
		if err != nil {
			return nil, err
		}
		if !expr.CanCast(x.Type, t) {
			return nil, errorf(e.Pos, "cannot cast %s to %s", x.Type, t)
		}
		if e.Try {
			return expr.TryCast(x, t.WithNullable(true)), nil
		}
		t = t.WithNullable(x.Type.Nullable())
		if x.Type == t && sc.isRowtime(x) {
			// NB: a CAST of a rowtime attribute to its own type is kept, as
			// in Flink: its result is a plain timestamp (see timeAttrs).
			return &expr.Expr{Op: expr.OpCall, Func: "CAST", Type: t, Args: []*expr.Expr{x}}, nil
		}
		return expr.Cast(x, t), nil
	case *ast.TimestampDiff:
		args, err := bindExprs(sc, e.A, e.B)
		if err != nil {
			return nil, err
		}
		return resolve(e.Pos, "TIMESTAMPDIFF", append([]*expr.Expr{expr.StringLiteral(string(e.Unit.Canonical()))}, args...)...)
	case *ast.TimestampAdd:
		args, err := bindExprs(sc, e.N, e.T)
		if err != nil {
			return nil, err
		}
		return resolve(e.Pos, "TIMESTAMPADD", append([]*expr.Expr{expr.StringLiteral(string(e.Unit.Canonical()))}, args...)...)
	case *ast.Extract:
		x, err := bindExpr(sc, e.X)
		if err != nil {
			return nil, err
		}
		return resolve(e.Pos, "EXTRACT", expr.StringLiteral(string(e.Unit.Canonical())), x)
	case *ast.FloorCeil:
		x, err := bindExpr(sc, e.X)
		if err != nil {
			return nil, err
		}
		name := "FLOOR"
		if e.Ceil {
			name = "CEIL"
		}
		return resolve(e.Pos, name, expr.StringLiteral(string(e.Unit.Canonical())), x)
	case *ast.Trim:
		x, err := bindExpr(sc, e.X)
		if err != nil {
			return nil, err
		}
		if e.Chars == nil && (e.Mode == "" || e.Mode == "BOTH") {
			return resolve(e.Pos, "TRIM", x)
		}
		chars := expr.StringLiteral(" ")
		if e.Chars != nil {
			if chars, err = bindExpr(sc, e.Chars); err != nil {
				return nil, err
			}
		}
		mode := e.Mode
		if mode == "" {
			mode = "BOTH"
		}
		return resolve(e.Pos, "TRIM", expr.StringLiteral(mode), chars, x)
	case *ast.Case:
		return bindCase(sc, e)
	case *ast.Subquery:
		if i, ok := sc.scalars[e]; ok {
			return expr.Column(i, sc.cols[i].typ), nil
		}
		return nil, subqueryHere(e.Pos)
	case *ast.Exists:
		return nil, subqueryHere(e.Pos)
	case *ast.Star:
		return nil, errorf(e.Pos, "* is only allowed in the SELECT list or COUNT(*)")
	default:
		if out, ok, err := bindComposite(sc, e); ok {
			return out, err
		}
		return nil, unsupported(e.Position(), "expression "+e.String())
	}
}

func bindExprs(sc *scope, es ...ast.Expr) ([]*expr.Expr, error) {
	out := make([]*expr.Expr, len(es))
	for i, e := range es {
		b, err := bindExpr(sc, e)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// resolve types a call through the function library, positioning its error.
func resolve(pos ast.Pos, name string, args ...*expr.Expr) (*expr.Expr, error) {
	e, err := expr.ResolveCall(name, args)
	if err != nil {
		return nil, errorf(pos, "%s", err.Error())
	}
	return e, nil
}

func bindCall(sc *scope, f *ast.FuncCall) (*expr.Expr, error) {
	name := strings.ToUpper(f.FuncName())
	if f.Over != nil || f.OverName != nil {
		if sc.over == nil {
			return nil, unsupported(f.Pos, "an OVER aggregate outside the SELECT list")
		}
		if alias, ok := aggAliases[name]; ok {
			name = alias
		}
		return sc.over.bind(sc, f, name)
	}
	if isGroupWindowAux(name) && f.Over == nil {
		if sc.aggs != nil {
			return sc.aggs.bindAux(sc, f, name)
		}
		return nil, auxWithoutWindow(&auxCall{pos: f.Pos, name: name, fn: groupWindowAux[name].fn})
	}
	if aggregates[name] {
		switch {
		case sc.aggs != nil:
			return sc.aggs.bind(sc, f, name)
		case sc.noAgg != "":
			return nil, errorf(f.Pos, "%s", sc.noAgg)
		}
		return nil, errorf(f.Pos, "aggregate function %s is not allowed here", name)
	}
	if f.Star || f.Distinct {
		return nil, errorf(f.Pos, "%s does not take * or DISTINCT", name)
	}
	args, err := bindExprs(sc, f.Args...)
	if err != nil {
		return nil, err
	}
	if jsonFuncs[name] {
		return bindJSONCall(sc, f, name, args)
	}
	if name == "CURRENT_WATERMARK" && len(args) == 1 && args[0].Type.IsTimestamp() && !sc.isRowtime(args[0]) {
		t := args[0].Type.String()
		return nil, errorf(f.Args[0].Position(), "The argument of CURRENT_WATERMARK() must be a rowtime attribute, but was '%s'.", t)
	}
	return resolve(f.Pos, name, args...)
}

// isRowtime reports whether e is a reference to the scope's rowtime
// attribute.
func (s *scope) isRowtime(e *expr.Expr) bool {
	return e.Op == expr.OpColumn && e.Col >= 0 && e.Col < len(s.cols) && s.cols[e.Col].rowtime
}

// bindCase binds both CASE forms into the searched form: CASE(when1, then1,
// ..., else).
func bindCase(sc *scope, c *ast.Case) (*expr.Expr, error) {
	var operand *expr.Expr
	if c.Operand != nil {
		var err error
		if operand, err = bindExpr(sc, c.Operand); err != nil {
			return nil, err
		}
	}
	var args []*expr.Expr
	for _, w := range c.Whens {
		cond, err := bindExpr(sc, w.Cond)
		if err != nil {
			return nil, err
		}
		if operand != nil {
			if cond, err = resolve(w.Pos, "=", operand, cond); err != nil {
				return nil, err
			}
		}
		res, err := bindExpr(sc, w.Result)
		if err != nil {
			return nil, err
		}
		args = append(args, cond, res)
	}
	if c.Else != nil {
		e, err := bindExpr(sc, c.Else)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	return resolve(c.Pos, "CASE", args...)
}

// castTo converts e to t for storing into a column of type t, or reports why
// it cannot. Identical types (nullability aside) need no cast.
func castTo(e *expr.Expr, t types.DataType) (*expr.Expr, bool) {
	if sameType(e.Type, t) {
		return e, true
	}
	if e.Type.Kind == types.KindNull {
		return expr.NullLiteral(t), true
	}
	if !expr.CanCast(e.Type, t) {
		return nil, false
	}
	return expr.Cast(e, t.WithNullable(e.Type.Nullable())), true
}

// sameType compares types ignoring nullability.
func sameType(a, b types.DataType) bool {
	a.NotNull, b.NotNull = false, false
	return a == b
}
