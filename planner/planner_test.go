package planner

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"google.golang.org/protobuf/proto"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/sql/parser"
)

// testCatalog resolves names in the default database of a MemStore.
type testCatalog struct{ store *catalog.MemStore }

func (c testCatalog) Table(ctx context.Context, name []string) (*catalog.Table, error) {
	return c.store.GetTable(ctx, catalog.DefaultDatabase, name[len(name)-1])
}

// testConnectors plans every table as a managed table with one partition.
type testConnectors struct{}

func (testConnectors) SourceSpec(t *catalog.Table, bounded bool) (jobgraph.Spec, int, error) {
	if t.Connector() == "kafka" {
		// The columns the kafka source reads, METADATA ones included.
		schema, _, err := t.SourceSchema(jobgraph.MetadataTypes(t.Connector()))
		if err != nil {
			return nil, 0, err
		}
		return &jobgraph.KafkaSourceSpec{Topic: t.Options["topic"], Brokers: []string{"b:9092"}, Schema: schema,
			StartupMode: jobgraph.KafkaStartEarliest, Bounded: bounded, Format: testFormat(t)}, 0, nil
	}
	if t.Connector() == "mysql" {
		tb, _, _, _ := testConnectors{}.LookupJoinTable(t)
		return &jobgraph.MySQLScanSpec{Table: tb, Schema: t.PhysicalSchema()}, 1, nil
	}
	if t.Connector() != "" {
		return nil, 0, fmt.Errorf("connector '%s' is not supported yet", t.Connector())
	}
	return &jobgraph.ManagedSourceSpec{Topic: "t." + t.Name, Schema: t.PhysicalSchema(), Bounded: bounded}, 1, nil
}

// testFormat is the value format a kafka table names, nil for json.
func testFormat(t *catalog.Table) *jobgraph.FormatSpec {
	if f := t.Options["format"]; f != "" && f != jobgraph.FormatJSON {
		return &jobgraph.FormatSpec{Name: f}
	}
	return nil
}

func (testConnectors) SinkSpec(t *catalog.Table) (jobgraph.Spec, error) {
	if t.Connector() == "kafka" && testFormat(t) != nil {
		return &jobgraph.KafkaSinkSpec{Topic: t.Options["topic"], Brokers: []string{"b:9092"}, Schema: t.PhysicalSchema(), Format: testFormat(t)}, nil
	}
	return &jobgraph.ManagedSinkSpec{Topic: "t." + t.Name, Schema: t.PhysicalSchema()}, nil
}

// LookupJoinTable reads 'mysql' tables' options as they are, with the
// cache that 'lookup.cache' = 'PARTIAL' asks for; other tables cannot be
// looked up.
func (testConnectors) LookupJoinTable(t *catalog.Table) (jobgraph.MySQLTable, jobgraph.LookupCache, int, error) {
	if t.Connector() != "mysql" {
		return jobgraph.MySQLTable{}, jobgraph.LookupCache{}, 0, fmt.Errorf("a %s table cannot be a lookup table", t.Connector())
	}
	tb := jobgraph.MySQLTable{Host: t.Options["hostname"], Port: 3306, User: t.Options["username"],
		Database: t.Options["database-name"], Table: t.Options["table-name"]}
	for _, f := range t.PhysicalSchema() {
		tb.Columns = append(tb.Columns, f.Name)
	}
	var cache jobgraph.LookupCache
	if t.Options["lookup.cache"] == "PARTIAL" {
		cache = jobgraph.LookupCache{Enabled: true, MaxRows: 100, CacheMissingKey: true}
	}
	return tb, cache, 3, nil
}

