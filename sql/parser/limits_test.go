package parser

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/braidflow/braid/sql/ast"
)

// smallStack runs f with goroutine stacks capped at max bytes, a few times
// what f needs, so that a parse that recursed once per level or term of a
// deep input crashes the test instead of quietly growing the stack towards
// Go's 1 GiB default.
func smallStack(max int, f func()) {
	old := debug.SetMaxStack(max)
	defer debug.SetMaxStack(old)
	f()
}

// nested is one construct that nests: prefix, then unit n times, then
// core, then close n times, then end. The prefix opens outer levels and
// each unit per levels (1 if 0), the first at byte offset at in the unit.
type nested struct {
	name                           string
	prefix, unit, core, close, end string
	outer, per, at                 int
	far                            int // units of the deep case; 20,000 if 0
	kind                           string
	parse                          func(string) (ast.Node, error) // parseScriptNode, or parseTypeNode for types alone
}

func (c nested) text(n int) string {
	return c.prefix + strings.Repeat(c.unit, n) + c.core + strings.Repeat(c.close, n) + c.end
}

// units is how many units nest exactly MaxNestingDepth levels deep.
func (c nested) units() int { return (MaxNestingDepth - c.outer) / max(c.per, 1) }

// wantErr is the error for c nested one unit too deep: at the unit that
// opens the first level past the limit (the cases are ASCII, on one line).
func (c nested) wantErr() string {
	col := len(c.prefix) + c.units()*len(c.unit) + c.at + 1
	return fmt.Sprintf("sql: line 1, column %d: %s nested too deeply (more than %d levels)", col, c.kind, MaxNestingDepth)
}

func parseScriptNode(s string) (ast.Node, error) {
	stmts, err := ParseScript(s)
	if err != nil {
		return nil, err
	}
	if len(stmts) != 1 {
		return nil, fmt.Errorf("%d statements", len(stmts))
	}
	return stmts[0], nil
}

var nestedCases = []nested{
	{name: "parentheses", prefix: "SELECT ", unit: "(", core: "1", close: ")", far: 100_000, kind: "expression"},
	{name: "calls", prefix: "SELECT ", unit: "f(", core: "1", close: ")", far: 100_000, kind: "expression"},
	{name: "calls with two arguments", prefix: "SELECT ", unit: "f(a, ", core: "1", close: ")", kind: "expression"},
	{name: "CASE", prefix: "SELECT ", unit: "CASE WHEN a THEN ", core: "1", close: " END", kind: "expression"},
	{name: "CASE ELSE", prefix: "SELECT ", unit: "CASE WHEN a THEN 1 ELSE ", core: "2", close: " END", kind: "expression"},
	{name: "CAST", prefix: "SELECT ", unit: "CAST(", core: "1", close: " AS INT)", kind: "expression"},
	{name: "minus signs", prefix: "SELECT ", unit: "- ", core: "1", far: 100_000, kind: "expression"},
	{name: "plus signs", prefix: "SELECT ", unit: "+", core: "1", kind: "expression"},
	{name: "signed parentheses", prefix: "SELECT ", unit: "-(", core: "1", close: ")", kind: "expression"},
	{name: "NOT", prefix: "SELECT ", unit: "NOT ", core: "a", kind: "expression"},
	{name: "subscripts", prefix: "SELECT a", unit: "[a", core: "", close: "]", kind: "expression"},
	{name: "ARRAY", prefix: "SELECT ", unit: "ARRAY[", core: "1", close: "]", kind: "expression"},
	{name: "ROW", prefix: "SELECT ", unit: "ROW(", core: "1", close: ")", kind: "expression"},
	{name: "IN lists", prefix: "SELECT ", unit: "a IN (", core: "1", close: ")", at: 5, kind: "expression"},
	{name: "TRIM", prefix: "SELECT ", unit: "TRIM(", core: "s", close: ")", kind: "expression"},
	{name: "table arguments", prefix: "SELECT f(", unit: "TABLE t PARTITION BY ", core: "a", end: ")", outer: 1, kind: "expression"},
	{name: "scalar subqueries", prefix: "SELECT ", unit: "(SELECT ", core: "1", close: ")", kind: "expression"},
	{name: "EXISTS", prefix: "SELECT ", unit: "EXISTS (SELECT ", core: "1", close: ")", kind: "expression"},
	{name: "IN subqueries", prefix: "SELECT 1 FROM t WHERE ", unit: "a IN (SELECT a FROM t WHERE ", core: "b", close: ")", at: 5, kind: "expression"},
	{name: "parenthesised queries", unit: "(", core: "SELECT 1", close: ")", kind: "query"},
	{name: "derived tables", prefix: "SELECT * FROM ", unit: "(SELECT * FROM ", core: "t", close: ")", kind: "query"},
	{name: "parenthesised tables", prefix: "SELECT * FROM ", unit: "(", core: "t", close: ")", kind: "query"},
	{name: "CTEs", unit: "WITH a AS (", core: "SELECT 1", close: ") SELECT 1", at: 10, kind: "query"},
	// f( - CASE NOT ( are five levels: the ( after the sign opens none.
	{name: "mixed", prefix: "SELECT ", unit: "f(-(CASE WHEN NOT (", core: "a", close: ") THEN 1 END))", per: 5, kind: "expression"},
	{name: "ARRAY types", unit: "ARRAY<", core: "INT", close: ">", kind: "type", parse: parseTypeNode},
	{name: "ROW types", unit: "ROW<a ", core: "INT", close: ">", kind: "type", parse: parseTypeNode},
	{name: "MAP types", unit: "MAP<INT, ", core: "INT", close: ">", kind: "type", parse: parseTypeNode},
	{name: "types in CAST", prefix: "SELECT CAST(1 AS ", unit: "ROW(a ", core: "INT", close: ")", end: ")", outer: 1, kind: "type"},
}

