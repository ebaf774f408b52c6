package difftest

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/braidflow/braid/sql/ast"
)

// typeOf is the static type of e in en's scope (en.row is not read).
func (r *refEval) typeOf(e ast.Expr, en *env) (typ, error) {
	switch e := e.(type) {
	case *ast.Literal:
		switch e.Kind {
		case ast.LitNumber:
			_, t, err := parseNumber(e.Value)
			return t, err
		case ast.LitString:
			return tStr, nil
		case ast.LitBool, ast.LitUnknown:
			return tBool, nil
		case ast.LitNull:
			return typ{k: kNull}, nil
		case ast.LitTimestamp:
			return tTs, nil
		}
	case *ast.ColumnRef:
		ce, i, err := resolve(e, en)
		if err != nil {
			return typ{}, err
		}
		return ce.cols[i].t, nil
	case *ast.Unary:
		if e.Op == ast.OpNot {
			return tBool, nil
		}
		return r.typeOf(e.X, en)
	case *ast.Binary:
		switch e.Op {
		case ast.OpAnd, ast.OpOr, ast.OpEq, ast.OpNe, ast.OpLt, ast.OpLe, ast.OpGt, ast.OpGe:
			return tBool, nil
		case ast.OpAdd, ast.OpSub, ast.OpMul, ast.OpDiv, ast.OpMod:
			lt, err := r.typeOf(e.L, en)
			if err != nil {
				return typ{}, err
			}
			rt, err := r.typeOf(e.R, en)
			if err != nil {
				return typ{}, err
			}
			return arithType(e.Op, lt, rt)
		}
	case *ast.IsExpr, *ast.Between, *ast.InExpr, *ast.Exists:
		return tBool, nil
	case *ast.Cast:
		return castType(e.Type)
	case *ast.Case:
		var ts []typ
		for _, w := range e.Whens {
			t, err := r.typeOf(w.Result, en)
			if err != nil {
				return typ{}, err
			}
			ts = append(ts, t)
		}
		if e.Else != nil {
			t, err := r.typeOf(e.Else, en)
			if err != nil {
				return typ{}, err
			}
			ts = append(ts, t)
		}
		return commonType(ts...)
	case *ast.FuncCall:
		return r.funcType(e, en)
	}
	return typ{}, unsupported(e)
}

// arithType is Flink's result type of l op r.
func arithType(op ast.BinaryOp, l, r typ) (typ, error) {
	if !l.isNumeric() || !r.isNumeric() {
		return typ{}, fmt.Errorf("%s of %s and %s", op, l.sqlName(), r.sqlName())
	}
	if l.isInteger() && r.isInteger() {
		if op == ast.OpMod {
			return r, nil
		}
		if l.k == kBigInt || r.k == kBigInt {
			return tBigInt, nil
		}
		return tInt, nil
	}
	a, b := l.asDecimal(), r.asDecimal()
	switch op {
	case ast.OpAdd, ast.OpSub:
		s := max(a.s, b.s)
		return adjust(max(a.p-a.s, b.p-b.s)+s+1, s), nil
	case ast.OpMul:
		return adjust(a.p+b.p+1, a.s+b.s), nil
	case ast.OpDiv:
		s := max(6, a.s+b.p+1)
		return adjust(a.p-a.s+b.s+s, s), nil
	case ast.OpMod:
		if a.s == 0 && b.s == 0 {
			return b, nil
		}
		s := max(a.s, b.s)
		return adjust(min(a.p-a.s, b.p-b.s)+s, s), nil
	}
	return typ{}, fmt.Errorf("%w: operator %s", errUnsupported, op)
}

func castType(t *ast.Type) (typ, error) {
	switch t.Name {
	case "INT", "INTEGER":
		return tInt, nil
	case "BIGINT":
		return tBigInt, nil
	case "BOOLEAN":
		return tBool, nil
	case "STRING":
		return tStr, nil
	case "TIMESTAMP":
		return tTs, nil
	case "DECIMAL", "DEC", "NUMERIC":
		p, _ := t.Length()
		s, _ := t.Scale()
		if p == 0 {
			p = 10
		}
		return tDec(p, s), nil
	}
	return typ{}, fmt.Errorf("%w: type %s", errUnsupported, t)
}

