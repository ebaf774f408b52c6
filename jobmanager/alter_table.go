package jobmanager

import (
	"context"
	"errors"
	"maps"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/connectors"
	"github.com/braidflow/braid/sql/ast"
)

// alterTable is ALTER TABLE [IF EXISTS] t SET (...) | RESET (...) |
// RENAME TO u on a table of the persistent catalog. Changed options are
// checked as CREATE TABLE checks them; jobs already running keep the
// options they were planned with.
func (x *execution) alterTable(ctx context.Context, st *ast.AlterTableStmt) error {
	db, name, err := x.s.qualify(st.Name.Strings())
	if err != nil {
		return userErr(st.Name.Pos, "%v", err)
	}
	_, terr := x.s.temp.GetTable(ctx, db, name)
	t, err := x.s.store.GetTable(ctx, db, name)
	switch {
	case terr == nil || errors.Is(err, catalog.ErrNotFound):
		// NB: Flink alters permanent tables only, and treats a temporary
		// one as absent.
		if st.IfExists {
			return x.out.status(okMessage, "")
		}
		return userErr(st.Name.Pos, "Table %s doesn't exist or is a temporary table.", quotedName(db, name))
	case err != nil:
		return err
	}
	if t.IsView() {
		return userErr(st.Name.Pos, "ALTER TABLE for a view is not allowed: %s is a view", quotedName(db, name))
	}
	if st.RenameTo != nil {
		return x.renameTable(ctx, st, t)
	}
	next := *t
	next.Options = maps.Clone(t.Options)
	if next.Options == nil {
		next.Options = map[string]string{}
	}
	for _, o := range st.Set {
		if t.Managed() && (o.Key == "connector" || o.Key == connectors.OptionManagedPartitions) {
			return userErr(o.Pos, "changing '%s' of a managed table is not supported yet", o.Key)
		}
		next.Options[o.Key] = o.Value
	}
	for _, o := range st.Reset {
		switch {
		case o.Key == "":
			return userErr(o.Pos, "ALTER TABLE RESET does not support empty key")
		case o.Key == "connector":
			return userErr(o.Pos, "ALTER TABLE RESET does not support changing 'connector'")
		case t.Managed() && o.Key == connectors.OptionManagedPartitions:
			return userErr(o.Pos, "changing '%s' of a managed table is not supported yet", o.Key)
		}
		delete(next.Options, o.Key)
	}
	if err := x.g.resolverFor().ValidateTable(&next); err != nil {
		return userErr(st.Name.Pos, "%v", err)
	}
	if err := x.s.store.AlterTable(ctx, &next); err != nil {
		if errors.Is(err, catalog.ErrNotFound) {
			return userErr(st.Name.Pos, "Table %s doesn't exist or is a temporary table.", quotedName(db, name))
		}
		return err
	}
	return x.out.status(okMessage, "")
}

// renameTable is ALTER TABLE t RENAME TO u, within t's database.
func (x *execution) renameTable(ctx context.Context, st *ast.AlterTableStmt, t *catalog.Table) error {
	db, newName, err := x.s.qualify(st.RenameTo.Strings())
	if err != nil {
		return userErr(st.RenameTo.Pos, "%v", err)
	}
	if db != t.Database {
		return userErr(st.RenameTo.Pos, "renaming a table into another database (%s) is not supported yet", db)
	}
	if t.Managed() {
		// NB: a managed table's storage is named after the table.
		return userErr(st.Pos, "ALTER TABLE ... RENAME TO of a managed table is not supported yet")
	}
	if err := x.s.store.RenameTable(ctx, db, t.Name, newName); err != nil {
		switch {
		case errors.Is(err, catalog.ErrExists):
			return userErr(st.RenameTo.Pos, "Table %s already exists", quotedName(db, newName))
		case errors.Is(err, catalog.ErrNotFound):
			return userErr(st.Name.Pos, "Table %s doesn't exist or is a temporary table.", quotedName(db, t.Name))
		}
		return err
	}
	return x.out.status(okMessage, "")
}
