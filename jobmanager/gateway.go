package jobmanager

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
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
	jm     *JobManager
	log    *zap.Logger
	limits Limits
	// reaper starts the idle-session check with the first session.
	reaper sync.Once
	mu     struct {
		sync.Mutex
		sessions map[string]*session
		// clients counts the open sessions of each client (sessionClient).
		clients map[string]int
		// expired remembers, until it is pruned, when each session closed
		// for idleness was closed, so that its client is told why.
		expired map[string]time.Time
	}
}

var _ Gateway = (*SQLGateway)(nil)

// NewSQLGateway returns the gateway for jm. Install it with jm.SetGateway.
func NewSQLGateway(jm *JobManager) *SQLGateway {
	g := &SQLGateway{jm: jm, log: jm.log.Named("gateway"), limits: jm.cfg.Limits}
	g.mu.sessions = map[string]*session{}
	g.mu.clients = map[string]int{}
	g.mu.expired = map[string]time.Time{}
	return g
}

// session is one client's SQL session. Statements of a session run one at
// a time.
type session struct {
	id string
	// owner names the principal that opened the session; only it may use
	// or close the session.
	owner string
	// client is whom the session counts against for
	// Limits.SessionsPerClient (sessionClient).
	client string
	// lastUsed is when a statement last ran, and running counts the
	// Execute calls under way (both guarded by the gateway's mu): a session
	// with one running is not idle.
	lastUsed time.Time
	running  int
	exec     sync.Mutex
	// The fields below are guarded by exec.
	config   map[string]string
	database string
	temp     *catalog.MemStore
	store    catalog.Store
	// set is the statement set open since BEGIN STATEMENT SET; nil when
	// none is.
	set *statementSet
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
	if len(req.Properties) > g.limits.SessionMaxOptions {
		return nil, g.optionsExhausted(len(req.Properties))
	}
	for k, v := range req.Properties {
		if err := checkSetting(&ast.Option{Key: k, Value: v}); err != nil {
			return nil, status.Error(codes.InvalidArgument, strings.TrimPrefix(err.Error(), "sql: "))
		}
		s.config[k] = v
	}
	if err := g.checkSessionSize(s.config); err != nil {
		return nil, err
	}
	s.client = sessionClient(ctx)
	g.reaper.Do(g.startReaper)
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := len(g.mu.sessions); n >= g.limits.SessionMaxNum {
		return nil, status.Errorf(codes.ResourceExhausted,
			"the cluster has %d open sessions, its limit (sql-gateway.session.max-num = %d): close sessions you no longer use, or wait for idle ones to expire (sql-gateway.session.idle-timeout = %s)",
			n, g.limits.SessionMaxNum, g.limits.SessionIdleTimeout)
	}
	if n := g.mu.clients[s.client]; n >= g.limits.SessionsPerClient {
		return nil, status.Errorf(codes.ResourceExhausted,
			"client %s has %d open sessions, the limit per client (--sessions-per-client = %d): close sessions you no longer use, or wait for idle ones to expire (sql-gateway.session.idle-timeout = %s)",
			s.client, n, g.limits.SessionsPerClient, g.limits.SessionIdleTimeout)
	}
	s.lastUsed = time.Now()
	g.mu.sessions[s.id] = s
	g.mu.clients[s.client]++
	return &braidv1.OpenSessionResponse{SessionId: s.id}, nil
}

