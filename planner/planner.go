package planner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/types"
)

// Catalog resolves table names for the planner: a session's view of its
// temporary tables and the persistent catalog, relative to its current
// database.
type Catalog interface {
	// Table returns the table a name of 1 to 3 parts refers to, or an error
	// wrapping catalog.ErrNotFound.
	Table(ctx context.Context, name []string) (*catalog.Table, error)
}

// Connectors turns catalog tables into the specs of source and sink
// operators.
type Connectors interface {
	// SourceSpec returns the spec of the source reading t. bounded asks for
	// a scan of what exists now; maxParallelism caps the source (0: no cap).
	SourceSpec(t *catalog.Table, bounded bool) (_ jobgraph.Spec, maxParallelism int, _ error)
	// SinkSpec returns the spec of the sink writing t.
	SinkSpec(t *catalog.Table) (jobgraph.Spec, error)
}

// Options are the session settings planning depends on.
type Options struct {
	// Config is the session's configuration (SET statements). The planner
	// resolves what it holds into typed fields of the graph (see
	// resolveJobOptions); the strings do not travel with the job.
	Config map[string]string
	// Parallelism is the default parallelism of operators when Config sets
	// none (parallelism.default, table.exec.resource.default-parallelism);
	// 1 when 0. Config's pipeline.max-parallelism caps it.
	Parallelism int
	// Follow keeps sources over existing data running for new data; without
	// it every managed table is read up to its current end.
	Follow bool
	// Checkpoint is the cluster's checkpointing default, which the session's
	// execution.checkpointing.* options override; nil means Flink's defaults
	// (see jobgraph.ResolveCheckpointing).
	Checkpoint *jobgraph.CheckpointConfig
}

// Planner plans the statements of one session.
type Planner struct {
	Catalog    Catalog
	Connectors Connectors
	Options    Options
}

// Plan is a planned job.
type Plan struct {
	Graph *jobgraph.Graph
	// Result is the schema of a query's rows; nil for an INSERT.
	Result types.Schema
	// Bounded is true when every source ends by itself, so the job finishes.
	Bounded bool
	// Order is the ORDER BY of a query whose top-level operator is a global
	// Top-N (ORDER BY ... LIMIT), in which a client shows the final rows.
	// Empty for other queries, and when a sort key is not a result column.
	Order []ResultSortKey
	// tables and batch are what Explain needs beyond the graph: the
	// catalog tables of its sources and sinks, and the runtime mode.
	tables map[*jobgraph.Operator]explainTable
	batch  bool
}

// ResultSortKey is one ORDER BY key of a query's result, with its NULL
// placement resolved.
type ResultSortKey struct {
	// Col is the index of the key in Plan.Result.
	Col        int
	Desc       bool
	NullsFirst bool
}

// resultOrder returns the order of n's rows when n is a global Top-N whose
// sort keys are all output columns, else nil.
func resultOrder(n node) []ResultSortKey {
	rk, ok := n.(*rankNode)
	if !ok || rk.rowNumber || len(rk.partition) > 0 {
		return nil
	}
	out := make([]ResultSortKey, len(rk.order))
	for i, k := range rk.order {
		if k.Col >= rk.keep {
			// NB: a hidden sort key is dropped after the rank; the client
			// cannot order by it.
			return nil
		}
		nullsFirst := !k.Desc
		switch {
		case k.NullsFirst:
			nullsFirst = true
		case k.NullsLast:
			nullsFirst = false
		}
		out[i] = ResultSortKey{Col: k.Col, Desc: k.Desc, NullsFirst: nullsFirst}
	}
	return out
}

// binder starts binding one statement in the session's runtime mode.
func (p *Planner) binder(ctx context.Context) *binder {
	return &binder{ctx: ctx, catalog: p.Catalog, batch: p.batch()}
}

// batch reports whether the session runs in batch mode
// (execution.runtime-mode = batch). A bad value counts as streaming here;
// resolveJobOptions refuses it.
func (p *Planner) batch() bool {
	s, err := jobgraph.ResolveSession(p.Options.Config)
	return err == nil && s.Batch
}

// PlanQuery plans a SELECT whose rows stream back to the client.
func (p *Planner) PlanQuery(ctx context.Context, q *ast.Query, sql string) (*Plan, error) {
	b := p.binder(ctx)
	n, err := b.bindQuery(q)
	if err != nil {
		return nil, err
	}
	ph, err := p.physical(ctx, sql)
	if err != nil {
		return nil, err
	}
	s, err := ph.build(n)
	if err != nil {
		return nil, err
	}
	s = ph.finalResult(s)
	ph.b.chain(s, 1, op("Collect", &jobgraph.CollectSpec{Schema: s.schema}), s.schema)
	plan, err := p.finish(ph, s, n.schema())
	if err != nil {
		return nil, err
	}
	plan.Order = resultOrder(n)
	return plan, nil
}

