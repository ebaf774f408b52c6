package jobmanager

import (
	"cmp"
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidflow/braid/internal/clientauth"
	"github.com/braidflow/braid/planner"
	"github.com/braidflow/braid/sql/ast"
)

// Who may do what: every ClientService call carries its caller (the
// interceptor of clientauth.ServerOptions puts it in the context). A job
// and a SQL session belong to the principal that submitted or opened it.
// An admin sees and acts on every job; a viewer sees only its own, and a
// job it may not see is not found, exactly as a missing one. A viewer may
// cancel its own jobs; stop, savepoint and rescale are for admins; in SQL a viewer runs only the
// statements viewerStatement admits.

// caller returns the principal of the call ctx belongs to. A context
// without one (a call that did not come through ClientService) is a viewer
// with no name: it sees no job and may change nothing.
func caller(ctx context.Context) clientauth.Principal {
	p, _ := clientauth.FromContext(ctx)
	return p
}

// owner is the name a job submitted under ctx is recorded with; "" when
// ctx has no caller, which only admins see.
func owner(ctx context.Context) string { return caller(ctx).Name }

// jobOwner is the owner a job records (metastore.JobRecord.Owner): the
// caller's name, or "" for the anonymous caller of a job manager that
// authenticates no clients, which only admins can see.
func jobOwner(ctx context.Context) string {
	if p := caller(ctx); p != clientauth.Anonymous {
		return p.Name
	}
	return ""
}

// sees reports whether p may see a job (or session) of owner.
func sees(p clientauth.Principal, owner string) bool {
	return p.IsAdmin() || (p.Name != "" && p.Name == owner)
}

// requireAdmin refuses a non-admin caller what, such as "canceling job
// 0123abcd". NB: before the job is looked up, so the refusal says nothing
// of whether it exists.
func requireAdmin(ctx context.Context, what string) error {
	p := caller(ctx)
	if p.IsAdmin() {
		return nil
	}
	return status.Errorf(codes.PermissionDenied, "%s needs the admin role (%s is a %s)", what, displayName(p), p.Role)
}

func displayName(p clientauth.Principal) string { return cmp.Or(p.Name, "an unnamed caller") }

// permitStatement refuses a statement p's role may not run, naming the
// statement's kind, the role and the position.
func permitStatement(p clientauth.Principal, st ast.Statement) error {
	if p.IsAdmin() || viewerStatement(st) {
		return nil
	}
	pe := &planner.Error{Pos: st.Position(), Msg: fmt.Sprintf("%s needs the admin role (%s is a %s)", statementKind(st), displayName(p), p.Role)}
	return status.Error(codes.PermissionDenied, pe.Error())
}

// viewerStatement reports whether a viewer may run st: it reads, or
// changes only its own session.
func viewerStatement(st ast.Statement) bool {
	switch st := st.(type) {
	case *ast.QueryStmt, *ast.ShowStmt, *ast.DescribeStmt, *ast.ExplainStmt, *ast.SetStmt, *ast.ResetStmt, *ast.UseStmt:
		return true
	case *ast.CreateViewStmt:
		// NB: a temporary view lives in the session alone, like a SET.
		return st.Temporary
	case *ast.DropViewStmt:
		return st.Temporary
	case *ast.ExecuteStmt:
		return viewerStatement(st.Stmt)
	}
	return false
}

// statementKind names st's kind for a refusal.
func statementKind(st ast.Statement) string {
	switch st := st.(type) {
	case *ast.CreateTableStmt:
		return "CREATE TABLE"
	case *ast.DropTableStmt:
		return "DROP TABLE"
	case *ast.AlterTableStmt:
		return "ALTER TABLE"
	case *ast.CreateViewStmt:
		return "CREATE VIEW"
	case *ast.DropViewStmt:
		return "DROP VIEW"
	case *ast.CreateDatabaseStmt:
		return "CREATE DATABASE"
	case *ast.DropDatabaseStmt:
		return "DROP DATABASE"
	case *ast.InsertStmt:
		return "INSERT"
	case *ast.StopJobStmt:
		return "STOP JOB"
	case *ast.BeginStatementSetStmt, *ast.StatementSetStmt, *ast.EndStmt:
		return "a statement set"
	case *ast.ExecuteStmt:
		return statementKind(st.Stmt)
	}
	return fmt.Sprintf("statement %T", st)
}
