package planner

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// aggBinder collects the aggregate calls of a SELECT list and its HAVING
// clause. A bound call stands in its expression as a placeholder column
// width+i (past the input's columns); rewriteOverAgg later turns it into a
// column of the aggregate's output.
type aggBinder struct {
	width int
	calls []aggCall
	index map[string]int // canonical call -> position in calls
}

// aggAliases are Calcite's other names of aggregate functions.
var aggAliases = map[string]string{"STDDEV": "STDDEV_SAMP", "VARIANCE": "VAR_SAMP"}

// bind binds one aggregate call: its argument and FILTER are bound over
// the input (an aggregate inside is refused), its result typed as Flink
// types it.
func (a *aggBinder) bind(sc *scope, f *ast.FuncCall, name string) (*expr.Expr, error) {
	if alias, ok := aggAliases[name]; ok {
		name = alias
	}
	switch name {
	case "COUNT", "SUM", "AVG", "MIN", "MAX", "LISTAGG", "FIRST_VALUE", "LAST_VALUE",
		"STDDEV_POP", "STDDEV_SAMP", "VAR_POP", "VAR_SAMP":
	case "COLLECT":
		return nil, unsupported(f.Pos, "COLLECT, whose result is a MULTISET,")
	case "GROUPING", "GROUPING_ID", "GROUP_ID":
		return a.bindGrouping(sc, f, name)
	default:
		return nil, unsupported(f.Pos, "aggregate function "+name)
	}
	inner := sc.withoutAggs("Aggregate expressions cannot be nested")
	// NB: MIN and MAX of the distinct values are MIN and MAX.
	call := aggCall{fn: name, distinct: f.Distinct && name != "MIN" && name != "MAX"}
	nargs := 1
	switch name {
	case "LISTAGG":
		nargs = min(max(len(f.Args), 1), 2)
	case "COUNT":
		nargs = max(len(f.Args), 1)
	}
	switch {
	case f.Star:
		if name != "COUNT" {
			return nil, errorf(f.Pos, "%s(*) is not valid: only COUNT takes *", name)
		}
	case len(f.Args) != nargs:
		return nil, errorf(f.Pos, "invalid number of arguments to function '%s': %d", name, len(f.Args))
	default:
		arg, err := bindExpr(inner, f.Args[0])
		if err != nil {
			return nil, err
		}
		call.arg = arg
		for _, a := range f.Args[1:] {
			if name != "COUNT" {
				break
			}
			more, err := bindExpr(inner, a)
			if err != nil {
				return nil, err
			}
			call.more = append(call.more, more)
		}
		if len(f.Args) == 2 && name == "LISTAGG" {
			sep, err := bindExpr(inner, f.Args[1])
			if err != nil {
				return nil, err
			}
			v, ok := sep.Value.(string)
			if sep.Op != expr.OpLiteral || !ok || !sep.Type.IsString() {
				return nil, errorf(f.Args[1].Position(), "the separator of LISTAGG must be a character literal, got %s", f.Args[1].String())
			}
			call.sep = &v
		}
	}
	if f.Filter != nil {
		cond, err := bindExpr(inner, f.Filter)
		if err != nil {
			return nil, err
		}
		if cond.Type.Kind != types.KindBoolean {
			return nil, errorf(f.Filter.Position(), "FILTER expression must be of type BOOLEAN, got %s", cond.Type)
		}
		call.filter = cond
	}
	if call.arg != nil && call.arg.Type.Kind == types.KindDecimal && isVariance(name) {
		return nil, unsupported(f.Pos, name+" of DECIMAL")
	}
	t, err := aggResultType(name, call.arg)
	if err != nil {
		return nil, errorf(f.Pos, "%v", err)
	}
	call.typ = t
	key := fmt.Sprintf("%s(%v %s) %s", name, call.distinct, canonical(call.arg), canonical(call.filter))
	for _, m := range call.more {
		key += " " + canonical(m)
	}
	if call.sep != nil {
		key += " " + *call.sep
	}
	i, ok := a.index[key]
	if !ok {
		if a.index == nil {
			a.index = map[string]int{}
		}
		i = len(a.calls)
		a.index[key] = i
		a.calls = append(a.calls, call)
	}
	return expr.Column(a.width+i, t), nil
}

