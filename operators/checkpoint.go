package operators

// Checkpoints, as operators and sources see them.
//
// The runtime owns a stateful subtask's keyed state: it opens one
// state.Backend per subtask (restored from a checkpoint when the job
// resumes), hands it to every operator of the chain through Context.State,
// flushes and snapshots it at each barrier, and closes it after the chain
// closed. An operator keeps its keyed state in the backend under names it
// chooses (Context.Keyed prefixes them with the operator's uid, so two
// operators of one chain never clash).
//
// Anything an operator or source holds outside the backend (a source's
// read position, an in-memory index that it can rebuild, pending output)
// is either written into the backend or returned by SnapshotState, and
// comes back through Context.Restore when the subtask resumes.

// Checkpointer is implemented by an operator or source that takes part in
// checkpoints beyond its keyed state: sources (their positions), sinks that
// commit on completion, and operators with in-memory state. The runtime
// calls every method from the subtask's goroutine, never concurrently with
// Process, Run's Emit or EndInput.
type Checkpointer interface {
	// SnapshotState is called at checkpoint id's barrier: after every
	// batch that came before the barrier was processed and before any
	// batch after it. The operator writes into its keyed state whatever it
	// keeps elsewhere and returns its operator state (nil for none); the
	// runtime then flushes and snapshots the backend. What it returns is
	// handed back in Context.Restore.State when the subtask resumes from
	// this checkpoint. A source returns the position after every row it
	// emitted so far.
	SnapshotState(id int64) ([]byte, error)
	// NotifyCheckpointComplete is called once checkpoint id completed: its
	// metadata is committed, so a transactional sink may commit what it
	// pre-committed for id (and for any earlier id whose notice was lost).
	// It may be called late or not at all (a lost notice); a sink must
	// commit on a later notice or on restore. An error fails the subtask.
	NotifyCheckpointComplete(id int64) error
	// NotifyCheckpointAborted is called when checkpoint id will never
	// complete. An operator may drop what it kept for id.
	NotifyCheckpointAborted(id int64) error
}

// Restore says what a resuming subtask restores. The zero value (ID 0)
// means a fresh start.
type Restore struct {
	// ID is the checkpoint the subtask resumes from.
	ID int64
	// State holds what SnapshotState returned for this operator at
	// checkpoint ID. At the checkpoint's parallelism it holds this subtask's
	// state only (one element, possibly nil); when the job resumes at
	// another parallelism (Rescaled) it holds every old subtask's state, in
	// subtask order, and the operator keeps the part that is now its own (a
	// source its partitions, for example).
	State [][]byte
	// Rescaled is true when the checkpoint was taken at another parallelism.
	Rescaled bool
}

// StatefulOperator is implemented by an operator that keeps keyed state:
// the runtime opens a state backend for a subtask whose chain holds one.
type StatefulOperator interface {
	Operator
	// UsesKeyedState reports whether this operator keeps keyed state.
	UsesKeyedState() bool
}

// Idler is implemented by the runtime's source collector. See Idle.
type Idler interface {
	Idle() error
}

// Idle tells the runtime that a source is between batches: every row it
// produced so far was emitted, so its SnapshotState would return its
// current position. The runtime takes pending checkpoint barriers there
// (and after each Emit). A source that can wait longer than about 50 ms
// without emitting (polling a broker, throttled generation, waiting for new
// data in follow mode) calls Idle at least that often. Idle through a
// collector that is not the runtime's does nothing.
func Idle(out Collector) error {
	if i, ok := out.(Idler); ok {
		return i.Idle()
	}
	return nil
}
