// Package bench holds Braid's benchmark runners. Each runner is an ordinary
// function that sets up one piece of the engine, pushes a given number of
// rows through it and returns a Result; `go test -bench` wrappers
// (bench_test.go) and the `braid bench` command both call them, so the
// figures a developer sees in either place come from the same code.
//
// The runners and what they measure:
//
//   - LocalExchange: one producer hash-partitions 4096-row batches of
//     (BIGINT, BIGINT, 16-char STRING) into 4 local channels of one
//     shuffle.Exchange, drained by 4 goroutines.
//   - RemoteShuffle: the same rows over loopback gRPC between two Exchange
//     servers (Arrow IPC encode, gRPC, decode).
//   - JoinHot: the inner join operator probing a small build side that stays
//     in the state cache.
//   - JoinSpill: N distinct keys per side through the inner join with a small
//     state cache on a real directory, so state spills to Pebble; reports the
//     Go heap peak and the process's peak RSS.
//   - ClusterJoinSpill: the same join as SQL on a real jobmanager and
//     taskmanager, each its own process, sampling the task manager's RSS.
//   - CheckpointSize: an unbounded join on unique keys, on a jobmanager and
//     one taskmanager process, its state growing until a checkpoint holds
//     about 1 GiB; per checkpoint, the duration (the job manager's
//     braid_jobmanager_checkpoint_duration_seconds), the state and the bytes
//     uploaded (read from the checkpoint manifests: files no earlier
//     checkpoint referenced).
//   - CheckpointOverhead: rows/s of a bounded join and of a GROUP BY on the
//     same processes, without checkpoints and with one every 10 s.
//   - Recovery: a GROUP BY checkpointing every second on a jobmanager and
//     two taskmanager processes; time from a SIGKILL of a task manager, or
//     of the job manager, to the job RUNNING again and to its next
//     completed checkpoint.
//
// Rows counts the rows the runner pushed in (for the joins, the input rows
// of the timed phase); Elapsed is wall-clock time. RowsPerSecPerCore divides
// RowsPerSec by runtime.GOMAXPROCS(0) of the running process, the number of
// cores Go may use, whether or not the runner kept them all busy: a
// single-producer pipeline on a 2-core machine reports half its rate per
// core. For ClusterJoinSpill the work runs in other processes and the
// divisor is still this process's GOMAXPROCS (the same machine).
// CheckpointSize and Recovery measure times, not throughput: their Rows is
// 0 and their lines print no rates; Details break them down per checkpoint
// and per kill.
//
//	r, err := bench.LocalExchange(ctx, bench.ExchangeOptions{Rows: 10_000_000})
//	if err != nil { ... }
//	fmt.Println(r) // local-exchange rows=10000000 ... rows/s=...
package bench
