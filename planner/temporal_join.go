package planner

import (
	"fmt"
	"strings"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// temporalTimes marks a join as an event-time temporal join (FOR
// SYSTEM_TIME AS OF left.rowtime): the rowtime attributes of the left input
// and of the versioned right table, and the versioned table's primary key
// columns in the right input.
type temporalTimes struct {
	leftTime, rightTime int
	primaryKey          []int
}

// bindTemporalJoin binds l JOIN r FOR SYSTEM_TIME AS OF time ON cond, with
// Flink's checks: time is the left input's rowtime attribute, and r has a
// primary key and a rowtime attribute of the same type.
func (b *binder) bindTemporalJoin(j *ast.Join, tn *ast.TableName) (node, *scope, error) {
	if j.Kind != ast.InnerJoin && j.Kind != ast.LeftJoin {
		return nil, nil, unsupported(j.Pos, fmt.Sprintf("%s with FOR SYSTEM_TIME AS OF", j.Kind))
	}
	l, lsc, err := b.bindFrom(j.L)
	if err != nil {
		return nil, nil, err
	}
	at, err := bindExpr(lsc, tn.SystemTime)
	if err != nil {
		return nil, nil, err
	}
	if isProctimeAsOf(tn, at, l) {
		return b.bindLookupJoin(j, tn, l, lsc)
	}
	lt := rowtimeOf(l)
	if at.Op != expr.OpColumn || lt < 0 || at.Col != lt {
		return nil, nil, errorf(tn.SystemTime.Position(), "FOR SYSTEM_TIME AS OF must be the rowtime attribute of the left input of an event-time temporal join")
	}
	plain := *tn
	plain.SystemTime = nil
	r, rsc, err := b.bindTableName(&plain)
	if err != nil {
		return nil, nil, err
	}
	scan, ok := r.(*scanNode)
	if !ok {
		return nil, nil, unsupported(tn.Name.Pos, "FOR SYSTEM_TIME AS OF "+tn.Name.String()+", which is not a table")
	}
	if len(scan.table.PrimaryKey) == 0 {
		return nil, nil, errorf(tn.Name.Pos, "Temporal Table Join requires primary key in versioned table, but no primary key can be found.")
	}
	if scan.rowtime < 0 {
		return nil, nil, errorf(tn.Name.Pos, "Event-Time Temporal Table Join requires both primary key and row time attribute in versioned table, but no row time attribute can be found.")
	}
	ltype, rtype := l.schema()[lt].Type, scan.out[scan.rowtime].Type
	if ltype.Kind != rtype.Kind {
		return nil, nil, errorf(tn.SystemTime.Position(), "Event-Time Temporal Table Join requires same rowtime type in left table and versioned table, but the rowtime types are %s ROWTIME and %s ROWTIME.", ltype.WithNullable(true), rtype.WithNullable(true))
	}
	tt := &temporalTimes{leftTime: lt, rightTime: scan.rowtime}
	for _, k := range scan.table.PrimaryKey {
		for i, f := range scan.out {
			if f.Name == k {
				tt.primaryKey = append(tt.primaryKey, i)
			}
		}
	}
	if j.On == nil {
		return nil, nil, errorf(j.Pos, "a temporal join needs an ON condition")
	}
	sc := concat(lsc, rsc)
	cond, err := bindExpr(sc.withoutAggs("Aggregate expression is illegal in ON clause"), j.On)
	if err != nil {
		return nil, nil, err
	}
	if cond.Type.Kind != types.KindBoolean {
		return nil, nil, errorf(j.On.Position(), "join condition must be a BOOLEAN expression, got %s", cond.Type)
	}
	n := &joinNode{pos: j.Pos, left: l, right: r, cond: cond, outerLeft: j.Kind == ast.LeftJoin,
		leftNames: inputNames(j.L), rightNames: inputNames(j.R), temporal: tt}
	lw := len(l.schema())
	for i, f := range append(append(types.Schema{}, l.schema()...), r.schema()...) {
		if i >= lw && n.outerLeft {
			f.Type = f.Type.WithNullable(true)
			sc.cols[i].typ = f.Type
		}
		n.out = append(n.out, f)
	}
	return n, sc, nil
}

// checkTemporalKeys checks that the equality keys of a temporal join cover
// the versioned table's primary key (rightKeys over the right input).
func checkTemporalKeys(n *joinNode, rightKeys []*expr.Expr) error {
	var names []string
	for _, pk := range n.temporal.primaryKey {
		names = append(names, n.right.schema()[pk].Name)
		found := false
		for _, k := range rightKeys {
			if k.Op == expr.OpColumn && k.Col == pk {
				found = true
			}
		}
		if !found {
			return &Error{Pos: n.pos, Msg: fmt.Sprintf("Temporal table's primary key [%s] must be included in the equivalence condition of temporal join", strings.Join(names, ", "))}
		}
	}
	return nil
}

// temporalJoinName is the join's name in plans, after Flink's
// TemporalJoin(joinType=[...], ...).
func temporalJoinName(kind string, lt, rt int) string {
	return fmt.Sprintf("TemporalJoin(joinType=[%s], isRowTime=true, leftTimeIndex=%d, rightTimeIndex=%d)", kind, lt, rt)
}
