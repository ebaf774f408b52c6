package jobmanager

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/planner"
	"github.com/braidflow/braid/sql/ast"
)

// Statement sets: several INSERTs (and, in the client's form, CREATE TABLE
// ... AS SELECTs) submitted as one job. The SQL client's form collects them
// in the session between BEGIN STATEMENT SET and END; EXECUTE STATEMENT SET
// BEGIN ...; END is the same for INSERTs in one statement.

// maxStatementSetBytes caps the SQL text of the INSERTs a session holds in
// its open statement set (as a script is capped, parser.MaxScriptBytes).
const maxStatementSetBytes = 1 << 20

// statementSet is a session's open statement set: the INSERTs and CREATE
// TABLE ... AS statements added since BEGIN STATEMENT SET, each with its
// text.
type statementSet struct {
	stmts []planner.SetStatement
	texts []string
	bytes int
}

func (set *statementSet) addInsert(ins *ast.InsertStmt, text string) {
	set.stmts = append(set.stmts, planner.SetStatement{Insert: ins})
	set.texts = append(set.texts, text)
	set.bytes += len(text)
}

// The replies of Flink's SQL client.
const (
	msgBeginSet    = "Begin a statement set."
	msgAddedToSet  = "Add SQL update statement to the statement set."
	msgEmptySet    = "No statement in the statement set, skip submit."
	msgOnlyInserts = "Only INSERT statement is allowed in Statement Set."
	msgEndNoSet    = "No Statement Set to submit. 'END' statement should be used after 'BEGIN STATEMENT SET'."
)

func (x *execution) beginSet() error {
	x.s.set = &statementSet{}
	return x.out.status(msgBeginSet, "")
}

// inSet runs st while the session's statement set is open: an INSERT or
// a CREATE TABLE ... AS SELECT is checked by planning it and added, END
// submits the set, and anything else is refused with the set left open.
func (x *execution) inSet(ctx context.Context, st ast.Statement) error {
	if e, ok := st.(*ast.ExecuteStmt); ok {
		st = e.Stmt
	}
	switch st := st.(type) {
	case *ast.EndStmt:
		set := x.s.set
		x.s.set = nil
		if len(set.stmts) == 0 {
			return x.out.status(msgEmptySet, "")
		}
		return x.submitSet(ctx, set)
	case *ast.InsertStmt:
		return x.addToSet(ctx, planner.SetStatement{Insert: st}, x.text(st))
	case *ast.CreateTableStmt:
		if st.AsQuery == nil {
			break
		}
		if st.IfNotExists && !st.Temporary {
			if _, err := x.s.Table(ctx, st.Name.Strings()); err == nil {
				// NB: as outside a set, the rows go into the table there.
				ins := &ast.InsertStmt{StmtBase: st.StmtBase, Table: st.Name, Query: st.AsQuery}
				return x.addToSet(ctx, planner.SetStatement{Insert: ins}, x.text(st))
			}
		}
		db, _, err := x.s.qualify(st.Name.Strings())
		if err != nil {
			return userErr(st.Name.Pos, "%v", err)
		}
		if ok, err := x.s.store.DatabaseExists(ctx, db); err != nil {
			return err
		} else if !ok {
			return userErr(st.Name.Pos, "database %s does not exist", db)
		}
		if _, err := x.s.store.GetTable(ctx, db, st.Name.Object()); err == nil {
			return userErr(st.Name.Pos, "table %s.%s already exists", db, st.Name.Object())
		}
		return x.addToSet(ctx, planner.SetStatement{CreateAs: st, Database: db, CreatedUnixMs: time.Now().UnixMilli()}, x.text(st))
	}
	return userErr(st.Position(), msgOnlyInserts)
}

