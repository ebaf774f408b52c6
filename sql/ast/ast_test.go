package ast

import (
	"fmt"
	"runtime/debug"
	"strings"
	"testing"
)

func id(s string) *Ident { return &Ident{Name: s} }

func col(parts ...string) *ColumnRef {
	c := &ColumnRef{}
	for _, p := range parts {
		c.Parts = append(c.Parts, id(p))
	}
	return c
}

func num(s string) *Literal { return &Literal{Kind: LitNumber, Value: s} }

func TestPrintPrecedence(t *testing.T) {
	cases := []struct {
		e    Expr
		want string
	}{
		{&Binary{Op: OpMul, L: &Binary{Op: OpAdd, L: col("a"), R: num("1")}, R: col("b")}, "(a + 1) * b"},
		{&Binary{Op: OpSub, L: col("a"), R: &Binary{Op: OpSub, L: col("b"), R: col("c")}}, "a - (b - c)"},
		{&Binary{Op: OpSub, L: &Binary{Op: OpSub, L: col("a"), R: col("b")}, R: col("c")}, "a - b - c"},
		{&Unary{Op: OpNeg, X: &Unary{Op: OpNeg, X: num("1")}}, "-(-1)"},
		{&Unary{Op: OpNot, X: &Binary{Op: OpOr, L: col("a"), R: col("b")}}, "NOT (a OR b)"},
		{&Binary{Op: OpAnd, L: &Binary{Op: OpOr, L: col("a"), R: col("b")}, R: col("c")}, "(a OR b) AND c"},
		{&Between{X: col("t", "x"), Low: num("1"), High: &Binary{Op: OpAnd, L: col("p"), R: col("q")}}, "t.x BETWEEN 1 AND (p AND q)"},
		{&IsExpr{X: &Binary{Op: OpEq, L: col("a"), R: num("1")}, Not: true, What: "NULL"}, "a = 1 IS NOT NULL"},
		{&FieldAccess{X: col("r", "s"), Field: id("f")}, "(r.s).f"},
		{col("select", "a b"), "`select`.`a b`"},
		{&Literal{Kind: LitString, Value: "it's"}, "'it''s'"},
		{&IntervalLit{Value: "1 02:03", Qualifier: &IntervalQualifier{Start: "DAY", End: "MINUTE"}}, "INTERVAL '1 02:03' DAY TO MINUTE"},
	}
	for _, c := range cases {
		if got := c.e.String(); got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
	}
}

func TestPrintStatement(t *testing.T) {
	s := &CreateTableStmt{
		Temporary: true,
		Name:      &ObjectName{Parts: []*Ident{id("orders")}},
		Columns: []*ColumnDef{
			{Name: id("id"), Type: &Type{Name: "INT", Null: NotNull}},
			{Name: id("ts"), Type: &Type{Name: "TIMESTAMP", Args: []int{3}}},
			{Name: id("tags"), Type: &Type{Name: "ARRAY", Elem: &Type{Name: "STRING"}}},
		},
		Watermarks: []*Watermark{{Column: id("ts"), Expr: &Binary{Op: OpSub, L: col("ts"),
			R: &IntervalLit{Value: "5", Qualifier: &IntervalQualifier{Start: "SECOND"}}}}},
		PrimaryKey: &PrimaryKey{Columns: []*Ident{id("id")}, NotEnforced: true},
		Options:    []*Option{{Key: "connector", Value: "datagen"}},
	}
	want := "CREATE TEMPORARY TABLE orders (id INT NOT NULL, ts TIMESTAMP(3), tags ARRAY<STRING>, " +
		"WATERMARK FOR ts AS ts - INTERVAL '5' SECOND, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'datagen')"
	if got := s.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestWalk(t *testing.T) {
	q := &Query{Body: &Select{
		Items: []*SelectItem{{Expr: col("a")}, {Expr: &FuncCall{Name: &ObjectName{Parts: []*Ident{id("f")}}, Args: []Expr{col("b")}}}},
		From:  &TableName{Name: &ObjectName{Parts: []*Ident{id("t")}}},
		Where: &Binary{Op: OpGt, L: col("c"), R: num("1")},
	}}
	var names []string
	Inspect(q, func(n Node) bool {
		if c, ok := n.(*ColumnRef); ok {
			names = append(names, c.Parts[0].Name)
		}
		return true
	})
	if got := len(names); got != 3 || names[0] != "a" || names[1] != "b" || names[2] != "c" {
		t.Fatalf("columns visited: %v", names)
	}
	// Returning false prunes the subtree.
	count := 0
	Inspect(q, func(n Node) bool {
		count++
		_, isSelect := n.(*Select)
		return !isSelect
	})
	if count != 2 {
		t.Fatalf("pruned walk visited %d nodes, want 2", count)
	}
}

// trace records Walk's calls: the type of each node visited, and ")" for
// each Visit(nil).
type trace struct{ b *strings.Builder }

func (t trace) Visit(n Node) Visitor {
	if n == nil {
		t.b.WriteString(")")
		return nil
	}
	fmt.Fprintf(t.b, " (%T", n)
	if _, ok := n.(*Literal); ok {
		return nil // no children visited, and no Visit(nil)
	}
	return t
}

func TestWalkOrder(t *testing.T) {
	e := &Binary{Op: OpAdd, L: &Unary{Op: OpNeg, X: col("a")}, R: num("1")}
	var b strings.Builder
	Walk(trace{&b}, e)
	want := " (*ast.Binary (*ast.Unary (*ast.ColumnRef (*ast.Ident))) (*ast.Literal)"
	if b.String() != want {
		t.Errorf("got  %s\nwant %s", b.String(), want)
	}
}

// TestWalkDeep walks a chain 200,000 levels deep on a 1 MiB stack: Walk
// keeps its own stack.
func TestWalkDeep(t *testing.T) {
	var e Expr = num("1")
	for range 200_000 {
		e = &Binary{Op: OpAdd, L: e, R: num("1")}
	}
	old := debug.SetMaxStack(1 << 20)
	defer debug.SetMaxStack(old)
	n := 0
	Inspect(e, func(Node) bool { n++; return true })
	if n != 400_001 {
		t.Fatalf("visited %d nodes", n)
	}
}
