// Package expr is Braid's expression engine: a typed expression IR that the
// planner builds and ships as JSON, Flink's typing rules (ResolveCall,
// CommonType, CanCast), and a vectorized evaluator over Arrow batches.
//
// Evaluation works a column at a time: each input column is read into a
// typed slice (integers, dates, times, timestamps and intervals as int64;
// FLOAT/DOUBLE as float64; DECIMAL as decimal128.Num; strings; bytes;
// bools), kernels chosen at compile time loop over those slices, and the
// result is wrapped as an Arrow array in the layout types.ArrowType fixes.
//
//	e, _ := expr.ResolveCall(">", []*expr.Expr{expr.Column(0, types.BigInt), lit10})
//	f, _ := expr.CompileFilter(e, &expr.Env{Location: time.UTC})
//	sel, err := f.Select(batch, sel) // rows where the predicate is TRUE
//
// Every function is one entry of the library in registry.go: its names,
// the resolver that types a call (ResolveCall) and the builder of its
// vectorized kernel (Compile); adding a function is adding an entry.
//
// Errors from ResolveCall are *UserError values without position; runtime
// errors (a bad CAST, division by zero) name the function and the value.
//
// Evaluation is bounded: a function that would build a string or binary
// value longer than Env.MaxStringBytes (DefaultMaxStringBytes, 16 MiB)
// fails before allocating it, and so does a result column over the 2 GiB
// an Arrow column holds. Expressions encode to JSON and back in time linear
// in their size, however deep (json.go).
package expr
