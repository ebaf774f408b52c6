package jobmanager

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/connectors"
	"github.com/braidflow/braid/internal/clientauth"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/planner"
	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/scheduler"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/sql/parser"
	"github.com/braidflow/braid/types"
)

// SQLGateway runs SQL sessions on a job manager: it parses scripts, keeps
// each session's current database, settings and temporary tables, executes
// DDL against the catalog, and plans INSERT and SELECT statements into jobs.
type SQLGateway struct {
	jm  *JobManager
	log *zap.Logger
	mu  struct {
		sync.Mutex
		sessions map[string]*session
	}
}

var _ Gateway = (*SQLGateway)(nil)

// NewSQLGateway returns the gateway for jm. Install it with jm.SetGateway.
func NewSQLGateway(jm *JobManager) *SQLGateway {
	g := &SQLGateway{jm: jm, log: jm.log.Named("gateway")}
	g.mu.sessions = map[string]*session{}
	return g
}

// session is one client's SQL session. Statements of a session run one at
// a time.
type session struct {
	id string
	// owner names the principal that opened the session; only it may use
	// or close the session.
	owner string
	// lastUsed is when a statement last ran (guarded by the gateway's mu).
	lastUsed time.Time
	exec     sync.Mutex
	// The fields below are guarded by exec.
	config   map[string]string
	database string
	temp     *catalog.MemStore
	store    catalog.Store
}

// Table resolves a table name for the planner: temporary tables first, then
// the persistent catalog.
func (s *session) Table(ctx context.Context, name []string) (*catalog.Table, error) {
	db, tbl, err := s.qualify(name)
	if err != nil {
		return nil, err
	}
	if t, err := s.temp.GetTable(ctx, db, tbl); err == nil {
		return t, nil
	}
	return s.store.GetTable(ctx, db, tbl)
}

// qualify splits a 1-3 part name into database and object.
func (s *session) qualify(name []string) (db, obj string, err error) {
	switch len(name) {
	case 1:
		return s.database, name[0], nil
	case 2:
		return name[0], name[1], nil
	case 3:
		if name[0] != catalog.DefaultCatalog {
			return "", "", fmt.Errorf("catalog %s does not exist (only %s)", name[0], catalog.DefaultCatalog)
		}
		return name[1], name[2], nil
	}
	return "", "", fmt.Errorf("bad name %s", strings.Join(name, "."))
}

// sessionIdleTimeout is how long a session may go without a statement
// before a new session's opening removes it.
const sessionIdleTimeout = 24 * time.Hour

func newID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (g *SQLGateway) OpenSession(ctx context.Context, req *braidv1.OpenSessionRequest) (*braidv1.OpenSessionResponse, error) {
	s := &session{
		id:       newID(),
		owner:    owner(ctx),
		config:   map[string]string{"table.local-time-zone": "UTC"},
		database: catalog.DefaultDatabase,
		temp:     catalog.NewMemStore(),
		store:    g.jm.Catalog(),
	}
	for k, v := range req.Properties {
		if err := checkSetting(&ast.Option{Key: k, Value: v}); err != nil {
			return nil, status.Error(codes.InvalidArgument, strings.TrimPrefix(err.Error(), "sql: "))
		}
		s.config[k] = v
	}
	g.mu.Lock()
	now := time.Now()
	s.lastUsed = now
	for id, old := range g.mu.sessions {
		// NB: clients that vanish without closing their sessions would
		// otherwise leak them; an idle session keeps only small state.
		if now.Sub(old.lastUsed) > sessionIdleTimeout {
			delete(g.mu.sessions, id)
		}
	}
	g.mu.sessions[s.id] = s
	g.mu.Unlock()
	return &braidv1.OpenSessionResponse{SessionId: s.id}, nil
}

func (g *SQLGateway) CloseSession(ctx context.Context, req *braidv1.CloseSessionRequest) (*braidv1.CloseSessionResponse, error) {
	g.mu.Lock()
	if s := g.mu.sessions[req.SessionId]; s != nil && s.owner == owner(ctx) {
		delete(g.mu.sessions, req.SessionId)
	}
	g.mu.Unlock()
	return &braidv1.CloseSessionResponse{}, nil
}