// bindGrouping binds GROUPING(e, ...) or GROUPING_ID(e, ...): BIGINT NOT
// NULL, a bit per argument that is 1 where the row's grouping set leaves
// the argument out. bindGroupBy checks that the arguments are GROUP BY
// keys and computes the value from the grouping set.
func (a *aggBinder) bindGrouping(sc *scope, f *ast.FuncCall, name string) (*expr.Expr, error) {
	switch {
	case f.Star || f.Distinct || f.Filter != nil:
		return nil, errorf(f.Pos, "%s takes neither *, DISTINCT nor FILTER", name)
	case name == "GROUP_ID":
		if len(f.Args) > 0 {
			return nil, errorf(f.Pos, "invalid number of arguments to function 'GROUP_ID': %d", len(f.Args))
		}
	case len(f.Args) == 0:
		return nil, errorf(f.Pos, "invalid number of arguments to function '%s': 0", name)
	case len(f.Args) > 63:
		return nil, errorf(f.Pos, "%s takes at most 63 arguments", name)
	}
	inner := sc.withoutAggs("Aggregate expressions cannot be nested")
	call := aggCall{fn: name, typ: types.BigInt.WithNullable(false), src: f}
	key := name + "("
	for _, arg := range f.Args {
		e, err := bindExpr(inner, arg)
		if err != nil {
			return nil, err
		}
		call.more = append(call.more, e)
		key += " " + canonical(e)
	}
	i, ok := a.index[key]
	if !ok {
		if a.index == nil {
			a.index = map[string]int{}
		}
		i = len(a.calls)
		a.index[key] = i
		a.calls = append(a.calls, call)
	}
	return expr.Column(a.width+i, call.typ), nil
}

// spec is c as an operator's AggCall; col gives the input column of an
// argument or filter, adding it to the aggregate's input as needed.
func (c aggCall) spec(col func(*expr.Expr) int) jobgraph.AggCall {
	out := jobgraph.AggCall{Func: c.fn, Arg: -1, Distinct: c.distinct, Separator: c.sep}
	if c.arg != nil {
		out.Arg = col(c.arg)
	}
	for _, m := range c.more {
		out.More = append(out.More, col(m))
	}
	if c.filter != nil {
		out.Filtered, out.Filter = true, col(c.filter)
	}
	return out
}

func isVariance(name string) bool {
	switch name {
	case "STDDEV_POP", "STDDEV_SAMP", "VAR_POP", "VAR_SAMP":
		return true
	}
	return false
}

// aggResultType is the type of an aggregate's result, as Flink derives it:
// COUNT is BIGINT NOT NULL; SUM keeps integer and floating types and makes
// DECIMAL(p, s) DECIMAL(38, s); AVG keeps integer and floating types (an
// integer average truncates) and makes DECIMAL(p, s) DECIMAL(38, max(6, s));
// the variances and standard deviations are typed as AVG (Calcite's
// AVG_AGG_FUNCTION return type), so STDDEV_POP(INT) is INT; MIN, MAX,
// FIRST_VALUE and LAST_VALUE keep the argument's type; LISTAGG of a
// character string is STRING. All but COUNT are nullable.
func aggResultType(name string, arg *expr.Expr) (types.DataType, error) {
	if name == "COUNT" {
		return types.BigInt.WithNullable(false), nil
	}
	t := arg.Type
	switch name {
	case "SUM", "AVG", "STDDEV_POP", "STDDEV_SAMP", "VAR_POP", "VAR_SAMP":
		switch {
		case t.IsInteger(), t.Kind == types.KindFloat, t.Kind == types.KindDouble:
			return t.WithNullable(true), nil
		case t.Kind == types.KindDecimal && name == "SUM":
			return types.Decimal(38, t.Scale), nil
		case t.Kind == types.KindDecimal:
			return types.Decimal(38, max(6, t.Scale)), nil
		}
	case "MIN", "MAX", "FIRST_VALUE", "LAST_VALUE":
		// NB: composite values have no order (Flink's MIN and MAX take
		// comparable types only).
		if t.Kind != types.KindNull && !(t.IsComposite() && (name == "MIN" || name == "MAX")) {
			return t.WithNullable(true), nil
		}
	case "LISTAGG":
		if t.IsString() {
			return types.String, nil
		}
	}
	return types.DataType{}, fmt.Errorf("cannot apply '%s' to arguments of type %s", name, t)
}

