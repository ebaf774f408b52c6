// Package runtime runs subtasks: one parallel instance of a job graph
// vertex each.
//
// A Subtask builds its vertex's operator chain from the OperatorSpecs
// (operators.NewSource for a leading source, operators.NewOperator for the
// rest), opens every operator with an operators.Context whose identity and
// key-group range come from the graph, and then runs one loop on one
// goroutine:
//
//   - a source vertex calls Source.Run with a collector that pushes each
//     batch through the chain;
//   - any other vertex reads its shuffle.Inbox and hands batches to the first
//     operator's Process, and calls its EndInput(i) once every channel of
//     input i has ended.
//
// Operator k's emissions go straight to operator k+1's Process on input 0;
// the last operator's go to one shuffle.Outbox per outgoing edge (none for a
// sink). When the inputs are exhausted, EndInput(0) cascades down the chain
// so each operator flushes into the next, the outboxes send end-of-input
// downstream, and the operators are closed. On error, cancellation or a
// panic the outboxes are aborted instead, so downstream fails rather than
// finishing on part of the data.
//
//	st, err := runtime.NewSubtask(runtime.Task{
//		Graph: graph, VertexID: 2, Subtask: 0,
//		Placements: placements, TaskManagerID: "tm-1",
//		Exchange: exchange, // this task manager's shuffle.Exchange
//		Context:  operators.Context{StateDir: dir, Logger: log},
//	})
//	// The inbox is registered now: upstream subtasks may connect.
//	err = st.Run(jobCtx) // nil at the end of a bounded job
//	rows := st.Metrics().RowsIn.Load()
//
// Watermark propagation and barrier alignment are to come; the loop
// currently drops watermark and barrier events.
package runtime
