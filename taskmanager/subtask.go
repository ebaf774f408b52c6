package taskmanager

import (
	"github.com/braidflow/braid/runtime"
)

// build builds a subtask with Config.Build, or the runtime when that is nil.
func (tm *TaskManager) build(spec SubtaskSpec) (Subtask, error) {
	if tm.cfg.Build != nil {
		return tm.cfg.Build(spec)
	}
	s, err := runtime.NewSubtask(runtime.Task{
		Graph: spec.Graph, VertexID: spec.Vertex, Subtask: spec.Subtask, Placements: spec.Placements,
		TaskManagerID: spec.TaskManagerID, Exchange: spec.Exchange, Context: *spec.Ctx,
		StateDir: spec.StateDir, StateCacheBytes: spec.StateCacheBytes,
		Restore: spec.Restore, Checkpoints: spec.Checkpoints, DataEnded: spec.DataEnded,
	})
	if err != nil {
		return nil, err
	}
	return runtimeSubtask{s}, nil
}

// runtimeSubtask adapts runtime.Subtask to Subtask.
type runtimeSubtask struct{ *runtime.Subtask }

func (s runtimeSubtask) Counters() (rowsIn, rowsOut, remoteRowsOut int64) {
	m := s.Metrics()
	return m.RowsIn.Load(), m.RowsOut.Load(), m.RowsRemote.Load()
}