// PlanInsert plans an INSERT INTO a table.
func (p *Planner) PlanInsert(ctx context.Context, ins *ast.InsertStmt, sql string) (*Plan, error) {
	return p.PlanInserts(ctx, []*ast.InsertStmt{ins}, sql)
}

// MaxStatementSetInserts caps the INSERTs of one statement set: each adds
// a sink (and its sources) to the one job.
const MaxStatementSetInserts = 64

// PlanInserts plans several INSERTs, a statement set, as one job (see
// PlanStatementSet).
func (p *Planner) PlanInserts(ctx context.Context, inserts []*ast.InsertStmt, sql string) (*Plan, error) {
	set := make([]SetStatement, len(inserts))
	for i, ins := range inserts {
		set[i].Insert = ins
	}
	plan, _, err := p.PlanStatementSet(ctx, set, sql)
	return plan, err
}

// SetStatement is one statement of a statement set: an INSERT, or a
// CREATE TABLE ... AS SELECT of a table in Database created at
// CreatedUnixMs.
type SetStatement struct {
	Insert        *ast.InsertStmt
	CreateAs      *ast.CreateTableStmt
	Database      string
	CreatedUnixMs int64
}

// PlanStatementSet plans a statement set as one job: one graph holding
// each statement's pipeline and sink. The job is bounded when every
// statement is, and named as Flink names it, "insert-into_" and the sinks'
// names joined by ',' (a sink written twice numbered _1, _2). It returns
// the tables the CREATE TABLE ... AS statements would create, in order;
// creating them is the caller's. sql is the job's SQL text.
func (p *Planner) PlanStatementSet(ctx context.Context, set []SetStatement, sql string) (*Plan, []*catalog.Table, error) {
	if len(set) == 0 {
		return nil, nil, errors.New("planner: no statement to plan")
	}
	if len(set) > MaxStatementSetInserts {
		return nil, nil, errorf(set[MaxStatementSetInserts].pos(), "a statement set holds at most %d INSERT statements; split it into several", MaxStatementSetInserts)
	}
	ph, err := p.physical(ctx, sql)
	if err != nil {
		return nil, nil, err
	}
	if len(set) > 1 {
		ph.reuse = &sourceReuse{}
	}
	all := &stream{bounded: true}
	var names []string
	var created []*catalog.Table
	for _, st := range set {
		var s *stream
		var target *catalog.Table
		if st.CreateAs != nil {
			s, target, err = p.planCreateTableAs(ctx, ph, st.CreateAs, st.Database, st.CreatedUnixMs)
			created = append(created, target)
		} else {
			s, target, err = p.planInsert(ctx, ph, st.Insert)
		}
		if err != nil {
			return nil, nil, err
		}
		ph.reuse.next()
		all.bounded = all.bounded && s.bounded
		names = append(names, qualified(target))
	}
	plan, err := p.finish(ph, all, nil)
	if err != nil {
		return nil, nil, err
	}
	plan.Graph.Name = "insert-into_" + strings.Join(numberDuplicates(names), ",")
	return plan, created, nil
}

func (s SetStatement) pos() ast.Pos {
	if s.CreateAs != nil {
		return s.CreateAs.Pos
	}
	return s.Insert.Pos
}

// numberDuplicates suffixes the names that occur more than once with _1,
// _2, ... in order, as Flink names the sinks of a job.
func numberDuplicates(names []string) []string {
	count := map[string]int{}
	for _, n := range names {
		count[n]++
	}
	seen := map[string]int{}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		if count[n] > 1 {
			seen[n]++
			out[i] = fmt.Sprintf("%s_%d", n, seen[n])
		}
	}
	return out
}

// sourceReuse lets the INSERTs of a statement set read one source vertex
// where they scan the same table with the same source spec and
// parallelism, as Flink reuses sources (table.optimizer.reuse-source-enabled).
// NB: scans within one INSERT (a self-join) are not shared: a stream of
// the first may still be under construction when the second is planned.
// A nil *sourceReuse shares nothing.
type sourceReuse struct {
	// done holds the source vertices of the INSERTs planned so far, and
	// current those of the one being planned, by reuseKey.
	done, current map[string]*jobgraph.Vertex
}

func reuseKey(t *catalog.Table, spec jobgraph.Spec, parallelism int) (string, bool) {
	b, err := json.Marshal(spec)
	if err != nil {
		return "", false
	}
	return fmt.Sprintf("%s\x00%d\x00%T\x00%s", qualified(t), parallelism, spec, b), true
}

