package connectors

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/zap"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/internal/mysqltest"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

func mysqlOpts(kv ...string) map[string]string {
	m := map[string]string{"connector": "mysql", "hostname": "db.internal", "username": "u", "password": "p",
		"database-name": "shop", "table-name": "products"}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(m, kv[i])
		} else {
			m[kv[i]] = kv[i+1]
		}
	}
	return m
}

func TestMySQLTableOptions(t *testing.T) {
	tbl := func(opts map[string]string) *catalog.Table {
		return &catalog.Table{Database: "db", Name: "t", Options: opts,
			Columns: []catalog.Column{{Name: "id", Type: types.Int}, {Name: "name", Type: types.String}}}
	}
	jdbc := func(kv ...string) map[string]string {
		m := map[string]string{"connector": "jdbc", "url": "jdbc:mysql://db.internal:3307/shop?useSSL=false", "table-name": "products",
			"username": "u", "password": "p"}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(m, kv[i])
			} else {
				m[kv[i]] = kv[i+1]
			}
		}
		return m
	}
	for _, tc := range []struct {
		opts map[string]string
		want string // "" = valid
	}{
		{mysqlOpts(), ""},
		{mysqlOpts("port", "3307", "lookup.cache", "PARTIAL", "lookup.partial-cache.max-rows", "100",
			"lookup.partial-cache.expire-after-write", "10 min", "lookup.partial-cache.expire-after-access", "30s",
			"lookup.partial-cache.cache-missing-key", "false", "lookup.max-retries", "0"), ""},
		{mysqlOpts("hostname", ""), "option 'hostname' is required"},
		{mysqlOpts("database-name", ""), "option 'database-name' is required"},
		{mysqlOpts("table-name", ""), "option 'table-name' is required"},
		{mysqlOpts("username", ""), "option 'username' is required"},
		{mysqlOpts("port", "x"), "option 'port' must be a port number, got 'x'"},
		{mysqlOpts("url", "jdbc:mysql://h/db"), "unsupported option 'url' for connector 'mysql'"},
		{mysqlOpts("lookup.cache", "PARTIAL"), "Missing 'lookup.partial-cache.expire-after-access', 'lookup.partial-cache.expire-after-write' or 'lookup.partial-cache.max-rows'"},
		{mysqlOpts("lookup.cache", "FULL"), "'FULL' is not supported yet"},
		{mysqlOpts("lookup.cache", "ALL"), "must be NONE or PARTIAL"},
		{mysqlOpts("lookup.partial-cache.max-rows", "10"), "needs 'lookup.cache' = 'PARTIAL'"},
		{mysqlOpts("lookup.cache", "PARTIAL", "lookup.partial-cache.max-rows", "-1"), "must be a positive integer"},
		{mysqlOpts("lookup.cache", "PARTIAL", "lookup.partial-cache.expire-after-write", "soon"), "invalid duration 'soon'"},
		{mysqlOpts("lookup.cache", "PARTIAL", "lookup.partial-cache.max-rows", "1", "lookup.partial-cache.cache-missing-key", "maybe"), "must be true or false"},
		{mysqlOpts("lookup.max-retries", "-1"), "must be a non-negative integer"},
		{mysqlOpts("lookup.cache.max-rows", "10"), "use 'lookup.cache' = 'PARTIAL'"},
		{mysqlOpts("scan.fetch-size", "10"), "is not supported yet"},
		{jdbc(), ""},
		{jdbc("url", "jdbc:postgresql://h:5432/db"), "only MySQL urls (jdbc:mysql://...) are supported yet"},
		{jdbc("url", "jdbc:mysql://h:3306"), "must name a database"},
		{jdbc("url", "jdbc:mysql://h:3306", "table-name", "shop.products"), ""},
		{jdbc("url", ""), "option 'url' is required"},
		{jdbc("password", ""), "either all or none of the options 'username' and 'password' must be set"},
		{jdbc("driver", "org.postgresql.Driver"), "accepts only"},
	} {
		err := (&Resolver{}).ValidateTable(tbl(tc.opts))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.opts, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want %q", tc.opts, err, tc.want)
		}
	}

	bad := &catalog.Table{Database: "db", Name: "t", Options: mysqlOpts(),
		Columns: []catalog.Column{{Name: "id", Type: types.Int}, {Name: "ts", Type: types.TimestampLTZ(3)}}}
	if err := (&Resolver{}).ValidateTable(bad); err == nil || !strings.Contains(err.Error(), "column ts of type TIMESTAMP_LTZ(3) is not supported yet") {
		t.Errorf("LTZ column: %v", err)
	}

	mt, err := mysqlTableFor(tbl(jdbc()))
	if err != nil {
		t.Fatal(err)
	}
	if mt.table.Host != "db.internal" || mt.table.Port != 3307 || mt.table.Database != "shop" || mt.table.Table != "products" || mt.maxRetries != 3 {
		t.Errorf("jdbc table %+v", mt)
	}
	mt, err = mysqlTableFor(tbl(mysqlOpts("lookup.cache", "PARTIAL", "lookup.partial-cache.expire-after-write", "10 min")))
	if err != nil {
		t.Fatal(err)
	}
	if c := mt.cache; !c.Enabled || c.MaxRows != 0 || c.ExpireAfterWriteMs != 600000 || !c.CacheMissingKey {
		t.Errorf("cache %+v", c)
	}
}

