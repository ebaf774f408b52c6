package metastore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/braidflow/braid/catalog"
)

// catalogStore implements catalog.Store over etcd. Keys:
//
//	<prefix>/catalog/databases/<db>          (empty value)
//	<prefix>/catalog/tables/<db>/<name>      (JSON of catalog.Table)
//
// catalog.DefaultDatabase is never stored: it always exists and cannot be
// dropped.
type catalogStore struct {
	s *Store
}

var _ catalog.Store = catalogStore{}

// ErrDatabaseNotEmpty is returned by DropDatabase for a database that still
// has tables.
var ErrDatabaseNotEmpty = errors.New("database is not empty")

// Catalog returns the etcd-backed catalog. It shares the Store's client and
// is valid until the Store is closed.
func (s *Store) Catalog() catalog.Store { return catalogStore{s: s} }

func (c catalogStore) dbKey(db string) string { return c.s.key("catalog", "databases", db) }
func (c catalogStore) dbDir() string          { return c.s.dir("catalog", "databases") }
func (c catalogStore) tableKey(db, name string) string {
	return c.s.key("catalog", "tables", db, name)
}
func (c catalogStore) tableDir(db string) string { return c.s.dir("catalog", "tables", db) }

func validName(kind, name string) error {
	if name == "" {
		return fmt.Errorf("metastore: empty %s name", kind)
	}
	return nil
}

// CreateDatabase creates name, failing with ErrExists if it exists (the
// default database always does).
func (c catalogStore) CreateDatabase(ctx context.Context, name string) error {
	if err := validName("database", name); err != nil {
		return err
	}
	if name == catalog.DefaultDatabase {
		return fmt.Errorf("database %q: %w", name, catalog.ErrExists)
	}
	k := c.dbKey(name)
	resp, err := c.s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(k), "=", 0)).
		Then(clientv3.OpPut(k, "")).
		Commit()
	if err != nil {
		return fmt.Errorf("metastore: create database %q: %w", name, err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("database %q: %w", name, catalog.ErrExists)
	}
	return nil
}

// DropDatabase removes an empty database. It fails with ErrNotFound when the
// database does not exist and with ErrDatabaseNotEmpty while it has tables;
// the emptiness check and the delete are one transaction.
func (c catalogStore) DropDatabase(ctx context.Context, name string) error {
	if name == catalog.DefaultDatabase {
		return fmt.Errorf("metastore: the default database %q cannot be dropped", name)
	}
	k := c.dbKey(name)
	tables := c.tableDir(name)
	// NB: a compare over a prefix holds for every key in it, and vacuously
	// when there is none, so CreateRevision == 0 over the prefix means "no
	// tables".
	resp, err := c.s.client.Txn(ctx).
		If(
			clientv3.Compare(clientv3.CreateRevision(k), ">", 0),
			clientv3.Compare(clientv3.CreateRevision(tables), "=", 0).WithPrefix(),
		).
		Then(clientv3.OpDelete(k)).
		Else(
			clientv3.OpGet(k, clientv3.WithCountOnly()),
		).
		Commit()
	if err != nil {
		return fmt.Errorf("metastore: drop database %q: %w", name, err)
	}
	if resp.Succeeded {
		return nil
	}
	if resp.Responses[0].GetResponseRange().Count == 0 {
		return fmt.Errorf("database %q: %w", name, catalog.ErrNotFound)
	}
	return fmt.Errorf("database %q: %w", name, ErrDatabaseNotEmpty)
}

// ListDatabases returns every database name, sorted, the default included.
func (c catalogStore) ListDatabases(ctx context.Context) ([]string, error) {
	dir := c.dbDir()
	resp, err := c.s.client.Get(ctx, dir, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, fmt.Errorf("metastore: list databases: %w", err)
	}
	names := []string{catalog.DefaultDatabase}
	for _, kv := range resp.Kvs {
		name, err := url.PathUnescape(strings.TrimPrefix(string(kv.Key), dir))
		if err != nil {
			return nil, fmt.Errorf("metastore: bad database key %q: %w", kv.Key, err)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

// DatabaseExists reports whether name exists.
func (c catalogStore) DatabaseExists(ctx context.Context, name string) (bool, error) {
	if name == catalog.DefaultDatabase {
		return true, nil
	}
	resp, err := c.s.client.Get(ctx, c.dbKey(name), clientv3.WithCountOnly())
	if err != nil {
		return false, fmt.Errorf("metastore: database %q: %w", name, err)
	}
	return resp.Count > 0, nil
}

// dbExistsCmp is the compare that holds while database db exists.
func (c catalogStore) dbExistsCmps(db string) []clientv3.Cmp {
	if db == catalog.DefaultDatabase {
		return nil
	}
	return []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(c.dbKey(db)), ">", 0)}
}

// CreateTable stores t under t.Database, in one transaction that fails with
// ErrExists when the table exists and with ErrNotFound when the database
// does not. t is not retained.
func (c catalogStore) CreateTable(ctx context.Context, t *catalog.Table) error {
	if err := validName("database", t.Database); err != nil {
		return err
	}
	if err := validName("table", t.Name); err != nil {
		return err
	}
	val, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("metastore: encode table %s.%s: %w", t.Database, t.Name, err)
	}
	k := c.tableKey(t.Database, t.Name)
	cmps := append(c.dbExistsCmps(t.Database), clientv3.Compare(clientv3.CreateRevision(k), "=", 0))
	resp, err := c.s.client.Txn(ctx).
		If(cmps...).
		Then(clientv3.OpPut(k, string(val))).
		Else(clientv3.OpGet(k, clientv3.WithCountOnly())).
		Commit()
	if err != nil {
		return fmt.Errorf("metastore: create table %s.%s: %w", t.Database, t.Name, err)
	}
	if resp.Succeeded {
		return nil
	}
	if resp.Responses[0].GetResponseRange().Count > 0 {
		return fmt.Errorf("table %s.%s: %w", t.Database, t.Name, catalog.ErrExists)
	}
	return fmt.Errorf("database %q: %w", t.Database, catalog.ErrNotFound)
}

