package catalog

import (
	"context"
	"errors"
	"testing"
)

func TestMemStore(t *testing.T) {
	ctx := context.Background()
	s := NewMemStore()
	if ok, _ := s.DatabaseExists(ctx, DefaultDatabase); !ok {
		t.Fatal("default database missing")
	}
	tbl := &Table{Database: DefaultDatabase, Name: "orders", Columns: []Column{{Name: "id"}}}
	if err := s.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTable(ctx, tbl); !errors.Is(err, ErrExists) {
		t.Fatalf("second create: got %v, want ErrExists", err)
	}
	got, err := s.GetTable(ctx, DefaultDatabase, "orders")
	if err != nil || got.Name != "orders" {
		t.Fatalf("get: %v %v", got, err)
	}
	if err := s.DropDatabase(ctx, DefaultDatabase); err == nil {
		t.Fatal("dropped a non-empty database")
	}
	if err := s.DropTable(ctx, DefaultDatabase, "orders"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetTable(ctx, DefaultDatabase, "orders"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get after drop: got %v, want ErrNotFound", err)
	}
	names, _ := s.ListTables(ctx, DefaultDatabase)
	if len(names) != 0 {
		t.Fatalf("tables after drop: %v", names)
	}
}

func TestMemStoreAlterAndRename(t *testing.T) {
	ctx := context.Background()
	s := NewMemStore()
	tbl := &Table{Database: DefaultDatabase, Name: "a", Options: map[string]string{"k": "v"}}
	if err := s.AlterTable(ctx, tbl); !errors.Is(err, ErrNotFound) {
		t.Fatalf("alter a missing table: %v", err)
	}
	for _, n := range []string{"a", "b"} {
		if err := s.CreateTable(ctx, &Table{Database: DefaultDatabase, Name: n}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AlterTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if err := s.RenameTable(ctx, DefaultDatabase, "a", "b"); !errors.Is(err, ErrExists) {
		t.Fatalf("rename onto a taken name: %v", err)
	}
	if err := s.RenameTable(ctx, DefaultDatabase, "a", "c"); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetTable(ctx, DefaultDatabase, "c")
	if err != nil || got.Name != "c" || got.Options["k"] != "v" {
		t.Fatalf("renamed table = %+v, %v", got, err)
	}
	if _, err := s.GetTable(ctx, DefaultDatabase, "a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("old name: %v", err)
	}
}
