package metastore

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/types"
)

func sampleTable(db, name string) *catalog.Table {
	return &catalog.Table{
		Database: db,
		Name:     name,
		Columns: []catalog.Column{
			{Name: "id", Type: types.BigInt.WithNullable(false)},
			{Name: "ts", Type: types.Timestamp(3)},
			{Name: "n2", Expr: "id * 2", Type: types.BigInt.WithNullable(false)},
		},
		PrimaryKey:    []string{"id"},
		Watermark:     &catalog.Watermark{Column: "ts", Expr: "ts - INTERVAL '5' SECOND"},
		Options:       map[string]string{"connector": "kafka", "topic": "t"},
		CreatedUnixMs: 1700000000000,
	}
}

func TestCatalogDefaultDatabase(t *testing.T) {
	c := newTestStore(t).Catalog()
	ctx := testCtx(t)
	ok, err := c.DatabaseExists(ctx, catalog.DefaultDatabase)
	if err != nil || !ok {
		t.Fatalf("default database exists = %v, %v", ok, err)
	}
	if err := c.CreateDatabase(ctx, catalog.DefaultDatabase); !errors.Is(err, catalog.ErrExists) {
		t.Fatalf("create default database: %v, want ErrExists", err)
	}
	if err := c.DropDatabase(ctx, catalog.DefaultDatabase); err == nil {
		t.Fatal("dropped the default database")
	}
	dbs, err := c.ListDatabases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(dbs, []string{catalog.DefaultDatabase}) {
		t.Fatalf("databases = %v", dbs)
	}
	names, err := c.ListTables(ctx, catalog.DefaultDatabase)
	if err != nil || len(names) != 0 {
		t.Fatalf("tables of a fresh default database = %v, %v", names, err)
	}
}

func TestCatalogTableCRUD(t *testing.T) {
	c := newTestStore(t).Catalog()
	ctx := testCtx(t)
	db := catalog.DefaultDatabase
	want := sampleTable(db, "orders")
	if err := c.CreateTable(ctx, want); err != nil {
		t.Fatal(err)
	}
	err := c.CreateTable(ctx, sampleTable(db, "orders"))
	if !errors.Is(err, catalog.ErrExists) || !strings.Contains(err.Error(), "orders") {
		t.Fatalf("second create: %v, want ErrExists naming the table", err)
	}
	got, err := c.GetTable(ctx, db, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, want)
	}
	if err := c.CreateTable(ctx, sampleTable(db, "a/b")); err != nil {
		t.Fatal(err)
	}
	names, err := c.ListTables(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(names, []string{"a/b", "orders"}) {
		t.Fatalf("tables = %q", names)
	}
	if err := c.DropTable(ctx, db, "orders"); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetTable(ctx, db, "orders")
	if !errors.Is(err, catalog.ErrNotFound) || !strings.Contains(err.Error(), "orders") {
		t.Fatalf("get dropped table: %v, want ErrNotFound naming the table", err)
	}
	err = c.DropTable(ctx, db, "orders")
	if !errors.Is(err, catalog.ErrNotFound) || !strings.Contains(err.Error(), "orders") {
		t.Fatalf("drop dropped table: %v, want ErrNotFound naming the table", err)
	}
	// Re-creating after a drop starts from the new definition.
	again := sampleTable(db, "orders")
	again.CreatedUnixMs++
	if err := c.CreateTable(ctx, again); err != nil {
		t.Fatal(err)
	}
	got, err = c.GetTable(ctx, db, "orders")
	if err != nil || got.CreatedUnixMs != again.CreatedUnixMs {
		t.Fatalf("re-created table = %+v, %v", got, err)
	}
}

