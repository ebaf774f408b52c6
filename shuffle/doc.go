// Package shuffle moves batches between the subtasks of a job.
//
// Each producing subtask has one Outbox per outgoing edge. Send partitions a
// batch by the edge's kind (FORWARD, HASH by key group, BROADCAST, REBALANCE,
// SINGLE), gathering each target's rows column by column (Take), and hands
// the parts to the edge's channels. A channel to a subtask on the same task
// manager is a bounded Go channel of Events into the target's Inbox; a
// channel to another task manager is a DataService.Exchange gRPC stream
// carrying a ChannelHeader, then Arrow IPC bytes (schema once, small batches
// coalesced) and control events. Close sends end-of-input on every channel.
//
// Each consuming subtask has one Inbox merging its input channels. Next
// returns events in arrival order (per channel, in send order) and reports
// end-of-input once per logical input, after all of that input's channels
// ended.
//
// Nothing queues without bound: an inbox buffers a few events per channel, a
// remote channel has a fixed number of encode buffers, and the gRPC stream
// has a fixed flow-control window. The Exchange reads a stream's next
// message only once the previous event is queued, so a slow consumer blocks
// its producers' Send. Every blocking call takes a context.
//
// The Exchange is a task manager's registry of inboxes and its DataService
// server. A deployed subtask registers its Inbox before it starts; senders
// (local or remote) wait for that registration up to a timeout.
//
//	x := shuffle.NewExchange(shuffle.ExchangeOptions{Logger: log})
//	braidv1.RegisterDataServiceServer(grpcServer, x) // grpc.NewServer(shuffle.ServerOptions()...)
//
//	// Consumer: subtask 0 of vertex 2, fed by subtasks 0 and 1 of vertex 1.
//	in, _ := shuffle.NewInbox(1, []shuffle.ChannelSpec{
//		{Input: 0, SourceVertex: 1, SourceSubtask: 0},
//		{Input: 0, SourceVertex: 1, SourceSubtask: 1},
//	}, 0)
//	x.Register(shuffle.SubtaskKey{JobID: "j", Vertex: 2, Subtask: 0}, in)
//	for {
//		input, ev, err := in.Next(ctx) // io.EOF once every input ended
//		...
//	}
//
//	// Producer: subtask 0 of vertex 1.
//	out, _ := shuffle.NewOutbox(x, shuffle.OutboxSpec{
//		JobID: "j", SourceVertex: 1, SourceSubtask: 0, TargetVertex: 2,
//		Partitioning: types.PartitionHash, KeyColumns: []int{0},
//		Targets: []shuffle.Target{{Local: true}, {Address: "tm-2:7001"}},
//	})
//	err := out.Send(ctx, batch) // borrows batch
//	err = out.Close(ctx)        // end-of-input downstream
//
// Barriers and watermarks travel as Events (EventBarrier, EventWatermark) on
// the same channels; aligning and combining them is the runtime's job.
package shuffle
