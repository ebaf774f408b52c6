package operators

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

// withKeyedState gives ctx a keyed state backend, as the runtime does for a
// stateful subtask: Pebble in memory (on disk under dir when dir is not
// empty) behind a write-back cache of cacheBytes (0: the default), over
// ctx's key groups. The backend closes when the test ends.
func withKeyedState(t testing.TB, ctx *Context, cacheBytes int64, dir string) *Context {
	t.Helper()
	maxPar := ctx.MaxParallelism
	if maxPar <= 0 {
		maxPar = types.DefaultMaxParallelism
	}
	opts := state.Options{CacheBytes: cacheBytes, KeyGroups: ctx.KeyGroups, MaxParallelism: maxPar}
	if dir == "" {
		opts.FS, dir = vfs.NewMem(), "/state"
	}
	be, err := state.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	ctx.State = be
	if ctx.OperatorUID == "" {
		ctx.OperatorUID = "op"
	}
	return ctx
}
