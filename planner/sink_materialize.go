package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// materializeForSink puts Flink's SinkUpsertMaterializer between a changing
// stream and an upsert sink when the stream has no unique key within the
// sink's primary key (table.exec.sink.upsert-materialize = 'auto', the
// default): then rows of one sink key may come from several of the
// stream's rows, and a retraction of one must not delete the key while
// another is live. 'force' always adds it to a changing stream, 'none'
// never. The materializer runs at the stream's parallelism behind a HASH
// edge on the sink's key.
func (ph *physical) materializeForSink(s *stream, target *catalog.Table) (*stream, error) {
	pk := sinkKey(target, s.schema)
	if len(pk) == 0 || s.changes == "" {
		return s, nil
	}
	switch strings.ToLower(strings.TrimSpace(ph.p.Options.Config[jobgraph.OptSinkUpsertMaterialize])) {
	case "none":
		return s, nil
	case "force":
	default:
		if s.keyed && containsAll(pk, s.upsertKey) {
			return s, nil
		}
	}
	spec := &jobgraph.SinkMaterializeSpec{Schema: s.schema, Keys: pk}
	if s.keyed && len(s.upsertKey) > 0 {
		spec.UpsertKey = s.upsertKey
	}
	var err error
	if spec.TTLMs, err = ph.stateTTL(nil); err != nil {
		return nil, err
	}
	names := make([]string, len(pk))
	for i, k := range pk {
		names[i] = s.schema[k].Name
	}
	name := fmt.Sprintf("SinkMaterializer(pk=[%s])", strings.Join(names, ", "))
	v := ph.b.vertex(name, s.vertex.Parallelism, 1, op(name, spec))
	ph.b.edge(s.vertex, v, 0, types.PartitionHash, pk)
	return &stream{vertex: v, schema: s.schema, bounded: s.bounded, changes: s.changes, updatesOnly: s.updatesOnly}, nil
}

// sinkKey is the sink's primary key as columns of schema, the stream lined
// up with the sink's physical columns.
func sinkKey(t *catalog.Table, schema types.Schema) []int {
	var keys []int
	for _, k := range t.PrimaryKey {
		for i, f := range t.PhysicalSchema() {
			if f.Name == k && i < len(schema) {
				keys = append(keys, i)
			}
		}
	}
	return keys
}

func containsAll(set, sub []int) bool {
	for _, c := range sub {
		if !slices.Contains(set, c) {
			return false
		}
	}
	return true
}
