package jobmanager

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/planner"
	"github.com/braidflow/braid/sql/ast"
)

// createTableAs is CREATE TABLE [IF NOT EXISTS] t WITH (...) AS query, in
// database db: the query is planned into the job writing a new table of
// its columns; only then is the table created, and the job submitted,
// replying as an INSERT does. With IF NOT EXISTS and t already there, the
// query's rows go into the existing t, as in Flink.
func (x *execution) createTableAs(ctx context.Context, st *ast.CreateTableStmt, db string) error {
	if st.IfNotExists && !st.Temporary {
		if _, err := x.s.Table(ctx, st.Name.Strings()); err == nil {
			ins := &ast.InsertStmt{StmtBase: st.StmtBase, Table: st.Name, Query: st.AsQuery}
			return x.insert(ctx, ins)
		}
	}
	p, err := x.planner()
	if err != nil {
		return err
	}
	var t *catalog.Table
	plan, err := x.plan(ctx, func(ctx context.Context) (*planner.Plan, error) {
		tbl, plan, err := p.PlanCreateTableAs(ctx, st, db, time.Now().UnixMilli(), x.text(st))
		t = tbl
		return plan, err
	})
	if err != nil {
		return err
	}
	res := x.g.resolverFor()
	if err := res.ValidateTable(t); err != nil {
		return userErr(st.Name.Pos, "%v", err)
	}
	if err := x.s.store.CreateTable(ctx, t); err != nil {
		if errors.Is(err, catalog.ErrExists) {
			return userErr(st.Name.Pos, "table %s.%s already exists", db, t.Name)
		}
		return err
	}
	if err := res.CreateTable(ctx, t); err != nil {
		x.s.store.DropTable(context.WithoutCancel(ctx), db, t.Name)
		return fmt.Errorf("creating storage of table %s.%s: %w", db, t.Name, err)
	}
	return x.submitInsert(ctx, plan)
}