// source returns a stream reading the source vertex of an earlier INSERT
// that scans t as spec at parallelism, or nil when there is none.
func (r *sourceReuse) source(b *graphBuilder, t *catalog.Table, spec jobgraph.Spec, parallelism int, schema types.Schema, bounded bool) *stream {
	if r == nil {
		return nil
	}
	key, ok := reuseKey(t, spec, parallelism)
	v := r.done[key]
	if !ok || v == nil {
		return nil
	}
	b.share(v)
	return &stream{vertex: v, schema: schema, bounded: bounded}
}

// add records v as the source vertex of a scan of t in the current INSERT.
func (r *sourceReuse) add(t *catalog.Table, spec jobgraph.Spec, parallelism int, v *jobgraph.Vertex) {
	if r == nil {
		return
	}
	key, ok := reuseKey(t, spec, parallelism)
	if !ok {
		return
	}
	if r.current == nil {
		r.current = map[string]*jobgraph.Vertex{}
	}
	if _, dup := r.current[key]; !dup {
		r.current[key] = v
	}
}

// next ends an INSERT: its sources may be shared by the INSERTs after it.
func (r *sourceReuse) next() {
	if r == nil {
		return
	}
	if r.done == nil {
		r.done = map[string]*jobgraph.Vertex{}
	}
	for k, v := range r.current {
		if _, ok := r.done[k]; !ok {
			r.done[k] = v
		}
	}
	r.current = nil
}

// planInsert adds ins's pipeline and sink to ph's graph and returns the
// sink's stream and table.
func (p *Planner) planInsert(ctx context.Context, ph *physical, ins *ast.InsertStmt) (*stream, *catalog.Table, error) {
	if ins.Overwrite {
		return nil, nil, unsupported(ins.Pos, "INSERT OVERWRITE")
	}
	if len(ins.Hints) > 0 {
		return nil, nil, unsupported(ins.Hints[0].Pos, "hints on INSERT")
	}
	target, err := p.Catalog.Table(ctx, ins.Table.Strings())
	if err != nil {
		if errors.Is(err, catalog.ErrNotFound) {
			return nil, nil, errorf(ins.Table.Pos, "unknown table \"%s\"", ins.Table.String())
		}
		return nil, nil, errorf(ins.Table.Pos, "looking up table %s: %v", ins.Table.String(), err)
	}
	if target.IsView() {
		return nil, nil, errorf(ins.Table.Pos, "view %s cannot be written: INSERT INTO takes a table", qualified(target))
	}
	b := p.binder(ctx)
	n, err := b.bindQuery(ins.Query)
	if err != nil {
		return nil, nil, err
	}
	n, err = fitToSink(n, target, ins)
	if err != nil {
		return nil, nil, err
	}
	s, err := p.sinkInto(ph, n, target, ins.Table.Pos)
	if err != nil {
		return nil, nil, err
	}
	return s, target, nil
}

// sinkInto builds n and chains target's sink onto it; pos is where the
// statement names the target.
func (p *Planner) sinkInto(ph *physical, n node, target *catalog.Table, pos ast.Pos) (*stream, error) {
	s, err := ph.build(n)
	if err != nil {
		return nil, err
	}
	s = ph.finalResult(s)
	sink, err := p.Connectors.SinkSpec(target)
	if err != nil {
		return nil, errorf(pos, "table %s: %v", qualified(target), err)
	}
	if s.changes != "" && (target.Managed() || target.Connector() == "kafka") && len(target.PrimaryKey) == 0 && !changelogSink(sink) {
		// NB: normalize emits deletes as well as updates, a join passes its
		// inputs' kinds through, and a group aggregate deletes only when
		// its input does.
		what := "update and delete"
		if s.updatesOnly {
			what = "update"
		}
		hint := ""
		if target.Managed() {
			hint = "; give the table a PRIMARY KEY to make it an upsert table"
		}
		return nil, errorf(pos, "Table sink '%s' doesn't support consuming %s changes which is produced by node %s%s",
			qualified(target), what, s.changes, hint)
	}
	if s, err = ph.materializeForSink(s, target); err != nil {
		return nil, err
	}
	name := "Sink: " + target.Name
	sinkOp := op(name, sink)
	ph.b.noteTable(sinkOp, target, s.schema)
	return ph.b.chain(s, s.vertex.Parallelism, sinkOp, s.schema), nil
}

// changelogSink reports whether sink writes updates and deletes as they
// are: a kafka sink with a changelog format (debezium-json).
func changelogSink(sink jobgraph.Spec) bool {
	ks, ok := sink.(*jobgraph.KafkaSinkSpec)
	if !ok {
		return false
	}
	f := ks.ValueFormat()
	return f.Changelog()
}

