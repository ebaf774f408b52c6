// Package jobgraph is the typed plan both servers share: a Graph of
// vertices, each a chain of operators with typed specs (CalcSpec,
// JoinSpec, ...), connected by partitioned edges, with the job's options
// resolved at plan time into typed fields (CheckpointConfig,
// RestartStrategy, Session, SavepointRestore), and the stable operator
// uids a checkpoint's state is matched by.
//
// The planner builds a Graph and validates it; nothing else parses a
// setting or re-checks the plan. A Graph crosses a process only as its
// protobuf form, converted at the boundary:
//
//	pg, err := g.Proto() // job manager: into a DeployTasks request, into etcd
//	...
//	g, err := jobgraph.FromProto(req.Graph) // task manager: decode, default, Validate
//	if err != nil {
//		return status.Error(codes.InvalidArgument, err.Error())
//	}
//	calc := g.Vertices[1].Chain[0].Spec.(*jobgraph.CalcSpec)
//
// On the wire each operator's config is the JSON of its spec. Operator
// uids hash that JSON (AssignUIDs), so it must not change for a spec that
// means the same: savepoints of earlier versions restore by uid.
//
// jobgraph imports types, expr and proto only; it never imports the
// planner or the operators.
package jobgraph
