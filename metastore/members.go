package metastore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// TaskManagerInfo is a registered task manager, stored as JSON at
// taskmanagers/<id> under a lease.
type TaskManagerInfo struct {
	ID               string `json:"id"`
	Address          string `json:"address"`
	Slots            int    `json:"slots"`
	RegisteredUnixMs int64  `json:"registered_unix_ms"`
}

// MemberEvent is one membership change. Removed is false for a task manager
// that registered (or re-registered) and true for one whose key is gone,
// whether removed explicitly or because its lease lapsed.
type MemberEvent struct {
	Removed     bool
	TaskManager TaskManagerInfo
}

func (s *Store) tmKey(id string) string { return s.key("taskmanagers", id) }
func (s *Store) tmDir() string          { return s.dir("taskmanagers") }

// RegisterTaskManager grants a lease of ttl (rounded up to whole seconds, at
// least one) and puts taskmanagers/<id> with it. An older registration of the
// same id is replaced and its lease revoked, so only the new lease keeps the
// key alive. The key disappears when the lease is not renewed in time.
func (s *Store) RegisterTaskManager(ctx context.Context, tm TaskManagerInfo, ttl time.Duration) error {
	if tm.ID == "" {
		return fmt.Errorf("metastore: task manager without an id")
	}
	if tm.RegisteredUnixMs == 0 {
		tm.RegisteredUnixMs = time.Now().UnixMilli()
	}
	val, err := json.Marshal(tm)
	if err != nil {
		return fmt.Errorf("metastore: encode task manager %s: %w", tm.ID, err)
	}
	secs := int64((ttl + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	lease, err := s.client.Grant(ctx, secs)
	if err != nil {
		return fmt.Errorf("metastore: lease for task manager %s: %w", tm.ID, err)
	}
	key := s.tmKey(tm.ID)
	resp, err := s.client.Txn(ctx).Then(
		clientv3.OpGet(key),
		clientv3.OpPut(key, string(val), clientv3.WithLease(lease.ID)),
	).Commit()
	if err != nil {
		// The put may or may not have happened; revoking the new lease
		// removes the key if it did, so no half registration survives.
		s.revokeQuietly(lease.ID)
		return fmt.Errorf("metastore: register task manager %s: %w", tm.ID, err)
	}
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 && kvs[0].Lease != 0 && clientv3.LeaseID(kvs[0].Lease) != lease.ID {
		s.revokeQuietly(clientv3.LeaseID(kvs[0].Lease))
	}
	return nil
}

// revokeQuietly revokes a lease, logging (not returning) a failure: the
// lease then expires by itself.
func (s *Store) revokeQuietly(id clientv3.LeaseID) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := s.client.Revoke(ctx, id); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		s.logger.Warn("revoke lease", zap.Int64("lease", int64(id)), zap.Error(err))
	}
}

// RenewTaskManager renews the lease of task manager id once. It returns
// false, with no error, when the task manager's key or lease is gone: the
// task manager must register again.
func (s *Store) RenewTaskManager(ctx context.Context, id string) (bool, error) {
	resp, err := s.client.Get(ctx, s.tmKey(id))
	if err != nil {
		return false, fmt.Errorf("metastore: renew task manager %s: %w", id, err)
	}
	if len(resp.Kvs) == 0 || resp.Kvs[0].Lease == 0 {
		return false, nil
	}
	ka, err := s.client.KeepAliveOnce(ctx, clientv3.LeaseID(resp.Kvs[0].Lease))
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("metastore: renew task manager %s: %w", id, err)
	}
	return ka.TTL > 0, nil
}

// RemoveTaskManager deletes the registration and revokes its lease. Removing
// an unknown id is not an error.
func (s *Store) RemoveTaskManager(ctx context.Context, id string) error {
	resp, err := s.client.Delete(ctx, s.tmKey(id), clientv3.WithPrevKV())
	if err != nil {
		return fmt.Errorf("metastore: remove task manager %s: %w", id, err)
	}
	for _, kv := range resp.PrevKvs {
		if kv.Lease != 0 {
			s.revokeQuietly(clientv3.LeaseID(kv.Lease))
		}
	}
	return nil
}

// ListTaskManagers returns the registered task managers, sorted by id.
func (s *Store) ListTaskManagers(ctx context.Context) ([]TaskManagerInfo, error) {
	tms, _, err := s.listTaskManagers(ctx)
	return tms, err
}

func (s *Store) listTaskManagers(ctx context.Context) ([]TaskManagerInfo, int64, error) {
	resp, err := s.client.Get(ctx, s.tmDir(), clientv3.WithPrefix())
	if err != nil {
		return nil, 0, fmt.Errorf("metastore: list task managers: %w", err)
	}
	tms := make([]TaskManagerInfo, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		tm, err := s.decodeTaskManager(kv)
		if err != nil {
			s.logger.Warn("skipping undecodable task manager", zap.ByteString("key", kv.Key), zap.Error(err))
			continue
		}
		tms = append(tms, tm)
	}
	sort.Slice(tms, func(a, b int) bool { return tms[a].ID < tms[b].ID })
	return tms, resp.Header.Revision, nil
}

