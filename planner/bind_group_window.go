package planner

import (
	"fmt"
	"strings"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// groupWindow is a legacy group window function of GROUP BY:
// TUMBLE(time, size), HOP(time, slide, size) or SESSION(time, gap), over a
// rowtime attribute of the aggregate's input. The aggregate then runs as a
// window aggregate grouped by its other keys and the window.
type groupWindow struct {
	pos     ast.Pos
	fn      string
	timeCol int // the time attribute's column in the aggregate's input
	// proctime is set when the time attribute is a PROCTIME() column.
	proctime bool
	window   jobgraph.WindowSpec
	// key is the canonical form of the call's arguments: an auxiliary
	// function names the same window when its own are equal.
	key string
}

// groupWindowAux are the auxiliary functions of the group windows: the
// group function they belong to and the window property they return.
var groupWindowAux = map[string]struct{ fn, prop string }{
	"TUMBLE_START": {"TUMBLE", auxStart}, "TUMBLE_END": {"TUMBLE", auxEnd}, "TUMBLE_ROWTIME": {"TUMBLE", auxRowtime},
	"HOP_START": {"HOP", auxStart}, "HOP_END": {"HOP", auxEnd}, "HOP_ROWTIME": {"HOP", auxRowtime},
	"SESSION_START": {"SESSION", auxStart}, "SESSION_END": {"SESSION", auxEnd}, "SESSION_ROWTIME": {"SESSION", auxRowtime},
}

// The window properties of the auxiliary functions; each is the index of
// the window column (window_start, window_end, window_time) it reads.
const (
	auxStart   = "start"
	auxEnd     = "end"
	auxRowtime = "rowtime"
)

// auxCall is an auxiliary group window function in a SELECT list or
// HAVING, collected with the aggregate calls: the aggregate's output holds
// its value, which the window aggregate takes from the window.
type auxCall struct {
	pos  ast.Pos
	name string // TUMBLE_START, ...
	fn   string // its group function: TUMBLE, HOP, SESSION
	prop string // auxStart, auxEnd, auxRowtime
	key  string // canonical arguments, as groupWindow.key
}

// windowColumn is the index among window_start, window_end and
// window_time of the column a holds.
func (a *auxCall) windowColumn() int {
	switch a.prop {
	case auxStart:
		return 0
	case auxEnd:
		return 1
	}
	return 2
}

// groupWindowArgs are the interval parameters of each group window
// function, after the time attribute.
var groupWindowArgs = map[string][]string{
	"TUMBLE":  {"SIZE"},
	"HOP":     {"SLIDE", "SIZE"},
	"SESSION": {"GAP"},
}

// bindGroupWindowArgs binds the arguments of a group window function or
// of one of its auxiliary functions (name, whose group function is fn):
// the time column, then constant day-time intervals. It returns the time
// column, the window and the arguments' canonical form.
func bindGroupWindowArgs(sc *scope, f *ast.FuncCall, name, fn string) (*expr.Expr, jobgraph.WindowSpec, string, error) {
	params := groupWindowArgs[fn]
	var w jobgraph.WindowSpec
	if f.Star || f.Distinct || f.Filter != nil {
		return nil, w, "", errorf(f.Pos, "%s does not take *, DISTINCT or FILTER", name)
	}
	if len(f.Args) == len(params)+2 {
		// Flink's LogicalWindowAggregateRule.
		return nil, w, "", unsupported(f.Pos, fn+" window with alignment")
	}
	if len(f.Args) != len(params)+1 {
		return nil, w, "", errorf(f.Pos, "invalid number of arguments to function '%s': %d", name, len(f.Args))
	}
	tc, err := bindExpr(sc.withoutAggs("Aggregate expressions cannot be nested"), f.Args[0])
	if err != nil {
		return nil, w, "", err
	}
	key := canonical(tc)
	w.Kind = fn
	b := &binder{}
	for i, p := range params {
		ms, err := b.windowInterval(fn, p, f.Args[i+1])
		if err != nil {
			return nil, w, "", err
		}
		key += fmt.Sprintf(" %d", ms)
		switch p {
		case "SIZE":
			w.SizeMs = ms
		case "SLIDE":
			w.StepMs = ms
		case "GAP":
			w.GapMs = ms
		}
	}
	return tc, w, key, nil
}

// bindGroupWindow binds the group window function f of a GROUP BY, whose
// time column must be a rowtime attribute of the input.
func bindGroupWindow(sc *scope, in node, f *ast.FuncCall, fn string) (*groupWindow, error) {
	tc, w, key, err := bindGroupWindowArgs(sc, f, fn, fn)
	if err != nil {
		return nil, err
	}
	proctime := tc.Op == expr.OpColumn && timeKindOf(in, tc.Col) == proctimeAttr
	if tc.Op != expr.OpColumn || !sc.isRowtime(tc) && !proctime {
		// Flink's StreamLogicalWindowAggregateRule.
		return nil, errorf(f.Args[0].Position(), "Window can only be defined on a time attribute column, but is type of %s", tc.Type)
	}
	return &groupWindow{pos: f.Pos, fn: fn, timeCol: tc.Col, proctime: proctime, window: w, key: key}, nil
}

// bindAux collects the auxiliary group window function f (name) as a call
// of the aggregate: its value is a window property of the group's window.
func (a *aggBinder) bindAux(sc *scope, f *ast.FuncCall, name string) (*expr.Expr, error) {
	aux := groupWindowAux[name]
	tc, _, key, err := bindGroupWindowArgs(sc, f, name, aux.fn)
	if err != nil {
		return nil, err
	}
	t := types.Timestamp(3).WithNullable(false)
	if aux.prop == auxRowtime {
		t = tc.Type.WithNullable(false)
	}
	call := aggCall{fn: name, typ: t, aux: &auxCall{pos: f.Pos, name: name, fn: aux.fn, prop: aux.prop, key: key}}
	id := "aux " + name + " " + key
	i, ok := a.index[id]
	if !ok {
		if a.index == nil {
			a.index = map[string]int{}
		}
		i = len(a.calls)
		a.index[id] = i
		a.calls = append(a.calls, call)
	}
	return expr.Column(a.width+i, t), nil
}

// auxWithoutWindow is Calcite's error for an auxiliary function whose
// group window is not in the GROUP BY (Flink names its group functions
// $TUMBLE, $HOP and $SESSION).
func auxWithoutWindow(a *auxCall) error {
	return errorf(a.pos, "Call to auxiliary group function '%s' must have matching call to group function '$%s' in GROUP BY clause", a.name, a.fn)
}

// checkAuxCalls checks that every auxiliary function of calls names gw,
// the GROUP BY's group window (nil without one).
func checkAuxCalls(calls []aggCall, gw *groupWindow) error {
	for _, c := range calls {
		if c.aux != nil && (gw == nil || c.aux.fn != gw.fn || c.aux.key != gw.key) {
			return auxWithoutWindow(c.aux)
		}
		if c.aux != nil && c.aux.prop == auxRowtime && gw.proctime {
			return unsupported(c.aux.pos, c.aux.name+" of a processing-time window")
		}
	}
	return nil
}

// isGroupWindowAux reports whether name is an auxiliary group window
// function.
func isGroupWindowAux(name string) bool {
	_, ok := groupWindowAux[strings.ToUpper(name)]
	return ok
}