// canonical is a string equal for equal expressions.
func canonical(e *expr.Expr) string {
	if e == nil {
		return ""
	}
	b, err := json.Marshal(e)
	if err != nil {
		panic("planner: cannot encode an expression: " + err.Error())
	}
	return string(b)
}

// groupWindows are the legacy group window functions of GROUP BY.
var groupWindows = map[string]bool{"TUMBLE": true, "HOP": true, "SESSION": true, "CUMULATE": true}

// bindGroupBy plans an aggregating SELECT: the GROUP BY keys and the
// aggregate calls over in, then HAVING and the SELECT list over the keys and
// the aggregates' results. exprs (bound with agg collecting calls) and
// having are rewritten over the aggregate's output; a column of the input
// used outside an aggregate must be (part of) a GROUP BY expression. srcs
// holds the syntax each of exprs came from, for error positions.
func bindGroupBy(s *ast.Select, in node, sc *scope, agg *aggBinder, exprs []*expr.Expr, srcs []ast.Expr, out types.Schema, having *expr.Expr, ttl *time.Duration) (node, error) {
	gsc := sc.withoutAggs("Aggregate expression is illegal in GROUP BY clause")
	var gw *groupWindow
	var groupBy []ast.Expr
	for _, g := range s.GroupBy {
		switch g := g.(type) {
		case *ast.GroupingSets:
			if _, ok := in.(*windowNode); ok {
				return nil, unsupported(g.Pos, g.Kind+" in a window aggregate")
			}
		case *ast.FuncCall:
			if name := strings.ToUpper(g.FuncName()); groupWindows[name] {
				if _, ok := groupWindowArgs[name]; !ok {
					return nil, unsupported(g.Pos, "the group window function "+name+" in GROUP BY")
				}
				if gw != nil {
					// Flink's LogicalWindowAggregateRule.
					return nil, errorf(g.Pos, "Only a single window group function may be used in GROUP BY")
				}
				var err error
				if gw, err = bindGroupWindow(gsc, in, g, name); err != nil {
					return nil, err
				}
				continue
			}
		}
		groupBy = append(groupBy, g)
	}
	gk, err := bindGroupKeys(gsc, groupBy)
	if err != nil {
		return nil, err
	}
	keys, keyNames, keyIdx := gk.keys, gk.names, gk.index
	calls, grouping, newIndex := splitGroupingCalls(agg.calls)
	groupingArgs := make([][]int, len(grouping))
	for i, c := range grouping {
		if groupingArgs[i], err = gk.groupingArgs(c); err != nil {
			return nil, err
		}
	}
	if gw != nil && gk.expanded() {
		return nil, unsupported(s.GroupBy[0].Position(), "GROUPING SETS, ROLLUP or CUBE with a group window function")
	}
	if err := checkAuxCalls(calls, gw); err != nil {
		return nil, err
	}
	for i := range exprs {
		exprs[i] = renumberPlaceholders(exprs[i], agg.width, newIndex)
	}
	having = renumberPlaceholders(having, agg.width, newIndex)
	rkeys := keys
	expanded := gk.expanded()
	if expanded {
		// NB: $e is a key the rewriter never matches; it only shifts the
		// aggregates' columns past it.
		rkeys = append(append([]*expr.Expr{}, keys...), nil)
	}
	r := newAggRewriter(agg.width, rkeys, keyIdx)
	for i, e := range exprs {
		ne, col := r.rewrite(e)
		if col >= 0 {
			return nil, notGrouped(sc, srcs[i], col)
		}
		exprs[i] = ne
	}
	if having != nil {
		h, col := r.rewrite(having)
		if col >= 0 {
			return nil, notGrouped(sc, s.Having, col)
		}
		having = h
	}
	if len(grouping) > 0 {
		eCol := -1
		if expanded {
			eCol = len(keys)
		}
		sub := make([]*expr.Expr, len(grouping))
		for i := range grouping {
			sub[i] = gk.groupingExpr(grouping[i].fn, groupingArgs[i], eCol)
		}
		from := len(rkeys) + len(calls)
		for i := range exprs {
			exprs[i] = substituteColumns(exprs[i], from, sub)
		}
		having = substituteColumns(having, from, sub)
	}
	if expanded {
		return bindExpandedGroupBy(gk, in, calls, exprs, out, having, ttl), nil
	}
	n := &aggNode{input: in, keys: keys, calls: calls, ttl: ttl, window: gw}
	for i, k := range keys {
		n.out = append(n.out, types.Field{Name: keyNames[i], Type: k.Type})
	}
	for i, c := range calls {
		n.out = append(n.out, types.Field{Name: fmt.Sprintf("$agg%d", i), Type: c.typ})
	}
	n.out = uniquifySchema(n.out)
	if having == nil && isIdentity(exprs, n.out) {
		// The SELECT list is the keys then the aggregates: no projection.
		for i := range n.out {
			n.out[i].Name = out[i].Name
		}
		return n, nil
	}
	var top node = n
	if having != nil {
		top = &filterNode{input: top, cond: having}
	}
	return &projectNode{input: top, exprs: exprs, out: out}, nil
}

