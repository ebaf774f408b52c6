package jobgraph

import (
	"fmt"
	"math"
	"strconv"
	"time"

	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/types"
)

// FromProto converts the wire form of a job graph, as a deploy request or
// an etcd record carries it, into a Graph: once, where the graph enters a
// process. It decodes each operator's config by its kind (RegisterSpec
// adds kinds), reads the session settings and the savepoint to restore
// from out of the config map (ResolveSession, ResolveSavepointRestore),
// fills in what the wire leaves unset (ApplyDefaults), and validates the
// result (Validate). The error names the vertex, operator or edge at
// fault.
func FromProto(pg *braidv1.JobGraph) (*Graph, error) {
	if pg == nil {
		return nil, fmt.Errorf("jobgraph: no job graph")
	}
	session, err := ResolveSession(pg.Config)
	if err != nil {
		return nil, fmt.Errorf("jobgraph: %w", err)
	}
	g := &Graph{
		JobID:          pg.JobId,
		Name:           pg.Name,
		SQL:            pg.Sql,
		MaxParallelism: int(pg.MaxParallelism),
		Bounded:        pg.Bounded,
		Checkpoint:     checkpointFromProto(pg.Checkpoint),
		Restart:        restartFromProto(pg.Restart),
		Session:        session,
		Savepoint:      ResolveSavepointRestore(pg.Config),
	}
	for i, pv := range pg.Vertices {
		if pv == nil {
			return nil, fmt.Errorf("jobgraph: vertex %d is missing", i)
		}
		v := &Vertex{ID: int(pv.Id), Name: pv.Name, Parallelism: int(pv.Parallelism), NumInputs: int(pv.NumInputs)}
		for j, po := range pv.Chain {
			if po == nil {
				return nil, fmt.Errorf("jobgraph: vertex %d (%s), operator %d is missing", v.ID, v.Name, j)
			}
			spec, err := decodeSpec(po.Kind, po.Config)
			if err != nil {
				return nil, fmt.Errorf("jobgraph: vertex %d (%s), operator %d (%s): %w", v.ID, v.Name, j, po.Name, err)
			}
			v.Chain = append(v.Chain, &Operator{Name: po.Name, UID: po.Uid, Spec: spec})
		}
		g.Vertices = append(g.Vertices, v)
	}
	for _, pe := range pg.Edges {
		if pe == nil {
			return nil, fmt.Errorf("jobgraph: an edge is missing")
		}
		e := &Edge{Source: int(pe.Source), Target: int(pe.Target), TargetInput: int(pe.TargetInput),
			Partitioning: partitioningFromProto(pe.Partitioning)}
		for _, k := range pe.KeyColumns {
			e.KeyColumns = append(e.KeyColumns, int(k))
		}
		g.Edges = append(g.Edges, e)
	}
	g.ApplyDefaults()
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return g, nil
}

// Proto returns g's wire form. Each operator's config is the JSON of its
// spec, byte for byte what the spec encodes to (operator uids hash it);
// the session settings and the savepoint to restore from travel in the
// config map under their option keys. Proto does not validate g; it fails
// when a spec does not encode or a number does not fit the wire's int32.
func (g *Graph) Proto() (*braidv1.JobGraph, error) {
	w := wireInts{}
	pg := &braidv1.JobGraph{
		JobId:          g.JobID,
		Name:           g.Name,
		Sql:            g.SQL,
		MaxParallelism: w.int32("max parallelism", g.MaxParallelism),
		Bounded:        g.Bounded,
		Config:         map[string]string{OptLocalTimeZone: g.Session.TimeZone},
		Checkpoint:     w.checkpoint(g.Checkpoint),
		Restart:        w.restart(g.Restart),
	}
	if n := g.Session.MaxStringBytes; n > 0 {
		pg.Config[OptMaxStringBytes] = strconv.Itoa(n)
	}
	if d := g.Session.SourceIdleTimeout; d > 0 {
		pg.Config[OptSourceIdle] = strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	}
	// NB: always written, since an absent key means the default, not 0.
	pg.Config[OptAutoWatermark] = strconv.FormatInt(g.Session.AutoWatermarkInterval.Milliseconds(), 10) + " ms"
	if n := g.Session.SourceBatchRows; n > 0 {
		pg.Config[OptSourceBatchSize] = strconv.Itoa(n)
	}
	if g.Session.Batch {
		pg.Config[OptRuntimeMode] = RuntimeModeBatch
	}
	if p := g.Savepoint.Path; p != "" {
		pg.Config[OptSavepointPath] = p
		if g.Savepoint.IgnoreUnclaimedState {
			pg.Config[OptSavepointIgnore] = "true"
		}
	}
	for _, v := range g.Vertices {
		pv := &braidv1.Vertex{Id: w.int32("vertex id", v.ID), Name: v.Name,
			Parallelism: w.int32("parallelism", v.Parallelism), NumInputs: w.int32("inputs", v.NumInputs)}
		for j, op := range v.Chain {
			if op.Spec == nil {
				return nil, fmt.Errorf("jobgraph: vertex %d (%s), operator %d (%s) has no spec", v.ID, v.Name, j, op.Name)
			}
			config, err := encodeSpec(op.Spec)
			if err != nil {
				return nil, fmt.Errorf("jobgraph: vertex %d (%s), operator %d (%s): %w", v.ID, v.Name, j, op.Name, err)
			}
			pv.Chain = append(pv.Chain, &braidv1.OperatorSpec{Kind: op.Spec.Kind(), Name: op.Name, Config: config, Uid: op.UID})
		}
		pg.Vertices = append(pg.Vertices, pv)
	}
	for _, e := range g.Edges {
		pe := &braidv1.Edge{Source: w.int32("edge source", e.Source), Target: w.int32("edge target", e.Target),
			TargetInput: w.int32("edge input", e.TargetInput), Partitioning: partitioningToProto(e.Partitioning)}
		for _, k := range e.KeyColumns {
			pe.KeyColumns = append(pe.KeyColumns, w.int32("key column", k))
		}
		pg.Edges = append(pg.Edges, pe)
	}
	if w.err != nil {
		return nil, w.err
	}
	return pg, nil
}

