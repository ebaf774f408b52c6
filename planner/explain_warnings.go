package planner

import (
	"fmt"
	"strings"

	"github.com/braidflow/braid/jobgraph"
)

const ttlAdvice = "set 'table.exec.state.ttl' or a STATE_TTL hint"

// warnings returns, for a streaming plan, one line per operator whose
// state can grow without bound: state kept per key (or per row) that
// neither a state TTL nor the watermark ever removes. Window aggregates,
// window ranks and deduplicates, window joins, interval joins and temporal
// joins are not listed: the watermark cleans them (a temporal join keeps only the latest version of each key of its
// versioned table). A batch plan reads bounded inputs and has none.
func (x *explainer) warnings() []string {
	if x.plan.batch {
		return nil
	}
	var out []string
	for _, n := range x.nodes {
		if w := n.warning(); w != "" {
			out = append(out, w)
		}
	}
	return out
}

func (n *explainNode) warning() string {
	in := n.in(0)
	switch s := n.op.Spec.(type) {
	case *jobgraph.GroupAggSpec:
		if s.TTLMs > 0 {
			return ""
		}
		if len(s.Keys) > 0 {
			return fmt.Sprintf("GroupAggregate(groupBy=[%s]) keeps state for every group key forever: %s.",
				strings.Join(namesAt(in, s.Keys), ", "), ttlAdvice)
		}
		// A global aggregate keeps one group, unless it keeps values.
		for _, c := range s.Aggs {
			if c.Distinct {
				return fmt.Sprintf("GroupAggregate(select=[%s]) keeps every distinct value it has seen forever: %s.",
					aggCallText(c, in), ttlAdvice)
			}
			if s.InputRetracts && keepsValues(c.Func) {
				return fmt.Sprintf("GroupAggregate(select=[%s]) keeps every value of its retracting input forever: %s.",
					aggCallText(c, in), ttlAdvice)
			}
		}
	case *jobgraph.JoinSpec:
		return joinWarning(s.OuterLeft, s.OuterRight, false, s, n, ttlAdvice)
	case *jobgraph.SemiJoinSpec:
		js := jobgraph.JoinSpec{LeftSchema: s.LeftSchema, RightSchema: s.RightSchema, LeftKeys: s.LeftKeys,
			RightKeys: s.RightKeys, Residual: s.Residual, LeftTTLMs: s.LeftTTLMs, RightTTLMs: s.RightTTLMs}
		return joinWarning(false, false, s.Anti, &js, n, "set 'table.exec.state.ttl'")
	case *jobgraph.RankSpec:
		what := ""
		switch {
		case s.InputRetracts && len(s.Partition) > 0:
			what = "every input row of every partition key"
		case s.InputRetracts:
			what = "every input row"
		case len(s.Partition) > 0:
			what = fmt.Sprintf("the top %d rows of every partition key", s.Limit)
		default:
			return "" // the top rows only
		}
		if s.TTLMs > 0 || s.EmitAtEnd {
			return ""
		}
		return fmt.Sprintf("Rank(partitionBy=[%s], orderBy=[%s], rankEnd=%d) keeps %s forever: set 'table.exec.state.ttl'.",
			strings.Join(namesAt(in, s.Partition), ", "), sortKeysText(s.OrderBy, in), s.Limit, what)
	case *jobgraph.SinkMaterializeSpec:
		if s.TTLMs > 0 {
			return ""
		}
		return fmt.Sprintf("SinkMaterializer(pk=[%s]) keeps every live row of every sink key forever: set 'table.exec.state.ttl'.",
			strings.Join(namesAt(in, s.Keys), ", "))
	case *jobgraph.DeduplicateSpec:
		if s.TTLMs > 0 {
			return ""
		}
		return fmt.Sprintf("Deduplicate(key=[%s]) keeps a row for every key forever: set 'table.exec.state.ttl'.",
			strings.Join(namesAt(in, s.Keys), ", "))
	case *jobgraph.NormalizeSpec:
		if s.TTLMs > 0 {
			return ""
		}
		return fmt.Sprintf("ChangelogNormalize(key=[%s]) keeps the last row of every key forever: set 'table.exec.state.ttl'.",
			strings.Join(namesAt(in, s.Keys), ", "))
	case *jobgraph.OverAggSpec:
		if len(s.Partition) == 0 {
			return ""
		}
		return fmt.Sprintf("OverAggregate(partitionBy=[%s]) keeps its accumulators for every partition key forever (rows leave its state with the watermark): Braid's OverAggregate has no state TTL (table.exec.state.ttl does not apply to it).",
			strings.Join(namesAt(in, s.Partition), ", "))
	}
	return ""
}

// keepsValues reports whether an aggregate over a retracting input keeps
// every live value of its group (so that a retraction finds the next
// one), as operators' MIN, MAX, LISTAGG, FIRST_VALUE and LAST_VALUE do.
func keepsValues(fn string) bool {
	switch fn {
	case jobgraph.AggMin, jobgraph.AggMax, jobgraph.AggListAgg, jobgraph.AggFirstValue, jobgraph.AggLastValue:
		return true
	}
	return false
}

// joinWarning words the warning of a regular join whose sides keep their
// rows without a TTL.
func joinWarning(outerLeft, outerRight, anti bool, s *jobgraph.JoinSpec, n *explainNode, advice string) string {
	var sides string
	switch {
	case s.LeftTTLMs == 0 && s.RightTTLMs == 0:
		sides = "both inputs"
	case s.LeftTTLMs == 0:
		sides = "its left input"
	case s.RightTTLMs == 0:
		sides = "its right input"
	default:
		return ""
	}
	kind := joinType(outerLeft, outerRight)
	if _, semi := n.op.Spec.(*jobgraph.SemiJoinSpec); semi {
		kind = "LeftSemiJoin"
		if anti {
			kind = "LeftAntiJoin"
		}
	}
	d := describeJoin(s, kind, n.in(0), n.in(1), "")
	// Keep the join type and condition: Join(joinType=[...], where=[...]).
	if i := strings.Index(d, ", select=["); i >= 0 {
		d = d[:i] + ")"
	}
	return fmt.Sprintf("%s keeps every row of %s forever: %s.", d, sides, advice)
}