func (s *Store) decodeTaskManager(kv *mvccpb.KeyValue) (TaskManagerInfo, error) {
	var tm TaskManagerInfo
	if len(kv.Value) > 0 {
		if err := json.Unmarshal(kv.Value, &tm); err != nil {
			return tm, err
		}
	}
	if tm.ID == "" {
		id, err := url.PathUnescape(strings.TrimPrefix(string(kv.Key), s.tmDir()))
		if err != nil {
			return tm, err
		}
		tm.ID = id
	}
	return tm, nil
}

// watchRetry is the pause before re-listing after a failed list.
const watchRetry = 100 * time.Millisecond

// WatchTaskManagers reports membership changes until ctx ends, then closes
// the channel. It first reports every currently registered task manager as
// an addition, then each registration and removal as it happens. When the
// watch is compacted or cancelled it re-lists, reports the difference (so a
// removal during the gap is still seen), and watches again from the listed
// revision. Events of one task manager arrive in order. The channel also
// closes when the Store is closed. The caller must keep receiving until the
// channel closes or ctx ends.
func (s *Store) WatchTaskManagers(ctx context.Context) <-chan MemberEvent {
	out := make(chan MemberEvent, 16)
	go s.watchTaskManagers(ctx, out)
	return out
}

func (s *Store) watchTaskManagers(ctx context.Context, out chan<- MemberEvent) {
	defer close(out)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.client.Ctx(), cancel)
	defer stop()
	known := map[string]TaskManagerInfo{}
	emit := func(ev MemberEvent) bool {
		select {
		case out <- ev:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for ctx.Err() == nil {
		tms, rev, err := s.listTaskManagers(ctx)
		if err != nil {
			s.logger.Warn("list task managers for watch", zap.Error(err))
			select {
			case <-time.After(watchRetry):
				continue
			case <-ctx.Done():
				return
			}
		}
		if !s.reconcile(known, tms, emit) {
			return
		}
		if !s.watchFrom(ctx, rev+1, known, emit) {
			return
		}
	}
}

// reconcile emits the difference between known and the listed task
// managers and updates known to the list.
func (s *Store) reconcile(known map[string]TaskManagerInfo, tms []TaskManagerInfo, emit func(MemberEvent) bool) bool {
	listed := make(map[string]bool, len(tms))
	for _, tm := range tms {
		listed[tm.ID] = true
	}
	gone := make([]string, 0)
	for id := range known {
		if !listed[id] {
			gone = append(gone, id)
		}
	}
	sort.Strings(gone)
	for _, id := range gone {
		tm := known[id]
		delete(known, id)
		if !emit(MemberEvent{Removed: true, TaskManager: tm}) {
			return false
		}
	}
	for _, tm := range tms {
		if old, ok := known[tm.ID]; ok && old == tm {
			continue
		}
		known[tm.ID] = tm
		if !emit(MemberEvent{TaskManager: tm}) {
			return false
		}
	}
	return true
}

// watchFrom follows changes from rev until the watch breaks (returns true:
// re-list) or ctx ends (returns false).
func (s *Store) watchFrom(ctx context.Context, rev int64, known map[string]TaskManagerInfo, emit func(MemberEvent) bool) bool {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wch := s.client.Watch(clientv3.WithRequireLeader(wctx), s.tmDir(), clientv3.WithPrefix(), clientv3.WithRev(rev), clientv3.WithPrevKV())
	for resp := range wch {
		if err := resp.Err(); err != nil {
			s.logger.Info("task manager watch broken; re-listing", zap.Error(err))
			return ctx.Err() == nil
		}
		for _, ev := range resp.Events {
			switch ev.Type {
			case clientv3.EventTypePut:
				tm, err := s.decodeTaskManager(ev.Kv)
				if err != nil {
					s.logger.Warn("skipping undecodable task manager", zap.ByteString("key", ev.Kv.Key), zap.Error(err))
					continue
				}
				known[tm.ID] = tm
				if !emit(MemberEvent{TaskManager: tm}) {
					return false
				}
			case clientv3.EventTypeDelete:
				id, err := url.PathUnescape(strings.TrimPrefix(string(ev.Kv.Key), s.tmDir()))
				if err != nil {
					continue
				}
				tm, ok := known[id]
				if !ok && ev.PrevKv != nil {
					tm, _ = s.decodeTaskManager(ev.PrevKv)
				}
				tm.ID = id
				delete(known, id)
				if !emit(MemberEvent{Removed: true, TaskManager: tm}) {
					return false
				}
			}
		}
	}
	// The channel closed: ctx ended, the client closed, or etcd cancelled the
	// watch.
	if ctx.Err() != nil {
		return false
	}
	select {
	case <-time.After(watchRetry):
	case <-ctx.Done():
		return false
	}
	return true
}
