package state

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/braidflow/braid/types"
)

// RestoreRanges builds, in dst, the state of a subtask that owns key groups
// kgs from checkpoints of the same operators taken at another parallelism
// (srcs: the restored Pebble directories of the old subtasks, in any
// order). It copies every entry whose key group lies in kgs and nothing
// else, so it both merges (scale in) and clips (scale out). State ids are
// allocated per backend, by name, so two old subtasks may have given one
// state different ids: entries are rewritten under dst's id for the name.
//
// dst must not hold state yet (absent or empty). opts are those the
// subtask will open dst with; opts.KeyGroups must be kgs or zero. The
// sources are opened read-only and left unchanged. When it returns nil,
// Open(dst, opts) gives the restored state; on error dst is partial and the
// caller removes it.
func RestoreRanges(dst string, srcs []string, kgs types.KeyGroupRange, opts Options) error {
	if opts.KeyGroups == (types.KeyGroupRange{}) {
		opts.KeyGroups = kgs
	}
	if opts.KeyGroups != kgs {
		return fmt.Errorf("state: restore key groups %v into a backend of key groups %v", kgs, opts.KeyGroups)
	}
	b, err := Open(dst, opts)
	if err != nil {
		return err
	}
	defer b.Close()
	if len(b.ids) > 0 {
		return fmt.Errorf("state: restore into %s, which already holds state", dst)
	}
	for _, src := range srcs {
		if err := b.copyRanges(src, kgs); err != nil {
			return err
		}
	}
	b.newIDs = true
	if err := b.Flush(); err != nil {
		return err
	}
	return b.Close()
}

// copyRanges copies the entries of key groups kgs from the Pebble
// directory src into b, mapping src's state ids to b's by name.
func (b *Backend) copyRanges(src string, kgs types.KeyGroupRange) error {
	db, err := pebble.Open(src, &pebble.Options{FS: b.opts.FS, ReadOnly: true, Logger: pebbleLogger{b.opts.Logger.Sugar()}})
	if err != nil {
		return fmt.Errorf("state: open %s: %w", src, err)
	}
	defer db.Close()
	srcIDs := &Backend{db: db, ids: map[string]stateID{}}
	if err := srcIDs.loadIDs(); err != nil {
		return fmt.Errorf("state: %s: %w", src, err)
	}
	remap := map[uint16]uint16{}
	for name, id := range srcIDs.ids {
		if have, ok := b.ids[name]; ok && have.kind != id.kind {
			return fmt.Errorf("state: %s: state %q is of another kind than in another source", src, name)
		}
		remap[id.id] = b.stateFor(name, id.kind)
	}
	lo := binary.BigEndian.AppendUint16(nil, uint16(kgs.Start))
	hi := binary.BigEndian.AppendUint16(nil, uint16(kgs.End+1))
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return fmt.Errorf("state: read %s: %w", src, err)
	}
	batch := b.db.NewBatch()
	var key []byte
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if len(k) < 4 {
			it.Close()
			return fmt.Errorf("state: %s: corrupt state key %x", src, k)
		}
		id, ok := remap[binary.BigEndian.Uint16(k[2:4])]
		if !ok {
			it.Close()
			return fmt.Errorf("state: %s: key %x of an unknown state", src, k)
		}
		key = append(key[:0], k...)
		binary.BigEndian.PutUint16(key[2:4], id)
		_ = batch.Set(key, it.Value(), nil)
		if batch.Len() >= flushBatchBytes {
			if err := b.commit(batch); err != nil {
				it.Close()
				return err
			}
			batch = b.db.NewBatch()
		}
	}
	if err := it.Close(); err != nil {
		batch.Close()
		return fmt.Errorf("state: read %s: %w", src, err)
	}
	return b.commit(batch)
}
