// Package jobmanager is the control plane of a Braid cluster: it accepts
// jobs, places their subtasks on registered task managers, deploys them,
// tracks their state and relays the rows of collect sinks back to clients.
//
// The job manager serves three gRPC services on one port: ClientService for
// users (its SQL part is delegated to a Gateway), ClusterService for task
// managers (registration, heartbeats, status reports, result chunks) and the
// standard health service. An optional HTTP port serves /healthz and
// Prometheus /metrics.
//
// ClientService callers authenticate (Config.Clients, package
// internal/clientauth) and act in their role: a viewer sees its own jobs
// and runs queries, an admin does everything (roles.go). Without client
// authentication every caller is the anonymous admin, which New allows
// only on a loopback address or with Config.Insecure.
//
// etcd holds the cluster's truth: every task manager registers under a lease
// of Config.HeartbeatTimeout and renews it with each heartbeat; a task
// manager whose lease lapses is gone, and every unfinished job that had a
// subtask on it fails with a message naming it. Job records (spec, status,
// placements) are written to etcd as the job moves through its states
// CREATED -> RUNNING -> FINISHED | FAILED | CANCELED.
//
// A minimal use, as localcluster does:
//
//	jm, err := jobmanager.New(jobmanager.Config{Listen: "127.0.0.1:0", DataDir: dir, Logger: log})
//	if err != nil { ... }
//	if err := jm.Start(ctx); err != nil { ... }
//	defer jm.Close()
//	job, err := jm.SubmitJob(ctx, graph, func(ipc []byte, end bool) error { ...; return nil })
//	status, err := job.Wait(ctx)
package jobmanager
