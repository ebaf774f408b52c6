package metastore

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// next receives one event or fails after d.
func next(t *testing.T, ch <-chan MemberEvent, d time.Duration) MemberEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("watch channel closed")
		}
		return ev
	case <-time.After(d):
		t.Fatalf("no membership event within %v", d)
	}
	panic("unreachable")
}

func TestTaskManagerRegistry(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	a := TaskManagerInfo{ID: "tm-a", Address: "127.0.0.1:7001", Slots: 4, RegisteredUnixMs: 1}
	b := TaskManagerInfo{ID: "tm-b", Address: "127.0.0.1:7002", Slots: 2, RegisteredUnixMs: 2}
	for _, tm := range []TaskManagerInfo{b, a} {
		if err := s.RegisterTaskManager(ctx, tm, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	tms, err := s.ListTaskManagers(ctx)
	if err != nil || !reflect.DeepEqual(tms, []TaskManagerInfo{a, b}) {
		t.Fatalf("list = %+v, %v", tms, err)
	}
	ok, err := s.RenewTaskManager(ctx, "tm-a")
	if err != nil || !ok {
		t.Fatalf("renew = %v, %v", ok, err)
	}
	ok, err = s.RenewTaskManager(ctx, "tm-zz")
	if err != nil || ok {
		t.Fatalf("renew unknown = %v, %v", ok, err)
	}

	// Re-registering replaces the old registration and revokes its lease.
	old, err := s.client.Get(ctx, s.tmKey("tm-a"))
	if err != nil {
		t.Fatal(err)
	}
	a2 := a
	a2.Address = "127.0.0.1:7003"
	if err := s.RegisterTaskManager(ctx, a2, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	ttl, err := s.client.TimeToLive(ctx, leaseOf(old.Kvs[0].Lease))
	if err != nil {
		t.Fatal(err)
	}
	if ttl.TTL != -1 {
		t.Fatalf("old lease still alive with ttl %d", ttl.TTL)
	}
	tms, err = s.ListTaskManagers(ctx)
	if err != nil || !reflect.DeepEqual(tms, []TaskManagerInfo{a2, b}) {
		t.Fatalf("list after re-register = %+v, %v", tms, err)
	}

	if err := s.RemoveTaskManager(ctx, "tm-b"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveTaskManager(ctx, "tm-b"); err != nil {
		t.Fatalf("second remove: %v", err)
	}
	ok, err = s.RenewTaskManager(ctx, "tm-b")
	if err != nil || ok {
		t.Fatalf("renew removed = %v, %v", ok, err)
	}
	tms, err = s.ListTaskManagers(ctx)
	if err != nil || !reflect.DeepEqual(tms, []TaskManagerInfo{a2}) {
		t.Fatalf("list after remove = %+v, %v", tms, err)
	}
}

func TestRegisterFillsTime(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	before := time.Now().UnixMilli()
	if err := s.RegisterTaskManager(ctx, TaskManagerInfo{ID: "x", Slots: 1}, time.Second); err != nil {
		t.Fatal(err)
	}
	tms, err := s.ListTaskManagers(ctx)
	if err != nil || len(tms) != 1 || tms[0].RegisteredUnixMs < before {
		t.Fatalf("list = %+v, %v", tms, err)
	}
}

// TestLeaseLapse: a task manager that stops renewing disappears, and the
// watch reports its removal; one that keeps renewing stays.
func TestLeaseLapse(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	live := TaskManagerInfo{ID: "live", Address: "a:1", Slots: 1, RegisteredUnixMs: 1}
	if err := s.RegisterTaskManager(ctx, live, time.Second); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := s.WatchTaskManagers(wctx)
	if ev := next(t, ch, 2*time.Second); ev.Removed || ev.TaskManager != live {
		t.Fatalf("initial event = %+v", ev)
	}
	lapsing := TaskManagerInfo{ID: "lapsing", Address: "b:2", Slots: 3, RegisteredUnixMs: 2}
	if err := s.RegisterTaskManager(ctx, lapsing, time.Second); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ch, 2*time.Second); ev.Removed || ev.TaskManager != lapsing {
		t.Fatalf("registration event = %+v", ev)
	}
	stopRenew := make(chan struct{})
	renewed := make(chan error, 1)
	go func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopRenew:
				renewed <- nil
				return
			case <-tick.C:
				if ok, err := s.RenewTaskManager(ctx, "live"); err != nil || !ok {
					renewed <- err
					return
				}
			}
		}
	}()
	ev := next(t, ch, 5*time.Second)
	close(stopRenew)
	if err := <-renewed; err != nil {
		t.Fatal(err)
	}
	if !ev.Removed || ev.TaskManager != lapsing {
		t.Fatalf("lapse event = %+v, want removal of %+v", ev, lapsing)
	}
	tms, err := s.ListTaskManagers(ctx)
	if err != nil || !reflect.DeepEqual(tms, []TaskManagerInfo{live}) {
		t.Fatalf("after lapse = %+v, %v", tms, err)
	}
	cancel()
	for range ch { // drains and ends: the channel closes with the context
	}
}

// TestWatchRelistsAfterCompaction: a watch from a compacted revision breaks;
// re-listing reports what changed in the gap.
func TestWatchRelistsAfterCompaction(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	a := TaskManagerInfo{ID: "a", Slots: 1, RegisteredUnixMs: 1}
	b := TaskManagerInfo{ID: "b", Slots: 1, RegisteredUnixMs: 1}
	for _, tm := range []TaskManagerInfo{a, b} {
		if err := s.RegisterTaskManager(ctx, tm, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	tms, rev, err := s.listTaskManagers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var events []MemberEvent
	emit := func(ev MemberEvent) bool { events = append(events, ev); return true }
	known := map[string]TaskManagerInfo{}
	s.reconcile(known, tms, emit)
	if len(events) != 2 {
		t.Fatalf("initial events = %+v", events)
	}

	// In the gap: b leaves, c joins, and history is compacted away.
	if err := s.RemoveTaskManager(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	c := TaskManagerInfo{ID: "c", Slots: 2, RegisteredUnixMs: 3}
	if err := s.RegisterTaskManager(ctx, c, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	resp, err := s.client.Get(ctx, "compact-me")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.Compact(ctx, resp.Header.Revision); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if relist := s.watchFrom(wctx, rev+1, known, emit); !relist {
		t.Fatal("watch from a compacted revision did not ask to re-list")
	}
	events = nil
	tms, _, err = s.listTaskManagers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.reconcile(known, tms, emit)
	want := []MemberEvent{{Removed: true, TaskManager: b}, {TaskManager: c}}
	if !reflect.DeepEqual(events, want) {
		t.Fatalf("events after re-list = %+v, want %+v", events, want)
	}
}

func TestWatchClosesWithStore(t *testing.T) {
	s := newTestStore(t)
	ch := s.WatchTaskManagers(context.Background())
	s.Close()
	select {
	case _, ok := <-ch:
		for ok {
			_, ok = <-ch
		}
	case <-time.After(5 * time.Second):
		t.Fatal("watch channel still open after Store.Close")
	}
}
