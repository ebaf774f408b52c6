package state

// Count returns how many times row occurs under key, 0 when it does not (or
// has expired). Unlike Get it does not visit the key's other rows: a key
// with many rows keeps an index, so the cost does not grow with them.
func (s *MultisetState) Count(kg int, key, row []byte) (int64, error) {
	k, err := s.b.prefix(kg, s.id, key)
	if err != nil {
		return 0, err
	}
	e, err := s.b.lookup(k, kindMultiset)
	if err != nil {
		return 0, err
	}
	s.expire(e)
	if i := e.find(row); i >= 0 {
		return e.rows[i].Count, nil
	}
	return 0, nil
}
