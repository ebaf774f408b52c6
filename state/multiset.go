package state

import "time"

// MultisetRow is one distinct row of a multiset and how many times it occurs.
type MultisetRow struct {
	Row   []byte
	Count int64
	// WriteMs is when the row was last written (ms since the epoch), kept
	// when the state has a TTL; 0 otherwise.
	WriteMs int64
}

// MultisetState holds, per key, a multiset of rows (encoded rows, opaque to
// the state). In Pebble each distinct row is its own entry (user key = row,
// value = count), so adding a row to a key with many rows writes one entry.
type MultisetState struct {
	b  *Backend
	id uint16
	// ttlMs is the time to live of a row since its last write; 0 keeps rows
	// forever.
	ttlMs int64
	now   func() time.Time
}

// SetTTL gives every row a time to live, as Flink's state TTL does it:
// measured in processing time from the row's last write (OnCreateAndWrite:
// Add refreshes it, Get does not), and an expired row is never returned
// (NeverReturnExpired); it is removed when its key is next read or written.
// ttl <= 0 keeps rows forever. now is the clock; nil means time.Now.
func (s *MultisetState) SetTTL(ttl time.Duration, now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	s.ttlMs, s.now = ttl.Milliseconds(), now
}

// expire removes the rows of e whose time to live has passed, and returns
// the current time in ms (0 without a TTL).
func (s *MultisetState) expire(e *entry) int64 {
	if s.ttlMs <= 0 {
		return 0
	}
	now := s.now().UnixMilli()
	// NB: without this bound every access to a key would visit all its
	// rows, and a key with N rows would cost O(N) per row added.
	if e.oldestMs > 0 && now-e.oldestMs < s.ttlMs {
		return now
	}
	oldest := now // rows written from now on are no older
	for i := len(e.rows) - 1; i >= 0; i-- {
		w := e.rows[i].WriteMs
		if w > 0 && now-w >= s.ttlMs {
			s.b.removeRow(e, i)
		} else if w > 0 && w < oldest {
			oldest = w
		}
	}
	e.oldestMs = oldest
	return now
}

// Add adds delta occurrences of row under key (delta < 0 removes). A row
// whose count reaches zero is removed; a count never goes below zero, so
// retracting a row that is not there is a no-op. key and row are copied.
func (s *MultisetState) Add(kg int, key, row []byte, delta int64) error {
	k, err := s.b.prefix(kg, s.id, key)
	if err != nil {
		return err
	}
	e, err := s.b.lookup(k, kindMultiset)
	if err != nil {
		return err
	}
	if delta == 0 {
		return nil
	}
	now := s.expire(e)
	c := &s.b.cache
	i := e.find(row)
	if i < 0 {
		if delta < 0 {
			return nil
		}
		r := append([]byte(nil), row...)
		e.rows = append(e.rows, MultisetRow{Row: r, Count: delta, WriteMs: now})
		e.flags = append(e.flags, rowDirty)
		add := int64(len(r) + rowOverhead)
		if e.idx != nil {
			e.idx[string(r)] = int32(len(e.rows) - 1)
			add += indexOverhead
		} else if len(e.rows) > indexThreshold {
			e.buildIndex()
			add += int64(len(e.rows) * indexOverhead)
		}
		e.dirty = true
		e.size += add
		c.bytes += add
		return nil
	}
	e.dirty = true
	if n := e.rows[i].Count + delta; n > 0 {
		e.rows[i].Count = n
		e.rows[i].WriteMs = now
		e.flags[i] |= rowDirty
		return nil
	}
	s.b.removeRow(e, i)
	return nil
}

// removeRow removes row i of a multiset entry, keeping a tombstone when
// Pebble has the row.
func (b *Backend) removeRow(e *entry, i int) {
	c := &b.cache
	e.dirty = true
	r := e.rows[i].Row
	if e.flags[i]&rowStored != 0 {
		e.tombs = append(e.tombs, r)
	} else {
		e.size -= int64(len(r) + rowOverhead)
		c.bytes -= int64(len(r) + rowOverhead)
	}
	last := len(e.rows) - 1
	if e.idx != nil {
		delete(e.idx, string(r))
		if i != last {
			e.idx[string(e.rows[last].Row)] = int32(i)
		}
		e.size -= indexOverhead
		c.bytes -= indexOverhead
	}
	e.rows[i], e.flags[i] = e.rows[last], e.flags[last]
	e.rows[last] = MultisetRow{}
	e.rows, e.flags = e.rows[:last], e.flags[:last]
}

// Get returns the rows under key with their counts, in no particular order.
// The slice and its rows belong to the state: they are valid until the next
// call on any state of the Backend and must not be modified.
func (s *MultisetState) Get(kg int, key []byte) ([]MultisetRow, error) {
	k, err := s.b.prefix(kg, s.id, key)
	if err != nil {
		return nil, err
	}
	e, err := s.b.lookup(k, kindMultiset)
	if err != nil {
		return nil, err
	}
	s.expire(e)
	return e.rows, nil
}

// ValueState holds one value per key.
type ValueState struct {
	b  *Backend
	id uint16
}

// Get returns the value under key. The slice is valid until the next call on
// any state of the Backend and must not be modified.
func (s *ValueState) Get(kg int, key []byte) ([]byte, bool, error) {
	k, err := s.b.prefix(kg, s.id, key)
	if err != nil {
		return nil, false, err
	}
	e, err := s.b.lookup(k, kindValue)
	if err != nil {
		return nil, false, err
	}
	return e.val, e.hasVal, nil
}

// Put sets the value under key; value is copied.
func (s *ValueState) Put(kg int, key, value []byte) error {
	return s.set(kg, key, value, true)
}

// Delete removes the value under key.
func (s *ValueState) Delete(kg int, key []byte) error {
	return s.set(kg, key, nil, false)
}

func (s *ValueState) set(kg int, key, value []byte, has bool) error {
	k, err := s.b.prefix(kg, s.id, key)
	if err != nil {
		return err
	}
	e, err := s.b.lookup(k, kindValue)
	if err != nil {
		return err
	}
	old := len(e.val)
	e.val = append(e.val[:0], value...)
	if !has {
		e.val = nil
	}
	d := int64(len(e.val) - old)
	e.hasVal = has
	e.dirty = true
	e.size += d
	s.b.cache.bytes += d
	return nil
}
