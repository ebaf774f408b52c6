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
