package jobmanager

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/scheduler"
)

// step feeds one event to the job's lifecycle (under j.mu) and performs
// the actions it returns, in order: this is the one place that acts on the
// job's lifecycle. It reports whether there were any.
//
// NB: j.transition is held from the event through its status writes and
// checkpoint changes, so etcd sees statuses in the order they were
// decided; it is released before the slow actions (cancel RPCs, deploys,
// the end of the result stream). A restart's actions run on a goroutine of
// their own: cancelling the failed attempt waits for its task managers.
func (j *Job) step(event func(lc *scheduler.JobLifecycle) []scheduler.Action) bool {
	j.transition.Lock()
	j.mu.Lock()
	before := j.mu.lc.Restarts()
	acts := event(j.mu.lc)
	restarted := j.mu.lc.Restarts() > before
	if j.mu.lc.Status().Terminal() && j.mu.endMs == 0 {
		// NB: set with the status, so a reader never sees an ended job
		// without its end.
		j.mu.errMsg, j.mu.endMs = j.mu.lc.Message(), time.Now().UnixMilli()
	}
	attempt, msg := j.mu.attempt, j.mu.lc.Message()
	j.mu.Unlock()
	if restarted {
		j.jm.metrics.restarts.Inc()
		j.jm.log.Warn("job restarting", zap.String("job", j.id), zap.Int32("failed_attempt", attempt), zap.String("cause", msg))
	}
	j.perform(acts)
	return len(acts) > 0
}

// perform performs acts with j.transition held; it releases it after the
// quick actions that lead the list.
func (j *Job) perform(acts []scheduler.Action) {
	i := 0
	for ; i < len(acts) && isQuick(acts[i]); i++ {
		j.act(acts[i], false)
	}
	j.transition.Unlock()
	rest := acts[i:]
	finishing, restart := false, false
	for _, a := range rest {
		switch a.(type) {
		case scheduler.Finish:
			finishing = true
		case scheduler.ScheduleRestart:
			restart = true
		}
	}
	if restart && !finishing {
		j.jm.wg.Add(1)
		go func() {
			defer j.jm.wg.Done()
			for _, a := range rest {
				j.act(a, false)
			}
		}()
		return
	}
	for _, a := range rest {
		j.act(a, finishing)
	}
}

// isQuick reports whether a is done under j.transition: it writes a status
// or starts or stops the checkpoints, which must follow the status order.
func isQuick(a scheduler.Action) bool {
	switch a.(type) {
	case scheduler.RecordStatus, scheduler.StopCheckpoints, scheduler.StartCheckpoints, scheduler.NotifyFinishedTask:
		return true
	}
	return false
}

// act performs one action of the job's lifecycle. finishing says the job
// ends with this batch of actions.
func (j *Job) act(a scheduler.Action, finishing bool) {
	jm := j.jm
	switch a := a.(type) {
	case scheduler.RecordStatus:
		var endMs int64
		if a.Status.Terminal() {
			j.mu.Lock()
			endMs = j.mu.endMs
			j.mu.Unlock()
		}
		jm.recordStatus(j, string(a.Status), a.Message, endMs)
	case scheduler.StopCheckpoints:
		j.mu.Lock()
		cp := j.mu.cp
		j.mu.cp = nil
		j.mu.Unlock()
		cp.stop()
	case scheduler.StartCheckpoints:
		j.startCheckpoints()
	case scheduler.NotifyFinishedTask:
		j.mu.Lock()
		if cp := j.mu.cp; cp != nil {
			cp.taskFinished(int(a.Vertex), int(a.Subtask))
		}
		j.mu.Unlock()
	case scheduler.CancelAttempt:
		if finishing {
			jm.cancelOnTaskManagers(j, "")
		} else {
			jm.cancelAttempt(j)
		}
	case scheduler.ReleaseSlots:
		jm.pool.Release(j.id)
	case scheduler.ScheduleRestart:
		jm.log.Info("job restart scheduled", zap.String("job", j.id), zap.Int32("attempt", a.Attempt),
			zap.Duration("delay", a.Delay), zap.String("reason", a.Reason))
		if !jm.sleep(j, a.Delay) {
			return
		}
		j.step(func(lc *scheduler.JobLifecycle) []scheduler.Action {
			return lc.RestartDelayElapsed(a.Attempt, time.Now())
		})
	case scheduler.DeployAttempt:
		if err := jm.redeploy(j, a.Attempt); err != nil {
			j.deployFailed(a.Attempt, err)
		}
	case scheduler.AttributeFailure:
		jm.wg.Add(1)
		go func() {
			defer jm.wg.Done()
			jm.attributeFailure(j, a)
		}()
	case scheduler.Finish:
		jm.pool.Forget(j.id)
		j.ended(string(a.Status), a.Message)
	default:
		panic(fmt.Sprintf("jobmanager: unknown lifecycle action %T", a))
	}
}