// TestNestingLimit parses every construct that nests at the limit, one
// level past it and far past it (20,000 or 100,000 units). At the limit the statement parses
// and prints to SQL that parses back to the same tree; past it the error
// names the position of the first level too many, and never overflows the
// stack.
func TestNestingLimit(t *testing.T) {
	for _, c := range nestedCases {
		t.Run(c.name, func(t *testing.T) {
			parse := c.parse
			if parse == nil {
				parse = parseScriptNode
			}
			if (MaxNestingDepth-c.outer)%max(c.per, 1) != 0 {
				t.Fatalf("%d levels per unit do not add up to MaxNestingDepth", c.per)
			}
			// At the limit a parse needs under 512 KiB.
			smallStack(4<<20, func() {
				n, err := parse(c.text(c.units()))
				if err != nil {
					t.Fatalf("at the limit: %v", err)
				}
				if err := roundTrip(n, parse); err != nil {
					t.Fatal(err)
				}
				if d := depthAfter(c.text(c.units()), c.parse != nil); d != 0 {
					t.Fatalf("%d levels left open after the parse", d)
				}
				far := c.far
				if far == 0 {
					far = 20_000
				}
				for _, units := range []int{c.units() + 1, far} {
					if _, err := parse(c.text(units)); err == nil || err.Error() != c.wantErr() {
						t.Errorf("%d units: got %v\nwant %s", units, err, c.wantErr())
					}
				}
			})
		})
	}
}

// depthAfter parses src as a statement, or as a type, and returns the
// levels of nesting left open: every enter must have its leave.
func depthAfter(src string, isType bool) int {
	p := newParser(src)
	p.run(func() {
		if isType {
			p.typ()
		} else {
			p.statement()
		}
	})
	if len(p.errs) > 0 {
		return -1
	}
	return p.depth
}