// GetTable returns a fresh copy of the stored table; ErrNotFound (wrapped
// with the name) when absent.
func (c catalogStore) GetTable(ctx context.Context, database, name string) (*catalog.Table, error) {
	resp, err := c.s.client.Get(ctx, c.tableKey(database, name))
	if err != nil {
		return nil, fmt.Errorf("metastore: get table %s.%s: %w", database, name, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, fmt.Errorf("table %s.%s: %w", database, name, catalog.ErrNotFound)
	}
	var t catalog.Table
	if err := json.Unmarshal(resp.Kvs[0].Value, &t); err != nil {
		return nil, fmt.Errorf("metastore: decode table %s.%s: %w", database, name, err)
	}
	return &t, nil
}

// DropTable deletes the table; ErrNotFound (wrapped with the name) when
// absent.
func (c catalogStore) DropTable(ctx context.Context, database, name string) error {
	resp, err := c.s.client.Delete(ctx, c.tableKey(database, name))
	if err != nil {
		return fmt.Errorf("metastore: drop table %s.%s: %w", database, name, err)
	}
	if resp.Deleted == 0 {
		return fmt.Errorf("table %s.%s: %w", database, name, catalog.ErrNotFound)
	}
	return nil
}

// AlterTable replaces the stored table of t's database and name with t,
// in one transaction that fails with ErrNotFound when it is absent.
func (c catalogStore) AlterTable(ctx context.Context, t *catalog.Table) error {
	val, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("metastore: encode table %s.%s: %w", t.Database, t.Name, err)
	}
	k := c.tableKey(t.Database, t.Name)
	resp, err := c.s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(k), ">", 0)).
		Then(clientv3.OpPut(k, string(val))).
		Commit()
	if err != nil {
		return fmt.Errorf("metastore: alter table %s.%s: %w", t.Database, t.Name, err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("table %s.%s: %w", t.Database, t.Name, catalog.ErrNotFound)
	}
	return nil
}

// RenameTable moves a table to newName in one transaction, which fails
// with ErrNotFound when the table is absent or changed meanwhile, and with
// ErrExists when newName is taken.
func (c catalogStore) RenameTable(ctx context.Context, database, name, newName string) error {
	if err := validName("table", newName); err != nil {
		return err
	}
	old, nk := c.tableKey(database, name), c.tableKey(database, newName)
	get, err := c.s.client.Get(ctx, old)
	if err != nil {
		return fmt.Errorf("metastore: rename table %s.%s: %w", database, name, err)
	}
	if len(get.Kvs) == 0 {
		return fmt.Errorf("table %s.%s: %w", database, name, catalog.ErrNotFound)
	}
	var t catalog.Table
	if err := json.Unmarshal(get.Kvs[0].Value, &t); err != nil {
		return fmt.Errorf("metastore: decode table %s.%s: %w", database, name, err)
	}
	t.Name = newName
	val, err := json.Marshal(&t)
	if err != nil {
		return fmt.Errorf("metastore: encode table %s.%s: %w", database, newName, err)
	}
	resp, err := c.s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(old), "=", get.Kvs[0].ModRevision),
			clientv3.Compare(clientv3.CreateRevision(nk), "=", 0)).
		Then(clientv3.OpPut(nk, string(val)), clientv3.OpDelete(old)).
		Else(clientv3.OpGet(nk, clientv3.WithCountOnly())).
		Commit()
	if err != nil {
		return fmt.Errorf("metastore: rename table %s.%s: %w", database, name, err)
	}
	if resp.Succeeded {
		return nil
	}
	if resp.Responses[0].GetResponseRange().Count > 0 {
		return fmt.Errorf("table %s.%s: %w", database, newName, catalog.ErrExists)
	}
	return fmt.Errorf("table %s.%s changed while it was renamed: %w", database, name, catalog.ErrNotFound)
}

// ListTables returns the table names of database, sorted; ErrNotFound when
// the database does not exist. The existence check and the listing are one
// consistent read.
func (c catalogStore) ListTables(ctx context.Context, database string) ([]string, error) {
	dir := c.tableDir(database)
	ops := []clientv3.Op{clientv3.OpGet(dir, clientv3.WithPrefix(), clientv3.WithKeysOnly())}
	if database != catalog.DefaultDatabase {
		ops = append(ops, clientv3.OpGet(c.dbKey(database), clientv3.WithCountOnly()))
	}
	resp, err := c.s.client.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return nil, fmt.Errorf("metastore: list tables of %q: %w", database, err)
	}
	if len(ops) == 2 && resp.Responses[1].GetResponseRange().Count == 0 {
		return nil, fmt.Errorf("database %q: %w", database, catalog.ErrNotFound)
	}
	var names []string
	for _, kv := range resp.Responses[0].GetResponseRange().Kvs {
		name, err := url.PathUnescape(strings.TrimPrefix(string(kv.Key), dir))
		if err != nil {
			return nil, fmt.Errorf("metastore: bad table key %q: %w", kv.Key, err)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}
