package taskmanager

import "errors"

// build builds a subtask with Config.Build, or the runtime when that is nil.
func (tm *TaskManager) build(spec SubtaskSpec) (Subtask, error) {
	if tm.cfg.Build != nil {
		return tm.cfg.Build(spec)
	}
	return nil, errors.New("taskmanager: the runtime is not linked into this build")
}