// TestMySQLAllowlist: the allowlist applies to a MySQL table's host.
func TestMySQLAllowlist(t *testing.T) {
	r := &Resolver{Allow: &Allowlist{Hosts: []string{"*.internal:3306"}}}
	tbl := &catalog.Table{Database: "db", Name: "t", Columns: []catalog.Column{{Name: "id", Type: types.Int}}}
	tbl.Options = mysqlOpts()
	if err := r.ValidateTable(tbl); err != nil {
		t.Errorf("allowed host: %v", err)
	}
	tbl.Options = mysqlOpts("hostname", "evil.example.com")
	if err := r.ValidateTable(tbl); err == nil || !strings.Contains(err.Error(), "host evil.example.com:3306 is not allowed") {
		t.Errorf("refused host: %v", err)
	}
	tbl.Options = mysqlOpts("port", "3307")
	if err := r.ValidateTable(tbl); err == nil || !strings.Contains(err.Error(), "is not allowed") {
		t.Errorf("refused port: %v", err)
	}
	r = &Resolver{Allow: &Allowlist{Connectors: []string{"kafka"}}}
	tbl.Options = mysqlOpts()
	if err := r.ValidateTable(tbl); err == nil || !strings.Contains(err.Error(), "connector 'mysql' is not allowed") {
		t.Errorf("refused connector: %v", err)
	}
	if spec, maxPar, err := (&Resolver{}).SourceSpec(tbl, true); err != nil || maxPar != 1 || spec.Kind() != jobgraph.KindMySQLScan || !operators.IsSource(spec.Kind()) {
		t.Errorf("scan: %v %d %v", spec, maxPar, err)
	}
	if _, err := (&Resolver{}).SinkSpec(tbl); err == nil || !strings.Contains(err.Error(), "writing to a 'mysql' table is not supported yet") {
		t.Errorf("sink: %v", err)
	}
}

// lookupDB creates database lookup_test on the test server with a table of
// every supported type, and returns its MySQLTable.
func lookupDB(t testing.TB) jobgraph.MySQLTable {
	srv := mysqltest.Start(t)
	var vals []string
	for i := 1; i <= 150; i++ {
		vals = append(vals, fmt.Sprintf("(%d, 'Name%d', %d.25, '2025-01-%02d', '2025-01-01 10:00:%02d.123', %d)", i, i, i, i%28+1, i%60, i%2))
	}
	srv.Exec(t, `CREATE DATABASE IF NOT EXISTS lookup_test;
DROP TABLE IF EXISTS lookup_test.items;
CREATE TABLE lookup_test.items (id BIGINT PRIMARY KEY, name VARCHAR(32), price DECIMAL(10,2), d DATE, ts DATETIME(3), flag TINYINT);
INSERT INTO lookup_test.items VALUES `+strings.Join(vals, ", ")+`;
INSERT INTO lookup_test.items VALUES (200, NULL, NULL, NULL, NULL, NULL);`)
	return jobgraph.MySQLTable{Host: srv.Host, Port: srv.Port, User: srv.User, Password: srv.Password,
		Database: "lookup_test", Table: "items", Columns: []string{"id", "name", "price", "d", "ts", "flag"}}
}

var itemsSchema = types.Schema{
	{Name: "id", Type: types.BigInt}, {Name: "name", Type: types.String},
	{Name: "price", Type: types.Decimal(10, 2)}, {Name: "d", Type: types.Date},
	{Name: "ts", Type: types.Timestamp(3)}, {Name: "flag", Type: types.TinyInt},
}

