package jobgraph

import (
	"encoding/json"
	"fmt"
	"sync"
)

// Spec is an operator's typed configuration: one struct per operator kind
// (specs.go), held by pointer. On the wire an operator's config is the
// JSON of its spec; operator uids hash that JSON, so a spec's fields and
// their JSON names are part of the savepoint format.
type Spec interface {
	// Kind is the operator kind the spec configures: one of the Kind
	// constants, or a kind registered with RegisterSpec.
	Kind() string
	// Inputs is how many inputs the operator consumes: 0 for a source, 2
	// for a join, 1 otherwise.
	Inputs() int
	// Validate checks the spec on its own: column indexes within its
	// schemas, lengths that must agree, values from a closed set. It does
	// not compile expressions; the operator does that when it is built.
	Validate() error
}

// specKinds maps each kind FromProto can decode to a constructor of its
// empty spec.
var specKinds = struct {
	sync.Mutex
	m map[string]func() Spec
}{m: map[string]func() Spec{
	KindCalc:              func() Spec { return &CalcSpec{} },
	KindUnnest:            func() Spec { return &UnnestSpec{} },
	KindJoinInner:         func() Spec { return &JoinSpec{} },
	KindJoinOuter:         func() Spec { return &JoinSpec{} },
	KindJoinInterval:      func() Spec { return &IntervalJoinSpec{} },
	KindJoinTemporal:      func() Spec { return &TemporalJoinSpec{} },
	KindJoinLookup:        func() Spec { return &LookupJoinSpec{} },
	KindMySQLScan:         func() Spec { return &MySQLScanSpec{} },
	KindJoinSemi:          func() Spec { return &SemiJoinSpec{} },
	KindNormalize:         func() Spec { return &NormalizeSpec{} },
	KindGroupAggregate:    func() Spec { return &GroupAggSpec{} },
	KindWindowAggregate:   func() Spec { return &WindowAggSpec{} },
	KindRank:              func() Spec { return &RankSpec{} },
	KindOverAggregate:     func() Spec { return &OverAggSpec{} },
	KindBatchSort:         func() Spec { return &BatchSortSpec{} },
	KindDeduplicate:       func() Spec { return &DeduplicateSpec{} },
	KindReplicate:         func() Spec { return &ReplicateSpec{} },
	KindExpand:            func() Spec { return &ExpandSpec{} },
	KindSinkMaterialize:   func() Spec { return &SinkMaterializeSpec{} },
	KindWindowTVF:         func() Spec { return &WindowTVFSpec{} },
	KindWindowRank:        func() Spec { return &WindowRankSpec{} },
	KindWindowDedup:       func() Spec { return &WindowDeduplicateSpec{} },
	KindWindowJoin:        func() Spec { return &WindowJoinSpec{} },
	KindWatermarkAssigner: func() Spec { return &WatermarkAssignerSpec{} },
	KindValues:            func() Spec { return &ValuesSpec{} },
	KindCollect:           func() Spec { return &CollectSpec{} },
	KindManagedSource:     func() Spec { return &ManagedSourceSpec{} },
	KindManagedSink:       func() Spec { return &ManagedSinkSpec{} },
	KindKafkaSource:       func() Spec { return &KafkaSourceSpec{} },
	KindKafkaSink:         func() Spec { return &KafkaSinkSpec{} },
	KindDatagen:           func() Spec { return &DatagenSpec{} },
	KindNexmark:           func() Spec { return &NexmarkSpec{} },
	KindPrint:             func() Spec { return &PrintSpec{} },
	KindBlackhole:         func() Spec { return &BlackholeSpec{} },
}}

// RegisterSpec makes FromProto decode the config of kind into the spec
// newSpec returns (a new, empty one per call). Every kind of this package
// is registered already; RegisterSpec is for operator kinds defined
// elsewhere, such as tests' own. Registering a kind twice panics. It is
// meant for init functions.
func RegisterSpec(kind string, newSpec func() Spec) {
	specKinds.Lock()
	defer specKinds.Unlock()
	if _, dup := specKinds.m[kind]; dup {
		panic("jobgraph: duplicate spec kind " + kind)
	}
	specKinds.m[kind] = newSpec
}

// decodeSpec decodes an operator's wire config by its kind. The decoded
// spec must configure that kind: a join_inner config that sets an outer
// side is refused.
func decodeSpec(kind string, config []byte) (Spec, error) {
	specKinds.Lock()
	newSpec, ok := specKinds.m[kind]
	specKinds.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown operator kind %q", kind)
	}
	if len(config) == 0 {
		return nil, fmt.Errorf("%s operator has no config", kind)
	}
	spec := newSpec()
	if err := json.Unmarshal(config, spec); err != nil {
		return nil, fmt.Errorf("bad %s config: %w", kind, err)
	}
	if spec.Kind() != kind {
		return nil, fmt.Errorf("%s config describes a %s operator", kind, spec.Kind())
	}
	return spec, nil
}

// encodeSpec returns the wire config of spec: its JSON.
func encodeSpec(spec Spec) ([]byte, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("cannot encode %s spec: %w", spec.Kind(), err)
	}
	return b, nil
}
