package jobmanager

import (
	"context"
	"strings"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/braidflow/braid/internal/leaderhint"
	"github.com/braidflow/braid/metastore"
)

// High availability: with Config.HA several job managers share one etcd and
// one Kafka. Each campaigns under <prefix>/leader with its advertised
// address; the winner runs the cluster, the others stand by. A standby (and
// a deposed leader) answers every ClientService and ClusterService call with
// codes.Unavailable, naming the leader in the message and in an ErrorInfo
// detail (package internal/leaderhint), so task managers and clients can
// follow it.
//
// The winner takes over as a restarted job manager does (forgetEarlierRun):
// it drops every task manager registration and resumes the jobs that take
// checkpoints. A leader whose term ends while it runs (its lease lapsed:
// it was partitioned from etcd or stalled) stops acting at once: it drops
// its jobs without recording their statuses or canceling their subtasks,
// and its etcd writes that matter (checkpoint commits, job statuses) are
// fenced by its term, so they fail once another job manager leads. It
// never leads again: Deposed fires and the process is expected to exit and
// be started again as a standby.

// DefaultLeaderLease is the default Config.LeaderLease.
const DefaultLeaderLease = 5 * time.Second

// leadership returns the term this job manager leads in; nil without HA
// (writes are then unfenced) and before it first won.
func (jm *JobManager) leadership() *metastore.Leadership {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	return jm.mu.lead
}

// serving reports whether this job manager answers ClientService and
// ClusterService calls: always without HA, while it leads with HA.
func (jm *JobManager) serving() bool {
	if !jm.cfg.HA {
		return true
	}
	jm.mu.Lock()
	defer jm.mu.Unlock()
	return jm.mu.leading
}

// Leading reports whether this job manager runs the cluster: always without
// HA, while it leads (and after it took over) with HA.
func (jm *JobManager) Leading() bool { return jm.serving() }

// Deposed is closed when this job manager lost its leadership; it then
// serves nothing and should be closed (and its process started again as a
// standby). Never closed without HA.
func (jm *JobManager) Deposed() <-chan struct{} { return jm.deposed }

// campaign runs with HA from Start until Close: it waits to lead, takes
// over the cluster, and deposes this job manager when the term ends.
func (jm *JobManager) campaign() {
	jm.log.Info("standing by for leadership", zap.String("advertise", jm.advertise), zap.Duration("lease", jm.cfg.LeaderLease))
	lead, err := jm.store.Campaign(jm.ctx, jm.advertise, jm.cfg.LeaderLease)
	if err != nil {
		if jm.ctx.Err() == nil {
			jm.depose("campaign for leadership failed: " + err.Error())
		}
		return
	}
	jm.mu.Lock()
	if jm.mu.closed {
		jm.mu.Unlock()
		lead.Close()
		return
	}
	jm.mu.lead = lead
	jm.mu.Unlock()
	jm.log.Info("won leadership; taking over the cluster", zap.Int64("term", lead.Revision()))

	ctx, cancel := context.WithTimeout(jm.ctx, time.Minute)
	err = jm.forgetEarlierRun(ctx)
	cancel()
	if err != nil {
		jm.depose("taking over from the earlier leader failed: " + err.Error())
		return
	}
	jm.takeCharge()
	jm.mu.Lock()
	jm.mu.leading = true
	jm.mu.Unlock()
	jm.log.Info("leading the cluster", zap.Int64("term", lead.Revision()))
	select {
	case <-lead.Done():
		jm.depose("the leader lease lapsed (etcd unreachable or this process stalled)")
	case <-jm.ctx.Done():
	}
}

// depose stops this job manager acting as the leader: it drops its jobs
// without a trace in etcd or on the task managers (the next leader resumes
// them) and closes Deposed.
func (jm *JobManager) depose(reason string) {
	jm.mu.Lock()
	if jm.mu.abandoned || jm.mu.closed {
		jm.mu.Unlock()
		return
	}
	jm.mu.abandoned, jm.mu.leading = true, false
	jobs := jm.liveJobsLocked()
	jm.mu.Unlock()
	jm.log.Error("deposed: this job manager stops acting as the leader", zap.String("reason", reason), zap.Int("jobs", len(jobs)))
	for _, j := range jobs {
		j.finish(StatusCanceled, "the job manager lost its leadership")
	}
	close(jm.deposed)
}

// abandoned reports whether this job manager leaves its jobs to another:
// their status changes are not recorded and their subtasks not canceled.
func (jm *JobManager) abandoned() bool {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	return jm.mu.abandoned
}

func (jm *JobManager) liveJobsLocked() []*Job {
	jobs := make([]*Job, 0, len(jm.mu.jobs))
	for _, j := range jm.mu.jobs {
		if j != nil { // nil: being scheduled
			jobs = append(jobs, j)
		}
	}
	return jobs
}

// notLeader is a standby's answer: Unavailable, naming the leader.
func (jm *JobManager) notLeader(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	leader, err := jm.store.Leader(ctx)
	msg := "job manager at " + jm.advertise + " is a standby; the leader is at " + leader
	switch {
	case err != nil:
		leader = ""
		msg = "job manager at " + jm.advertise + " is a standby and no job manager leads right now; retry shortly"
	case leader == jm.advertise:
		msg = "job manager at " + jm.advertise + " is taking over as the leader; retry shortly"
	}
	return leaderhint.Error(leader, msg)
}

// gated reports whether method belongs to a service only the leader serves.
func gated(method string) bool {
	return strings.HasPrefix(method, "/braid.v1.ClientService/") || strings.HasPrefix(method, "/braid.v1.ClusterService/")
}

// leaderGate rejects the leader-only services while this job manager does
// not lead.
func (jm *JobManager) leaderGate() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if gated(info.FullMethod) && !jm.serving() {
				return nil, jm.notLeader(ctx)
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if gated(info.FullMethod) && !jm.serving() {
				return jm.notLeader(ss.Context())
			}
			return h(srv, ss)
		}),
	}
}