// lookupRows formats the rows a lookup returned, by key index.
func lookupRows(t *testing.T, cols []arrow.Array, match []int) []string {
	t.Helper()
	var out []string
	for r, m := range match {
		parts := []string{strconv.Itoa(m)}
		for _, c := range cols {
			parts = append(parts, c.ValueStr(r))
		}
		out = append(out, strings.Join(parts, " "))
	}
	sort.Strings(out)
	for _, c := range cols {
		c.Release()
	}
	return out
}

// TestMySQLLookup reads rows of every supported type by an integer key
// (batched, more keys than one statement takes) and by a string key (one
// statement per key, MySQL's collation deciding the match).
func TestMySQLLookup(t *testing.T) {
	tb := lookupDB(t)
	l := NewMySQLLookup(tb, itemsSchema, []int{0})
	if !l.batch {
		t.Fatal("an integer key should be batched")
	}
	if err := l.Open(&operators.Context{Logger: zap.NewNop()}); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var keys [][]any
	for i := int64(1); i <= 100; i++ {
		keys = append(keys, []any{i})
	}
	keys = append(keys, []any{int64(999)}, []any{int64(200)})
	cols, match, err := l.Lookup(t.Context(), keys)
	if err != nil {
		t.Fatal(err)
	}
	got := lookupRows(t, cols, match)
	if len(got) != 101 {
		t.Fatalf("%d rows, want 101 (100 keys and the row of NULLs)", len(got))
	}
	if !contains(got, "0 1 Name1 1.25 2025-01-02 2025-01-01T10:00:01.123 1") {
		t.Errorf("row of key 1 missing or wrong: %v", got[:3])
	}
	if !contains(got, "101 200 (null) (null) (null) (null) (null)") {
		t.Errorf("row of NULLs missing: %v", got[len(got)-3:])
	}

	s := NewMySQLLookup(tb, itemsSchema, []int{1})
	if s.batch {
		t.Fatal("a string key should not be batched")
	}
	if err := s.Open(&operators.Context{Logger: zap.NewNop()}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cols, match, err = s.Lookup(t.Context(), [][]any{{"Name7"}, {"nobody"}, {"Name8"}})
	if err != nil {
		t.Fatal(err)
	}
	got = lookupRows(t, cols, match)
	if len(got) != 2 || !strings.HasPrefix(got[0], "0 7 Name7") || !strings.HasPrefix(got[1], "2 8 Name8") {
		t.Fatalf("string key rows %v", got)
	}
}

// TestMySQLLookupJoin runs the registered lookup join operator against the
// server: a LEFT join by id with a cache.
func TestMySQLLookupJoin(t *testing.T) {
	tb := lookupDB(t)
	in := types.Schema{{Name: "k", Type: types.BigInt}}
	lk := itemsSchema[:2]
	tb.Columns = tb.Columns[:2]
	out := append(append(types.Schema{}, in...), lk...)
	for i := 1; i < 3; i++ {
		out[i].Type = out[i].Type.WithNullable(true)
	}
	spec := &jobgraph.LookupJoinSpec{InputSchema: in, LookupSchema: lk, InputKeys: []int{0}, LookupKeys: []int{0},
		OutputSchema: out, OuterLeft: true, TableName: "default_catalog.db.items", Table: tb, MaxRetries: 1,
		Cache: jobgraph.LookupCache{Enabled: true, MaxRows: 100, CacheMissingKey: true}}
	op, err := operators.NewOperator(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Open(&operators.Context{Logger: zap.NewNop()}); err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	kb.AppendValues([]int64{3, 1000, 3, 5}, nil)
	kb.AppendNull()
	col := kb.NewArray()
	kb.Release()
	b := types.NewInsertBatch(in.ArrowSchema(), []arrow.Array{col}, 5)
	col.Release()
	defer b.Release()
	sink := &rowSink{}
	if err := op.Process(0, b, sink); err != nil {
		t.Fatal(err)
	}
	want := "[+I 3 3 Name3 +I 1000 (null) (null) +I 3 3 Name3 +I 5 5 Name5 +I (null) (null) (null)]"
	if fmt.Sprint(sink.rows) != want {
		t.Fatalf("got %v\nwant %v", sink.rows, want)
	}
}

type rowSink struct{ rows []string }

func (s *rowSink) Emit(b types.Batch) error {
	for i := 0; i < b.NumRows(); i++ {
		parts := []string{b.Kind(i).String()}
		for c := 0; c < b.NumCols(); c++ {
			parts = append(parts, b.Column(c).ValueStr(i))
		}
		s.rows = append(s.rows, strings.Join(parts, " "))
	}
	return nil
}

// TestMySQLLookupUnreachable: a server that is not there fails Open with
// an external error naming it.
func TestMySQLLookupUnreachable(t *testing.T) {
	l := NewMySQLLookup(jobgraph.MySQLTable{Host: "127.0.0.1", Port: 1, User: "u", Database: "d", Table: "t", Columns: []string{"id"}},
		types.Schema{{Name: "id", Type: types.Int}}, []int{0})
	err := l.Open(&operators.Context{Logger: zap.NewNop()})
	defer l.Close()
	if err == nil || types.ClassOf(err) != types.ClassExternal || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("error %v (class %v)", err, types.ClassOf(err))
	}
}

// BenchmarkMySQLLookupJoin measures the lookup join against the test
// server: 4096-row batches drawn from 150 keys, each batch's keys read in
// batched statements (nocache), or served from the partial cache.
func BenchmarkMySQLLookupJoin(b *testing.B) {
	tb := lookupDB(b)
	in := types.Schema{{Name: "k", Type: types.BigInt}}
	lk := itemsSchema[:2]
	tb.Columns = tb.Columns[:2]
	out := append(append(types.Schema{}, in...), lk...)
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	for i := 0; i < 4096; i++ {
		kb.Append(int64(i%150 + 1))
	}
	col := kb.NewArray()
	kb.Release()
	batch := types.NewInsertBatch(in.ArrowSchema(), []arrow.Array{col}, 4096)
	col.Release()
	defer batch.Release()
	for _, bc := range []struct {
		name  string
		cache jobgraph.LookupCache
	}{{"nocache", jobgraph.LookupCache{}}, {"cache", jobgraph.LookupCache{Enabled: true, MaxRows: 1000}}} {
		b.Run(bc.name, func(b *testing.B) {
			spec := &jobgraph.LookupJoinSpec{InputSchema: in, LookupSchema: lk, InputKeys: []int{0}, LookupKeys: []int{0},
				OutputSchema: out, TableName: "default_catalog.db.items", Table: tb, Cache: bc.cache}
			op, err := operators.NewOperator(spec)
			if err != nil {
				b.Fatal(err)
			}
			if err := op.Open(&operators.Context{Logger: zap.NewNop()}); err != nil {
				b.Fatal(err)
			}
			defer op.Close()
			sink := &countSink{}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := op.Process(0, batch, sink); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*4096/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

type countSink struct{ rows int }

func (s *countSink) Emit(b types.Batch) error { s.rows += b.NumRows(); return nil }

// TestMySQLScan reads the whole table in batches, in the order of its
// columns, and a restored scan skips the rows it had emitted.
func TestMySQLScan(t *testing.T) {
	tb := lookupDB(t)
	spec := &jobgraph.MySQLScanSpec{Table: tb, Schema: itemsSchema}
	run := func(restore operators.Restore, subtask int) (*rowSink, *MySQLScan) {
		src, err := operators.NewSource(spec)
		if err != nil {
			t.Fatal(err)
		}
		s := src.(*MySQLScan)
		if err := s.Open(&operators.Context{Logger: zap.NewNop(), Subtask: subtask, Parallelism: 2, SourceBatchRows: 40, Restore: restore}); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		sink := &rowSink{}
		if err := s.Run(t.Context(), sink); err != nil {
			t.Fatal(err)
		}
		return sink, s
	}
	all, s := run(operators.Restore{}, 0)
	if len(all.rows) != 151 || all.rows[0] != "+I 1 Name1 1.25 2025-01-02 2025-01-01T10:00:01.123 1" || all.rows[150] != "+I 200 (null) (null) (null) (null) (null)" {
		t.Fatalf("%d rows: %v ... %v", len(all.rows), all.rows[0], all.rows[len(all.rows)-1])
	}
	if other, _ := run(operators.Restore{}, 1); len(other.rows) != 0 {
		t.Fatalf("subtask 1 read %d rows", len(other.rows))
	}
	s.emitted = 100
	pos, err := s.SnapshotState(1)
	if err != nil {
		t.Fatal(err)
	}
	rest, _ := run(operators.Restore{ID: 1, State: [][]byte{pos}}, 0)
	if fmt.Sprint(rest.rows) != fmt.Sprint(all.rows[100:]) {
		t.Fatalf("restored scan read %d rows, want the last 51", len(rest.rows))
	}
}
