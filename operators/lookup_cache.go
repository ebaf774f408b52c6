package operators

import (
	"container/list"
	"time"

	"github.com/braidflow/braid/jobgraph"
)

// lookupCache is a lookup join's partial cache (Flink's DefaultLookupCache):
// the rows found for each key, as encoded rows of the lookup schema. It
// keeps at most MaxRows keys, evicting the least recently used; an entry
// expires ExpireAfterWriteMs after it was loaded and ExpireAfterAccessMs
// after it was last read. It is owned by one operator (not safe for
// concurrent use) and is not checkpointed: after a restore it starts empty.
type lookupCache struct {
	cfg     jobgraph.LookupCache
	entries map[string]*list.Element
	lru     *list.List // front: most recently used
	// hits and misses count Get calls, for benchmarks and tests.
	hits, misses int64
}

type cacheEntry struct {
	key      string
	rows     [][]byte
	written  time.Time
	accessed time.Time
}

func newLookupCache(cfg jobgraph.LookupCache) *lookupCache {
	return &lookupCache{cfg: cfg, entries: map[string]*list.Element{}, lru: list.New()}
}

// get returns the cached rows of key (possibly none, for a cached missing
// key) and whether key was cached and still fresh at now. The rows are
// the cache's; the caller must not modify them.
func (c *lookupCache) get(key []byte, now time.Time) ([][]byte, bool) {
	el, ok := c.entries[string(key)]
	if !ok {
		c.misses++
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if c.expired(e, now) {
		c.lru.Remove(el)
		delete(c.entries, e.key)
		c.misses++
		return nil, false
	}
	e.accessed = now
	c.lru.MoveToFront(el)
	c.hits++
	return e.rows, true
}

func (c *lookupCache) expired(e *cacheEntry, now time.Time) bool {
	if w := c.cfg.ExpireAfterWriteMs; w > 0 && now.Sub(e.written) >= time.Duration(w)*time.Millisecond {
		return true
	}
	if a := c.cfg.ExpireAfterAccessMs; a > 0 && now.Sub(e.accessed) >= time.Duration(a)*time.Millisecond {
		return true
	}
	return false
}

// put caches the rows found for key at now (none: a missing key, cached
// only with CacheMissingKey). It takes rows.
func (c *lookupCache) put(key []byte, rows [][]byte, now time.Time) {
	if len(rows) == 0 && !c.cfg.CacheMissingKey {
		return
	}
	if el, ok := c.entries[string(key)]; ok {
		e := el.Value.(*cacheEntry)
		e.rows, e.written, e.accessed = rows, now, now
		c.lru.MoveToFront(el)
		return
	}
	e := &cacheEntry{key: string(key), rows: rows, written: now, accessed: now}
	c.entries[e.key] = c.lru.PushFront(e)
	for c.cfg.MaxRows > 0 && int64(c.lru.Len()) > c.cfg.MaxRows {
		last := c.lru.Back()
		c.lru.Remove(last)
		delete(c.entries, last.Value.(*cacheEntry).key)
	}
}

// len is the number of cached keys.
func (c *lookupCache) len() int { return c.lru.Len() }