func qualified(t *catalog.Table) string {
	return catalog.DefaultCatalog + "." + t.Database + "." + t.Name
}

// fitToSink lines the query's columns up with the sink's physical columns,
// casting where the types differ and filling unlisted columns with NULL.
func fitToSink(n node, target *catalog.Table, ins *ast.InsertStmt) (node, error) {
	for _, c := range target.Columns {
		if c.Metadata != "" && !c.Virtual {
			// NB: Flink writes the kafka 'timestamp' and 'headers' keys of
			// such a column; reading them works.
			return nil, unsupported(ins.Table.Pos, fmt.Sprintf("writing the METADATA column %s of %s (declare it VIRTUAL to only read it)", c.Name, qualified(target)))
		}
	}
	sink := target.PhysicalSchema()
	in := n.schema()
	// cols[i] is the query column feeding sink column i, or -1 for NULL.
	cols := make([]int, len(sink))
	if len(ins.Columns) == 0 {
		if len(in) != len(sink) {
			return nil, errorf(ins.Query.Pos, "column count of the query (%d) does not match the sink %s (%d columns: %s)",
				len(in), qualified(target), len(sink), strings.Join(sink.Names(), ", "))
		}
		for i := range cols {
			cols[i] = i
		}
	} else {
		if len(ins.Columns) != len(in) {
			return nil, errorf(ins.Query.Pos, "the query has %d columns but the INSERT lists %d", len(in), len(ins.Columns))
		}
		for i := range cols {
			cols[i] = -1
		}
		for qi, c := range ins.Columns {
			found := false
			for si, f := range sink {
				if f.Name == c.Name {
					if cols[si] >= 0 {
						return nil, errorf(c.Pos, "column %s is listed twice", c.Name)
					}
					cols[si], found = qi, true
				}
			}
			if !found {
				return nil, errorf(c.Pos, "unknown column %q of table %s", c.Name, qualified(target))
			}
		}
	}
	exprs := make([]*expr.Expr, len(sink))
	for si, f := range sink {
		if cols[si] < 0 {
			if f.Type.NotNull {
				return nil, errorf(ins.Pos, "column %s of %s is NOT NULL and not listed in the INSERT", f.Name, qualified(target))
			}
			exprs[si] = expr.NullLiteral(f.Type)
			continue
		}
		qi := cols[si]
		e, ok := castTo(expr.Column(qi, in[qi].Type), f.Type)
		if !ok {
			return nil, errorf(ins.Query.Pos, "column types of query result and sink for '%s' do not match: query column %d (%s) is %s, sink column %s is %s",
				qualified(target), qi+1, in[qi].Name, in[qi].Type, f.Name, f.Type)
		}
		exprs[si] = e
	}
	if v, ok := n.(*valuesNode); ok {
		// Cast the constants themselves so the source emits the sink's types.
		rows := make([][]*expr.Expr, len(v.rows))
		for r, row := range v.rows {
			rows[r] = make([]*expr.Expr, len(exprs))
			for i, e := range exprs {
				rows[r][i] = substitute(e, row)
			}
		}
		return &valuesNode{rows: rows, out: sink}, nil
	}
	return &projectNode{input: n, exprs: exprs, out: sink}, nil
}

// physical starts the physical plan of sql at the session's parallelism,
// capped by its max parallelism; an out-of-range
// pipeline.max-parallelism is refused, naming the option.
func (p *Planner) physical(ctx context.Context, sql string) (*physical, error) {
	maxPar, err := jobgraph.ResolveMaxParallelism(p.Options.Config)
	if err != nil {
		return nil, &Error{Msg: err.Error()}
	}
	par := jobgraph.ResolveParallelism(p.Options.Config, p.Options.Parallelism)
	if par <= 0 {
		par = 1
	}
	if par > maxPar {
		par = maxPar
	}
	b := newGraphBuilder("collect", maxPar)
	b.g.SQL = sql
	return &physical{ctx: ctx, p: p, b: b, parallelism: par, batch: p.batch()}, nil
}

func (p *Planner) finish(ph *physical, s *stream, result types.Schema) (*Plan, error) {
	g := ph.b.g
	g.Bounded = s.bounded
	if err := p.resolveJobOptions(g); err != nil {
		return nil, err
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("planner: internal error: %w", err)
	}
	// NB: uids are assigned last, over the finished graph, so they depend
	// on its structure only (see jobgraph.AssignUIDs).
	if err := jobgraph.AssignUIDs(g); err != nil {
		return nil, fmt.Errorf("planner: internal error: %w", err)
	}
	return &Plan{Graph: g, Result: result, Bounded: s.bounded, tables: ph.b.tables, batch: ph.batch}, nil
}