func (g *SQLGateway) CloseSession(ctx context.Context, req *braidv1.CloseSessionRequest) (*braidv1.CloseSessionResponse, error) {
	g.mu.Lock()
	if s := g.mu.sessions[req.SessionId]; s != nil && s.owner == owner(ctx) {
		g.dropLocked(s)
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
	if n := len(req.Script); n > parser.MaxScriptBytes {
		return status.Errorf(codes.InvalidArgument, "the script is %d bytes, over the limit of %d bytes (1 MiB) per Execute; split it into several", n, parser.MaxScriptBytes)
	}
	who := caller(stream.Context())
	g.mu.Lock()
	s := g.mu.sessions[req.SessionId]
	if s != nil && s.owner != who.Name {
		s = nil // NB: another principal's session is as unknown as a missing one
	}
	expiredAt, expired := g.mu.expired[req.SessionId]
	if s != nil {
		s.lastUsed = time.Now()
		s.running++
	}
	g.mu.Unlock()
	if s == nil {
		if expired {
			return status.Errorf(codes.NotFound, "session %s expired: it ran no statement for longer than sql-gateway.session.idle-timeout (%s) and was closed at %s; open a new session",
				req.SessionId, g.limits.SessionIdleTimeout, expiredAt.UTC().Format(time.RFC3339))
		}
		return status.Errorf(codes.NotFound, "session %s not found (it may have been closed, expired after sql-gateway.session.idle-timeout (%s) without statements, or the job manager restarted)",
			req.SessionId, g.limits.SessionIdleTimeout)
	}
	defer func() {
		g.mu.Lock()
		s.lastUsed = time.Now()
		s.running--
		g.mu.Unlock()
	}()
	stmts, err := parser.ParseScript(req.Script)
	if err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	s.exec.Lock()
	defer s.exec.Unlock()
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
	if x.s.set != nil {
		return x.inSet(ctx, st)
	}
	switch st := st.(type) {
	case *ast.CreateTableStmt:
		return x.createTable(ctx, st)
	case *ast.DropTableStmt:
		return x.dropTable(ctx, st)
	case *ast.AlterTableStmt:
		return x.alterTable(ctx, st)
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
	case *ast.BeginStatementSetStmt:
		return x.beginSet()
	case *ast.EndStmt:
		return userErr(st.Pos, msgEndNoSet)
	case *ast.StatementSetStmt:
		return x.executeSet(ctx, st)
	case *ast.CreateViewStmt:
		return x.createView(ctx, st)
	case *ast.DropViewStmt:
		return x.dropView(ctx, st)
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
	if st.AsQuery != nil {
		return x.createTableAs(ctx, st, db)
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
		if err := x.checkTemporaryRoom(st.Name.Pos); err != nil {
			return err
		}
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
	if err == nil && t.IsView() {
		if st.IfExists {
			return x.out.status(okMessage, "")
		}
		return userErr(st.Name.Pos, "Table with identifier '%s.%s.%s' does not exist. %s is a view: drop it with DROP VIEW.", catalog.DefaultCatalog, db, name, name)
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
		// NB: like Flink, SHOW TABLES lists views too, and a temporary
		// object hiding a permanent one of its name once.
		return x.table([]string{"table name"}, column(slices.Compact(names)))
	case "VIEWS":
		names, err := x.listViews(ctx)
		if err != nil {
			return err
		}
		sort.Strings(names)
		return x.table([]string{"view name"}, column(slices.Compact(names)))
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
		if t.IsView() {
			return userErr(st.Name.Pos, "SHOW CREATE TABLE is only supported for tables, but %s is a view. Please use SHOW CREATE VIEW instead.", quotedName(t.Database, t.Name))
		}
		return x.table([]string{"result"}, column([]string{planner.DescribeTable(t)}))
	case "CREATE VIEW":
		t, err := x.s.Table(ctx, st.Name.Strings())
		if err != nil {
			db, name, _ := x.s.qualify(st.Name.Strings())
			return userErr(st.Name.Pos, "Could not execute SHOW CREATE VIEW. View with identifier %s.%s.%s does not exist.", catalog.DefaultCatalog, db, name)
		}
		if !t.IsView() {
			return userErr(st.Name.Pos, "SHOW CREATE VIEW is only supported for views, but %s is a table. Please use SHOW CREATE TABLE instead.", quotedName(t.Database, t.Name))
		}
		return x.table([]string{"result"}, column([]string{planner.DescribeView(t)}))
	case "JOBS":
		jobs, err := x.g.jm.store.ListJobs(ctx)
		if err != nil {
			return err
		}
		var rows [][]string
		sums := make([]*braidv1.JobSummary, 0, len(jobs))
		for _, r := range jobs {
			if sees(x.who, r.Owner) {
				sums = append(sums, x.g.jm.summary(r)) // NB: the live status of a job running here
			}
		}
		for _, j := range append(sums, x.g.jm.waits.summaries(x.who)...) {
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
		name := typ.String()
		// NB: Flink marks the time attributes in the type column.
		switch {
		case wm != "":
			name += " *ROWTIME*"
		case c.Proctime():
			name += " *PROCTIME*"
		}
		rows = append(rows, []string{c.Name, name, null, key, extras, wm})
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
	next := make(map[string]string, len(x.s.config)+1)
	for k, v := range x.s.config {
		next[k] = v
	}
	next[st.Option.Key] = st.Option.Value
	if err := x.g.checkSessionSize(next); err != nil {
		return err
	}
	x.s.config = next
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
	plan, err := x.plan(ctx, func(ctx context.Context) (*planner.Plan, error) { return p.PlanInsert(ctx, st, x.text(st)) })
	if err != nil {
		return err
	}
	return x.submitInsert(ctx, plan)
}

// submitInsert submits the job of an INSERT or a statement set: a bounded
// one is waited for until it finishes, an unbounded one runs on.
func (x *execution) submitInsert(ctx context.Context, plan *planner.Plan) error {
	job, err := x.g.jm.submitJob(ctx, plan.Graph, nil, x.slotTimeout())
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
	plan, err := x.plan(ctx, func(ctx context.Context) (*planner.Plan, error) { return p.PlanQuery(ctx, st.Query, x.text(st)) })
	if err != nil {
		return err
	}
	g := plan.Graph
	g.Name = "collect"
	// The schema goes out before the job starts, so the relay below never
	// waits: SubmitJob may deliver rows, or the end of a job that failed to
	// deploy, before it returns.
	g.JobID = NewJobID()
	// NB: a batch-mode query's result is insert-only and final: the client
	// prints it as Flink's batch mode does, without the op column.
	schema := &braidv1.ResultSchema{Changelog: !g.Session.Batch, JobId: g.JobID, TimeZone: g.Session.TimeZone}
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
	job, err := x.g.jm.submitJob(ctx, g, relay, x.slotTimeout())
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
		plan, err = x.plan(ctx, func(ctx context.Context) (*planner.Plan, error) { return p.PlanQuery(ctx, inner.Query, x.text(inner)) })
	case *ast.InsertStmt:
		plan, err = x.plan(ctx, func(ctx context.Context) (*planner.Plan, error) { return p.PlanInsert(ctx, inner, x.text(inner)) })
	case *ast.StatementSetStmt:
		set := &statementSet{}
		for _, ins := range inner.Inserts {
			set.addInsert(ins, x.text(ins))
		}
		plan, _, err = x.planSet(ctx, set)
	case *ast.CreateTableStmt:
		if inner.AsQuery == nil {
			return userErr(st.Pos, "EXPLAIN supports SELECT, INSERT, statement sets and CREATE TABLE ... AS SELECT")
		}
		db, _, qerr := x.s.qualify(inner.Name.Strings())
		if qerr != nil {
			return userErr(inner.Name.Pos, "%v", qerr)
		}
		plan, err = x.plan(ctx, func(ctx context.Context) (*planner.Plan, error) {
			_, plan, err := p.PlanCreateTableAs(ctx, inner, db, time.Now().UnixMilli(), x.text(inner))
			return plan, err
		})
	default:
		return userErr(st.Pos, "EXPLAIN supports SELECT, INSERT, statement sets and CREATE TABLE ... AS SELECT")
	}
	if err != nil {
		return err
	}
	// NB: CHANGELOG_MODE is the one detail EXPLAIN honours; the others
	// (ESTIMATED_COST, JSON_EXECUTION_PLAN, PLAN_ADVICE) are accepted and
	// change nothing.
	return x.table([]string{"result"}, column([]string{planner.Explain(plan, slices.Contains(st.Details, "CHANGELOG_MODE"))}))
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
