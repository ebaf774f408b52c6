package jobmanager

import (
	"context"
	"errors"
	"time"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/sql/ast"
)

// Views share the namespace of tables (catalog.Table with View set): a
// permanent view is stored in the catalog, a temporary one in the
// session's temporary store, where it shadows a permanent object of the
// same name. The planner expands a view wherever a query reads it.

// createView is CREATE [TEMPORARY] VIEW [IF NOT EXISTS]: the query is
// planned first, so a broken view is refused with the position of its
// error and nothing is stored.
func (x *execution) createView(ctx context.Context, st *ast.CreateViewStmt) error {
	db, _, err := x.s.qualify(st.Name.Strings())
	if err != nil {
		return userErr(st.Name.Pos, "%v", err)
	}
	if ok, err := x.s.store.DatabaseExists(ctx, db); err != nil {
		return err
	} else if !ok {
		return userErr(st.Name.Pos, "database %s does not exist", db)
	}
	p, err := x.planner()
	if err != nil {
		return err
	}
	v, err := p.BuildView(ctx, st, db, time.Now().UnixMilli())
	if err != nil {
		return err
	}
	store := x.s.store
	if v.Temporary {
		if err := x.checkTemporaryRoom(st.Name.Pos); err != nil {
			return err
		}
		store = x.s.temp
	}
	if err := store.CreateTable(ctx, v); err != nil {
		if !errors.Is(err, catalog.ErrExists) {
			return err
		}
		if st.IfNotExists {
			return x.out.status(okMessage, "")
		}
		if v.Temporary {
			return userErr(st.Name.Pos, "Temporary table '%s' already exists", quotedName(db, v.Name))
		}
		return userErr(st.Name.Pos, "Table (or view) %s.%s already exists in Catalog %s.", db, v.Name, catalog.DefaultCatalog)
	}
	return x.out.status(okMessage, "")
}

// dropView is DROP [TEMPORARY] VIEW [IF EXISTS]. As in Flink, DROP VIEW
// without TEMPORARY does not drop a permanent view a temporary one hides,
// and a table is not a view.
func (x *execution) dropView(ctx context.Context, st *ast.DropViewStmt) error {
	db, name, err := x.s.qualify(st.Name.Strings())
	if err != nil {
		return userErr(st.Name.Pos, "%v", err)
	}
	tmp, err := x.s.temp.GetTable(ctx, db, name)
	switch {
	case err == nil && tmp.IsView() && st.Temporary:
		if err := x.s.temp.DropTable(ctx, db, name); err != nil {
			return err
		}
		return x.out.status(okMessage, "")
	case err == nil && tmp.IsView():
		return userErr(st.Name.Pos, "Temporary view with identifier '%s' exists. Drop it first before removing the permanent view.", quotedName(db, name))
	case st.Temporary:
		return x.viewNotFound(st, "Temporary view", db, name)
	}
	v, err := x.s.store.GetTable(ctx, db, name)
	if errors.Is(err, catalog.ErrNotFound) || err == nil && !v.IsView() {
		return x.viewNotFound(st, "View", db, name)
	}
	if err != nil {
		return err
	}
	if err := x.s.store.DropTable(ctx, db, name); err != nil {
		return err
	}
	return x.out.status(okMessage, "")
}

func (x *execution) viewNotFound(st *ast.DropViewStmt, what, db, name string) error {
	if st.IfExists {
		return x.out.status(okMessage, "")
	}
	return userErr(st.Name.Pos, "%s with identifier '%s.%s.%s' does not exist.", what, catalog.DefaultCatalog, db, name)
}

// quotedName is Flink's summary of an object identifier with back quotes.
func quotedName(db, name string) string {
	return ast.QuoteIdent(catalog.DefaultCatalog) + "." + ast.QuoteIdent(db) + "." + ast.QuoteIdent(name)
}

// listViews returns the names of the views of the current database, the
// session's temporary ones included.
func (x *execution) listViews(ctx context.Context) ([]string, error) {
	var out []string
	for _, store := range []catalog.Store{x.s.store, x.s.temp} {
		names, err := store.ListTables(ctx, x.s.database)
		if err != nil && store == x.s.store {
			return nil, err
		}
		for _, n := range names {
			if t, err := store.GetTable(ctx, x.s.database, n); err == nil && t.IsView() {
				out = append(out, n)
			}
		}
	}
	return out, nil
}