// chains are left-associative chains of n terms, which the parser reads in
// loops: they open no levels of nesting, however long, but each operator
// deepens the tree by one. Past MaxTreeDepth the error is at the chain's
// first term, column col, and names kind.
var chains = []struct {
	name string
	text func(n int) string
	col  int
	kind string
}{
	{"plus", func(n int) string { return "SELECT 1" + strings.Repeat("+1", n-1) }, 8, "expression"},
	{"OR", func(n int) string { return "SELECT a = 1" + strings.Repeat(" OR a = 1", n-1) }, 8, "expression"},
	{"AND", func(n int) string { return "SELECT a" + strings.Repeat(" AND a", n-1) }, 8, "expression"},
	{"comparisons", func(n int) string { return "SELECT a" + strings.Repeat(" = a", n-1) }, 8, "expression"},
	{"concatenation", func(n int) string { return "SELECT 'a'" + strings.Repeat(" || 'a'", n-1) }, 8, "expression"},
	{"products", func(n int) string { return "SELECT 2" + strings.Repeat("*2", n-1) }, 8, "expression"},
	{"IS NULL", func(n int) string { return "SELECT a" + strings.Repeat(" IS NULL", n-1) }, 8, "expression"},
	{"subscripts", func(n int) string { return "SELECT a" + strings.Repeat("[1]", n-1) }, 8, "expression"},
	{"fields", func(n int) string { return "SELECT f(a)" + strings.Repeat(".b", n-1) }, 8, "expression"},
	{"signs and parentheses", func(n int) string { return "SELECT " + strings.Repeat("-(", n) + "1" + strings.Repeat(")", n) }, 0, ""},
	{"UNION ALL", func(n int) string { return "SELECT 1" + strings.Repeat(" UNION ALL SELECT 1", n-1) }, 1, "query"},
	{"joins", func(n int) string { return "SELECT * FROM t" + strings.Repeat(" JOIN t ON TRUE", n-1) }, 15, "query"},
	{"comma joins", func(n int) string { return "SELECT * FROM t" + strings.Repeat(", t", n-1) }, 15, "query"},
	{"ARRAY types", func(n int) string { return "SELECT CAST(a AS INT" + strings.Repeat(" ARRAY", n-1) + ")" }, 18, "type"},
}

// TestLongChains parses 5,000-term chains (10 KB of 1+1+...+1) and checks
// they print and parse back, and that 20,000 terms fail at the chain's
// first term for being too deep, on a stack too small for a parser that
// recursed once per term.
func TestLongChains(t *testing.T) {
	for _, c := range chains {
		t.Run(c.name, func(t *testing.T) {
			if c.kind == "" {
				return // nested, not a chain; TestNestingLimit has it
			}
			smallStack(512<<10, func() {
				n, err := parseScriptNode(c.text(5000))
				if err != nil {
					t.Fatal(err)
				}
				want := fmt.Sprintf("sql: line 1, column %d: %s too deep: its syntax tree has more than %d levels "+
					"(each operator in a chain such as a OR b OR c adds one)", c.col, c.kind, MaxTreeDepth)
				if _, err := parseScriptNode(c.text(20_000)); err == nil || err.Error() != want {
					t.Errorf("got %v\nwant %s", err, want)
				}
				// The printer recurses once per level: 5,000 need under 8 MiB.
				smallStack(8<<20, func() {
					if err := roundTrip(n, parseScriptNode); err != nil {
						t.Fatal(err)
					}
				})
			})
		})
	}
}

// TestTreeDepthLimit checks the limit to the level, with a chain of + in
// ParseExpr (whose tree is the chain), and that ParseScript goes on with
// the next statement after a statement too deep.
func TestTreeDepthLimit(t *testing.T) {
	chain := func(n int) string { return "1" + strings.Repeat("+1", n-1) }
	// n terms are n-1 additions above a literal: n levels.
	if _, err := ParseExpr(chain(MaxTreeDepth)); err != nil {
		t.Fatalf("%d levels: %v", MaxTreeDepth, err)
	}
	if _, err := ParseExpr(chain(MaxTreeDepth + 1)); err == nil || !strings.Contains(err.Error(), "column 1: expression too deep") {
		t.Fatalf("%d levels: %v", MaxTreeDepth+1, err)
	}
	stmts, err := ParseScript("SELECT " + chain(MaxTreeDepth) + ";\nSELECT 2")
	if len(stmts) != 1 || stmts[0].String() != "SELECT 2" {
		t.Fatalf("statements after the error: %v", stmts)
	}
	if el, ok := err.(ErrorList); !ok || len(el) != 1 || el[0].Pos.Line != 1 || el[0].Pos.Col != 8 {
		t.Fatalf("got %v", err)
	}
	if _, err := ParseType("INT" + strings.Repeat(" ARRAY", MaxTreeDepth)); err == nil || !strings.Contains(err.Error(), "type too deep") {
		t.Fatalf("got %v", err)
	}
}

