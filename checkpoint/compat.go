package checkpoint

import (
	"fmt"

	"github.com/braidflow/braid/jobgraph"
)

// VerticesOf describes g's vertices as a manifest records them: id,
// parallelism, and every operator's uid (jobgraph.Vertex.OperatorUID) and
// name.
func VerticesOf(g *jobgraph.Graph) []VertexInfo {
	var out []VertexInfo
	for _, v := range g.Vertices {
		info := VertexInfo{ID: v.ID, Parallelism: v.Parallelism}
		for i, op := range v.Chain {
			info.OperatorUIDs = append(info.OperatorUIDs, v.OperatorUID(i))
			info.OperatorNames = append(info.OperatorNames, op.Name)
		}
		out = append(out, info)
	}
	return out
}

// uids returns v's operator uids, with the runtime's fallback for the
// empty uids of a job planned before uids existed.
func (v VertexInfo) uids() []string {
	out := make([]string, len(v.OperatorUIDs))
	for i, u := range v.OperatorUIDs {
		if u == "" {
			u = fmt.Sprintf("v%d-%d", v.ID, i)
		}
		out[i] = u
	}
	return out
}

func (v VertexInfo) name(i int) string {
	if i < len(v.OperatorNames) && v.OperatorNames[i] != "" {
		return v.OperatorNames[i]
	}
	return fmt.Sprintf("vertex %d", v.ID)
}

// Unclaimed is an operator whose state a checkpoint holds and that no
// operator of the restoring job claims.
type Unclaimed struct {
	UID, Name string
}

// UnclaimedStateError refuses a restore that would drop state.
type UnclaimedStateError struct {
	// Path is the checkpoint's or savepoint's manifest URI.
	Path      string
	Unclaimed []Unclaimed
}

func (e *UnclaimedStateError) Error() string {
	u := e.Unclaimed[0]
	more := ""
	if n := len(e.Unclaimed) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d more)", n)
	}
	return fmt.Sprintf("savepoint %s has state for operator %s (%s)%s that the job does not have; set 'execution.savepoint.ignore-unclaimed-state' = 'true' to drop it",
		e.Path, u.UID, u.Name, more)
}

// MatchVertices decides which vertex of m each vertex of the restoring job
// (job, as VerticesOf describes it) takes its state from, by operator uid,
// so that state survives a change of vertex ids or chaining: a vertex takes
// the keyed state of the checkpointed vertex sharing most of its operator
// uids (the same id on a tie). Operator state follows its uid wherever it
// is. match maps the job's vertex ids to m's; a vertex that shares no uid
// is absent and starts empty.
//
// unclaimed lists, in m's vertex and chain order, what would be lost: an
// operator with operator state whose uid the job does not have, and the
// first operator of a vertex with keyed state that no vertex of the job
// matches.
func MatchVertices(m *Manifest, job []VertexInfo) (match map[int]int, unclaimed []Unclaimed) {
	match = map[int]int{}
	owner := map[string]int{} // uid -> m's vertex id
	for _, v := range m.Vertices {
		for _, u := range v.uids() {
			owner[u] = v.ID
		}
	}
	claimed := map[string]bool{}
	matched := map[int]bool{}
	for _, v := range job {
		count := map[int]int{}
		for _, u := range v.uids() {
			claimed[u] = true
			if o, ok := owner[u]; ok {
				count[o]++
			}
		}
		best, bestN := -1, 0
		for o, n := range count {
			if n > bestN || n == bestN && (o == v.ID || best != v.ID && o < best) {
				best, bestN = o, n
			}
		}
		if best >= 0 {
			match[v.ID] = best
			matched[best] = true
		}
	}
	hasBackend := map[int]bool{}
	opState := map[string]bool{}
	for _, s := range m.Subtasks {
		if s.Backend != nil {
			hasBackend[s.Vertex] = true
		}
		for u, b := range s.Operators {
			if len(b) > 0 {
				opState[u] = true
			}
		}
	}
	for _, v := range m.Vertices {
		uids := v.uids()
		backendLost := hasBackend[v.ID] && !matched[v.ID]
		for i, u := range uids {
			if claimed[u] {
				continue
			}
			if opState[u] || backendLost {
				unclaimed = append(unclaimed, Unclaimed{UID: u, Name: v.name(i)})
				backendLost = false // NB: named once, by its first lost operator
			}
		}
	}
	return match, unclaimed
}