// addToSet checks st against the set's limits and by planning it, as
// Flink validates a statement when it is added (it is planned again at
// END, over the catalog of then), and adds it.
func (x *execution) addToSet(ctx context.Context, st planner.SetStatement, text string) error {
	set := x.s.set
	var pos ast.Pos
	if st.CreateAs != nil {
		pos = st.CreateAs.Pos
	} else {
		pos = st.Insert.Pos
	}
	if len(set.stmts) >= planner.MaxStatementSetInserts {
		return status.Error(codes.ResourceExhausted, userErr(pos,
			"the statement set holds %d INSERT statements, its limit: END it to submit them, and add the rest to another set", len(set.stmts)).Error())
	}
	if set.bytes+len(text) > maxStatementSetBytes {
		return status.Error(codes.ResourceExhausted, userErr(pos,
			"the statement set's INSERT statements would take %d bytes, over the limit of %d bytes (1 MiB): END it to submit them, and add the rest to another set", set.bytes+len(text), maxStatementSetBytes).Error())
	}
	p, err := x.planner()
	if err != nil {
		return err
	}
	if _, err := x.plan(ctx, func(ctx context.Context) (*planner.Plan, error) {
		plan, _, err := p.PlanStatementSet(ctx, []planner.SetStatement{st}, text)
		return plan, err
	}); err != nil {
		return err
	}
	set.stmts = append(set.stmts, st)
	set.texts = append(set.texts, text)
	set.bytes += len(text)
	return x.out.status(msgAddedToSet, "")
}

// executeSet is EXECUTE STATEMENT SET BEGIN ...; END.
func (x *execution) executeSet(ctx context.Context, st *ast.StatementSetStmt) error {
	set := &statementSet{}
	for _, ins := range st.Inserts {
		set.addInsert(ins, x.text(ins))
	}
	return x.submitSet(ctx, set)
}

// submitSet plans the set's statements into one job, creates the tables
// of its CREATE TABLE ... AS statements, and submits the job, replying as
// for one INSERT.
func (x *execution) submitSet(ctx context.Context, set *statementSet) error {
	plan, tables, err := x.planSet(ctx, set)
	if err != nil {
		return err
	}
	var names []*ast.ObjectName // where each table is named
	for _, st := range set.stmts {
		if st.CreateAs != nil {
			names = append(names, st.CreateAs.Name)
		}
	}
	res := x.g.resolverFor()
	for i, t := range tables {
		err := x.s.store.CreateTable(ctx, t)
		if errors.Is(err, catalog.ErrExists) {
			err = userErr(names[i].Pos, "table %s.%s already exists", t.Database, t.Name)
		} else if err == nil {
			if err = res.CreateTable(ctx, t); err != nil {
				x.s.store.DropTable(context.WithoutCancel(ctx), t.Database, t.Name)
				err = fmt.Errorf("creating storage of table %s.%s: %w", t.Database, t.Name, err)
			}
		}
		if err != nil {
			// NB: the set fails whole: the tables it created go again.
			for _, done := range tables[:i] {
				x.s.store.DropTable(context.WithoutCancel(ctx), done.Database, done.Name)
				res.DropTable(context.WithoutCancel(ctx), done)
			}
			return err
		}
	}
	return x.submitInsert(ctx, plan)
}

func (x *execution) planSet(ctx context.Context, set *statementSet) (*planner.Plan, []*catalog.Table, error) {
	p, err := x.planner()
	if err != nil {
		return nil, nil, err
	}
	var tables []*catalog.Table
	plan, err := x.plan(ctx, func(ctx context.Context) (*planner.Plan, error) {
		plan, t, err := p.PlanStatementSet(ctx, set.stmts, statementSetSQL(set.texts))
		tables = t
		return plan, err
	})
	return plan, tables, err
}

// statementSetSQL is the SQL text of a statement set's job.
func statementSetSQL(texts []string) string {
	var b strings.Builder
	b.WriteString("EXECUTE STATEMENT SET\nBEGIN\n")
	for _, t := range texts {
		b.WriteString(t)
		b.WriteString(";\n")
	}
	b.WriteString("END")
	return b.String()
}