func TestPlusChainIsLeftDeep(t *testing.T) {
	src := strings.TrimPrefix(chains[0].text(5000), "SELECT ")
	if len(src) != 9999 {
		t.Fatalf("%d bytes", len(src))
	}
	e, err := ParseExpr(src)
	if err != nil {
		t.Fatal(err)
	}
	terms := 1
	for b, ok := e.(*ast.Binary); ok; b, ok = b.L.(*ast.Binary) {
		if _, ok := b.R.(*ast.Literal); !ok || b.Op != ast.OpAdd {
			t.Fatalf("term %d: %s", terms, b)
		}
		terms++
	}
	if terms != 5000 {
		t.Fatalf("%d terms on the left spine", terms)
	}
}

// TestHostileTextLexedOnlySoFar checks that a parse that fails near the
// start of a long text lexes only the tokens it needed: 1 MiB of "(" costs
// a few hundred tokens, not a million.
func TestHostileTextLexedOnlySoFar(t *testing.T) {
	for _, src := range []string{
		"SELECT " + strings.Repeat("(", MaxScriptBytes-7),
		"SELECT 1 FROM t WHERE a IN " + strings.Repeat("(", MaxScriptBytes-27),
		"SELECT * FROM " + strings.Repeat("(", MaxScriptBytes-14),
		strings.Repeat("(", MaxScriptBytes),
		"SELECT " + strings.Repeat("- ", MaxScriptBytes/2-4),
		"SELECT 1 FROM ;" + strings.Repeat("x", MaxScriptBytes-15),
	} {
		p := newParser(src)
		p.run(func() { p.statement() })
		if len(p.errs) != 1 {
			t.Fatalf("%.20s...: %v", src, p.errs)
		}
		if p.toks.n > 2*MaxNestingDepth+10 {
			t.Errorf("%.20s...: %v after lexing %d tokens", src, p.errs, p.toks.n)
		}
	}
}

// TestHostileScriptMemory checks what ParseScript allocates for 1 MiB
// scripts that fail: it lexes them to the end, looking for the next
// statement, but keeps only a few chunks of tokens, and a chain too deep
// fails as soon as it is read (they allocated 358 MB and 143 MB).
func TestHostileScriptMemory(t *testing.T) {
	for _, src := range []string{
		"SELECT " + strings.Repeat("(", MaxScriptBytes-7),
		"SELECT 1" + strings.Repeat("+1", MaxScriptBytes/2-4),
		"SELECT * FROM t WHERE a = 1" + strings.Repeat(" OR a = 1", MaxScriptBytes/9-3),
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := ParseScript(src)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Fatalf("%.20s...: no error", src)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
			t.Errorf("%.20s...: %d bytes allocated", src, n)
		}
	}
}

// TestLeadingParenthesesScannedOnce checks that deciding, at each level of
// "((((", between a parenthesised query and a parenthesised expression
// looks at each token once, not once per level (which was quadratic).
func TestLeadingParenthesesScannedOnce(t *testing.T) {
	for _, src := range []string{
		strings.Repeat("(", 100_000) + "SELECT 1" + strings.Repeat(")", 100_000),
		"SELECT " + strings.Repeat("(", 100_000) + "1" + strings.Repeat(")", 100_000),
		"SELECT * FROM " + strings.Repeat("(", 100_000) + "t" + strings.Repeat(")", 100_000),
		"SELECT 1 FROM t WHERE a IN " + strings.Repeat("(", 100_000) + "1" + strings.Repeat(")", 100_000),
		"SELECT " + strings.Repeat("((SELECT ", 50_000) + "1" + strings.Repeat("))", 50_000),
	} {
		p := newParser(src)
		p.run(func() { p.statement() })
		if len(p.errs) != 1 || !strings.Contains(p.errs[0].Msg, "nested too deeply") {
			t.Fatalf("%.20s...: %v", src, p.errs)
		}
		// The first level scans the whole run; deeper levels reuse it.
		if p.scanned > len(src)/2+10 {
			t.Errorf("%.20s...: startsQuery looked at %d tokens of %d", src, p.scanned, p.toks.n)
		}
	}
}

