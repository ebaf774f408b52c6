// Package parser turns Flink SQL text into the syntax tree of package
// sql/ast: a hand-written lexer over the input string and a
// recursive-descent parser.
//
//	stmts, err := parser.ParseScript("CREATE TABLE t (a INT); SELECT a FROM t;")
//	if err != nil {
//		// err is an ErrorList; each *Error reads
//		// "sql: line L, column C: unexpected X, expected Y, Z or W".
//	}
//	for _, s := range stmts {
//		fmt.Println(s.String(), s.Source())
//	}
//
// ParseScript splits on ';' outside strings, quoted identifiers and
// comments, skips empty statements, and after an error resumes at the next
// ';', stopping after ten errors. ParseStatement, ParseExpr and ParseType
// parse exactly one statement, expression or type (the catalog stores
// computed-column and watermark expressions as text and re-parses them with
// ParseExpr). All functions are safe for concurrent use; they share no
// state.
//
// The parser takes SQL from the network, so it has limits (limits.go):
// ParseScript refuses scripts over MaxScriptBytes, and every function
// refuses, at the position where it is exceeded, nesting past
// MaxNestingDepth and a syntax tree deeper than MaxTreeDepth. It recurses
// only where SQL nests, and reads chains of operators (a OR b OR ...) and
// runs of prefix signs in loops, so its stack stays bounded and its time
// linear in the text. What it accepts prints, with String, to SQL within
// the same nesting and depth limits.
//
// Keywords are case-insensitive; identifiers keep their spelling, and
// ast.IsReserved lists the words that need back quotes to be used as names.
// Not supported yet, with a clear error: MATCH_RECOGNIZE,
// QUALIFY, ALTER other than ALTER TABLE SET, RESET and RENAME TO, CREATE
// FUNCTION/CATALOG.
package parser
