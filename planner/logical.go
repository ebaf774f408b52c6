package planner

import (
	"math"
	"time"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// node is a logical plan operator. Its output columns are schema().
type node interface {
	schema() types.Schema
}

// scanNode reads a table. The source produces phys; exprs, when set,
// compute every declared column (computed ones included) from phys.
type scanNode struct {
	pos   ast.Pos
	table *catalog.Table
	phys  types.Schema
	exprs []*expr.Expr
	out   types.Schema
	// rowtime is the WATERMARK FOR column in out and watermark its
	// expression over out; rowtime is -1 for a table without a watermark.
	rowtime   int
	watermark *expr.Expr
}

// valuesNode is a constant relation.
type valuesNode struct {
	rows [][]*expr.Expr
	out  types.Schema
}

type filterNode struct {
	input node
	cond  *expr.Expr
}

type projectNode struct {
	input node
	exprs []*expr.Expr
	out   types.Schema
}

// joinNode is a regular join (a cross join has a nil cond); its output is
// the left columns then the right columns. outerLeft keeps left rows without
// a match, padded with NULLs (LEFT JOIN), outerRight right ones (RIGHT JOIN);
// both make a FULL JOIN.
type joinNode struct {
	pos                   ast.Pos
	left, right           node
	cond                  *expr.Expr
	out                   types.Schema
	outerLeft, outerRight bool
	// leftNames and rightNames name the inputs (table name and alias) when
	// they are tables or aliased subqueries; hints refer to inputs by them.
	leftNames, rightNames []string
	// leftTTL and rightTTL come from a STATE_TTL hint; nil uses the
	// session's table.exec.state.ttl.
	leftTTL, rightTTL *time.Duration
	// temporal is set for an event-time temporal join (FOR SYSTEM_TIME AS
	// OF): right is then the versioned table's scan.
	temporal *temporalTimes
	// lookup is set for a processing-time lookup join (FOR SYSTEM_TIME AS
	// OF PROCTIME()): right is then the lookup table's scan.
	lookup *lookupTable
}

func (n *joinNode) outer() bool { return n.outerLeft || n.outerRight }

// kindName is the join type as Flink's plans name it.
func (n *joinNode) kindName() string {
	switch {
	case n.outerLeft && n.outerRight:
		return "FullOuterJoin"
	case n.outerLeft:
		return "LeftOuterJoin"
	case n.outerRight:
		return "RightOuterJoin"
	}
	return "InnerJoin"
}

// unionNode is UNION ALL of inputs with equal column types.
type unionNode struct {
	inputs []node
	out    types.Schema
}

// aggNode is a GROUP BY aggregate: its output is the group keys (computed
// from the input), then one column per aggregate call. With no keys it is a
// global aggregate; with no calls, a DISTINCT.
type aggNode struct {
	input node
	keys  []*expr.Expr
	calls []aggCall
	out   types.Schema
	// ttl comes from a STATE_TTL hint; nil uses table.exec.state.ttl.
	ttl *time.Duration
	// window is the legacy group window of the GROUP BY, or nil: the
	// aggregate is then a window aggregate (see bind_group_window.go).
	window *groupWindow
}

// aggCall is an aggregate function over an input expression (nil for
// COUNT(*)), with its result type.
type aggCall struct {
	fn  string
	arg *expr.Expr
	typ types.DataType
	// distinct is NAME(DISTINCT arg); filter is FILTER (WHERE filter), or
	// nil; sep is LISTAGG's separator, or nil.
	distinct bool
	filter   *expr.Expr
	sep      *string
	// more are COUNT's further arguments, COUNT(a, b), and the arguments
	// of GROUPING and GROUPING_ID.
	more []*expr.Expr
	// src is the call's syntax, for error positions.
	src *ast.FuncCall
	// aux is set for an auxiliary group window function (TUMBLE_START,
	// ...), which takes its value from the group's window.
	aux *auxCall
}

func (n *scanNode) schema() types.Schema    { return n.out }
func (n *aggNode) schema() types.Schema     { return n.out }
func (n *valuesNode) schema() types.Schema  { return n.out }
func (n *filterNode) schema() types.Schema  { return n.input.schema() }
func (n *projectNode) schema() types.Schema { return n.out }
func (n *joinNode) schema() types.Schema    { return n.out }
func (n *unionNode) schema() types.Schema   { return n.out }

// conjuncts splits a predicate on AND, in order. It takes time linear in
// the number of conjuncts, however the ANDs nest.
func conjuncts(e *expr.Expr) []*expr.Expr {
	if e == nil {
		return nil
	}
	var out []*expr.Expr
	stack := []*expr.Expr{e}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if e.Op != expr.OpCall || e.Func != "AND" {
			out = append(out, e)
			continue
		}
		for i := len(e.Args) - 1; i >= 0; i-- {
			stack = append(stack, e.Args[i])
		}
	}
	return out
}

// and joins predicates with AND; nil for none.
func and(es []*expr.Expr) *expr.Expr {
	if len(es) == 0 {
		return nil
	}
	out := es[0]
	for _, e := range es[1:] {
		r, err := expr.ResolveCall("AND", []*expr.Expr{out, e})
		if err != nil {
			panic("planner: AND of predicates: " + err.Error())
		}
		out = r
	}
	return out
}

// columnsOf returns the input columns e references.
func columnsOf(e *expr.Expr) []int {
	var out []int
	var walk func(*expr.Expr)
	walk = func(e *expr.Expr) {
		if e == nil {
			return
		}
		if e.Op == expr.OpColumn {
			out = append(out, e.Col)
		}
		for _, a := range e.Args {
			walk(a)
		}
	}
	walk(e)
	return out
}

// remap returns a copy of e with every column index i replaced by f(i).
func remap(e *expr.Expr, f func(int) int) *expr.Expr {
	if e == nil {
		return nil
	}
	c := *e
	if c.Op == expr.OpColumn {
		c.Col = f(c.Col)
	}
	if len(e.Args) > 0 {
		c.Args = make([]*expr.Expr, len(e.Args))
		for i, a := range e.Args {
			c.Args[i] = remap(a, f)
		}
	}
	return &c
}

// treeSize returns the number of nodes of es as trees: a subexpression
// that substitute shares between parents counts, and encodes, once per
// parent. It takes time linear in the number of distinct nodes and
// saturates at math.MaxInt.
func treeSize(es ...*expr.Expr) int {
	sizes := treeSizes{}
	total := 0
	for _, e := range es {
		total = addSat(total, sizes.of(e))
	}
	return total
}

// treeSizes remembers the tree size of each subexpression met.
type treeSizes map[*expr.Expr]int

func (m treeSizes) of(e *expr.Expr) int {
	if e == nil {
		return 0
	}
	if n, ok := m[e]; ok {
		return n
	}
	n := 1
	for _, a := range e.Args {
		n = addSat(n, m.of(a))
	}
	m[e] = n
	return n
}

func addSat(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// substitute replaces each column reference i in e by exprs[i]: it composes
// an expression over a projection's output with the projection.
func substitute(e *expr.Expr, exprs []*expr.Expr) *expr.Expr {
	if e == nil {
		return nil
	}
	if e.Op == expr.OpColumn {
		return exprs[e.Col]
	}
	c := *e
	if len(e.Args) > 0 {
		c.Args = make([]*expr.Expr, len(e.Args))
		for i, a := range e.Args {
			c.Args[i] = substitute(a, exprs)
		}
	}
	return &c
}
