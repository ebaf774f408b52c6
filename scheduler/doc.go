// Package scheduler decides where a job's subtasks run. It is pure: no I/O,
// no goroutines. The job manager feeds it task manager membership and job
// lifecycle events and performs what it returns.
//
// Placement follows Flink's slot sharing: slot i of a job holds subtask i of
// every vertex, so a job whose largest vertex parallelism is p takes p
// slots, and a forward edge between vertices of equal parallelism stays in
// one process. Slots are taken round robin over the task managers, most free
// slots first, so a parallel operator spreads over the cluster:
//
//	pool := scheduler.NewSlotPool()
//	pool.Add("tm-1", "10.0.0.1:7000", 2)
//	pool.Add("tm-2", "10.0.0.2:7000", 2)
//	// source p=2, aggregate p=4: four slots, tm-1 tm-2 tm-1 tm-2.
//	placements, err := pool.Schedule(jobID, graph)
//	...
//	pool.Release(jobID) // when the job ends
//	lost := pool.Remove("tm-2") // jobs that must fail over
//
// A new job asks with Request instead, which queues it when too few slots
// are free; requests are granted first come, first served as slots free up
// or task managers join, and a restarting job's slots (Schedule) are
// withheld from the queue:
//
//	req, err := pool.Request(jobID, graph)
//	select {
//	case <-req.Ready():
//		placements, err := req.Placements()
//	case <-timeout:
//		pool.Withdraw(req) // leaves the queue, or gives a late grant back
//	}
//
// Place is the same decision over a given list of task managers, for
// callers that keep their own bookkeeping.
//
// JobStatus is the job lifecycle as a small state machine: CREATED, RUNNING,
// then one of the terminal FINISHED, FAILED, CANCELED. metastore stores the
// status strings; CheckTransition plugs the machine into
// metastore.Store.SetStatusCheck.
//
// RestartPolicy is the job's restart strategy (none, fixed-delay,
// exponential-delay, failure-rate, as jobgraph.ResolveRestartStrategy
// resolved it from Flink's options): the job's loop reports each failure
// with its error class and the time, and gets back whether to restart and
// after what delay:
//
//	p := scheduler.NewRestartPolicy(graph.Restart, nil)
//	restart, delay, reason := p.OnFailure(now, types.ClassOf(err))
//	...
//	p.OnRunning(now) // every subtask runs again
//
// JobLifecycle is a job's whole lifecycle as a pure state machine, built on
// JobStatus and RestartPolicy: events (an attempt deployed, a subtask
// report, a lost task manager, failing checkpoints, a cancel) go in,
// actions (record a status, cancel an attempt, schedule a restart, deploy
// the next attempt, start or stop checkpoints, finish) come out, for the
// job manager to perform in order (testdata/lifecycle.txt):
//
//	lc := scheduler.NewJobLifecycle(scheduler.LifecycleConfig{Graph: graph})
//	if lc.Deploying(0, placements) { ... deploy ...; acts = lc.Deployed(0, now) }
//	acts = lc.SubtaskReport(0, v, s, state, msg, class, now)
package scheduler
