package parser

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/braidflow/braid/sql/ast"
	"github.com/cockroachdb/datadriven"
)

var (
	posType  = reflect.TypeFor[ast.Pos]()
	spanType = reflect.TypeFor[ast.Span]()
)

// equalModPos compares two values deeply, ignoring every ast.Pos and
// ast.Span.
func equalModPos(a, b reflect.Value) bool {
	if a.Kind() != b.Kind() || a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalModPos(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.Len() != b.Len() || a.IsNil() != b.IsNil() {
			return false
		}
		for i := 0; i < a.Len(); i++ {
			if !equalModPos(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		if a.Type() == posType || a.Type() == spanType {
			return true
		}
		for i := 0; i < a.NumField(); i++ {
			if !equalModPos(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	}
	return a.Interface() == b.Interface()
}

func sameTree(a, b ast.Node) bool {
	return equalModPos(reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem())
}

// roundTrip checks that n prints to SQL that parses back to an equal tree
// and prints identically.
func roundTrip(n ast.Node, parse func(string) (ast.Node, error)) error {
	out := n.String()
	n2, err := parse(out)
	if err != nil {
		return fmt.Errorf("printed SQL does not parse: %s\n%v", out, err)
	}
	if out2 := n2.String(); out2 != out {
		return fmt.Errorf("printing is not stable:\n%s\n%s", out, out2)
	}
	if !sameTree(n, n2) {
		return fmt.Errorf("reparsed tree differs for %s", out)
	}
	return nil
}

func parseStmtNode(s string) (ast.Node, error) { return ParseStatement(s) }
func parseExprNode(s string) (ast.Node, error) { return ParseExpr(s) }
func parseTypeNode(s string) (ast.Node, error) { return ParseType(s) }

// checkSameAsOriginal asserts that the original tree equals the reparse of
// its printed form, modulo positions.
func checkSameAsOriginal(t testing.TB, n ast.Node, parse func(string) (ast.Node, error)) {
	t.Helper()
	if err := roundTrip(n, parse); err != nil {
		t.Fatal(err)
	}
}

func positions(n ast.Node) string {
	var b strings.Builder
	ast.Inspect(n, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.Ident, *ast.ObjectName:
			return true
		}
		p := n.Position()
		fmt.Fprintf(&b, "%d:%d %T %s\n", p.Line, p.Col, n, n.String())
		return true
	})
	return b.String()
}

func TestDataDriven(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) { runDataDriven(t, path) })
	}
}

func runDataDriven(t *testing.T, path string) {
	{
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			switch td.Cmd {
			case "parse":
				stmts, err := ParseScript(td.Input)
				var b strings.Builder
				for _, s := range stmts {
					b.WriteString(s.String())
					b.WriteString("\n")
					checkSameAsOriginal(t, s, parseStmtNode)
					if td.HasArg("pos") {
						b.WriteString(positions(s))
					}
					if td.HasArg("span") {
						fmt.Fprintf(&b, "span %q\n", s.Source().Text(td.Input))
					}
				}
				if err != nil {
					b.WriteString("error:\n" + err.Error() + "\n")
				}
				return b.String()
			case "expr":
				e, err := ParseExpr(td.Input)
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				checkSameAsOriginal(t, e, parseExprNode)
				out := e.String() + "\n"
				if td.HasArg("pos") {
					out += positions(e)
				}
				if td.HasArg("tree") {
					out += tree(e)
				}
				return out
			case "type":
				ty, err := ParseType(td.Input)
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				checkSameAsOriginal(t, ty, parseTypeNode)
				return ty.String() + "\n" + fmt.Sprintf("name=%s args=%v\n", ty.Name, ty.Args)
			}
			t.Fatalf("unknown command %s", td.Cmd)
			return ""
		})
	}
}

// tree prints an expression fully parenthesized, to show how it grouped.
func tree(e ast.Node) string {
	var b strings.Builder
	var rec func(n ast.Node)
	rec = func(n ast.Node) {
		switch n := n.(type) {
		case *ast.Binary:
			b.WriteString("(")
			rec(n.L)
			b.WriteString(" " + string(n.Op) + " ")
			rec(n.R)
			b.WriteString(")")
		case *ast.Unary:
			b.WriteString("(" + string(n.Op) + " ")
			rec(n.X)
			b.WriteString(")")
		default:
			b.WriteString("{" + n.String() + "}")
		}
	}
	rec(e)
	b.WriteString("\n")
	return b.String()
}

// conformanceFiles is the project's copy of the users' tutorial SQL, kept
// with the end-to-end suite that runs it.
const conformanceFiles = "../../e2e/testdata/conformance/*.sql"

