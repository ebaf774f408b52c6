package catalog

import (
	"context"
	"fmt"
	"sort"
	"sync"
)

// MemStore is a Store in memory: a session's temporary tables, and tests.
// The default database always exists.
type MemStore struct {
	mu struct {
		sync.Mutex
		dbs map[string]map[string]*Table
	}
}

var _ Store = (*MemStore)(nil)

// NewMemStore returns an empty store holding only the default database.
func NewMemStore() *MemStore {
	s := &MemStore{}
	s.mu.dbs = map[string]map[string]*Table{DefaultDatabase: {}}
	return s
}

func (s *MemStore) CreateDatabase(_ context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.mu.dbs[name]; ok {
		return fmt.Errorf("database %s: %w", name, ErrExists)
	}
	s.mu.dbs[name] = map[string]*Table{}
	return nil
}

func (s *MemStore) DropDatabase(_ context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	tables, ok := s.mu.dbs[name]
	if !ok {
		return fmt.Errorf("database %s: %w", name, ErrNotFound)
	}
	if len(tables) > 0 {
		return fmt.Errorf("database %s is not empty", name)
	}
	delete(s.mu.dbs, name)
	return nil
}

func (s *MemStore) ListDatabases(context.Context) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for name := range s.mu.dbs {
		out = append(out, name)
	}
	sort.Strings(out)
	return out, nil
}

func (s *MemStore) DatabaseExists(_ context.Context, name string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.mu.dbs[name]
	return ok, nil
}

func (s *MemStore) CreateTable(_ context.Context, t *Table) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	tables, ok := s.mu.dbs[t.Database]
	if !ok {
		// Temporary tables may live in any database of the persistent catalog.
		tables = map[string]*Table{}
		s.mu.dbs[t.Database] = tables
	}
	if _, ok := tables[t.Name]; ok {
		return fmt.Errorf("table %s.%s: %w", t.Database, t.Name, ErrExists)
	}
	c := *t
	tables[t.Name] = &c
	return nil
}

func (s *MemStore) GetTable(_ context.Context, database, name string) (*Table, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.mu.dbs[database][name]
	if !ok {
		return nil, fmt.Errorf("table %s.%s: %w", database, name, ErrNotFound)
	}
	c := *t
	return &c, nil
}

func (s *MemStore) DropTable(_ context.Context, database, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.mu.dbs[database][name]; !ok {
		return fmt.Errorf("table %s.%s: %w", database, name, ErrNotFound)
	}
	delete(s.mu.dbs[database], name)
	return nil
}

// NumTables returns the number of tables and views in every database.
func (s *MemStore) NumTables() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, tables := range s.mu.dbs {
		n += len(tables)
	}
	return n
}

func (s *MemStore) AlterTable(_ context.Context, t *Table) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.mu.dbs[t.Database][t.Name]; !ok {
		return fmt.Errorf("table %s.%s: %w", t.Database, t.Name, ErrNotFound)
	}
	c := *t
	s.mu.dbs[t.Database][t.Name] = &c
	return nil
}

func (s *MemStore) RenameTable(_ context.Context, database, name, newName string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.mu.dbs[database][name]
	if !ok {
		return fmt.Errorf("table %s.%s: %w", database, name, ErrNotFound)
	}
	if _, ok := s.mu.dbs[database][newName]; ok {
		return fmt.Errorf("table %s.%s: %w", database, newName, ErrExists)
	}
	c := *t
	c.Name = newName
	delete(s.mu.dbs[database], name)
	s.mu.dbs[database][newName] = &c
	return nil
}

func (s *MemStore) ListTables(_ context.Context, database string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for name := range s.mu.dbs[database] {
		out = append(out, name)
	}
	sort.Strings(out)
	return out, nil
}