func TestScriptSizeLimit(t *testing.T) {
	// A script of exactly MaxScriptBytes parses.
	stmt := "INSERT INTO t VALUES (1, 'a');\n"
	src := strings.Repeat(stmt, MaxScriptBytes/len(stmt))
	src += strings.Repeat(" ", MaxScriptBytes-len(src))
	stmts, err := ParseScript(src)
	if err != nil || len(stmts) != MaxScriptBytes/len(stmt) {
		t.Fatalf("%d bytes: %d statements, %v", len(src), len(stmts), err)
	}
	stmts, err = ParseScript(src + ";")
	want := fmt.Sprintf("sql: script is %d bytes, over the limit of %d bytes", MaxScriptBytes+1, MaxScriptBytes)
	if stmts != nil || err == nil || err.Error() != want {
		t.Fatalf("got %v, %v\nwant %s", stmts, err, want)
	}
	var perr *Error
	if !errors.As(err, &perr) {
		t.Fatalf("%T is not a *parser.Error", err)
	}
}

// largeInputs builds SQL of about size bytes in a few shapes: one INSERT
// ... VALUES of many rows, a script of many statements (the conformance
// SQL over and over), one wide CASE expression, and two hostile ones:
// 1+1+...+1, too deep past 10 KB, and "((((...", too deeply nested.
func largeInputs(b *testing.B, size int) map[string]string {
	var values strings.Builder
	values.WriteString("INSERT INTO orders VALUES ")
	for i := 0; values.Len() < size-100; i++ {
		if i > 0 {
			values.WriteString(", ")
		}
		fmt.Fprintf(&values, "(%d, 'customer-%d', %d.50, TIMESTAMP '2024-01-15 10:30:00', TRUE)", i, i%977, i%1000)
	}

	conf := conformanceSQL(b)
	var script strings.Builder
	for i := 0; script.Len()+len(conf[i%len(conf)]) <= size; i++ {
		script.WriteString(conf[i%len(conf)])
	}

	var cas strings.Builder
	cas.WriteString("SELECT CASE")
	for i := 0; cas.Len() < size-100; i++ {
		fmt.Fprintf(&cas, " WHEN k = %d THEN 'v%d'", i, i)
	}
	cas.WriteString(" ELSE NULL END AS v FROM t")
	return map[string]string{
		"values": values.String(), "script": script.String(), "case": cas.String(),
		"chain":  chains[0].text((size - 6) / 2),
		"parens": "SELECT " + strings.Repeat("(", size-8) + "1",
	}
}

// conformanceSQL is the conformance files' statements, each ending in ";\n".
func conformanceSQL(b *testing.B) []string {
	files, err := filepath.Glob(conformanceFiles)
	if err != nil || len(files) == 0 {
		b.Fatalf("no conformance files: %v", err)
	}
	var out []string
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		stmts, err := ParseScript(string(src))
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range stmts {
			out = append(out, s.Source().Text(string(src))+";\n")
		}
	}
	return out
}

// BenchmarkParseLarge parses 10 KB, 100 KB and 1 MB of SQL of each shape;
// MB/s stays about the same across sizes when parsing is linear. chain
// parses at 10 KB (5,000 terms) and fails at 100 KB and 1 MB; parens fails.
func BenchmarkParseLarge(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{{"10KB", 10_000}, {"100KB", 100_000}, {"1MB", 1_000_000}} {
		inputs := largeInputs(b, size.bytes)
		for _, shape := range []string{"values", "script", "case", "chain", "parens"} {
			src := inputs[shape]
			fails := shape == "parens" || shape == "chain" && size.bytes > 10_000
			b.Run(shape+"/"+size.name, func(b *testing.B) {
				if _, err := ParseScript(src); (err != nil) != fails {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(src)))
				b.ReportAllocs()
				cpu := cpuTime()
				for b.Loop() {
					ParseScript(src)
				}
				if cpu := cpuTime() - cpu; cpu > 0 {
					// NB: the process's CPU time, GC included, is steadier
					// than ns/op on a machine shared with other work.
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}
