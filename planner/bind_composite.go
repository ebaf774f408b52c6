package planner

import (
	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/sql/ast"
)

// Binding of composite values: dotted names that reach into ROW columns,
// the constructors ROW(...), ARRAY[...], MAP[...], x.field and x[i].

// bindColumnRef binds a name of one or more parts: a column (c, t.c), or
// a column followed by ROW field names (c.f, t.c.f, c.f.g, ...). As in
// Flink, a leading part that names a table alias is read as one.
func bindColumnRef(sc *scope, ref *ast.ColumnRef) (*expr.Expr, error) {
	parts := ref.Parts
	if len(parts) <= 2 {
		i, err := sc.resolve(ref)
		if err == nil {
			return expr.Column(i, sc.cols[i].typ), nil
		}
		if len(parts) == 1 {
			return nil, err
		}
		// c.f: a field of column c, when c is one.
		if e, ferr := bindFields(sc, ref, 1); ferr == nil {
			return e, nil
		} else if _, cerr := sc.resolve(&ast.ColumnRef{Pos: ref.Pos, Parts: parts[:1]}); cerr == nil {
			return nil, ferr
		}
		return nil, err
	}
	e, err := bindFields(sc, ref, 2)
	if err == nil {
		return e, nil
	}
	if _, terr := sc.resolve(&ast.ColumnRef{Pos: ref.Pos, Parts: parts[:2]}); terr == nil {
		return nil, err
	}
	if e, ferr := bindFields(sc, ref, 1); ferr == nil {
		return e, nil
	} else if _, cerr := sc.resolve(&ast.ColumnRef{Pos: ref.Pos, Parts: parts[:1]}); cerr == nil {
		return nil, ferr
	}
	return nil, err
}

// bindFields binds the first n parts of ref as a column and the rest as
// field names.
func bindFields(sc *scope, ref *ast.ColumnRef, n int) (*expr.Expr, error) {
	i, err := sc.resolve(&ast.ColumnRef{Pos: ref.Pos, Parts: ref.Parts[:n]})
	if err != nil {
		return nil, err
	}
	e := expr.Column(i, sc.cols[i].typ)
	for _, f := range ref.Parts[n:] {
		if e, err = fieldOf(e, f); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// fieldOf is x.f for x a ROW.
func fieldOf(x *expr.Expr, f *ast.Ident) (*expr.Expr, error) {
	if !x.Type.IsRow() {
		return nil, errorf(f.Pos, "cannot read field %q of a value of type %s (a ROW is needed)", f.Name, x.Type)
	}
	e, ok := expr.FieldAccess(x, f.Name)
	if !ok {
		return nil, errorf(f.Pos, "unknown field %q in %s", f.Name, x.Type)
	}
	return e, nil
}

// bindComposite binds the constructors, field access and subscripts; ok
// is false for any other expression.
func bindComposite(sc *scope, e ast.Expr) (out *expr.Expr, ok bool, err error) {
	switch e := e.(type) {
	case *ast.RowCtor:
		args, err := bindExprs(sc, e.Items...)
		if err != nil {
			return nil, true, err
		}
		out, err = expr.RowCtor(args)
		return out, true, positioned(e.Pos, err)
	case *ast.ArrayCtor:
		args, err := bindExprs(sc, e.Items...)
		if err != nil {
			return nil, true, err
		}
		out, err = expr.ArrayCtor(args)
		return out, true, positioned(e.Pos, err)
	case *ast.MapCtor:
		args, err := bindExprs(sc, e.Items...)
		if err != nil {
			return nil, true, err
		}
		out, err = expr.MapCtor(args)
		return out, true, positioned(e.Pos, err)
	case *ast.FieldAccess:
		x, err := bindExpr(sc, e.X)
		if err != nil {
			return nil, true, err
		}
		out, err = fieldOf(x, e.Field)
		return out, true, err
	case *ast.Index:
		x, err := bindExpr(sc, e.X)
		if err != nil {
			return nil, true, err
		}
		i, err := bindExpr(sc, e.Index)
		if err != nil {
			return nil, true, err
		}
		out, err = expr.Item(x, i)
		return out, true, positioned(e.Pos, err)
	}
	return nil, false, nil
}

// positioned gives a library error the construct's position.
func positioned(pos ast.Pos, err error) error {
	if err == nil {
		return nil
	}
	return errorf(pos, "%s", err.Error())
}
