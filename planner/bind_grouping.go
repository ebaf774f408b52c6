package planner

import (
	"fmt"
	"maps"
	"time"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// maxGroupingSets bounds the grouping sets of one GROUP BY: every input row
// is copied once per set, and a CUBE of n keys has 2^n of them.
const maxGroupingSets = 4096

// groupKeys are the keys of a GROUP BY: every distinct key expression, and
// the grouping sets over them (indexes into keys). A GROUP BY without
// GROUPING SETS, ROLLUP or CUBE has one set holding every key.
type groupKeys struct {
	keys  []*expr.Expr
	names []string
	index map[string]int // canonical key -> position in keys
	sets  [][]int
}

// bindGroupKeys binds the keys of a GROUP BY list and expands its grouping
// sets as Calcite does: an expression item is one set of itself; GROUPING
// SETS lists its sets; ROLLUP (a, b) is (a, b), (a), (); CUBE (a, b) is
// (a, b), (a), (b), (); and the items' sets combine as a cross product, so
// GROUP BY a, ROLLUP (b) is (a, b), (a).
func bindGroupKeys(gsc *scope, groupBy []ast.Expr) (*groupKeys, error) {
	g := &groupKeys{index: map[string]int{}}
	key := func(e ast.Expr) (int, error) {
		k, err := bindExpr(gsc, e)
		if err != nil {
			return 0, err
		}
		c := canonical(k)
		if i, ok := g.index[c]; ok {
			return i, nil
		}
		i := len(g.keys)
		g.index[c] = i
		name := fmt.Sprintf("$f%d", i)
		if ref, ok := e.(*ast.ColumnRef); ok {
			name = ref.Parts[len(ref.Parts)-1].Name
		}
		g.keys = append(g.keys, k)
		g.names = append(g.names, name)
		return i, nil
	}
	keyList := func(es []ast.Expr) ([]int, error) {
		var out []int
		for _, e := range es {
			i, err := key(e)
			if err != nil {
				return nil, err
			}
			out = append(out, i)
		}
		return out, nil
	}
	sets := [][]int{{}}
	for _, item := range groupBy {
		var itemSets [][]int
		switch item := item.(type) {
		case *ast.GroupingSets:
			elems := make([][]int, len(item.Sets))
			for i, s := range item.Sets {
				ks, err := keyList(s)
				if err != nil {
					return nil, err
				}
				elems[i] = ks
			}
			switch item.Kind {
			case "GROUPING SETS":
				itemSets = elems
			case "ROLLUP":
				for n := len(elems); n >= 0; n-- {
					itemSets = append(itemSets, flatten(elems[:n]))
				}
			case "CUBE":
				if len(elems) > 12 {
					return nil, errorf(item.Pos, "CUBE of %d elements has more than %d grouping sets", len(elems), maxGroupingSets)
				}
				// NB: from every element to none, the first element's
				// presence the highest bit, as Calcite orders a cube.
				for m := 1<<len(elems) - 1; m >= 0; m-- {
					var chosen [][]int
					for i := range elems {
						if m&(1<<(len(elems)-1-i)) != 0 {
							chosen = append(chosen, elems[i])
						}
					}
					itemSets = append(itemSets, flatten(chosen))
				}
			}
		default:
			i, err := key(item)
			if err != nil {
				return nil, err
			}
			itemSets = [][]int{{i}}
		}
		if len(sets)*len(itemSets) > maxGroupingSets {
			return nil, errorf(item.Position(), "GROUP BY has more than %d grouping sets", maxGroupingSets)
		}
		var next [][]int
		for _, s := range sets {
			for _, t := range itemSets {
				next = append(next, append(append([]int{}, s...), t...))
			}
		}
		sets = next
	}
	g.sets = sets
	return g, nil
}

func flatten(lists [][]int) []int {
	var out []int
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// expanded reports whether the GROUP BY needs an Expand: more than one
// grouping set, or one set that leaves a key out (GROUPING SETS ((a), ())
// has two; GROUPING SETS ((a, b)) is GROUP BY a, b).
func (g *groupKeys) expanded() bool {
	return len(g.sets) > 1 || len(g.sets) == 1 && len(members(g.sets[0], len(g.keys))) != len(g.keys)
}

// members is set as a membership vector over n keys.
func members(set []int, n int) map[int]bool {
	m := make(map[int]bool, n)
	for _, k := range set {
		m[k] = true
	}
	return m
}

// absentIn reports, per key, whether some grouping set leaves it out:
// such a key is NULL in that set's rows, so its column is nullable.
func (g *groupKeys) absentIn() []bool {
	out := make([]bool, len(g.keys))
	for _, s := range g.sets {
		m := members(s, len(g.keys))
		for k := range g.keys {
			if !m[k] {
				out[k] = true
			}
		}
	}
	return out
}

// expand plans the input of a grouping-sets aggregate: in's columns and
// the keys computed after them, copied once per set with the set's absent
// keys NULL and a last column $e, the set's index. The aggregate groups
// by the key columns and $e; aggregate arguments read in's columns, which
// every copy keeps, so SUM(a) counts a even in a set without a.
func (g *groupKeys) expand(in node) (*expandNode, []*expr.Expr) {
	width := len(in.schema())
	absent := g.absentIn()
	exprs := identity(in.schema())
	pre := append(types.Schema{}, in.schema()...)
	for i, k := range g.keys {
		exprs = append(exprs, k)
		pre = append(pre, types.Field{Name: fmt.Sprintf("$g%d", i), Type: k.Type.WithNullable(k.Type.Nullable() || absent[i])})
	}
	n := &expandNode{input: &projectNode{input: in, exprs: exprs, out: pre}}
	for _, s := range g.sets {
		m := members(s, len(g.keys))
		var nulls []int
		for k := range g.keys {
			if !m[k] {
				nulls = append(nulls, width+k)
			}
		}
		n.sets = append(n.sets, nulls)
	}
	n.out = append(pre, types.Field{Name: "$e", Type: types.BigInt.WithNullable(false)})
	keys := make([]*expr.Expr, 0, len(g.keys)+1)
	for i := range g.keys {
		keys = append(keys, expr.Column(width+i, pre[width+i].Type))
	}
	keys = append(keys, expr.Column(width+len(g.keys), types.BigInt.WithNullable(false)))
	return n, keys
}

// groupingValue is GROUPING(args) (GROUPING_ID is the same) in grouping
// set s: a bit per argument, the first the highest, 1 where s leaves the
// argument's key out.
func (g *groupKeys) groupingValue(args []int, s []int) int64 {
	m := members(s, len(g.keys))
	var v int64
	for _, a := range args {
		v <<= 1
		if !m[a] {
			v |= 1
		}
	}
	return v
}

// groupID is GROUP_ID() in grouping set i, as Calcite defines it: how
// many sets before it are the same set (GROUPING SETS ((a), (a)) gives 0,
// then 1), so duplicate sets' rows can be told apart.
func (g *groupKeys) groupID(i int) int64 {
	m := members(g.sets[i], len(g.keys))
	var n int64
	for _, s := range g.sets[:i] {
		if len(s) == len(g.sets[i]) && maps.Equal(members(s, len(g.keys)), m) {
			n++
		}
	}
	return n
}

// groupingExpr is fn (GROUPING(args), GROUPING_ID(args) or GROUP_ID())
// over the aggregate's output, where eCol is the $e column (or -1 without
// an Expand): a constant when every set gives the same value, else a CASE
// over $e.
func (g *groupKeys) groupingExpr(fn string, args []int, eCol int) *expr.Expr {
	vals := make([]int64, len(g.sets))
	same := true
	for i, s := range g.sets {
		if fn == "GROUP_ID" {
			vals[i] = g.groupID(i)
		} else {
			vals[i] = g.groupingValue(args, s)
		}
		same = same && vals[i] == vals[0]
	}
	bigint := types.BigInt.WithNullable(false)
	if same || eCol < 0 {
		return expr.Literal(vals[0], bigint)
	}
	e := expr.Column(eCol, bigint)
	caseArgs := make([]*expr.Expr, 0, 2*len(vals))
	for i, v := range vals[:len(vals)-1] {
		caseArgs = append(caseArgs, call("=", e, expr.Literal(int64(i), bigint)), expr.Literal(v, bigint))
	}
	caseArgs = append(caseArgs, expr.Literal(vals[len(vals)-1], bigint))
	return call("CASE", caseArgs...)
}

// groupingArgs resolves the arguments of a GROUPING call to key indexes;
// each must be a GROUP BY expression, as Calcite requires.
func (g *groupKeys) groupingArgs(c aggCall) ([]int, error) {
	var out []int
	for i, a := range c.more {
		k, ok := g.index[canonical(a)]
		if !ok {
			return nil, errorf(c.src.Args[i].Position(), "Argument to %s operator must be a grouped expression", c.fn)
		}
		out = append(out, k)
	}
	return out, nil
}

// expandNode copies each row of input once per grouping set (see
// operators.Expand).
type expandNode struct {
	input node
	sets  [][]int
	out   types.Schema
}

func (n *expandNode) schema() types.Schema { return n.out }

func (ph *physical) buildExpand(n *expandNode) (*stream, error) {
	in, err := ph.build(n.input)
	if err != nil {
		return nil, err
	}
	spec := &jobgraph.ExpandSpec{Schema: in.schema, Sets: n.sets}
	return ph.b.chain(in, in.vertex.Parallelism, op("Expand", spec), n.out), nil
}

// isGrouping reports whether an aggregate call is GROUPING, GROUPING_ID or
// GROUP_ID, which the aggregate does not compute: the planner derives them
// from the row's grouping set.
func isGrouping(fn string) bool { return fn == "GROUPING" || fn == "GROUPING_ID" || fn == "GROUP_ID" }

// splitGroupingCalls separates GROUPING calls from the aggregate's calls:
// it returns the calls the aggregate computes and, per call of calls, its
// new placeholder index: real calls first, then the GROUPING calls after
// them (past the aggregate's output once rewritten).
func splitGroupingCalls(calls []aggCall) (real []aggCall, grouping []aggCall, newIndex []int) {
	newIndex = make([]int, len(calls))
	for i, c := range calls {
		if !isGrouping(c.fn) {
			newIndex[i] = len(real)
			real = append(real, c)
		}
	}
	for i, c := range calls {
		if isGrouping(c.fn) {
			newIndex[i] = len(real) + len(grouping)
			grouping = append(grouping, c)
		}
	}
	return real, grouping, newIndex
}

// renumberPlaceholders rewrites aggregate placeholders width+i of e to
// width+newIndex[i].
func renumberPlaceholders(e *expr.Expr, width int, newIndex []int) *expr.Expr {
	if e == nil {
		return nil
	}
	if e.Op == expr.OpColumn {
		if e.Col >= width {
			return expr.Column(width+newIndex[e.Col-width], e.Type)
		}
		return e
	}
	if len(e.Args) == 0 {
		return e
	}
	c := *e
	c.Args = make([]*expr.Expr, len(e.Args))
	for i, a := range e.Args {
		c.Args[i] = renumberPlaceholders(a, width, newIndex)
	}
	return &c
}

// substituteColumns replaces each column c >= from of e by sub[c-from].
func substituteColumns(e *expr.Expr, from int, sub []*expr.Expr) *expr.Expr {
	if e == nil {
		return nil
	}
	if e.Op == expr.OpColumn {
		if e.Col >= from {
			return sub[e.Col-from]
		}
		return e
	}
	if len(e.Args) == 0 {
		return e
	}
	c := *e
	c.Args = make([]*expr.Expr, len(e.Args))
	for i, a := range e.Args {
		c.Args[i] = substituteColumns(a, from, sub)
	}
	return &c
}

// bindExpandedGroupBy plans an aggregate over several grouping sets: an
// Expand, the aggregate grouped by the keys and $e, HAVING, and the SELECT
// list. exprs and having are over the aggregate's output already; a key
// that some set leaves out is nullable there, so they are retyped.
func bindExpandedGroupBy(gk *groupKeys, in node, calls []aggCall, exprs []*expr.Expr, out types.Schema, having *expr.Expr, ttl *time.Duration) node {
	ex, keys := gk.expand(in)
	n := &aggNode{input: ex, keys: keys, calls: calls, ttl: ttl}
	for i := range gk.keys {
		n.out = append(n.out, types.Field{Name: gk.names[i], Type: keys[i].Type})
	}
	n.out = append(n.out, types.Field{Name: "$e", Type: keys[len(keys)-1].Type})
	for i, c := range calls {
		n.out = append(n.out, types.Field{Name: fmt.Sprintf("$agg%d", i), Type: c.typ})
	}
	n.out = uniquifySchema(n.out)
	var top node = n
	if having != nil {
		top = &filterNode{input: top, cond: retypeOver(having, n.out)}
	}
	proj := &projectNode{input: top, exprs: make([]*expr.Expr, len(exprs)), out: append(types.Schema{}, out...)}
	for i, e := range exprs {
		proj.exprs[i] = retypeOver(e, n.out)
		proj.out[i].Type = proj.exprs[i].Type
	}
	return proj
}

// retypeOver gives e's columns their types in schema and types again each
// call whose arguments' types changed: a GROUP BY key that is NOT NULL in
// the input is nullable after an Expand, and so is an expression over it.
func retypeOver(e *expr.Expr, schema types.Schema) *expr.Expr {
	switch e.Op {
	case expr.OpColumn:
		if e.Type == schema[e.Col].Type {
			return e
		}
		return expr.Column(e.Col, schema[e.Col].Type)
	case expr.OpCall:
	default:
		return e
	}
	changed := false
	args := make([]*expr.Expr, len(e.Args))
	for i, a := range e.Args {
		args[i] = retypeOver(a, schema)
		changed = changed || args[i] != a
	}
	if !changed {
		return e
	}
	if e.Func != "CAST" && e.Func != "TRY_CAST" {
		if r, err := expr.ResolveCall(e.Func, args); err == nil {
			return r
		}
	}
	// NB: a cast keeps its target type; a call that does not resolve again
	// keeps its type. Either may now meet a NULL argument.
	c := *e
	c.Args = args
	c.Type = e.Type.WithNullable(true)
	return &c
}
