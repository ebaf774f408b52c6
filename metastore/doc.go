// Package metastore keeps the cluster's truth in etcd: the catalog, job
// records, checkpoint pointers, the job manager leader and task manager
// membership, all under one key prefix (default "/braid"). It also runs an embedded single-member etcd server for local
// clusters and tests, so Braid needs no outside service on one machine.
//
// Key space under the prefix (each name segment path-escaped, so a name
// containing '/' stays one segment):
//
//	catalog/databases/<db>          empty; the default database is implicit
//	catalog/tables/<db>/<name>      JSON of catalog.Table
//	jobs/<id>/spec                  JSON: name, SQL (cut), start time, graph (zstd) or GraphRef, placements (zstd)
//	jobs/<id>/status                JSON: status, error, end time
//	jobs/<id>/checkpoints/<n>       JSON of CheckpointPointer (n zero-padded)
//	jobs/<id>/latest, latest-id     the latest checkpoint, and its id as text
//	leader/<lease>                  election keys; the oldest one leads
//	taskmanagers/<id>               JSON of TaskManagerInfo, under a lease
//
// Values stay small (etcd refuses values over 1.5 MiB): specs and pointers,
// never bulk data. A job's SQL text is cut to MaxSQLBytes; a graph over
// MaxInlineGraphBytes compressed must be kept elsewhere, referenced by a
// GraphRef; a spec over MaxJobRecordBytes is refused (RecordTooLargeError).
// DeleteJobAs removes everything under jobs/<id>/. Connect reaches an
// external etcd over TLS with WithTLS (TLSFiles).
//
// Membership: the job manager registers each task manager with a lease and
// renews it on the task manager's heartbeat; a task manager that stops
// heartbeating loses its key when the lease lapses, and WatchTaskManagers
// reports the removal. The watch re-lists after compaction, so a removal is
// never missed.
//
// Checkpoints: CommitCheckpoint writes a pointer and moves latest in one
// transaction fenced by the leader's term (Leadership.Revision) and by the
// previous latest id, so a deposed job manager cannot commit.
//
// Example, a local cluster's metadata:
//
//	e, err := metastore.StartEmbeddedEtcd(dir, 0, 0, logger) // free ports
//	if err != nil { ... }
//	defer e.Close()
//	s, err := metastore.Connect(ctx, e.Endpoints(), "", logger)
//	if err != nil { ... }
//	defer s.Close()
//	err = s.Catalog().CreateTable(ctx, table) // catalog.ErrExists if present
//	err = s.RegisterTaskManager(ctx, metastore.TaskManagerInfo{ID: "tm-1", Address: addr, Slots: 4}, 10*time.Second)
//	for ev := range s.WatchTaskManagers(ctx) { ... }
package metastore
