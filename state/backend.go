package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"go.uber.org/zap"

	"github.com/braidflow/braid/types"
)

// Options configure a Backend.
type Options struct {
	// CacheBytes is the write-back cache budget (approximate bytes of keys,
	// values and bookkeeping). Zero means 64 MiB.
	CacheBytes int64
	// BlockCacheBytes is Pebble's own block cache. Zero means 8 MiB.
	BlockCacheBytes int64
	// KeyGroups is the range of key groups this subtask owns. The zero value
	// means all of [0, MaxParallelism).
	KeyGroups types.KeyGroupRange
	// MaxParallelism is the job's number of key groups; zero means
	// types.DefaultMaxParallelism.
	MaxParallelism int
	// FS is the filesystem Pebble uses; nil means the OS (vfs.Default).
	// Tests pass vfs.NewMem().
	FS vfs.FS
	// Logger receives Pebble's messages; nil means none.
	Logger *zap.Logger
}

// Stats are counters of a Backend since Open.
type Stats struct {
	Hits, Misses int64
	// Evictions counts entries dropped from the cache.
	Evictions int64
	// FlushedBytes counts bytes of Pebble batches committed.
	FlushedBytes int64
	// CacheBytes is the current size of the cache, victim buffer included.
	CacheBytes int64
	// Entries is the number of cached keys.
	Entries int
}

// metaGroup is the reserved key-group prefix of metadata (state ids).
const metaGroup = 0xffff

// stateKind tells multiset and value state apart.
type stateKind uint8

const (
	kindMultiset stateKind = iota + 1
	kindValue
)

// Backend is the keyed state of one subtask. See the package comment.
type Backend struct {
	db     *pebble.DB
	opts   Options
	budget int64
	cache  cache

	ids     map[string]stateID
	nextID  uint16
	newIDs  bool // ids not yet written to Pebble
	kbuf    []byte
	wbuf    []byte
	flushed int64
	closed  bool
}

type stateID struct {
	id   uint16
	kind stateKind
}

// Open opens (or creates) the state in dir.
func Open(dir string, opts Options) (*Backend, error) {
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = 64 << 20
	}
	if opts.BlockCacheBytes <= 0 {
		opts.BlockCacheBytes = 8 << 20
	}
	if opts.MaxParallelism <= 0 {
		opts.MaxParallelism = types.DefaultMaxParallelism
	}
	if opts.MaxParallelism > metaGroup {
		return nil, fmt.Errorf("state: max parallelism %d exceeds %d", opts.MaxParallelism, metaGroup)
	}
	if opts.KeyGroups == (types.KeyGroupRange{}) {
		opts.KeyGroups = types.KeyGroupRange{Start: 0, End: opts.MaxParallelism - 1}
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	bc := pebble.NewCache(opts.BlockCacheBytes)
	defer bc.Unref()
	po := &pebble.Options{
		FS:           opts.FS,
		Cache:        bc,
		DisableWAL:   true,
		MemTableSize: 16 << 20,
		Logger:       pebbleLogger{opts.Logger.Sugar()},
		// NB: state is read back at random on cache misses; decompressing
		// blocks cost more than the disk it saves, and stalls on L0 cost more
		// than a second compaction.
		L0CompactionThreshold:      4,
		L0StopWritesThreshold:      64,
		CompactionConcurrencyRange: func() (int, int) { return 1, 2 },
	}
	po.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionNone })
	db, err := pebble.Open(dir, po)
	if err != nil {
		return nil, fmt.Errorf("state: open %s: %w", dir, err)
	}
	b := &Backend{db: db, opts: opts, budget: opts.CacheBytes, ids: map[string]stateID{}, nextID: 1}
	b.cache.init()
	if err := b.loadIDs(); err != nil {
		db.Close()
		return nil, err
	}
	return b, nil
}

