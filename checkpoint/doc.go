// Package checkpoint takes, stores and retires Braid's checkpoints: the
// aligned-barrier snapshots (Chandy-Lamport, as in Flink) from which a job
// restarts, at the same or another parallelism.
//
// It has four parts:
//
//   - Storage: checkpoint storage through gocloud.dev/blob, a local
//     directory (file:///abs/dir) or an S3-compatible bucket
//     (s3://bucket/prefix?endpoint=...&region=...&use_path_style=true).
//     Every Put is atomic and returns the object's size and CRC-32C.
//   - BackendHandle, SubtaskState and Manifest: what a subtask acknowledges,
//     and the checkpoint's _metadata file that records all of it with a
//     trailing checksum.
//   - Uploader and Download: a subtask's Pebble checkpoint directory goes up
//     incrementally (an SST is uploaded once and referenced by later
//     checkpoints) and comes back verified, file by file.
//   - Coordinator: the job manager's checkpoint coordinator as a pure state
//     machine. Events (ticks, acknowledgements, declines, commit outcomes)
//     go in and Actions come out; it starts no goroutine, reads no clock and
//     does no I/O, like etcd's raft. The job's single loop performs the
//     actions and feeds the outcomes back.
//
// The job manager's loop drives a Coordinator like this:
//
//	c := checkpoint.NewCoordinator(cfg, tasks, sources, retained, time.Now())
//	for {
//		var acts []checkpoint.Action
//		select {
//		case now := <-ticker.C:
//			acts = c.Tick(now)
//		case a := <-acks:
//			acts = c.Ack(a.ID, a.Task, a.State, time.Now())
//		case <-ctx.Done():
//			return
//		}
//		for _, a := range acts {
//			switch a := a.(type) {
//			case checkpoint.Trigger:        // send the trigger RPC to a.Sources
//			case checkpoint.CommitManifest: // WriteManifest(a.ManifestKey), then the fenced etcd
//				                            // pointer; report c.Committed or c.CommitFailed
//			case checkpoint.Notify:         // tell every task; transactional sinks commit
//			case checkpoint.Abort:          // log, fail a pending savepoint request
//			case checkpoint.Delete:         // remove etcd pointers, then storage keys
//			case checkpoint.FailJob:        // restart the job per its restart strategy
//			}
//		}
//	}
//
// A task manager, at each barrier of a stateful subtask, makes a local
// Pebble checkpoint and uploads it with the subtask's Uploader:
//
//	h, n, err := up.Upload(ctx, localDir, checkpoint.Dir(id, false)+"/"+subtaskName)
//	// acknowledge SubtaskState{Vertex, Subtask, Operators, Backend: h};
//	// on the completion notice for id: up.Seed(h)
//
// and a restored subtask calls Download with its handle from the manifest,
// then Seed with the same handle.
//
// Storage layout under the storage's base URI: chk-<id>/ and savepoint-<id>/
// hold a checkpoint's _metadata and its private (non-SST) files; SSTs go under
// the shared prefix the task manager gives its uploaders. Only the
// coordinator deletes, by reference count, and never a key that a retained
// checkpoint or savepoint references.
package checkpoint
