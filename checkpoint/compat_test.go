package checkpoint

import (
	"errors"
	"strings"
	"testing"
)

func TestMatchVertices(t *testing.T) {
	m := &Manifest{
		Vertices: []VertexInfo{
			{ID: 0, Parallelism: 1, OperatorUIDs: []string{"src", "calc"}, OperatorNames: []string{"Source: t", "Calc"}},
			{ID: 1, Parallelism: 2, OperatorUIDs: []string{"agg", "sink"}, OperatorNames: []string{"GroupAggregate", "Sink: out"}},
		},
		Subtasks: []SubtaskState{
			{Vertex: 0, Subtask: 0, Operators: map[string][]byte{"src": []byte("pos")}},
			{Vertex: 1, Subtask: 0, Backend: &BackendHandle{}},
		},
	}
	// The same operators, rechained and renumbered.
	match, lost := MatchVertices(m, []VertexInfo{
		{ID: 0, OperatorUIDs: []string{"src"}},
		{ID: 1, OperatorUIDs: []string{"calc"}},
		{ID: 2, OperatorUIDs: []string{"agg", "sink"}},
	})
	if len(lost) != 0 || match[0] != 0 || match[2] != 1 {
		t.Errorf("rechained: match %v, unclaimed %v", match, lost)
	}
	// A changed aggregate: its keyed state has no owner.
	match, lost = MatchVertices(m, []VertexInfo{
		{ID: 0, OperatorUIDs: []string{"src", "calc"}},
		{ID: 1, OperatorUIDs: []string{"agg2", "sink2"}},
	})
	if _, ok := match[1]; ok || len(lost) != 1 || lost[0] != (Unclaimed{UID: "agg", Name: "GroupAggregate"}) {
		t.Fatalf("changed aggregate: match %v, unclaimed %v", match, lost)
	}
	err := error(&UnclaimedStateError{Path: "file:///sp/_metadata", Unclaimed: lost})
	var ue *UnclaimedStateError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "operator agg (GroupAggregate)") ||
		!strings.Contains(err.Error(), "'execution.savepoint.ignore-unclaimed-state' = 'true'") {
		t.Errorf("error: %v", err)
	}
	// A dropped source loses its operator state.
	_, lost = MatchVertices(m, []VertexInfo{{ID: 0, OperatorUIDs: []string{"other"}}, {ID: 1, OperatorUIDs: []string{"agg", "sink"}}})
	if len(lost) != 1 || lost[0].UID != "src" {
		t.Errorf("dropped source: unclaimed %v", lost)
	}
	// Empty uids (a job planned before uids) match by the runtime's fallback.
	old := &Manifest{Vertices: []VertexInfo{{ID: 3, OperatorUIDs: []string{"", ""}}},
		Subtasks: []SubtaskState{{Vertex: 3, Backend: &BackendHandle{}}}}
	match, lost = MatchVertices(old, []VertexInfo{{ID: 3, OperatorUIDs: []string{"", ""}}})
	if len(lost) != 0 || match[3] != 3 {
		t.Errorf("fallback uids: match %v, unclaimed %v", match, lost)
	}
}