// TestPlanner runs testdata/*.txt: "exec" creates tables and views and
// sets session options (SET), "plan" prints the
// job graph and result columns of a SELECT or INSERT, or the error, and
// "explain" what EXPLAIN prints for it ("explain changelog": EXPLAIN
// CHANGELOG_MODE).
func TestPlanner(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		store := catalog.NewMemStore()
		p := &Planner{
			Catalog:    testCatalog{store},
			Connectors: testConnectors{},
			Options:    Options{Parallelism: 4, Config: map[string]string{}},
		}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			stmts, err := parser.ParseScript(d.Input)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			var out strings.Builder
			for _, st := range stmts {
				switch d.Cmd {
				case "exec":
					if set, ok := st.(*ast.SetStmt); ok {
						if err := jobgraph.CheckOption(set.Option.Key, set.Option.Value); err != nil {
							fmt.Fprintf(&out, "error: %v\n", err)
							continue
						}
						p.Options.Config[set.Option.Key] = set.Option.Value
						fmt.Fprintf(&out, "set %s = %s\n", set.Option.Key, set.Option.Value)
						continue
					}
					if cv, ok := st.(*ast.CreateViewStmt); ok {
						v, err := p.BuildView(context.Background(), cv, catalog.DefaultDatabase, 1)
						if err != nil {
							fmt.Fprintf(&out, "error: %v\n", err)
							continue
						}
						if err := store.CreateTable(context.Background(), v); err != nil {
							t.Fatal(err)
						}
						fmt.Fprintf(&out, "%s", DescribeView(v))
						continue
					}
					ct, ok := st.(*ast.CreateTableStmt)
					if !ok {
						t.Fatalf("exec takes CREATE TABLE, CREATE VIEW or SET, got %T", st)
					}
					tbl, err := BuildTable(ct, catalog.DefaultDatabase, 1)
					if err != nil {
						fmt.Fprintf(&out, "error: %v\n", err)
						continue
					}
					if err := store.CreateTable(context.Background(), tbl); err != nil {
						t.Fatal(err)
					}
					fmt.Fprintf(&out, "%s\n", DescribeTable(tbl))
				case "plan", "explain":
					var plan *Plan
					switch st := st.(type) {
					case *ast.QueryStmt:
						plan, err = p.PlanQuery(context.Background(), st.Query, st.Source().Text(d.Input))
					case *ast.InsertStmt:
						plan, err = p.PlanInsert(context.Background(), st, st.Source().Text(d.Input))
					case *ast.StatementSetStmt:
						plan, err = p.PlanInserts(context.Background(), st.Inserts, st.Source().Text(d.Input))
					default:
						t.Fatalf("plan takes SELECT or INSERT, got %T", st)
					}
					if err != nil {
						fmt.Fprintf(&out, "error: %v\n", err)
						continue
					}
					checkWireRoundTrip(t, plan.Graph)
					checkExplain(t, plan)
					if d.Cmd == "explain" {
						// explain prints what EXPLAIN prints; with
						// changelog, what EXPLAIN CHANGELOG_MODE does.
						fmt.Fprintf(&out, "%s\n", Explain(plan, d.HasArg("changelog")))
						continue
					}
					fmt.Fprintf(&out, "%s\nbounded: %v\n", ExplainGraph(plan.Graph), plan.Bounded)
					if _, ok := st.(*ast.StatementSetStmt); ok {
						fmt.Fprintf(&out, "job: %s\n", plan.Graph.Name)
					}
					for _, f := range plan.Result {
						fmt.Fprintf(&out, "column %s %s\n", f.Name, f.Type)
					}
					for _, k := range plan.Order {
						dir, nulls := "ASC", "LAST"
						if k.Desc {
							dir = "DESC"
						}
						if k.NullsFirst {
							nulls = "FIRST"
						}
						fmt.Fprintf(&out, "order %s %s NULLS %s\n", plan.Result[k.Col].Name, dir, nulls)
					}
				default:
					t.Fatalf("unknown command %s", d.Cmd)
				}
			}
			return out.String()
		})
	})
}

// checkExplain checks that EXPLAIN describes every operator of plan by its
// spec: none falls back to its display name.
func checkExplain(t *testing.T, plan *Plan) {
	t.Helper()
	x := newExplainer(plan)
	for _, n := range x.nodes {
		if n.undescribed {
			t.Errorf("EXPLAIN does not describe operator %q (%s)", n.op.Name, n.op.Kind())
		}
	}
}

// checkWireRoundTrip checks that g's wire form decodes (FromProto
// validates it) and encodes again to the same bytes: every spec the
// planner makes survives the trip to a task manager unchanged.
func checkWireRoundTrip(t *testing.T, g *jobgraph.Graph) {
	t.Helper()
	pg, err := g.Proto()
	if err != nil {
		t.Fatal(err)
	}
	back, err := jobgraph.FromProto(pg)
	if err != nil {
		t.Fatalf("the planned graph does not decode: %v", err)
	}
	pg2, err := back.Proto()
	if err != nil {
		t.Fatal(err)
	}
	opts := proto.MarshalOptions{Deterministic: true}
	b1, _ := opts.Marshal(pg)
	b2, _ := opts.Marshal(pg2)
	if !bytes.Equal(b1, b2) {
		t.Fatalf("the wire form changed on a round trip:\n%v\n%v", pg, pg2)
	}
}

