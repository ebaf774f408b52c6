package operators

import (
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

// openKeyedState opens the state of a keyed operator's subtask: one Pebble
// instance at ctx.StateDir behind a write-back cache of ctx.StateCacheBytes,
// holding the subtask's key groups. It returns the backend and the job's
// max parallelism (the number of key groups). fs replaces the OS
// filesystem in tests; nil uses it.
func openKeyedState(ctx *Context, fs vfs.FS) (*state.Backend, int, error) {
	maxPar := ctx.MaxParallelism
	if maxPar <= 0 {
		maxPar = types.DefaultMaxParallelism
	}
	be, err := state.Open(ctx.StateDir, state.Options{
		CacheBytes: ctx.StateCacheBytes, KeyGroups: ctx.KeyGroups, MaxParallelism: maxPar,
		FS: fs, Logger: ctx.Logger,
	})
	return be, maxPar, err
}

// closeKeyedState writes the dirty cache to Pebble and closes it; nil is a
// no-op, so Close is safe after a failed Open.
func closeKeyedState(be *state.Backend) error {
	if be == nil {
		return nil
	}
	ferr := be.Flush()
	if err := be.Close(); err != nil {
		return err
	}
	return ferr
}