func (r *refEval) funcType(f *ast.FuncCall, en *env) (typ, error) {
	name := strings.ToUpper(f.FuncName())
	if name == "COALESCE" {
		var ts []typ
		for _, a := range f.Args {
			t, err := r.typeOf(a, en)
			if err != nil {
				return typ{}, err
			}
			ts = append(ts, t)
		}
		return commonType(ts...)
	}
	if !isAggregate(f) {
		return typ{}, unsupported(f)
	}
	if name == "COUNT" {
		return tBigInt, nil
	}
	if len(f.Args) != 1 {
		return typ{}, unsupported(f)
	}
	t, err := r.typeOf(f.Args[0], en)
	if err != nil {
		return typ{}, err
	}
	switch {
	case name == "SUM" && t.k == kDec:
		return tDec(38, t.s), nil
	case name == "AVG" && t.k == kDec:
		return tDec(38, max(6, t.s)), nil
	case (name == "SUM" || name == "AVG") && !t.isNumeric():
		return typ{}, fmt.Errorf("%s of %s", name, t.sqlName())
	}
	return t, nil
}

// eval evaluates e in en.
func (r *refEval) eval(e ast.Expr, en *env) (value, error) {
	switch e := e.(type) {
	case *ast.Literal:
		switch e.Kind {
		case ast.LitNumber:
			v, _, err := parseNumber(e.Value)
			return v, err
		case ast.LitString:
			return e.Value, nil
		case ast.LitBool:
			return e.Value == "TRUE", nil
		case ast.LitNull, ast.LitUnknown:
			return nil, nil
		case ast.LitTimestamp:
			tm, err := time.Parse("2006-01-02 15:04:05.999", e.Value)
			if err != nil {
				return nil, err
			}
			return tsVal(tm.UnixMilli()), nil
		}
	case *ast.ColumnRef:
		ce, i, err := resolve(e, en)
		if err != nil {
			return nil, err
		}
		if ce.row == nil {
			return nil, fmt.Errorf("column %s read outside a row", e)
		}
		return ce.row[i], nil
	case *ast.Unary:
		v, err := r.eval(e.X, en)
		if err != nil || v == nil {
			return nil, err
		}
		switch e.Op {
		case ast.OpNot:
			return !v.(bool), nil
		case ast.OpPlus:
			return v, nil
		}
		if n, ok := v.(int64); ok {
			t, err := r.typeOf(e.X, en)
			if err != nil {
				return nil, err
			}
			return wrap(-n, t), nil
		}
		return new(big.Rat).Neg(rat(v)), nil
	case *ast.Binary:
		return r.binary(e, en)
	case *ast.IsExpr:
		v, err := r.eval(e.X, en)
		if err != nil {
			return nil, err
		}
		var res bool
		switch e.What {
		case "NULL", "UNKNOWN":
			res = v == nil
		case "TRUE":
			res = v != nil && v.(bool)
		case "FALSE":
			res = v != nil && !v.(bool)
		default:
			return nil, unsupported(e)
		}
		return res != e.Not, nil
	case *ast.Between:
		if e.Mode == "SYMMETRIC" {
			return nil, unsupported(e)
		}
		ge := &ast.Binary{Op: ast.OpGe, L: e.X, R: e.Low}
		le := &ast.Binary{Op: ast.OpLe, L: e.X, R: e.High}
		v, err := r.binary(&ast.Binary{Op: ast.OpAnd, L: ge, R: le}, en)
		if err != nil || v == nil || !e.Not {
			return v, err
		}
		return !v.(bool), nil
	case *ast.InExpr:
		return r.in(e, en)
	case *ast.Exists:
		rel, err := r.query(e.Query, en)
		if err != nil {
			return nil, err
		}
		return len(rel.rows) > 0, nil
	case *ast.Cast:
		return r.cast(e, en)
	case *ast.Case:
		if e.Operand != nil {
			return nil, unsupported(e)
		}
		t, err := r.typeOf(e, en)
		if err != nil {
			return nil, err
		}
		for _, w := range e.Whens {
			ok, err := r.predicate(w.Cond, en)
			if err != nil {
				return nil, err
			}
			if ok {
				return r.evalAs(w.Result, t, en)
			}
		}
		if e.Else == nil {
			return nil, nil
		}
		return r.evalAs(e.Else, t, en)
	case *ast.FuncCall:
		if isAggregate(e) {
			return r.aggregate(e, en)
		}
		if strings.EqualFold(e.FuncName(), "COALESCE") {
			t, err := r.typeOf(e, en)
			if err != nil {
				return nil, err
			}
			for _, a := range e.Args {
				v, err := r.evalAs(a, t, en)
				if err != nil || v != nil {
					return v, err
				}
			}
			return nil, nil
		}
	}
	return nil, unsupported(e)
}

