package planner

import (
	"fmt"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// Set operations, planned on the streaming runtime as Flink plans them:
//
//   - UNION ALL is a union of the inputs' changelogs.
//   - UNION is UNION ALL under a GROUP BY on every column: a row is +I the
//     first time it appears and -D when its last copy is retracted.
//   - INTERSECT, EXCEPT and their ALL forms tag each side's rows with a
//     marker column per side (1 on the row's side, 0 on the other), union
//     them, and sum the markers in a GROUP BY on every column: the sums are
//     how many copies of the row each side holds. The distinct forms keep a
//     row whose counts pass c1 > 0 AND c2 > 0 (INTERSECT) or c1 > 0 AND
//     c2 = 0 (EXCEPT); the ALL forms emit the row min(c1, c2) (INTERSECT
//     ALL) or c1 - c2 (EXCEPT ALL) times through a Replicate operator.
//
// The aggregate retracts its old counts before it emits new ones (-U, +U),
// and the filter and Replicate are stateless and keep row kinds, so every
// form is correct on updating inputs. Grouping treats NULLs as equal, as
// set operations do.

// bindSetOp binds L op R: the two sides' columns pair up by position, take
// their common types and the left side's names.
func (b *binder) bindSetOp(s *ast.SetOp) (node, error) {
	name := string(s.Op)
	if s.All {
		name += " ALL"
	}
	l, err := b.bindQueryExpr(s.L)
	if err != nil {
		return nil, err
	}
	r, err := b.bindQueryExpr(s.R)
	if err != nil {
		return nil, err
	}
	ls, rs := l.schema(), r.schema()
	if len(ls) != len(rs) {
		return nil, errorf(s.Pos, "%s inputs have %d and %d columns", name, len(ls), len(rs))
	}
	out := make(types.Schema, len(ls))
	for i := range ls {
		if lk, rk := timeKindOf(l, i), timeKindOf(r, i); lk != rk {
			// Flink's RelTimeIndicatorConverter.validateType.
			return nil, errorf(s.Pos, "Union fields with time attributes requires same types, but the types are %s and %s.",
				timeTypeString(rs[i].Type, rk), timeTypeString(ls[i].Type, lk))
		}
		t, ok := expr.CommonType(ls[i].Type, rs[i].Type)
		if !ok {
			return nil, errorf(s.Pos, "%s column %d (%s) has incompatible types %s and %s", name, i+1, ls[i].Name, ls[i].Type, rs[i].Type)
		}
		out[i] = types.Field{Name: ls[i].Name, Type: t}
	}
	l, r = castNode(l, out), castNode(r, out)
	if s.Op == ast.Union {
		u := &unionNode{inputs: []node{l, r}, out: out}
		if s.All {
			return u, nil
		}
		return distinct(u, nil), nil
	}
	return countedSetOp(s.Op, s.All, l, r, out), nil
}

// countedSetOp plans INTERSECT or EXCEPT [ALL] of l and r (both of schema
// out) as an aggregate counting each row's copies per side.
func countedSetOp(op ast.SetOpKind, all bool, l, r node, out types.Schema) node {
	w := len(out)
	one := expr.Literal(int64(1), types.BigInt.WithNullable(false))
	zero := expr.Literal(int64(0), types.BigInt.WithNullable(false))
	tagged := append(append(types.Schema{}, out...),
		types.Field{Name: fmt.Sprintf("$f%d", w), Type: one.Type}, types.Field{Name: fmt.Sprintf("$f%d", w+1), Type: one.Type})
	tag := func(n node, lv, rv *expr.Expr) node {
		return &projectNode{input: n, exprs: append(identity(out), lv, rv), out: tagged}
	}
	u := &unionNode{inputs: []node{tag(l, one, zero), tag(r, zero, one)}, out: tagged}
	sumType := types.BigInt
	agg := &aggNode{input: u, keys: identity(out),
		calls: []aggCall{
			{fn: "SUM", arg: expr.Column(w, one.Type), typ: sumType},
			{fn: "SUM", arg: expr.Column(w+1, one.Type), typ: sumType},
		},
		out: append(append(types.Schema{}, out...),
			types.Field{Name: "vcol_left_cnt", Type: sumType}, types.Field{Name: "vcol_right_cnt", Type: sumType}),
	}
	c1, c2 := expr.Column(w, sumType), expr.Column(w+1, sumType)
	lit := func(v int64) *expr.Expr { return expr.Literal(v, types.BigInt.WithNullable(false)) }
	if !all {
		cond := call(">", c1, lit(0))
		if op == ast.Intersect {
			cond = and([]*expr.Expr{cond, call(">", c2, lit(0))})
		} else {
			cond = and([]*expr.Expr{cond, call("=", c2, lit(0))})
		}
		return &projectNode{input: &filterNode{input: agg, cond: cond}, exprs: identity(out), out: out}
	}
	count := call("-", c1, c2)
	if op == ast.Intersect {
		count = call("CASE", call("<", c1, c2), c1, c2)
	}
	counted := append(append(types.Schema{}, out...), types.Field{Name: "$count", Type: count.Type})
	return &replicateNode{
		input: &projectNode{input: agg, exprs: append(identity(out), count), out: counted},
		out:   out,
	}
}

// call resolves a call of the planner's own making; its arguments are
// always valid, so an error is a broken invariant.
func call(name string, args ...*expr.Expr) *expr.Expr {
	e, err := expr.ResolveCall(name, args)
	if err != nil {
		panic(fmt.Sprintf("planner: %s: %v", name, err))
	}
	return e
}

// replicateNode emits each row of input as many times as its last column
// says, without that column (see operators.Replicate).
type replicateNode struct {
	input node
	out   types.Schema
}

func (n *replicateNode) schema() types.Schema { return n.out }

func (ph *physical) buildReplicate(n *replicateNode) (*stream, error) {
	in, err := ph.build(n.input)
	if err != nil {
		return nil, err
	}
	spec := &jobgraph.ReplicateSpec{Schema: in.schema, Count: len(in.schema) - 1}
	return ph.b.chain(in, in.vertex.Parallelism, op("Replicate", spec), n.out), nil
}