func TestCatalogDatabases(t *testing.T) {
	c := newTestStore(t).Catalog()
	ctx := testCtx(t)
	if err := c.CreateTable(ctx, sampleTable("sales", "t")); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("create table in missing database: %v, want ErrNotFound", err)
	}
	if _, err := c.ListTables(ctx, "sales"); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("list tables of missing database: %v, want ErrNotFound", err)
	}
	if err := c.DropDatabase(ctx, "sales"); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("drop missing database: %v, want ErrNotFound", err)
	}
	if err := c.CreateDatabase(ctx, "sales"); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateDatabase(ctx, "sales"); !errors.Is(err, catalog.ErrExists) {
		t.Fatalf("create database twice: %v, want ErrExists", err)
	}
	ok, err := c.DatabaseExists(ctx, "sales")
	if err != nil || !ok {
		t.Fatalf("exists = %v, %v", ok, err)
	}
	dbs, err := c.ListDatabases(ctx)
	if err != nil || !reflect.DeepEqual(dbs, []string{catalog.DefaultDatabase, "sales"}) {
		t.Fatalf("databases = %v, %v", dbs, err)
	}
	if err := c.CreateTable(ctx, sampleTable("sales", "t")); err != nil {
		t.Fatal(err)
	}
	// A table of the same name in another database is another table.
	if err := c.CreateTable(ctx, sampleTable(catalog.DefaultDatabase, "t")); err != nil {
		t.Fatal(err)
	}
	// "sales" must not see tables of a database whose name extends it.
	if err := c.CreateDatabase(ctx, "sales2"); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTable(ctx, sampleTable("sales2", "x")); err != nil {
		t.Fatal(err)
	}
	names, err := c.ListTables(ctx, "sales")
	if err != nil || !reflect.DeepEqual(names, []string{"t"}) {
		t.Fatalf("tables of sales = %v, %v", names, err)
	}
	if err := c.DropDatabase(ctx, "sales"); !errors.Is(err, ErrDatabaseNotEmpty) {
		t.Fatalf("drop non-empty database: %v, want ErrDatabaseNotEmpty", err)
	}
	if err := c.DropTable(ctx, "sales", "t"); err != nil {
		t.Fatal(err)
	}
	if err := c.DropDatabase(ctx, "sales"); err != nil {
		t.Fatal(err)
	}
	ok, err = c.DatabaseExists(ctx, "sales")
	if err != nil || ok {
		t.Fatalf("exists after drop = %v, %v", ok, err)
	}
	if _, err := c.GetTable(ctx, catalog.DefaultDatabase, "t"); err != nil {
		t.Fatalf("table in default database lost: %v", err)
	}
}

func TestCatalogRejectsEmptyNames(t *testing.T) {
	c := newTestStore(t).Catalog()
	ctx := testCtx(t)
	if err := c.CreateDatabase(ctx, ""); err == nil {
		t.Fatal("created a database with no name")
	}
	if err := c.CreateTable(ctx, sampleTable(catalog.DefaultDatabase, "")); err == nil {
		t.Fatal("created a table with no name")
	}
}

// TestCatalogAlterAndRename: AlterTable replaces a stored table and
// RenameTable moves it, each refusing a missing table, and RenameTable a
// taken name.
func TestCatalogAlterAndRename(t *testing.T) {
	c := newTestStore(t).Catalog()
	ctx := testCtx(t)
	db := catalog.DefaultDatabase
	if err := c.AlterTable(ctx, sampleTable(db, "orders")); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("alter a missing table: %v, want ErrNotFound", err)
	}
	for _, n := range []string{"orders", "other"} {
		if err := c.CreateTable(ctx, sampleTable(db, n)); err != nil {
			t.Fatal(err)
		}
	}
	want := sampleTable(db, "orders")
	want.Options["topic"] = "u"
	if err := c.AlterTable(ctx, want); err != nil {
		t.Fatal(err)
	}
	if got, err := c.GetTable(ctx, db, "orders"); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("altered table = %+v, %v, want %+v", got, err, want)
	}
	if err := c.RenameTable(ctx, db, "orders", "other"); !errors.Is(err, catalog.ErrExists) {
		t.Fatalf("rename onto a taken name: %v, want ErrExists", err)
	}
	if err := c.RenameTable(ctx, db, "nope", "x"); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("rename a missing table: %v, want ErrNotFound", err)
	}
	if err := c.RenameTable(ctx, db, "orders", "renamed"); err != nil {
		t.Fatal(err)
	}
	want.Name = "renamed"
	if got, err := c.GetTable(ctx, db, "renamed"); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("renamed table = %+v, %v, want %+v", got, err, want)
	}
	if _, err := c.GetTable(ctx, db, "orders"); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("the old name after a rename: %v, want ErrNotFound", err)
	}
}
