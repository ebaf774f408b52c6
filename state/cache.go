package state

import "bytes"

// Approximate per-object overheads charged to the cache budget: the entry
// struct, its map slot and slot pointer; a row's slice header, count and
// flag; an index slot.
const (
	entryOverhead = 160
	rowOverhead   = 48
	indexOverhead = 40
)

// indexThreshold is the row count above which a multiset entry keeps a map
// from row to position; below it a linear scan is faster.
const indexThreshold = 16

// Row flags of a multiset entry.
const (
	rowDirty  uint8 = 1 // changed since last written to Pebble
	rowStored uint8 = 2 // present in Pebble
)

// entry is one cached key of one state.
type entry struct {
	key    string // the Pebble prefix: kg | state id | len | key
	kind   stateKind
	size   int64 // bytes charged to the cache
	slot   int32
	ref    bool // CLOCK reference bit
	dirty  bool
	cached bool // in the cache map (not in the victim buffer)

	// Value state.
	val    []byte
	hasVal bool

	// Multiset state: rows with count > 0, flags parallel to rows, rows to
	// delete from Pebble, and an index when there are many rows.
	rows  []MultisetRow
	flags []uint8
	tombs [][]byte
	idx   map[string]int32
	// oldestMs is, under a TTL, at most the oldest write time of the rows
	// (0: unknown), so expiry visits the rows only when one may be due.
	oldestMs int64
}

func (e *entry) computeSize() int64 {
	n := int64(entryOverhead + len(e.key) + len(e.val))
	for i := range e.rows {
		n += int64(len(e.rows[i].Row) + rowOverhead)
	}
	for _, t := range e.tombs {
		n += int64(len(t) + rowOverhead)
	}
	if e.idx != nil {
		n += int64(len(e.rows) * indexOverhead)
	}
	return n
}

func (e *entry) buildIndex() {
	e.idx = make(map[string]int32, len(e.rows))
	for i := range e.rows {
		e.idx[string(e.rows[i].Row)] = int32(i)
	}
}

// find returns the position of row, or -1.
func (e *entry) find(row []byte) int {
	if e.idx != nil {
		if i, ok := e.idx[string(row)]; ok {
			return int(i)
		}
		return -1
	}
	for i := range e.rows {
		if bytes.Equal(e.rows[i].Row, row) {
			return i
		}
	}
	return -1
}

// cache maps Pebble prefixes to entries and evicts with CLOCK. Dirty evicted
// entries wait in pending (the victim buffer) until written to Pebble.
type cache struct {
	m     map[string]*entry
	slots []*entry
	free  []int32
	hand  int
	bytes int64

	pending      map[string]*entry
	pendingBytes int64

	hits, misses, evictions int64
}

func (c *cache) init() {
	c.m = map[string]*entry{}
	c.pending = map[string]*entry{}
	c.slots, c.free, c.hand, c.bytes, c.pendingBytes = nil, nil, 0, 0, 0
}

// insert adds e, referenced.
func (c *cache) insert(e *entry) {
	if n := len(c.free); n > 0 {
		e.slot = c.free[n-1]
		c.free = c.free[:n-1]
		c.slots[e.slot] = e
	} else {
		e.slot = int32(len(c.slots))
		c.slots = append(c.slots, e)
	}
	e.ref = true
	e.cached = true
	c.m[e.key] = e
	c.bytes += e.size
}

// evict removes and returns one entry, giving referenced entries a second
// chance. The cache must not be empty.
func (c *cache) evict() *entry {
	for {
		if c.hand >= len(c.slots) {
			c.hand = 0
		}
		e := c.slots[c.hand]
		c.hand++
		if e == nil {
			continue
		}
		if e.ref {
			e.ref = false
			continue
		}
		c.slots[e.slot] = nil
		c.free = append(c.free, e.slot)
		delete(c.m, e.key)
		e.cached = false
		c.bytes -= e.size
		c.evictions++
		return e
	}
}