// deployFailed reports that attempt could not be placed or deployed.
func (j *Job) deployFailed(attempt int32, err error) {
	msg, restorable := err.Error(), true
	var rf *restoreFailedError
	if errors.As(err, &rf) {
		// NB: retrying reads the same damaged files; the job must not
		// run on part of its state.
		msg, restorable = rf.msg, false
	} else {
		j.jm.log.Info("job not redeployed yet", zap.String("job", j.id), zap.Error(err))
	}
	j.step(func(lc *scheduler.JobLifecycle) []scheduler.Action {
		return lc.DeployFailed(attempt, msg, restorable, time.Now())
	})
}

// ended settles a job that reached a terminal status (already recorded).
func (j *Job) ended(status, msg string) {
	log := j.jm.log.With(zap.String("job", j.id), zap.String("status", status))
	if msg != "" {
		log.Warn("job ended", zap.String("error", msg))
	} else {
		log.Info("job ended")
	}
	j.jm.metrics.jobEnded(status)
	// NB: slots (released before) and the result stream are settled
	// before Wait returns, so a caller that saw the end can submit again
	// at once.
	j.endResults(status == StatusFinished)
	close(j.done)
	j.jm.retire(j.id)
}

// unrestartable says why the job cannot be restarted at all ("" when it
// can).
func (j *Job) unrestartable() string {
	if j.results != nil && j.held == nil {
		// NB: a restarted collect sink would send its rows again; only a
		// job that checkpoints holds them back until they cannot be.
		return "its results stream to a client"
	}
	return ""
}

// restartPoll is how often a restarting job retries finding slots and
// deploying.
const restartPoll = 500 * time.Millisecond

// sleep waits d unless the job ends or the job manager closes first; it
// reports whether the restart should go on.
func (jm *JobManager) sleep(j *Job, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return j.Status() == StatusRestarting
	case <-j.done:
	case <-jm.ctx.Done():
	}
	return false
}

// redeploy places and deploys attempt of the job, from its latest
// checkpoint (or its initial savepoint when it has none), and reports it
// Deployed. An error says the attempt could not be deployed (see
// Job.deployFailed); nil also when the job ended meanwhile.
func (jm *JobManager) redeploy(j *Job, attempt int32) error {
	// NB: a task manager that died is in the pool until its lease lapses;
	// placing subtasks there (or beside it) would fail the new attempt at
	// once and count as another failure.
	for _, tm := range jm.pool.Snapshot() {
		if !jm.probe(tm.Address) {
			return fmt.Errorf("task manager %s at %s does not answer; waiting for it to come back or be dropped", tm.ID, tm.Address)
		}
	}
	placements, err := jm.pool.Schedule(j.id, j.graph)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(jm.ctx, rpcTimeout)
	defer cancel()
	var restore *braidv1.RestoreSpec
	cp, ok, err := jm.store.LatestCheckpoint(ctx, j.id)
	if err != nil {
		jm.pool.Release(j.id)
		return err
	}
	if ok {
		restore = &braidv1.RestoreSpec{CheckpointId: cp.ID, Manifest: cp.Path}
	} else {
		restore = j.initial
	}
	if !j.deploying(attempt, placements) {
		jm.pool.Release(j.id) // canceled meanwhile: give back what Schedule took
		return nil
	}
	if err := j.restartResults(attempt, cp.ID); err != nil {
		j.finish(StatusFailed, "results of the query: "+err.Error())
		return nil
	}
	jm.log.Info("job redeploying", zap.String("job", j.id), zap.Int32("attempt", attempt), zap.Int64("from_checkpoint", cp.ID))
	if err := jm.deploy(ctx, j, restore); err != nil {
		return fmt.Errorf("attempt %d: %w", attempt, err)
	}
	j.step(func(lc *scheduler.JobLifecycle) []scheduler.Action { return lc.Deployed(attempt, time.Now()) })
	return nil
}

// cancelAttempt cancels the job's current attempt on all its task managers
// and waits for their answers (a task manager that does not answer is
// lost, and its subtasks with it).
func (jm *JobManager) cancelAttempt(j *Job) {
	_, _, tmAddrs := j.deployment()
	done := make(chan struct{}, len(tmAddrs))
	for tmID, addr := range tmAddrs {
		go func() {
			defer func() { done <- struct{}{} }()
			c, err := jm.taskClient(addr)
			if err == nil {
				ctx, cancel := context.WithTimeout(jm.ctx, 2*rpcTimeout)
				_, err = c.CancelJob(ctx, &braidv1.CancelTasksRequest{JobId: j.id})
				cancel()
			}
			if err != nil {
				jm.log.Debug("cancel failed attempt", zap.String("job", j.id), zap.String("task_manager", tmID), zap.Error(err))
			}
		}()
	}
	for range tmAddrs {
		<-done
	}
}
