package state

import "fmt"

// Checkpoint writes every dirty entry to Pebble, flushes its memtables and
// makes a Pebble checkpoint of the state in dir, which must not exist: hard
// links to the immutable SST files plus copies of the small metadata files.
// It costs about what the flush costs, and the backend goes on at once; the
// caller owns dir (uploads it, then removes it). Reopening dir with Open
// gives back the state as it was at the call.
func (b *Backend) Checkpoint(dir string) error {
	if err := b.Flush(); err != nil {
		return err
	}
	if err := b.db.Checkpoint(dir); err != nil {
		return fmt.Errorf("state: checkpoint into %s: %w", dir, err)
	}
	return nil
}