func (g *SQLGateway) resolverFor() *connectors.Resolver {
	return &connectors.Resolver{Brokers: g.jm.Brokers(), Allow: g.jm.cfg.Allow}
}

// Execute runs a script's statements in order, streaming each one's outcome.
// It stops at the first failing statement, whose error is the RPC's error.
func (g *SQLGateway) Execute(req *braidv1.ExecuteRequest, stream grpc.ServerStreamingServer[braidv1.ExecuteResponse]) error {
	who := caller(stream.Context())
	g.mu.Lock()
	s := g.mu.sessions[req.SessionId]
	if s != nil && s.owner != who.Name {
		s = nil // NB: another principal's session is as unknown as a missing one
	}
	if s != nil {
		s.lastUsed = time.Now()
	}
	g.mu.Unlock()
	if s == nil {
		return status.Errorf(codes.NotFound, "session %s not found (it may have been closed, or the job manager restarted)", req.SessionId)
	}
	stmts, err := parser.ParseScript(req.Script)
	if err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	s.exec.Lock()
	defer s.exec.Unlock()
	defer func() {
		g.mu.Lock()
		s.lastUsed = time.Now()
		g.mu.Unlock()
	}()
	out := &responder{stream: stream}
	for i, st := range stmts {
		out.stmt = int32(i)
		x := &execution{g: g, s: s, who: who, out: out, follow: req.Follow, script: req.Script}
		if err := x.run(stream.Context(), st); err != nil {
			var pe *planner.Error
			var perr *parser.Error
			switch {
			case errors.As(err, &pe), errors.As(err, &perr):
				return status.Error(codes.InvalidArgument, err.Error())
			case status.Code(err) != codes.Unknown:
				return err
			}
			return status.Error(codes.FailedPrecondition, err.Error())
		}
	}
	return nil
}

// responder sends a statement's responses; Send may be called from the
// result-relaying goroutine, so it is serialized.
type responder struct {
	mu     sync.Mutex
	stream grpc.ServerStreamingServer[braidv1.ExecuteResponse]
	stmt   int32
}

func (r *responder) send(resp *braidv1.ExecuteResponse) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	resp.Statement = r.stmt
	return r.stream.Send(resp)
}

func (r *responder) status(msg, jobID string) error {
	return r.send(&braidv1.ExecuteResponse{Payload: &braidv1.ExecuteResponse_Status{
		Status: &braidv1.StatementStatus{Message: msg, JobId: jobID}}})
}

const okMessage = "Execute statement succeeded."

// execution runs one statement of a session.
type execution struct {
	g      *SQLGateway
	s      *session
	who    clientauth.Principal
	out    *responder
	follow bool
	script string
}

func (x *execution) run(ctx context.Context, st ast.Statement) error {
	if err := permitStatement(x.who, st); err != nil {
		return err
	}
	switch st := st.(type) {
	case *ast.CreateTableStmt:
		return x.createTable(ctx, st)
	case *ast.DropTableStmt:
		return x.dropTable(ctx, st)
	case *ast.CreateDatabaseStmt:
		return x.createDatabase(ctx, st)
	case *ast.DropDatabaseStmt:
		return x.dropDatabase(ctx, st)
	case *ast.UseStmt:
		return x.use(ctx, st)
	case *ast.ShowStmt:
		return x.show(ctx, st)
	case *ast.DescribeStmt:
		return x.describe(ctx, st)
	case *ast.SetStmt:
		return x.set(st)
	case *ast.ResetStmt:
		return x.reset(st)
	case *ast.InsertStmt:
		return x.insert(ctx, st)
	case *ast.QueryStmt:
		return x.query(ctx, st)
	case *ast.ExecuteStmt:
		return x.run(ctx, st.Stmt)
	case *ast.ExplainStmt:
		return x.explain(ctx, st)
	case *ast.StopJobStmt:
		return x.stopJob(ctx, st)
	case *ast.BeginStatementSetStmt, *ast.StatementSetStmt, *ast.EndStmt:
		return &planner.Error{Pos: st.Position(), Msg: "statement sets are not supported yet"}
	case *ast.CreateViewStmt, *ast.DropViewStmt:
		return &planner.Error{Pos: st.Position(), Msg: "views are not supported yet"}
	}
	return &planner.Error{Pos: st.Position(), Msg: fmt.Sprintf("statement %T is not supported yet", st)}
}

