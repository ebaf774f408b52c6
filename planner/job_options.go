package planner

import (
	"github.com/braidflow/braid/jobgraph"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
)

// resolveJobOptions resolves the session's checkpointing and restart
// options into g's typed fields, once, at plan time: task managers and the
// job manager's scheduler read g.Checkpoint and g.Restart, never the
// strings in g.Config.
func (p *Planner) resolveJobOptions(g *braidv1.JobGraph) error {
	ck, err := jobgraph.ResolveCheckpointing(p.Options.Config, p.Options.Checkpoint)
	if err != nil {
		return &Error{Msg: err.Error()}
	}
	rs, err := jobgraph.ResolveRestartStrategy(p.Options.Config, ck.IntervalMs > 0)
	if err != nil {
		return &Error{Msg: err.Error()}
	}
	g.Checkpoint, g.Restart = ck, rs
	return nil
}
