package planner

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/sql/parser"
)

// fuzzTables are the tables FuzzPlan's queries may name.
const fuzzTables = `
CREATE TABLE orders (id INT, product STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND);
CREATE TABLE shipments (id INT, order_id INT, status STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND);
CREATE TABLE rates (currency STRING, rate DECIMAL(6, 4), ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts, PRIMARY KEY (currency) NOT ENFORCED);
CREATE TABLE sink (a INT, b STRING, c BIGINT);
`

// FuzzPlan parses and plans arbitrary SQL over a few tables: whatever the
// text, planning returns a plan or an error and never panics, and a plan
// passes the graph's own validation and its wire round trip.
func FuzzPlan(f *testing.F) {
	for _, q := range fuzzSeeds(f) {
		f.Add(q)
	}
	store := catalog.NewMemStore()
	stmts, err := parser.ParseScript(fuzzTables)
	if err != nil {
		f.Fatal(err)
	}
	for _, st := range stmts {
		tbl, err := BuildTable(st.(*ast.CreateTableStmt), catalog.DefaultDatabase, 1)
		if err != nil {
			f.Fatal(err)
		}
		if err := store.CreateTable(context.Background(), tbl); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, sql string) {
		stmts, err := parser.ParseScript(sql)
		if err != nil {
			return
		}
		p := &Planner{Catalog: testCatalog{store}, Connectors: testConnectors{}, Options: Options{Parallelism: 2, Config: map[string]string{}}}
		for _, st := range stmts {
			var plan *Plan
			switch st := st.(type) {
			case *ast.QueryStmt:
				plan, err = p.PlanQuery(context.Background(), st.Query, "")
			case *ast.InsertStmt:
				plan, err = p.PlanInsert(context.Background(), st, "")
			default:
				continue
			}
			if err != nil {
				continue
			}
			if err := plan.Graph.Validate(); err != nil {
				t.Fatalf("%s: the plan does not validate: %v", sql, err)
			}
			if _, err := plan.Graph.Proto(); err != nil {
				t.Fatalf("%s: the plan does not encode: %v", sql, err)
			}
		}
	})
}

// fuzzSeeds are the SELECTs and INSERTs of the planner's testdata, with
// their table names mapped onto fuzzTables', plus a few of its own.
func fuzzSeeds(f *testing.F) []string {
	seeds := []string{
		"SELECT id, product FROM orders WHERE amount > 10;",
		"SELECT o.id, s.status FROM orders o JOIN shipments s ON o.id = s.order_id;",
		"SELECT o.id, s.status FROM orders o LEFT JOIN shipments s ON o.id = s.order_id AND s.ts BETWEEN o.ts AND o.ts + INTERVAL '1' HOUR;",
		"SELECT product, COUNT(*), SUM(amount) FROM orders GROUP BY product;",
		"SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end;",
		"SELECT o.id, r.rate FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.product = r.currency;",
		"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY product ORDER BY amount DESC) AS rn FROM orders) WHERE rn <= 3;",
		"INSERT INTO sink SELECT id, product, CAST(COUNT(*) AS BIGINT) FROM orders GROUP BY id, product;",
		"SELECT id FROM orders UNION ALL SELECT id FROM shipments;",
		"SELECT CASE WHEN amount > 1 THEN 'big' ELSE 'small' END, UPPER(product) FROM orders ORDER BY amount DESC LIMIT 5;",
	}
	files, _ := filepath.Glob("testdata/*.txt")
	query := regexp.MustCompile(`(?is)^\s*(SELECT|INSERT)\b.*?;`)
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, block := range strings.Split(string(b), "\n----\n") {
			for _, line := range strings.Split(block, "\n\n") {
				if q := query.FindString(strings.TrimPrefix(strings.TrimSpace(line), "plan\n")); q != "" && len(q) < 2000 {
					seeds = append(seeds, q)
				}
			}
		}
	}
	return seeds
}
