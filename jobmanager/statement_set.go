package jobmanager

import (
	"context"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidflow/braid/planner"
	"github.com/braidflow/braid/sql/ast"
)

// Statement sets: several INSERTs submitted as one job. The SQL client's
// form collects them in the session between BEGIN STATEMENT SET and END;
// EXECUTE STATEMENT SET BEGIN ...; END is the same in one statement.

// maxStatementSetBytes caps the SQL text of the INSERTs a session holds in
// its open statement set (as a script is capped, parser.MaxScriptBytes).
const maxStatementSetBytes = 1 << 20

// statementSet is a session's open statement set: the INSERTs added since
// BEGIN STATEMENT SET, each with its text.
type statementSet struct {
	inserts []*ast.InsertStmt
	texts   []string
	bytes   int
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

// inSet runs st while the session's statement set is open: an INSERT is
// checked by planning it and added, END submits the set, and anything
// else is refused with the set left open.
func (x *execution) inSet(ctx context.Context, st ast.Statement) error {
	if e, ok := st.(*ast.ExecuteStmt); ok {
		st = e.Stmt
	}
	switch st := st.(type) {
	case *ast.EndStmt:
		set := x.s.set
		x.s.set = nil
		if len(set.inserts) == 0 {
			return x.out.status(msgEmptySet, "")
		}
		return x.submitSet(ctx, set)
	case *ast.InsertStmt:
		set := x.s.set
		text := x.text(st)
		if len(set.inserts) >= planner.MaxStatementSetInserts {
			return status.Error(codes.ResourceExhausted, userErr(st.Pos,
				"the statement set holds %d INSERT statements, its limit: END it to submit them, and add the rest to another set", len(set.inserts)).Error())
		}
		if set.bytes+len(text) > maxStatementSetBytes {
			return status.Error(codes.ResourceExhausted, userErr(st.Pos,
				"the statement set's INSERT statements would take %d bytes, over the limit of %d bytes (1 MiB): END it to submit them, and add the rest to another set", set.bytes+len(text), maxStatementSetBytes).Error())
		}
		// NB: planned now, as Flink validates an INSERT when it is added,
		// and again at END over the catalog of then.
		p, err := x.planner()
		if err != nil {
			return err
		}
		if _, err := x.plan(ctx, func(ctx context.Context) (*planner.Plan, error) { return p.PlanInsert(ctx, st, text) }); err != nil {
			return err
		}
		set.inserts = append(set.inserts, st)
		set.texts = append(set.texts, text)
		set.bytes += len(text)
		return x.out.status(msgAddedToSet, "")
	}
	if ct, ok := st.(*ast.CreateTableStmt); ok && ct.AsQuery != nil {
		return userErr(ct.Pos, "CREATE TABLE ... AS SELECT in a statement set is not supported yet")
	}
	return userErr(st.Position(), msgOnlyInserts)
}

// executeSet is EXECUTE STATEMENT SET BEGIN ...; END.
func (x *execution) executeSet(ctx context.Context, st *ast.StatementSetStmt) error {
	set := &statementSet{}
	for _, ins := range st.Inserts {
		set.inserts = append(set.inserts, ins)
		set.texts = append(set.texts, x.text(ins))
	}
	return x.submitSet(ctx, set)
}

// submitSet plans the set's INSERTs into one job and submits it, replying
// as for one INSERT.
func (x *execution) submitSet(ctx context.Context, set *statementSet) error {
	plan, err := x.planSet(ctx, set)
	if err != nil {
		return err
	}
	return x.submitInsert(ctx, plan)
}

func (x *execution) planSet(ctx context.Context, set *statementSet) (*planner.Plan, error) {
	p, err := x.planner()
	if err != nil {
		return nil, err
	}
	return x.plan(ctx, func(ctx context.Context) (*planner.Plan, error) {
		return p.PlanInserts(ctx, set.inserts, statementSetSQL(set.texts))
	})
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
