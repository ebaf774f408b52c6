// Package ast defines the syntax tree of Braid's Flink SQL dialect.
//
// The parser (package sql/parser) produces it; the planner's binder reads
// it. Every node records its source position (Pos: byte offset, 1-based
// line and rune column) and prints itself back as SQL with String; the
// printed text parses to an equal tree, positions aside. Every statement
// also records the byte span of its source text (Statement.Source).
//
// The tree is syntax only: names are kept as written (Ident.Quoted says
// whether an identifier was back-quoted), numeric literals keep their exact
// text, and dotted names are lists of parts that the binder resolves.
//
// Walk and Inspect traverse a tree:
//
//	ast.Inspect(stmt, func(n ast.Node) bool {
//		if c, ok := n.(*ast.ColumnRef); ok {
//			fmt.Println(c.Parts[len(c.Parts)-1].Name, c.Position().Line)
//		}
//		return true
//	})
//
// Nodes are plain structs: build them by hand for tests or rewrites, and
// leave Pos zero where there is no source.
package ast