// wireInts narrows ints to the wire's int32, keeping the first value that
// does not fit.
type wireInts struct{ err error }

func (w *wireInts) int32(what string, n int) int32 {
	if (n < math.MinInt32 || n > math.MaxInt32) && w.err == nil {
		w.err = fmt.Errorf("jobgraph: %s %d does not fit the wire's 32 bits", what, n)
	}
	return int32(n)
}

func (w *wireInts) checkpoint(c CheckpointConfig) *braidv1.CheckpointConfig {
	return &braidv1.CheckpointConfig{
		IntervalMs:      c.Interval.Milliseconds(),
		TimeoutMs:       c.Timeout.Milliseconds(),
		MinPauseMs:      c.MinPause.Milliseconds(),
		MaxConcurrent:   w.int32("max concurrent checkpoints", c.MaxConcurrent),
		TolerableFailed: w.int32("tolerable failed checkpoints", c.TolerableFailed),
		AtLeastOnce:     c.AtLeastOnce,
		NumRetained:     w.int32("retained checkpoints", c.NumRetained),
		Dir:             c.Dir,
	}
}

func (w *wireInts) restart(s RestartStrategy) *braidv1.RestartStrategy {
	return &braidv1.RestartStrategy{
		Type:                    s.Type,
		Attempts:                w.int32("restart attempts", s.Attempts),
		DelayMs:                 s.Delay.Milliseconds(),
		MaxDelayMs:              s.MaxDelay.Milliseconds(),
		BackoffMultiplier:       s.BackoffMultiplier,
		ResetBackoffThresholdMs: s.ResetBackoffThreshold.Milliseconds(),
		JitterFactor:            s.JitterFactor,
		FailureRateIntervalMs:   s.FailureRateInterval.Milliseconds(),
		MaxFailuresPerInterval:  w.int32("max failures per interval", s.MaxFailuresPerInterval),
	}
}

// checkpointFromProto converts a wire checkpoint config; nil is the zero
// config.
func checkpointFromProto(c *braidv1.CheckpointConfig) CheckpointConfig {
	return CheckpointConfig{
		Interval:        ms(c.GetIntervalMs()),
		Timeout:         ms(c.GetTimeoutMs()),
		MinPause:        ms(c.GetMinPauseMs()),
		MaxConcurrent:   int(c.GetMaxConcurrent()),
		TolerableFailed: int(c.GetTolerableFailed()),
		AtLeastOnce:     c.GetAtLeastOnce(),
		NumRetained:     int(c.GetNumRetained()),
		Dir:             c.GetDir(),
	}
}

// restartFromProto converts a wire restart strategy; nil is the zero
// strategy.
func restartFromProto(s *braidv1.RestartStrategy) RestartStrategy {
	return RestartStrategy{
		Type:                   s.GetType(),
		Attempts:               int(s.GetAttempts()),
		Delay:                  ms(s.GetDelayMs()),
		MaxDelay:               ms(s.GetMaxDelayMs()),
		BackoffMultiplier:      s.GetBackoffMultiplier(),
		ResetBackoffThreshold:  ms(s.GetResetBackoffThresholdMs()),
		JitterFactor:           s.GetJitterFactor(),
		FailureRateInterval:    ms(s.GetFailureRateIntervalMs()),
		MaxFailuresPerInterval: int(s.GetMaxFailuresPerInterval()),
	}
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

func partitioningFromProto(p braidv1.Partitioning) types.Partitioning {
	switch p {
	case braidv1.Partitioning_PARTITIONING_FORWARD:
		return types.PartitionForward
	case braidv1.Partitioning_PARTITIONING_HASH:
		return types.PartitionHash
	case braidv1.Partitioning_PARTITIONING_BROADCAST:
		return types.PartitionBroadcast
	case braidv1.Partitioning_PARTITIONING_REBALANCE:
		return types.PartitionRebalance
	case braidv1.Partitioning_PARTITIONING_SINGLE:
		return types.PartitionSingle
	}
	return 0 // NB: Validate refuses it, naming the edge
}

func partitioningToProto(p types.Partitioning) braidv1.Partitioning {
	switch p {
	case types.PartitionForward:
		return braidv1.Partitioning_PARTITIONING_FORWARD
	case types.PartitionHash:
		return braidv1.Partitioning_PARTITIONING_HASH
	case types.PartitionBroadcast:
		return braidv1.Partitioning_PARTITIONING_BROADCAST
	case types.PartitionRebalance:
		return braidv1.Partitioning_PARTITIONING_REBALANCE
	case types.PartitionSingle:
		return braidv1.Partitioning_PARTITIONING_SINGLE
	}
	return braidv1.Partitioning_PARTITIONING_UNSPECIFIED
}
