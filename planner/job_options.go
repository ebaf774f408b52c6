package planner

import "github.com/braidflow/braid/jobgraph"

// resolveJobOptions resolves the session's settings into g's typed fields,
// once, at plan time: checkpointing, the restart strategy, the session
// settings operators read, and the savepoint to restore from. Nothing
// downstream reads the settings themselves.
func (p *Planner) resolveJobOptions(g *jobgraph.Graph) error {
	settings := p.Options.Config
	ck, err := jobgraph.ResolveCheckpointing(settings, p.Options.Checkpoint)
	if err != nil {
		return &Error{Msg: err.Error()}
	}
	rs, err := jobgraph.ResolveRestartStrategy(settings, ck.Enabled())
	if err != nil {
		return &Error{Msg: err.Error()}
	}
	session, err := jobgraph.ResolveSession(settings)
	if err != nil {
		return &Error{Msg: err.Error()}
	}
	g.Checkpoint, g.Restart, g.Session = ck, rs, session
	g.Savepoint = jobgraph.ResolveSavepointRestore(settings)
	return nil
}
