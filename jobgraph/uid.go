package jobgraph

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/braidflow/braid/types"
)

// UIDLength is the number of hex digits of an operator uid.
const UIDLength = 16

// tuningFields are spec fields that tune how an operator runs without
// changing what its state means: changing them keeps the operator's uid,
// so a savepoint restores into the changed job.
var tuningFields = map[string]bool{
	"ttl_ms": true, "left_ttl_ms": true, "right_ttl_ms": true, // state TTL
	"bounded":         true,                         // a scan of what exists vs. following the log
	"rows_per_second": true, "number_of_rows": true, // datagen pace and size
	// nexmark pace and size, and its base time: fixed when the job is
	// planned, so a query planned again would otherwise lose its state
	// (a restored source continues from its checkpointed base time).
	"first_event_rate": true, "next_event_rate": true, "events_num": true, "base_time": true,
	"brokers":               true,
	"group_id":              true,
	"fail_on_missing_field": true, "ignore_parse_errors": true,
	"guarantee": true, "transactional_id_prefix": true,
	"text": true, // the watermark expression as written, for EXPLAIN
}

// AssignUIDs gives every operator of g that has no uid a stable one, derived
// from the plan's structure: a hash of the operator's kind, its spec's JSON
// without tuning fields (tuningFields), and the uids of its inputs (the
// previous operator of its chain, or the last operator of each vertex that
// feeds its vertex, by input index, with the key columns of hash edges).
// Parallelism, chaining, vertex ids and names and the job id do not enter,
// so the same query planned twice, or at another parallelism, gets the same
// uids. Operators that would collide (the same scan twice) are numbered in
// graph order. Uids already set are kept: they are overrides.
//
// NB: the hash reads the JSON the spec encodes to on the wire: a uid
// changes when that JSON does, and checkpoints restore by uid.
//
// AssignUIDs fails on a graph with a cycle or a spec that does not encode;
// g's edges must reference its vertices (Validate).
func AssignUIDs(g *Graph) error {
	order, err := topoOrder(g)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, v := range g.Vertices {
		for _, op := range v.Chain {
			if op.UID != "" {
				seen[op.UID] = true
			}
		}
	}
	last := make([]string, len(g.Vertices)) // vertex id -> uid of its last operator
	for _, v := range order {
		var prev []string
		es := g.InputsOf(v.ID)
		sort.SliceStable(es, func(a, b int) bool { return es[a].TargetInput < es[b].TargetInput })
		for _, e := range es {
			in := fmt.Sprintf("in%d=%s", e.TargetInput, last[e.Source])
			if e.Partitioning == types.PartitionHash {
				in += fmt.Sprintf(" keys=%v", e.KeyColumns)
			}
			prev = append(prev, in)
		}
		for _, op := range v.Chain {
			if op.UID == "" {
				config, err := encodeSpec(op.Spec)
				if err != nil {
					return fmt.Errorf("jobgraph: vertex %d (%s), operator %s: %w", v.ID, v.Name, op.Name, err)
				}
				uid := operatorHash(op.Kind(), config, prev)
				for n := 1; seen[uid]; n++ {
					uid = operatorHash(op.Kind(), config, append(prev, fmt.Sprint("dup", n)))
				}
				op.UID = uid
				seen[uid] = true
			}
			prev = []string{"in0=" + op.UID}
		}
		if len(v.Chain) > 0 {
			last[v.ID] = v.Chain[len(v.Chain)-1].UID
		}
	}
	return nil
}

// operatorHash hashes an operator's kind, structural spec and inputs.
func operatorHash(kind string, config []byte, inputs []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "kind=%s\n", kind)
	h.Write(structuralSpec(config))
	for _, in := range inputs {
		fmt.Fprintf(h, "\n%s", in)
	}
	return hex.EncodeToString(h.Sum(nil))[:UIDLength]
}

// structuralSpec returns config without its tuning fields, canonically
// encoded; a config that is not a JSON object is returned as is.
func structuralSpec(config []byte) []byte {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(config, &m); err != nil {
		return config
	}
	for k := range m {
		if tuningFields[k] {
			delete(m, k)
		}
	}
	b, err := json.Marshal(m) // NB: encoding/json sorts map keys
	if err != nil {
		return config
	}
	return b
}

// topoOrder returns g's vertices so that every vertex follows the vertices
// feeding it; among ready vertices, lower ids first. It fails on a cycle.
// Edges must reference existing vertices.
func topoOrder(g *Graph) ([]*Vertex, error) {
	indeg := make([]int, len(g.Vertices))
	outs := make([][]int, len(g.Vertices))
	for _, e := range g.Edges {
		indeg[e.Target]++
		outs[e.Source] = append(outs[e.Source], e.Target)
	}
	var ready []int
	for id, n := range indeg {
		if n == 0 {
			ready = append(ready, id)
		}
	}
	var order []*Vertex
	for len(ready) > 0 {
		sort.Ints(ready)
		id := ready[0]
		ready = ready[1:]
		order = append(order, g.Vertices[id])
		for _, t := range outs[id] {
			indeg[t]--
			if indeg[t] == 0 {
				ready = append(ready, t)
			}
		}
	}
	if len(order) != len(g.Vertices) {
		return nil, fmt.Errorf("jobgraph: the graph has a cycle")
	}
	return order, nil
}

// OperatorUID returns the uid of operator i of v's chain, or for a graph
// planned before uids existed the runtime's fallback "v<vertex>-<index>".
func (v *Vertex) OperatorUID(i int) string {
	if u := v.Chain[i].UID; u != "" {
		return u
	}
	return fmt.Sprintf("v%d-%d", v.ID, i)
}
