package jobmanager

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/types"
)

// fail handles a failure of the job's current attempt. The job's restart
// strategy decides: either the job ends FAILED with msg, or it becomes
// RESTARTING and a new attempt is deployed after the strategy's delay,
// resuming from the latest completed checkpoint. Failures while the job is
// already restarting or ended are ignored.
func (j *Job) fail(msg string, class types.ErrorClass) {
	j.mu.Lock()
	if terminal(j.mu.status) || j.mu.status == StatusRestarting {
		j.mu.Unlock()
		return
	}
	if why := j.unrestartableLocked(); why != "" {
		j.mu.Unlock()
		j.finish(StatusFailed, msg)
		return
	}
	restart, delay, why := j.restart.OnFailure(time.Now(), class)
	if !restart {
		j.mu.Unlock()
		if j.graph.GetRestart().GetType() != "" && j.graph.GetRestart().GetType() != "none" {
			msg += " (not restarted: " + why + ")"
		}
		j.finish(StatusFailed, msg)
		return
	}
	j.mu.status = StatusRestarting
	j.mu.restarts++
	cp := j.mu.cp
	j.mu.cp = nil
	attempt := j.mu.attempt
	j.mu.Unlock()

	cp.stop()
	j.jm.recordStatus(j, StatusRestarting, msg, 0)
	j.jm.metrics.restarts.Inc()
	j.jm.log.Warn("job restarting", zap.String("job", j.id), zap.Int32("failed_attempt", attempt),
		zap.String("cause", msg), zap.Stringer("class", class), zap.Duration("delay", delay), zap.String("strategy", why))
	j.jm.wg.Add(1)
	go func() {
		defer j.jm.wg.Done()
		j.jm.restartJob(j, delay)
	}()
}

// restartable reports whether the job's restart strategy may restart it
// (the strategy is not none and the job can be restarted at all).
func (j *Job) restartable() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	t := j.graph.GetRestart().GetType()
	return t != "" && t != "none" && j.unrestartableLocked() == ""
}

// unrestartableLocked says why the job cannot be restarted at all ("" when
// it can). j.mu is held.
func (j *Job) unrestartableLocked() string {
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

// restartJob stops what is left of the failed attempt, waits delay, then
// places and deploys the next attempt from the latest checkpoint, retrying
// until it runs or the job ends.
func (jm *JobManager) restartJob(j *Job, delay time.Duration) {
	jm.cancelAttempt(j)
	jm.pool.Release(j.id)
	if !jm.sleep(j, delay) {
		return
	}
	for {
		err := jm.redeploy(j)
		if err == nil {
			return
		}
		var rf *restoreFailedError
		if errors.As(err, &rf) {
			// NB: retrying reads the same damaged files; the job must not
			// run on part of its state.
			jm.cancelAttempt(j)
			j.finish(StatusFailed, "the job cannot be restored from its latest checkpoint: "+rf.msg)
			return
		}
		jm.log.Info("job not redeployed yet", zap.String("job", j.id), zap.Error(err))
		jm.cancelAttempt(j)
		jm.pool.Release(j.id)
		if !jm.sleep(j, restartPoll) {
			return
		}
	}
}

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

// redeploy deploys the job's next attempt.
func (jm *JobManager) redeploy(j *Job) error {
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
		return err
	}
	if ok {
		restore = &braidv1.RestoreSpec{CheckpointId: cp.ID, Manifest: cp.Path}
	} else {
		restore = j.initial
	}
	j.mu.Lock()
	if j.mu.status != StatusRestarting {
		j.mu.Unlock()
		return nil // canceled meanwhile
	}
	j.mu.attempt++
	j.mu.failing = false
	j.setPlacementsLocked(placements)
	attempt := j.mu.attempt
	j.mu.Unlock()
	if err := j.restartResults(attempt, cp.ID); err != nil {
		j.finish(StatusFailed, "results of the query: "+err.Error())
		return nil
	}
	jm.log.Info("job redeploying", zap.String("job", j.id), zap.Int32("attempt", attempt), zap.Int64("from_checkpoint", cp.ID))
	if err := jm.deploy(ctx, j, restore); err != nil {
		return fmt.Errorf("attempt %d: %w", attempt, err)
	}
	j.setRunning()
	j.startCheckpoints()
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