// loadIDs reads the name -> state id records.
func (b *Backend) loadIDs() error {
	lo := []byte{0xff, 0xff}
	it, err := b.db.NewIter(&pebble.IterOptions{LowerBound: lo})
	if err != nil {
		return fmt.Errorf("state: read state ids: %w", err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		name := string(it.Key()[2:])
		v := it.Value()
		if len(v) != 3 {
			it.Close()
			return fmt.Errorf("state: bad state id record for %q", name)
		}
		id := stateID{id: binary.BigEndian.Uint16(v), kind: stateKind(v[2])}
		b.ids[name] = id
		if id.id >= b.nextID {
			b.nextID = id.id + 1
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("state: read state ids: %w", err)
	}
	return nil
}

// stateFor returns the id of the state called name, allocating one on first
// use. A name used for two kinds of state is a programming error.
func (b *Backend) stateFor(name string, kind stateKind) uint16 {
	if id, ok := b.ids[name]; ok {
		if id.kind != kind {
			panic(fmt.Sprintf("state: %q is already a state of another kind", name))
		}
		return id.id
	}
	if b.nextID == 0 {
		panic("state: out of state ids")
	}
	id := stateID{id: b.nextID, kind: kind}
	b.nextID++
	b.ids[name] = id
	b.newIDs = true
	return id.id
}

// Multiset returns the multiset state called name. Calling it again with the
// same name returns a handle on the same state.
func (b *Backend) Multiset(name string) *MultisetState {
	return &MultisetState{b: b, id: b.stateFor(name, kindMultiset)}
}

// Value returns the value state called name.
func (b *Backend) Value(name string) *ValueState {
	return &ValueState{b: b, id: b.stateFor(name, kindValue)}
}

// Stats returns the counters.
func (b *Backend) Stats() Stats {
	c := &b.cache
	return Stats{
		Hits: c.hits, Misses: c.misses, Evictions: c.evictions,
		FlushedBytes: b.flushed, CacheBytes: c.bytes + c.pendingBytes, Entries: len(c.m),
	}
}

// prefix builds the Pebble prefix of (kg, id, key) in b.kbuf.
func (b *Backend) prefix(kg int, id uint16, key []byte) ([]byte, error) {
	if !b.opts.KeyGroups.Contains(kg) {
		return nil, fmt.Errorf("state: key group %d outside this subtask's range %v", kg, b.opts.KeyGroups)
	}
	k := b.kbuf[:0]
	k = binary.BigEndian.AppendUint16(k, uint16(kg))
	k = binary.BigEndian.AppendUint16(k, id)
	k = binary.AppendUvarint(k, uint64(len(key)))
	k = append(k, key...)
	b.kbuf = k
	return k, nil
}

// lookup returns the cached entry of prefix k, loading it on a miss. The
// entry stays valid until the next call into the Backend.
func (b *Backend) lookup(k []byte, kind stateKind) (*entry, error) {
	if err := b.makeRoom(); err != nil {
		return nil, err
	}
	c := &b.cache
	if e, ok := c.m[string(k)]; ok {
		c.hits++
		e.ref = true
		return e, nil
	}
	if e, ok := c.pending[string(k)]; ok {
		// Back from the victim buffer, still dirty.
		c.hits++
		delete(c.pending, e.key)
		c.pendingBytes -= e.size
		c.insert(e)
		return e, nil
	}
	c.misses++
	e := &entry{key: string(k), kind: kind}
	var err error
	if kind == kindMultiset {
		err = b.loadRows(e)
	} else {
		err = b.loadValue(e)
	}
	if err != nil {
		return nil, err
	}
	e.size = e.computeSize()
	c.insert(e)
	return e, nil
}

func (b *Backend) loadValue(e *entry) error {
	v, closer, err := b.db.Get([]byte(e.key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("state: read: %w", err)
	}
	e.val = append([]byte(nil), v...)
	e.hasVal = true
	return closer.Close()
}

func (b *Backend) loadRows(e *entry) error {
	lo := []byte(e.key)
	it, err := b.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return fmt.Errorf("state: read: %w", err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		r, err := decodeCount(it.Key(), it.Value())
		if err != nil {
			it.Close()
			return err
		}
		r.Row = append([]byte(nil), it.Key()[len(lo):]...)
		e.rows = append(e.rows, r)
		e.flags = append(e.flags, rowStored)
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("state: read: %w", err)
	}
	if len(e.rows) > indexThreshold {
		e.buildIndex()
	}
	return nil
}

// prefixEnd returns the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// makeRoom evicts entries until the cache fits its budget, writing the
// victim buffer to Pebble when it holds more than an eighth of the budget.
func (b *Backend) makeRoom() error {
	c := &b.cache
	for c.bytes+c.pendingBytes > b.budget && len(c.m) > 0 {
		if e := c.evict(); e.dirty {
			c.pending[e.key] = e
			c.pendingBytes += e.size
		}
		if c.pendingBytes > b.budget/8 {
			if err := b.writePending(); err != nil {
				return err
			}
		}
	}
	return nil
}

// writePending writes the victim buffer to Pebble in one batch.
func (b *Backend) writePending() error {
	c := &b.cache
	if len(c.pending) == 0 {
		return nil
	}
	batch := b.db.NewBatch()
	for k, e := range c.pending {
		b.writeEntry(batch, e)
		delete(c.pending, k)
	}
	c.pendingBytes = 0
	return b.commit(batch)
}

func (b *Backend) commit(batch *pebble.Batch) error {
	b.flushed += int64(batch.Len())
	err := batch.Commit(pebble.NoSync)
	batch.Close()
	if err != nil {
		return fmt.Errorf("state: write: %w", err)
	}
	return nil
}

// writeEntry adds a dirty entry's changes to batch and marks it clean.
func (b *Backend) writeEntry(batch *pebble.Batch, e *entry) {
	if !e.dirty {
		return
	}
	e.dirty = false
	if e.kind == kindValue {
		if e.hasVal {
			_ = batch.Set([]byte(e.key), e.val, nil)
		} else {
			_ = batch.Delete([]byte(e.key), nil)
		}
		return
	}
	// NB: deletions first: a row retracted to zero and added again is both
	// in tombs and in rows, and the later Set must win.
	for _, r := range e.tombs {
		b.wbuf = append(append(b.wbuf[:0], e.key...), r...)
		_ = batch.Delete(b.wbuf, nil)
	}
	e.tombs = nil
	for i := range e.rows {
		if e.flags[i]&rowDirty == 0 {
			continue
		}
		b.wbuf = append(append(b.wbuf[:0], e.key...), e.rows[i].Row...)
		n := len(b.wbuf)
		b.wbuf = binary.AppendUvarint(b.wbuf, uint64(e.rows[i].Count))
		if e.rows[i].WriteMs > 0 {
			b.wbuf = binary.AppendUvarint(b.wbuf, uint64(e.rows[i].WriteMs))
		}
		_ = batch.Set(b.wbuf[:n], b.wbuf[n:], nil)
		e.flags[i] = rowStored
	}
	old := e.size
	e.size = e.computeSize()
	if e.cached {
		b.cache.bytes += e.size - old
	}
}

// flushBatchBytes bounds one Pebble batch written by Flush.
const flushBatchBytes = 4 << 20

// Flush writes every dirty entry to Pebble and flushes Pebble's memtables,
// so the state is durable in its SST files (the WAL is off). It is called at
// checkpoint barriers; the cache keeps its (now clean) entries.
func (b *Backend) Flush() error {
	if err := b.writeDirty(); err != nil {
		return err
	}
	if err := b.db.Flush(); err != nil {
		return fmt.Errorf("state: flush: %w", err)
	}
	return nil
}

// writeDirty writes the state ids and every dirty entry (cached or in the
// victim buffer) to Pebble, leaving the cache's entries clean; after it a
// Pebble iterator sees every write.
func (b *Backend) writeDirty() error {
	if err := b.writePending(); err != nil {
		return err
	}
	c := &b.cache
	batch := b.db.NewBatch()
	if b.newIDs {
		b.writeIDs(batch)
		b.newIDs = false
	}
	for _, e := range c.slots {
		if e == nil || !e.dirty {
			continue
		}
		b.writeEntry(batch, e)
		if batch.Len() >= flushBatchBytes {
			if err := b.commit(batch); err != nil {
				return err
			}
			batch = b.db.NewBatch()
		}
	}
	return b.commit(batch)
}

// writeIDs adds every name -> state id record to batch.
func (b *Backend) writeIDs(batch *pebble.Batch) {
	names := make([]string, 0, len(b.ids))
	for n := range b.ids {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		id := b.ids[n]
		v := binary.BigEndian.AppendUint16(nil, id.id)
		_ = batch.Set(append([]byte{0xff, 0xff}, n...), append(v, byte(id.kind)), nil)
	}
}

// KeyGroups returns the range of key groups the backend serves.
func (b *Backend) KeyGroups() types.KeyGroupRange { return b.opts.KeyGroups }

// Close closes Pebble. It does not Flush: state not flushed is lost, which
// is what a failed subtask wants (it restores from a checkpoint). Close is
// idempotent.
func (b *Backend) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	b.cache.init()
	if err := b.db.Close(); err != nil {
		return fmt.Errorf("state: close: %w", err)
	}
	return nil
}

// pebbleLogger sends Pebble's messages to zap: its chatter at debug level.
type pebbleLogger struct{ l *zap.SugaredLogger }

func (p pebbleLogger) Infof(format string, args ...any)  { p.l.Debugf(format, args...) }
func (p pebbleLogger) Errorf(format string, args ...any) { p.l.Errorf(format, args...) }

// Fatalf panics rather than exiting: the subtask boundary turns the panic
// into a failed task.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	p.l.Errorf(format, args...)
	panic(fmt.Sprintf("pebble: "+format, args...))
}
