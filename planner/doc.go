// Package planner turns parsed SQL into a job graph (jobgraph.Graph), its
// options resolved and validated.
//
// Binding resolves names against the catalog and types every expression
// (errors carry the line and column of the offending node); the bound query
// is a small logical plan of scans, values, filters, projections and joins.
// Common table expressions and views are inlined while binding: each
// reference binds the CTE's query, or the view's stored SQL text, again in
// the scope where it was defined (bind_with.go), so they leave no trace in
// the plan.
// The physical step walks that plan and assembles vertices: sources start a
// vertex, filters and projections chain onto the vertex below them as Calc
// operators, a join starts a two-input vertex fed by hash edges on its
// equality keys (conjuncts that touch one side only are pushed below it), and
// the sink (a table, or the collect sink that streams a SELECT to the client)
// closes the graph.
//
//	p := &planner.Planner{Catalog: sess, Connectors: resolver, Options: opts}
//	plan, err := p.PlanStatement(ctx, stmt)   // an *ast.InsertStmt or *ast.QueryStmt
//	// plan.Graph is ready for the scheduler; plan.Result names the columns of a SELECT.
package planner
