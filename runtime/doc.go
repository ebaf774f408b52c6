// Package runtime runs subtasks: one parallel instance of a job graph
// vertex each.
//
// A Subtask builds its vertex's operator chain from the typed specs of
// its jobgraph.Graph (operators.NewSource for a leading source,
// operators.NewOperator for the rest), opens every operator with an
// operators.Context whose identity, key-group range and session time zone
// come from the graph, and then runs one loop on one goroutine:
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
// Watermarks: a vertex's input watermark is the minimum over its inbox
// channels (each channel's only rises; the channels of an ended input count
// as operators.MaxWatermark). When it rises, it goes down the chain through
// each collector, which passes on only watermarks above its last one: an
// operator implementing operators.WatermarkHandler gets ProcessWatermark
// and forwards what it wants with operators.EmitWatermark; any other is
// passed through. After the last operator, watermarks go on every outbox's
// channels. At the end of the input (a source's Run returning, or every
// input ended) MaxWatermark goes down the chain before each EndInput and
// out to every outbox before end-of-input, so bounded jobs fire every
// window.
//
// Idleness (table.exec.source.idle-timeout): a source subtask that emitted
// no batch for the timeout tells its outboxes it is idle
// (shuffle.EventIdle), and that it is active again before its next batch
// or watermark. A receiver leaves idle channels out of its input
// watermark; when every live channel is idle it takes the highest of their
// watermarks (as Flink's StatusWatermarkValve does) and is itself idle
// downstream. A channel that comes back
// with a lower watermark holds the input watermark until it catches up;
// the watermark never goes back.
//
// Barrier alignment is to come; the loop drops barrier events.
package runtime