// evalAs evaluates e and converts it to t (an integer to a DECIMAL).
func (r *refEval) evalAs(e ast.Expr, t typ, en *env) (value, error) {
	v, err := r.eval(e, en)
	if err != nil || v == nil {
		return v, err
	}
	if t.k == kDec {
		return roundHalfUp(rat(v), t.s), nil
	}
	return v, nil
}

// wrap truncates an integer result to its type, as Java arithmetic wraps.
func wrap(n int64, t typ) int64 {
	if t.k == kInt {
		return int64(int32(n))
	}
	return n
}

func (r *refEval) binary(e *ast.Binary, en *env) (value, error) {
	switch e.Op {
	case ast.OpAnd, ast.OpOr:
		l, err := r.eval(e.L, en)
		if err != nil {
			return nil, err
		}
		rv, err := r.eval(e.R, en)
		if err != nil {
			return nil, err
		}
		dominant := e.Op == ast.OpOr // TRUE decides OR, FALSE decides AND
		if l == dominant || rv == dominant {
			return dominant, nil
		}
		if l == nil || rv == nil {
			return nil, nil
		}
		return !dominant, nil
	}
	l, err := r.eval(e.L, en)
	if err != nil {
		return nil, err
	}
	rv, err := r.eval(e.R, en)
	if err != nil {
		return nil, err
	}
	switch e.Op {
	case ast.OpEq, ast.OpNe, ast.OpLt, ast.OpLe, ast.OpGt, ast.OpGe:
		if err := r.comparable(en, e.L, e.R); err != nil {
			return nil, err
		}
		if l == nil || rv == nil {
			return nil, nil
		}
		c := compare(l, rv)
		switch e.Op {
		case ast.OpEq:
			return c == 0, nil
		case ast.OpNe:
			return c != 0, nil
		case ast.OpLt:
			return c < 0, nil
		case ast.OpLe:
			return c <= 0, nil
		case ast.OpGt:
			return c > 0, nil
		}
		return c >= 0, nil
	}
	t, err := r.typeOf(e, en)
	if err != nil {
		return nil, err
	}
	if l == nil || rv == nil {
		return nil, nil
	}
	if t.isInteger() {
		a, b := l.(int64), rv.(int64)
		switch e.Op {
		case ast.OpAdd:
			return wrap(a+b, t), nil
		case ast.OpSub:
			return wrap(a-b, t), nil
		case ast.OpMul:
			return wrap(a*b, t), nil
		case ast.OpDiv, ast.OpMod:
			if b == 0 {
				return nil, fmt.Errorf("division by zero in %s", e)
			}
			if e.Op == ast.OpDiv {
				return wrap(a/b, t), nil
			}
			return wrap(a%b, t), nil
		}
	}
	a, b := rat(l), rat(rv)
	var out *big.Rat
	switch e.Op {
	case ast.OpAdd:
		out = new(big.Rat).Add(a, b)
	case ast.OpSub:
		out = new(big.Rat).Sub(a, b)
	case ast.OpMul:
		out = new(big.Rat).Mul(a, b)
	case ast.OpDiv:
		if b.Sign() == 0 {
			return nil, fmt.Errorf("division by zero in %s", e)
		}
		out = new(big.Rat).Quo(a, b)
	default:
		return nil, unsupported(e)
	}
	return roundHalfUp(out, t.s), nil
}

