package operators

import (
	"fmt"

	"github.com/braidflow/braid/jobgraph"
)

func init() {
	RegisterOperator(jobgraph.KindWindowDedup, func(spec jobgraph.Spec) (Operator, error) {
		s, err := SpecAs[*jobgraph.WindowDeduplicateSpec](spec)
		if err != nil {
			return nil, err
		}
		return NewWindowDeduplicate(*s)
	})
}

// NewWindowDeduplicate returns Flink's WindowDeduplicate as a WindowRank
// of one row per (key, window) ordered by the rowtime column: ascending
// with the earlier arrival winning a tie (keep the first row), or
// descending with the later arrival winning it (keep the last), as
// Flink's DeduplicateFunctionHelper.isDuplicate decides. It emits the kept
// row as +I when the window fires.
func NewWindowDeduplicate(spec jobgraph.WindowDeduplicateSpec) (*WindowRank, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("operators: window deduplicate: %w", err)
	}
	r, err := NewWindowRank(jobgraph.WindowRankSpec{InputSchema: spec.InputSchema, Partition: spec.Keys,
		OrderBy: []jobgraph.SortKey{{Col: spec.RowtimeCol, Desc: spec.KeepLastRow}}, Limit: 1,
		WindowStart: spec.WindowStart, WindowEnd: spec.WindowEnd, Window: spec.Window})
	if err != nil {
		return nil, err
	}
	r.newWinsTies = spec.KeepLastRow
	r.what = "Window deduplicate"
	return r, nil
}