func uniquifySchema(s types.Schema) types.Schema {
	names := uniquify(s.Names())
	for i := range s {
		s[i].Name = names[i]
	}
	return s
}

// distinct wraps n in an aggregate grouping by all of its columns, as
// SELECT DISTINCT does; ttl is a STATE_TTL hint's, or nil.
func distinct(n node, ttl *time.Duration) node {
	out := n.schema()
	return &aggNode{input: n, keys: identity(out), out: append(types.Schema{}, out...), ttl: ttl}
}

// aggRewriter rewrites expressions bound over an aggregate's input (with
// placeholder columns for aggregate calls) over the aggregate's output.
type aggRewriter struct {
	width  int
	keys   []*expr.Expr
	keyIdx map[string]int
	// keySizes holds the tree sizes of the keys: only a subexpression of
	// such a size can be one, so only those are encoded for keyIdx.
	// NB: encoding every subexpression made rewrite quadratic.
	keySizes map[int]bool
	sizes    treeSizes
}

func newAggRewriter(width int, keys []*expr.Expr, keyIdx map[string]int) *aggRewriter {
	r := &aggRewriter{width: width, keys: keys, keyIdx: keyIdx, keySizes: map[int]bool{}, sizes: treeSizes{}}
	for _, k := range keys {
		if k != nil {
			r.keySizes[treeSize(k)] = true
		}
	}
	return r
}

// rewrite returns e over the aggregate's output, or the input column that
// is neither inside an aggregate nor part of a GROUP BY expression.
func (r *aggRewriter) rewrite(e *expr.Expr) (*expr.Expr, int) {
	if e.Op == expr.OpColumn && e.Col >= r.width {
		return expr.Column(len(r.keys)+e.Col-r.width, e.Type), -1
	}
	if r.keySizes[r.sizes.of(e)] {
		if i, ok := r.keyIdx[canonical(e)]; ok {
			return expr.Column(i, r.keys[i].Type), -1
		}
	}
	switch e.Op {
	case expr.OpColumn:
		return nil, e.Col
	case expr.OpLiteral:
		return e, -1
	}
	c := *e
	c.Args = make([]*expr.Expr, len(e.Args))
	for i, a := range e.Args {
		na, col := r.rewrite(a)
		if col >= 0 {
			return nil, col
		}
		c.Args[i] = na
	}
	return &c, -1
}

// notGrouped reports input column col, used in src outside an aggregate
// and outside the GROUP BY expressions, as Flink (Calcite) words it.
func notGrouped(sc *scope, src ast.Expr, col int) error {
	var found *ast.ColumnRef
	ast.Inspect(src, func(n ast.Node) bool {
		if found != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncCall:
			if aggregates[strings.ToUpper(n.FuncName())] {
				return false
			}
		case *ast.ColumnRef:
			if i, err := sc.resolve(n); err == nil && i == col {
				found = n
			}
		}
		return true
	})
	if found != nil {
		return errorf(found.Pos, "Expression '%s' is not being grouped", found.String())
	}
	return errorf(src.Position(), "Expression '%s' is not being grouped", sc.cols[col].name)
}