func TestConformanceFilesParse(t *testing.T) {
	files, err := filepath.Glob(conformanceFiles)
	if err != nil || len(files) == 0 {
		t.Fatalf("no conformance files: %v", err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		stmts, err := ParseScript(string(src))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if len(stmts) == 0 {
			t.Errorf("%s: no statements", f)
		}
		for _, s := range stmts {
			text := s.Source().Text(string(src))
			again, err := ParseStatement(text)
			if err != nil {
				t.Errorf("%s: statement span %q does not parse alone: %v", f, text, err)
				continue
			}
			if !sameTree(again, s) {
				t.Errorf("%s: span reparse differs: %s", f, text)
			}
			if err := roundTrip(s, parseStmtNode); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
}

func TestErrorFormat(t *testing.T) {
	_, err := ParseStatement("SELECT a\nFROM t WHERE")
	el, ok := err.(ErrorList)
	if !ok || len(el) != 1 {
		t.Fatalf("got %T %v", err, err)
	}
	if el[0].Pos.Line != 2 || el[0].Pos.Col != 13 {
		t.Errorf("position %+v", el[0].Pos)
	}
	want := "sql: line 2, column 13: unexpected end of input, expected expression"
	if err.Error() != want {
		t.Errorf("got  %s\nwant %s", err, want)
	}
}

func TestErrorLimit(t *testing.T) {
	src := strings.Repeat("SELEC 1;\n", 25)
	_, err := ParseScript(src)
	el, ok := err.(ErrorList)
	if !ok || len(el) != maxErrors {
		t.Fatalf("want %d errors, got %v", maxErrors, err)
	}
	if el[9].Pos.Line != 10 {
		t.Errorf("tenth error at %+v", el[9].Pos)
	}
}

func TestScriptRecoversAfterError(t *testing.T) {
	stmts, err := ParseScript("SELECT 1; SELEC 2; SELECT 'a;b' AS `x;y`; -- c;\n/* d; */ SHOW TABLES")
	if err == nil || len(stmts) != 3 {
		t.Fatalf("stmts %v err %v", stmts, err)
	}
	if got := stmts[1].String(); got != "SELECT 'a;b' AS `x;y`" {
		t.Errorf("got %s", got)
	}
}

func TestPositionsAreRunes(t *testing.T) {
	e, err := ParseExpr("'héllo' || `naïve` + ü")
	if err != nil {
		t.Fatal(err)
	}
	add := e.(*ast.Binary).R.(*ast.Binary)
	if p := add.R.Position(); p.Col != 22 || p.Offset != 23 {
		t.Errorf("position of ü: %+v", p)
	}
}

var seeds = []string{
	"SELECT a, b FROM t WHERE a > 1 AND NOT b IS NULL ORDER BY a DESC LIMIT 3",
	"INSERT INTO t SELECT * FROM TABLE(TUMBLE(TABLE s, DESCRIPTOR(ts), INTERVAL '10' MINUTE))",
	"CREATE TABLE t (a INT, b AS a + 1, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'x')",
	"SELECT CASE WHEN a THEN 1 ELSE 2 END, CAST(x AS DECIMAL(10, 2)), ARRAY[1, 2][1], MAP['a', 1]",
	"SELECT /*+ STATE_TTL('o' = '1d') */ x FROM o JOIN p FOR SYSTEM_TIME AS OF o.ts AS q ON TRUE",
	"SELECT a FROM t UNION ALL (SELECT b FROM u INTERSECT SELECT c FROM v)",
	"EXECUTE STATEMENT SET BEGIN INSERT INTO a VALUES (1); INSERT INTO b VALUES (2); END",
	"SELECT 1 -- c\n; /* x */ SELECT 'it''s', `a``b`",
	"SELECT COUNT(*) OVER (PARTITION BY a ORDER BY b ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t",
	"SELECT TRIM(BOTH 'x' FROM y), POSITION('a' IN b), SUBSTRING(s FROM 2 FOR 3), EXTRACT(DAY FROM d)",
}

// FuzzParse asserts the parser never panics or overflows its stack, and
// that whatever it accepts as a script, an expression or a type prints to
// SQL that reparses (within the limits) and prints identically. The corpus
// in testdata/fuzz/FuzzParse holds, besides what fuzzing found, inputs
// nested past MaxNestingDepth and long chains (see limits.go).
func FuzzParse(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		stmts, _ := ParseScript(src)
		for _, s := range stmts {
			if err := roundTrip(s, parseStmtNode); err != nil {
				t.Fatalf("input %q: %v", src, err)
			}
		}
		if e, err := ParseExpr(src); err == nil {
			if err := roundTrip(e, parseExprNode); err != nil {
				t.Fatalf("input %q: %v", src, err)
			}
		}
		if ty, err := ParseType(src); err == nil {
			if err := roundTrip(ty, parseTypeNode); err != nil {
				t.Fatalf("input %q: %v", src, err)
			}
		}
	})
}

func BenchmarkParseScript(b *testing.B) {
	files, _ := filepath.Glob(conformanceFiles)
	var all strings.Builder
	for _, f := range files {
		src, _ := os.ReadFile(f)
		all.Write(src)
		all.WriteString(";\n")
	}
	src := all.String()
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseScript(src); err != nil {
			b.Fatal(err)
		}
	}
}