// in evaluates x [NOT] IN (list) and x [NOT] IN (subquery) in three-valued
// logic: TRUE on a match, else NULL if x or a candidate is NULL, else
// FALSE.
func (r *refEval) in(e *ast.InExpr, en *env) (value, error) {
	x, err := r.eval(e.X, en)
	if err != nil {
		return nil, err
	}
	var cands []value
	if e.Query != nil {
		rel, err := r.query(e.Query, en)
		if err != nil {
			return nil, err
		}
		if len(rel.cols) != 1 {
			return nil, fmt.Errorf("IN subquery of %d columns", len(rel.cols))
		}
		for _, row := range rel.rows {
			cands = append(cands, row[0])
		}
	} else {
		for _, it := range e.List {
			if err := r.comparable(en, e.X, it); err != nil {
				return nil, err
			}
			v, err := r.eval(it, en)
			if err != nil {
				return nil, err
			}
			cands = append(cands, v)
		}
	}
	var res value = false
	if len(cands) > 0 && x == nil {
		res = nil
	}
	for _, c := range cands {
		if x == nil {
			break
		}
		if c == nil {
			res = nil
			continue
		}
		if compare(x, c) == 0 {
			res = true
			break
		}
	}
	if res == nil || !e.Not {
		return res, nil
	}
	return !res.(bool), nil
}

func (r *refEval) cast(e *ast.Cast, en *env) (value, error) {
	t, err := castType(e.Type)
	if err != nil {
		return nil, err
	}
	v, err := r.eval(e.X, en)
	if err != nil || v == nil {
		return nil, err
	}
	from, err := r.typeOf(e.X, en)
	if err != nil {
		return nil, err
	}
	switch {
	case t.k == kDec && from.isNumeric():
		return roundHalfUp(rat(v), t.s), nil
	case t.isInteger() && from.isInteger():
		return wrap(v.(int64), t), nil
	case t.k == from.k:
		return v, nil
	}
	return nil, unsupported(e)
}

// aggregate evaluates an aggregate call over en's group: NULL inputs are
// ignored; DISTINCT counts each value once; FILTER keeps the rows its
// condition holds for. SUM keeps an integer argument's type (wrapping),
// AVG of integers is the truncated BIGINT quotient, of DECIMAL(p, s) the
// quotient rounded half up at scale max(6, s).
func (r *refEval) aggregate(f *ast.FuncCall, en *env) (value, error) {
	if en.group == nil {
		return nil, fmt.Errorf("aggregate %s outside an aggregating SELECT", f)
	}
	name := strings.ToUpper(f.FuncName())
	rt, err := r.typeOf(f, en)
	if err != nil {
		return nil, err
	}
	var vals []value
	var at typ
	if !f.Star {
		if len(f.Args) != 1 {
			return nil, unsupported(f)
		}
		if at, err = r.typeOf(f.Args[0], &env{cols: en.cols, outer: en.outer}); err != nil {
			return nil, err
		}
	}
	seen := map[string]bool{}
	for _, row := range en.group {
		re := &env{cols: en.cols, row: row, outer: en.outer}
		if f.Filter != nil {
			ok, err := r.predicate(f.Filter, re)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		if f.Star {
			vals = append(vals, true)
			continue
		}
		v, err := r.eval(f.Args[0], re)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		if f.Distinct {
			k := format(v, at)
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		vals = append(vals, v)
	}
	if name == "COUNT" {
		return int64(len(vals)), nil
	}
	if len(vals) == 0 {
		return nil, nil
	}
	switch name {
	case "MIN", "MAX":
		best := vals[0]
		for _, v := range vals[1:] {
			if c := compare(v, best); (name == "MIN" && c < 0) || (name == "MAX" && c > 0) {
				best = v
			}
		}
		return best, nil
	}
	if at.isInteger() {
		var sum int64
		for _, v := range vals {
			sum += v.(int64)
		}
		if name == "SUM" {
			return wrap(sum, rt), nil
		}
		return wrap(sum/int64(len(vals)), rt), nil
	}
	sum := new(big.Rat)
	for _, v := range vals {
		sum.Add(sum, rat(v))
	}
	if name == "AVG" {
		sum.Quo(sum, new(big.Rat).SetInt64(int64(len(vals))))
	}
	return roundHalfUp(sum, rt.s), nil
}

// comparable checks that a and b have types that compare: both numeric,
// or of one kind.
func (r *refEval) comparable(en *env, a, b ast.Expr) error {
	ta, err := r.typeOf(a, en)
	if err != nil {
		return err
	}
	tb, err := r.typeOf(b, en)
	if err != nil {
		return err
	}
	if ta.k == kNull || tb.k == kNull || ta.k == tb.k || (ta.isNumeric() && tb.isNumeric()) {
		return nil
	}
	return fmt.Errorf("cannot compare %s with %s: %s, %s", ta.sqlName(), tb.sqlName(), a, b)
}