func userErr(pos ast.Pos, format string, args ...any) error {
	return &planner.Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

func (x *execution) createTable(ctx context.Context, st *ast.CreateTableStmt) error {
	db, _, err := x.s.qualify(st.Name.Strings())
	if err != nil {
		return userErr(st.Name.Pos, "%v", err)
	}
	if ok, err := x.s.store.DatabaseExists(ctx, db); err != nil {
		return err
	} else if !ok {
		return userErr(st.Name.Pos, "database %s does not exist", db)
	}
	t, err := planner.BuildTable(st, db, time.Now().UnixMilli())
	if err != nil {
		return err
	}
	res := x.g.resolverFor()
	if err := res.ValidateTable(t); err != nil {
		return userErr(st.Name.Pos, "%v", err)
	}
	store := x.s.store
	if t.Temporary {
		store = x.s.temp
	}
	if err := store.CreateTable(ctx, t); err != nil {
		if errors.Is(err, catalog.ErrExists) {
			if st.IfNotExists {
				return x.out.status(okMessage, "")
			}
			return userErr(st.Name.Pos, "table %s.%s already exists", db, t.Name)
		}
		return err
	}
	if err := res.CreateTable(ctx, t); err != nil {
		store.DropTable(context.WithoutCancel(ctx), db, t.Name)
		return fmt.Errorf("creating storage of table %s.%s: %w", db, t.Name, err)
	}
	return x.out.status(okMessage, "")
}

func (x *execution) dropTable(ctx context.Context, st *ast.DropTableStmt) error {
	db, name, err := x.s.qualify(st.Name.Strings())
	if err != nil {
		return userErr(st.Name.Pos, "%v", err)
	}
	store := catalog.Store(x.s.temp)
	t, err := x.s.temp.GetTable(ctx, db, name)
	if err != nil && !st.Temporary {
		store = x.s.store
		t, err = x.s.store.GetTable(ctx, db, name)
	}
	if err != nil {
		if errors.Is(err, catalog.ErrNotFound) {
			if st.IfExists {
				return x.out.status(okMessage, "")
			}
			return userErr(st.Name.Pos, "table %s.%s does not exist", db, name)
		}
		return err
	}
	if err := store.DropTable(ctx, db, name); err != nil {
		return err
	}
	if err := x.g.resolverFor().DropTable(ctx, t); err != nil {
		x.g.log.Warn("dropping table storage", zap.String("table", db+"."+name), zap.Error(err))
	}
	return x.out.status(okMessage, "")
}

func (x *execution) createDatabase(ctx context.Context, st *ast.CreateDatabaseStmt) error {
	name := st.Name.Object()
	if err := x.s.store.CreateDatabase(ctx, name); err != nil {
		if errors.Is(err, catalog.ErrExists) {
			if st.IfNotExists {
				return x.out.status(okMessage, "")
			}
			return userErr(st.Name.Pos, "database %s already exists", name)
		}
		return err
	}
	return x.out.status(okMessage, "")
}

func (x *execution) dropDatabase(ctx context.Context, st *ast.DropDatabaseStmt) error {
	name := st.Name.Object()
	if name == x.s.database {
		return userErr(st.Name.Pos, "cannot drop the current database %s", name)
	}
	if st.Behavior == "CASCADE" {
		tables, err := x.s.store.ListTables(ctx, name)
		if err != nil {
			return err
		}
		for _, tn := range tables {
			if t, err := x.s.store.GetTable(ctx, name, tn); err == nil {
				x.s.store.DropTable(ctx, name, tn)
				x.g.resolverFor().DropTable(ctx, t)
			}
		}
	}
	if err := x.s.store.DropDatabase(ctx, name); err != nil {
		if errors.Is(err, catalog.ErrNotFound) {
			if st.IfExists {
				return x.out.status(okMessage, "")
			}
			return userErr(st.Name.Pos, "database %s does not exist", name)
		}
		return userErr(st.Name.Pos, "%v", err)
	}
	return x.out.status(okMessage, "")
}

func (x *execution) use(ctx context.Context, st *ast.UseStmt) error {
	if st.Catalog {
		if st.Name.Object() != catalog.DefaultCatalog {
			return userErr(st.Name.Pos, "catalog %s does not exist (only %s)", st.Name.Object(), catalog.DefaultCatalog)
		}
		return x.out.status(okMessage, "")
	}
	parts := st.Name.Strings()
	if len(parts) == 2 && parts[0] != catalog.DefaultCatalog {
		return userErr(st.Name.Pos, "catalog %s does not exist (only %s)", parts[0], catalog.DefaultCatalog)
	}
	name := st.Name.Object()
	ok, err := x.s.store.DatabaseExists(ctx, name)
	if err != nil {
		return err
	}
	if !ok {
		return userErr(st.Name.Pos, "database %s does not exist", name)
	}
	x.s.database = name
	return x.out.status(okMessage, "")
}

func (x *execution) show(ctx context.Context, st *ast.ShowStmt) error {
	switch st.What {
	case "DATABASES":
		dbs, err := x.s.store.ListDatabases(ctx)
		if err != nil {
			return err
		}
		return x.table([]string{"database name"}, column(dbs))
	case "TABLES":
		names, err := x.s.store.ListTables(ctx, x.s.database)
		if err != nil {
			return err
		}
		tmp, _ := x.s.temp.ListTables(ctx, x.s.database)
		names = append(names, tmp...)
		sort.Strings(names)
		return x.table([]string{"table name"}, column(names))
	case "CATALOGS":
		return x.table([]string{"catalog name"}, column([]string{catalog.DefaultCatalog}))
	case "CURRENT DATABASE":
		return x.table([]string{"current database name"}, column([]string{x.s.database}))
	case "CURRENT CATALOG":
		return x.table([]string{"current catalog name"}, column([]string{catalog.DefaultCatalog}))
	case "CREATE TABLE":
		t, err := x.s.Table(ctx, st.Name.Strings())
		if err != nil {
			return userErr(st.Name.Pos, "table %s does not exist", st.Name.String())
		}
		return x.table([]string{"result"}, column([]string{planner.DescribeTable(t)}))
	case "JOBS":
		jobs, err := x.g.jm.store.ListJobs(ctx)
		if err != nil {
			return err
		}
		var rows [][]string
		for _, r := range jobs {
			if !sees(x.who, r.Owner) {
				continue
			}
			j := x.g.jm.summary(r) // NB: the live status of a job running here
			rows = append(rows, []string{j.JobId, j.Name, j.Status, time.UnixMilli(j.StartTimeUnixMs).UTC().Format("2006-01-02T15:04:05.000")})
		}
		return x.table([]string{"job id", "job name", "status", "start time"}, rows)
	}
	return userErr(st.Pos, "SHOW %s is not supported yet", st.What)
}

// stopJob is STOP JOB 'id' [WITH SAVEPOINT]: with a savepoint it returns
// the savepoint's path as a one-column table, as Flink's SQL client does.
func (x *execution) stopJob(ctx context.Context, st *ast.StopJobStmt) error {
	if st.WithDrain {
		return userErr(st.Pos, "STOP JOB ... WITH DRAIN is not supported yet")
	}
	_, path, err := x.g.jm.StopJob(ctx, st.JobID, st.WithSavepoint, "")
	if err != nil {
		return err
	}
	if !st.WithSavepoint {
		return x.out.status("Execute statement succeed.", "")
	}
	return x.table([]string{"savepoint path"}, [][]string{{path}})
}

func (x *execution) describe(ctx context.Context, st *ast.DescribeStmt) error {
	t, err := x.s.Table(ctx, st.Name.Strings())
	if err != nil {
		return userErr(st.Name.Pos, "table %s does not exist", st.Name.String())
	}
	pk := map[string]bool{}
	for _, k := range t.PrimaryKey {
		pk[k] = true
	}
	var rows [][]string
	for _, c := range t.Columns {
		key, extras, wm := "", "", ""
		if pk[c.Name] {
			key = "PRI(" + strings.Join(t.PrimaryKey, ", ") + ")"
		}
		if c.Computed() {
			extras = "AS " + c.Expr
		}
		if t.Watermark != nil && t.Watermark.Column == c.Name {
			wm = t.Watermark.Expr
		}
		null := "TRUE"
		if c.Type.NotNull {
			null = "FALSE"
		}
		typ := c.Type
		typ.NotNull = false
		rows = append(rows, []string{c.Name, typ.String(), null, key, extras, wm})
	}
	return x.table([]string{"name", "type", "null", "key", "extras", "watermark"}, rows)
}

func (x *execution) set(st *ast.SetStmt) error {
	if st.Option == nil {
		keys := make([]string, 0, len(x.s.config))
		for k := range x.s.config {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var rows [][]string
		for _, k := range keys {
			rows = append(rows, []string{k, x.s.config[k]})
		}
		return x.table([]string{"key", "value"}, rows)
	}
	if err := checkSetting(st.Option); err != nil {
		return err
	}
	x.s.config[st.Option.Key] = st.Option.Value
	return x.out.status(okMessage, "")
}

// checkSetting refuses a key Braid does not read, naming the closest known
// ones, and a value that does not parse as its option's type.
func checkSetting(o *ast.Option) error {
	if err := jobgraph.CheckOption(o.Key, o.Value); err != nil {
		return userErr(o.Pos, "%v", err)
	}
	return nil
}

func (x *execution) reset(st *ast.ResetStmt) error {
	if st.Key == "" {
		x.s.config = map[string]string{"table.local-time-zone": "UTC"}
	} else if st.Key == "table.local-time-zone" {
		x.s.config[st.Key] = "UTC"
	} else {
		delete(x.s.config, st.Key)
	}
	return x.out.status(okMessage, "")
}

// planner returns a planner over the session's catalog and settings.
func (x *execution) planner() (*planner.Planner, error) {
	// NB: the planner resolves the settings; the cluster gives the
	// parallelism of a session that sets none.
	opts := planner.Options{Config: map[string]string{}, Follow: x.follow, Checkpoint: x.g.jm.cfg.Checkpoint,
		Parallelism: scheduler.DefaultParallelism(x.g.jm.SlotsSnapshot())}
	for k, v := range x.s.config {
		opts.Config[k] = v
	}
	return &planner.Planner{Catalog: x.s, Connectors: x.g.resolverFor(), Options: opts}, nil
}

func (x *execution) text(st ast.Statement) string {
	return st.Source().Text(x.script)
}

func (x *execution) insert(ctx context.Context, st *ast.InsertStmt) error {
	p, err := x.planner()
	if err != nil {
		return err
	}
	plan, err := p.PlanInsert(ctx, st, x.text(st))
	if err != nil {
		return err
	}
	job, err := x.g.jm.SubmitJob(ctx, plan.Graph, nil)
	if err != nil {
		return err
	}
	if !plan.Bounded {
		return x.out.status("Submitting SQL update statement to the cluster...\n[INFO] SQL update statement has been successfully submitted to the cluster:", job.ID())
	}
	if err := x.wait(ctx, job); err != nil {
		return err
	}
	return x.out.status("Complete execution of the SQL update statement.", job.ID())
}

// wait blocks until job ends; a cancelled client cancels the job.
func (x *execution) wait(ctx context.Context, job *Job) error {
	st, err := job.Wait(ctx)
	if ctx.Err() != nil {
		x.g.jm.CancelJob(context.WithoutCancel(ctx), job.ID())
		return status.Error(codes.Canceled, "statement cancelled; job "+job.ID()+" was cancelled")
	}
	if err != nil {
		return fmt.Errorf("job %s %s: %w", job.ID(), strings.ToLower(st), err)
	}
	if st != string(scheduler.JobFinished) {
		return fmt.Errorf("job %s ended %s", job.ID(), st)
	}
	return nil
}

func (x *execution) query(ctx context.Context, st *ast.QueryStmt) error {
	p, err := x.planner()
	if err != nil {
		return err
	}
	plan, err := p.PlanQuery(ctx, st.Query, x.text(st))
	if err != nil {
		return err
	}
	g := plan.Graph
	g.Name = "collect"
	// The schema goes out before the job starts, so the relay below never
	// waits: SubmitJob may deliver rows, or the end of a job that failed to
	// deploy, before it returns.
	g.JobID = NewJobID()
	schema := &braidv1.ResultSchema{Changelog: true, JobId: g.JobID, TimeZone: g.Session.TimeZone}
	for _, f := range plan.Result {
		schema.Columns = append(schema.Columns, &braidv1.ResultColumn{Name: f.Name, Type: f.Type.String()})
	}
	for _, k := range plan.Order {
		schema.Order = append(schema.Order, &braidv1.ResultSortKey{Column: int32(k.Col), Descending: k.Desc, NullsFirst: k.NullsFirst})
	}
	if err := x.out.send(&braidv1.ExecuteResponse{Payload: &braidv1.ExecuteResponse_Schema{Schema: schema}}); err != nil {
		return err
	}
	relay := func(b []byte, end bool) error {
		if len(b) == 0 {
			return nil
		}
		return x.out.send(&braidv1.ExecuteResponse{Payload: &braidv1.ExecuteResponse_Batch{Batch: &braidv1.ResultBatch{ArrowIpc: b}}})
	}
	job, err := x.g.jm.SubmitJob(ctx, g, relay)
	if err != nil {
		return err
	}
	if err := x.wait(ctx, job); err != nil {
		return err
	}
	return x.out.send(&braidv1.ExecuteResponse{Payload: &braidv1.ExecuteResponse_End{End: &braidv1.ResultEnd{JobStatus: job.Status()}}})
}

func (x *execution) explain(ctx context.Context, st *ast.ExplainStmt) error {
	p, err := x.planner()
	if err != nil {
		return err
	}
	var plan *planner.Plan
	switch inner := st.Stmt.(type) {
	case *ast.QueryStmt:
		plan, err = p.PlanQuery(ctx, inner.Query, x.text(inner))
	case *ast.InsertStmt:
		plan, err = p.PlanInsert(ctx, inner, x.text(inner))
	default:
		return userErr(st.Pos, "EXPLAIN supports SELECT and INSERT statements")
	}
	if err != nil {
		return err
	}
	return x.table([]string{"result"}, column([]string{planner.ExplainGraph(plan.Graph)}))
}

func column(vals []string) [][]string {
	rows := make([][]string, len(vals))
	for i, v := range vals {
		rows[i] = []string{v}
	}
	return rows
}

// table sends a small result of STRING columns, as SHOW and DESCRIBE produce.
func (x *execution) table(names []string, rows [][]string) error {
	schema := make(types.Schema, len(names))
	rs := &braidv1.ResultSchema{TimeZone: x.s.config["table.local-time-zone"]}
	for i, n := range names {
		schema[i] = types.Field{Name: n, Type: types.String}
		rs.Columns = append(rs.Columns, &braidv1.ResultColumn{Name: n, Type: types.String.String()})
	}
	if err := x.out.send(&braidv1.ExecuteResponse{Payload: &braidv1.ExecuteResponse_Schema{Schema: rs}}); err != nil {
		return err
	}
	ipcBytes, err := encodeRows(schema, rows)
	if err != nil {
		return err
	}
	if err := x.out.send(&braidv1.ExecuteResponse{Payload: &braidv1.ExecuteResponse_Batch{Batch: &braidv1.ResultBatch{ArrowIpc: ipcBytes}}}); err != nil {
		return err
	}
	return x.out.send(&braidv1.ExecuteResponse{Payload: &braidv1.ExecuteResponse_End{End: &braidv1.ResultEnd{JobStatus: string(scheduler.JobFinished)}}})
}

// encodeRows writes string rows as one Arrow IPC stream.
func encodeRows(schema types.Schema, rows [][]string) ([]byte, error) {
	as := schema.ArrowSchema()
	cols := make([]arrow.Array, len(schema))
	for c := range schema {
		b := array.NewStringBuilder(memory.DefaultAllocator)
		for _, r := range rows {
			b.Append(r[c])
		}
		cols[c] = b.NewArray()
		defer cols[c].Release()
	}
	batch := types.NewInsertBatch(as, cols, len(rows))
	defer batch.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(as))
	if err := w.Write(batch.Rec); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
