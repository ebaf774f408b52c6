// Package taskmanager is the worker server of a Braid cluster. A task
// manager offers a fixed number of slots to the job manager, runs the
// subtasks the job manager deploys on it, and exchanges batches with the
// other task managers.
//
// It serves TaskService (deploy and cancel, for the job manager),
// DataService (the shuffle exchange, for other task managers) and the
// standard gRPC health service on one port. It registers with the job
// manager (retrying until the job manager answers), then heartbeats every
// third of the job manager's heartbeat timeout and registers again when the
// job manager no longer knows it.
//
// Each deployed subtask runs in its own goroutine under its job's context;
// it reports RUNNING and then FINISHED, FAILED or CANCELED, with its row
// counters, to the job manager. A panic in a subtask fails that subtask and
// never the process. Collect sinks stream their rows to the job manager as
// Arrow IPC over ClusterService.PushResults.
//
//	tm, err := taskmanager.New(taskmanager.Config{JobManager: "127.0.0.1:6123", Listen: "127.0.0.1:0", DataDir: dir})
//	if err != nil { ... }
//	if err := tm.Start(ctx); err != nil { ... }
//	defer tm.Close()
//	err = tm.WaitRegistered(ctx)
package taskmanager
