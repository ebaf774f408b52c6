package state

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// Scans walk every key of one state in the backend's key-group range. They
// exist for operators that rebuild an in-memory index (pending timers,
// windows in flight) at Open from the state a checkpoint restored, so the
// index never has to be snapshotted itself.
//
// NB: a scan first writes the cache's dirty entries to Pebble (as Flush
// does, without flushing memtables) and then reads Pebble alone, so it sees
// every write made before it, whatever the cache holds. At Open on a
// restored backend the cache is empty and this costs nothing. Keys are
// visited in key-group order, then in the order of their encoded prefix
// (the key's length, then its bytes), which is deterministic but not the
// key's byte order. The callback must not call into the Backend; the bytes
// it is given are valid only during the call.

// ScanKeys calls fn with every key that has rows in the state, in the
// backend's key-group range. It stops at fn's first error and returns it.
// With a TTL, a key whose rows have all expired may still be visited.
func (s *MultisetState) ScanKeys(fn func(kg int, key []byte) error) error {
	return s.b.scan(s.id, func(kg int, prefixLen int, key []byte, it *pebble.Iterator) (bool, error) {
		if err := fn(kg, key); err != nil {
			return false, err
		}
		// Skip the key's other rows.
		return it.SeekGE(prefixEnd(it.Key()[:prefixLen])), nil
	})
}

// Scan calls fn with every key that has rows in the state, in the
// backend's key-group range, and its rows (expired rows left out, keys with
// none skipped). It stops at fn's first error and returns it.
func (s *MultisetState) Scan(fn func(kg int, key []byte, rows []MultisetRow) error) error {
	var now int64
	if s.ttlMs > 0 {
		now = s.now().UnixMilli()
	}
	var rows []MultisetRow
	return s.b.scan(s.id, func(kg int, prefixLen int, key []byte, it *pebble.Iterator) (bool, error) {
		prefix := append([]byte(nil), it.Key()[:prefixLen]...)
		rows = rows[:0]
		ok := true
		for ; ok && bytes.HasPrefix(it.Key(), prefix); ok = it.Next() {
			r, err := decodeCount(it.Key(), it.Value())
			if err != nil {
				return false, err
			}
			if s.ttlMs > 0 && r.WriteMs > 0 && now-r.WriteMs >= s.ttlMs {
				continue
			}
			// NB: the iterator's key is only valid until it moves.
			r.Row = append([]byte(nil), it.Key()[prefixLen:]...)
			rows = append(rows, r)
		}
		if len(rows) > 0 {
			if err := fn(kg, prefix[len(prefix)-len(key):], rows); err != nil {
				return false, err
			}
		}
		return ok, nil
	})
}

// Scan calls fn with every key of the state in the backend's key-group
// range and its value. It stops at fn's first error and returns it.
func (s *ValueState) Scan(fn func(kg int, key, value []byte) error) error {
	return s.b.scan(s.id, func(kg int, prefixLen int, key []byte, it *pebble.Iterator) (bool, error) {
		if err := fn(kg, key, it.Value()); err != nil {
			return false, err
		}
		return it.Next(), nil
	})
}

// decodeCount decodes a multiset row's value: its count, then its write
// time when there is one.
func decodeCount(k, v []byte) (MultisetRow, error) {
	n, w := binary.Uvarint(v)
	if w <= 0 || n == 0 {
		return MultisetRow{}, fmt.Errorf("state: corrupt multiset count under %x", k)
	}
	var written uint64
	if w < len(v) {
		if written, w = binary.Uvarint(v[w:]); w <= 0 {
			return MultisetRow{}, fmt.Errorf("state: corrupt multiset write time under %x", k)
		}
	}
	return MultisetRow{Count: int64(n), WriteMs: int64(written)}, nil
}

// scan positions an iterator on the first entry of each key of state id in
// each key group of the range and calls visit, which consumes the key's
// entries and reports whether the iterator is still valid. key is the key
// of the entry the iterator is on, and prefixLen the length of its Pebble
// prefix (key group, state id, length, key).
func (b *Backend) scan(id uint16, visit func(kg, prefixLen int, key []byte, it *pebble.Iterator) (bool, error)) error {
	if err := b.writeDirty(); err != nil {
		return err
	}
	r := b.opts.KeyGroups
	for kg := r.Start; kg <= r.End; kg++ {
		lo := binary.BigEndian.AppendUint16(nil, uint16(kg))
		lo = binary.BigEndian.AppendUint16(lo, id)
		it, err := b.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
		if err != nil {
			return fmt.Errorf("state: scan: %w", err)
		}
		ok := it.First()
		for ok {
			k := it.Key()
			n, w := binary.Uvarint(k[4:])
			if w <= 0 || uint64(len(k)-4-w) < n {
				it.Close()
				return fmt.Errorf("state: corrupt state key %x", k)
			}
			prefixLen := 4 + w + int(n)
			if ok, err = visit(kg, prefixLen, k[4+w:prefixLen], it); err != nil {
				it.Close()
				return err
			}
		}
		if err := it.Close(); err != nil {
			return fmt.Errorf("state: scan: %w", err)
		}
	}
	return nil
}
