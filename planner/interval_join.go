package planner

import (
	"fmt"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/types"
)

// intervalBounds is what makes a join an interval join, as Flink's
// IntervalJoinUtil finds it: the rowtime attributes of both inputs (leftTime
// in the left input, rightTime in the right one) and the inclusive bounds,
// in ms, of leftTime - rightTime.
type intervalBounds struct {
	leftTime, rightTime int
	lower, upper        int64
}

// intervalOf looks among the conjuncts of n's condition that read both
// inputs for a lower and an upper bound of one input's rowtime attribute
// against the other's, such as
//
//	l.ts BETWEEN r.ts - INTERVAL '1' HOUR AND r.ts
//	l.ts >= r.ts - INTERVAL '5' SECOND AND l.ts < r.ts + INTERVAL '1' MINUTE
//
// It returns the bounds and the other conjuncts, or nil and conds unchanged
// when there is no such pair: the join stays a regular join. A strict < or >
// moves its bound by 1 ms. Several bounds on one end keep the tightest.
func intervalOf(n *joinNode, conds []*expr.Expr, lw int) (*intervalBounds, []*expr.Expr) {
	lt, rt := rowtimeOf(n.left), rowtimeOf(n.right)
	if lt < 0 || rt < 0 {
		return nil, conds
	}
	ltype, rtype := n.left.schema()[lt].Type, n.right.schema()[rt].Type
	if ltype.Kind != rtype.Kind || !ltype.IsTimestamp() {
		return nil, conds
	}
	b := &intervalBounds{leftTime: lt, rightTime: rt}
	var haveLower, haveUpper bool
	var rest []*expr.Expr
	for _, c := range conds {
		var parts []*expr.Expr
		if c.Op == expr.OpCall && c.Func == "BETWEEN" && len(c.Args) == 3 {
			parts = []*expr.Expr{cmp(">=", c.Args[0], c.Args[1]), cmp("<=", c.Args[0], c.Args[2])}
		} else {
			parts = []*expr.Expr{c}
		}
		var found []timeBound
		for _, p := range parts {
			tb, ok := timeBoundOf(p, lt, lw+rt)
			if !ok {
				break
			}
			found = append(found, tb)
		}
		if len(found) != len(parts) {
			rest = append(rest, c)
			continue
		}
		for _, tb := range found {
			if tb.lower {
				if !haveLower || tb.ms > b.lower {
					b.lower = tb.ms
				}
				haveLower = true
			} else {
				if !haveUpper || tb.ms < b.upper {
					b.upper = tb.ms
				}
				haveUpper = true
			}
		}
	}
	if !haveLower || !haveUpper {
		return nil, conds
	}
	return b, rest
}

// cmp builds the comparison a op b of a BETWEEN's parts; only its shape is
// read.
func cmp(op string, a, b *expr.Expr) *expr.Expr {
	return &expr.Expr{Op: expr.OpCall, Func: op, Type: types.Boolean, Args: []*expr.Expr{a, b}}
}

// timeBound is one bound of leftTime - rightTime: lower (>= ms) or upper
// (<= ms).
type timeBound struct {
	lower bool
	ms    int64
}

// timeBoundOf reads c as a bound of column lcol - column rcol (both over the
// join's input row), where each side of the comparison is a rowtime column
// plus or minus a constant DAY TO SECOND interval.
func timeBoundOf(c *expr.Expr, lcol, rcol int) (timeBound, bool) {
	if c.Op != expr.OpCall || len(c.Args) != 2 {
		return timeBound{}, false
	}
	op := c.Func
	switch op {
	case "<", "<=", ">", ">=":
	default:
		return timeBound{}, false
	}
	ca, oa, ok1 := timeOperand(c.Args[0])
	cb, ob, ok2 := timeOperand(c.Args[1])
	if !ok1 || !ok2 {
		return timeBound{}, false
	}
	// ca + oa op cb + ob, as leftTime - rightTime op k.
	var k int64
	switch {
	case ca == lcol && cb == rcol:
		k = ob - oa
	case ca == rcol && cb == lcol:
		k = oa - ob
		op = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
	default:
		return timeBound{}, false
	}
	switch op {
	case ">=":
		return timeBound{lower: true, ms: k}, true
	case ">":
		return timeBound{lower: true, ms: k + 1}, true
	case "<=":
		return timeBound{ms: k}, true
	default: // "<"
		return timeBound{ms: k - 1}, true
	}
}

// timeOperand reads e as column + offset ms: a column, or a column plus or
// minus a constant DAY TO SECOND interval.
func timeOperand(e *expr.Expr) (col int, ms int64, ok bool) {
	if e.Op == expr.OpColumn {
		return e.Col, 0, true
	}
	if e.Op != expr.OpCall || len(e.Args) != 2 || (e.Func != "+" && e.Func != "-") {
		return 0, 0, false
	}
	x, lit := e.Args[0], e.Args[1]
	if e.Func == "+" && x.Op == expr.OpLiteral {
		x, lit = lit, x
	}
	if x.Op != expr.OpColumn || lit.Op != expr.OpLiteral || lit.Type.Kind != types.KindIntervalDayTime {
		return 0, 0, false
	}
	v, isInt := lit.Value.(int64)
	if !isInt {
		return 0, 0, false
	}
	if e.Func == "-" {
		v = -v
	}
	return x.Col, v, true
}

// intervalJoinName is the join's name in plans, after Flink's
// IntervalJoin(joinType=[...], windowBounds=[...]).
func intervalJoinName(kind string, b *intervalBounds, lt, rt int) string {
	return fmt.Sprintf("IntervalJoin(joinType=[%s], windowBounds=[isRowTime=true, leftLowerBound=%d, leftUpperBound=%d, leftTimeIndex=%d, rightTimeIndex=%d])",
		kind, b.lower, b.upper, lt, rt)
}