// TestJoinSendsOnlyNeededColumns checks that each join input carries only
// the columns its keys, the residual and the query above read.
func TestJoinSendsOnlyNeededColumns(t *testing.T) {
	ctx := context.Background()
	store := catalog.NewMemStore()
	for _, ddl := range []string{
		"CREATE TABLE orders (id INT, total_amount DOUBLE, customer_name VARCHAR, order_ts_raw BIGINT)",
		"CREATE TABLE shipments (id VARCHAR, order_id INT, warehouse VARCHAR, ship_ts_raw BIGINT)",
	} {
		st, err := parser.ParseStatement(ddl)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := BuildTable(st.(*ast.CreateTableStmt), catalog.DefaultDatabase, 1)
		if err != nil {
			t.Fatal(err)
		}
		store.CreateTable(ctx, tbl)
	}
	p := &Planner{Catalog: testCatalog{store}, Connectors: testConnectors{}, Options: Options{Parallelism: 2}}
	sql := `SELECT o.id, s.warehouse FROM orders o JOIN shipments s ON o.id = s.order_id
	        WHERE s.ship_ts_raw > o.order_ts_raw`
	st, err := parser.ParseStatement(sql)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := p.PlanQuery(ctx, st.(*ast.QueryStmt).Query, sql)
	if err != nil {
		t.Fatal(err)
	}
	var spec jobgraph.JoinSpec
	for _, v := range plan.Graph.Vertices {
		for _, o := range v.Chain {
			if o.Kind() == jobgraph.KindJoinInner {
				spec = *o.Spec.(*jobgraph.JoinSpec)
			}
		}
	}
	if got := strings.Join(spec.LeftSchema.Names(), ","); got != "id,order_ts_raw" {
		t.Errorf("left side sends %s, want id,order_ts_raw", got)
	}
	if got := strings.Join(spec.RightSchema.Names(), ","); got != "order_id,warehouse,ship_ts_raw" {
		t.Errorf("right side sends %s, want order_id,warehouse,ship_ts_raw", got)
	}
	if spec.LeftKeys[0] != 0 || spec.RightKeys[0] != 0 {
		t.Errorf("keys %v = %v, want [0] = [0]", spec.LeftKeys, spec.RightKeys)
	}
	if cols := columnsOf(spec.Residual); len(cols) != 2 || cols[0] != 4 || cols[1] != 1 {
		t.Errorf("residual reads columns %v, want [4 1] (ship_ts_raw, order_ts_raw)", cols)
	}
}

// TestStateTTL: the STATE_TTL hint sets each join input's TTL by table name
// or alias; table.exec.state.ttl applies to the others.
func TestStateTTL(t *testing.T) {
	ctx := context.Background()
	store := catalog.NewMemStore()
	for _, ddl := range []string{"CREATE TABLE a (k INT, x INT)", "CREATE TABLE b (k INT, y INT)", "CREATE TABLE c (k INT, z INT)"} {
		st, _ := parser.ParseStatement(ddl)
		tbl, err := BuildTable(st.(*ast.CreateTableStmt), catalog.DefaultDatabase, 1)
		if err != nil {
			t.Fatal(err)
		}
		store.CreateTable(ctx, tbl)
	}
	plan := func(sql string, config map[string]string) ([]jobgraph.JoinSpec, error) {
		p := &Planner{Catalog: testCatalog{store}, Connectors: testConnectors{}, Options: Options{Parallelism: 2, Config: config}}
		st, err := parser.ParseStatement(sql)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := p.PlanQuery(ctx, st.(*ast.QueryStmt).Query, sql)
		if err != nil {
			return nil, err
		}
		var specs []jobgraph.JoinSpec
		for _, v := range pl.Graph.Vertices {
			for _, o := range v.Chain {
				if o.Kind() == jobgraph.KindJoinInner {
					specs = append(specs, *o.Spec.(*jobgraph.JoinSpec))
				}
			}
		}
		return specs, nil
	}
	specs, err := plan("SELECT /*+ STATE_TTL('x1' = '3d', 'b' = '1 h') */ x FROM a AS x1 JOIN b ON x1.k = b.k JOIN c ON b.k = c.k",
		map[string]string{"table.exec.state.ttl": "10 min"})
	if err != nil {
		t.Fatal(err)
	}
	day, hour, tenMin := int64(24*3600*1000), int64(3600*1000), int64(600*1000)
	if len(specs) != 2 || specs[0].LeftTTLMs != 3*day || specs[0].RightTTLMs != hour ||
		specs[1].LeftTTLMs != tenMin || specs[1].RightTTLMs != tenMin {
		t.Fatalf("TTLs %+v", specs)
	}
	if _, err := plan("SELECT /*+ STATE_TTL('nope' = '1d') */ x FROM a JOIN b ON a.k = b.k", nil); err == nil ||
		!strings.Contains(err.Error(), "line 1, column 22: STATE_TTL names 'nope', which is not an input of a join") {
		t.Fatalf("unknown input: %v", err)
	}
	if _, err := plan("SELECT /*+ STATE_TTL('a' = '1 fortnight') */ x FROM a JOIN b ON a.k = b.k", nil); err == nil ||
		!strings.Contains(err.Error(), "unknown unit 'fortnight'") {
		t.Fatalf("bad duration: %v", err)
	}
}
