package jobmanager

import (
	"strings"
	"testing"
	"time"

	"github.com/braidflow/braid/internal/clientauth"
)

// TestLimitsDefaults: zero limits take their defaults, and a negative one
// stops New with the limit's name.
func TestLimitsDefaults(t *testing.T) {
	jm, err := New(Config{Listen: "127.0.0.1:0", DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if l := jm.cfg.Limits; l.SessionMaxNum != DefaultSessionMaxNum || l.SessionIdleTimeout != DefaultSessionIdleTimeout ||
		l.SlotRequestTimeout != DefaultSlotRequestTimeout || l.PlannerTimeout != DefaultPlannerTimeout || l.SessionMaxBytes != DefaultSessionMaxBytes {
		t.Fatalf("defaults: %+v", l)
	}
	_, err = New(Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), Limits: Limits{SessionCheckInterval: -time.Second}})
	if err == nil || !strings.Contains(err.Error(), "session check interval") {
		t.Fatalf("a negative check interval: %v", err)
	}
}

// TestExpire: expire closes the sessions idle past the timeout, never one
// whose statement runs, frees their client's count, remembers them for a
// timeout and then forgets them.
func TestExpire(t *testing.T) {
	jm, err := New(Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), Limits: Limits{SessionIdleTimeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	g := NewSQLGateway(jm)
	t0 := time.Unix(1_000_000, 0)
	for _, s := range []*session{{id: "idle", client: "h"}, {id: "busy", client: "h", running: 1}, {id: "fresh", client: "h"}} {
		s.lastUsed = t0
		if s.id == "fresh" {
			s.lastUsed = t0.Add(time.Minute)
		}
		g.mu.sessions[s.id] = s
		g.mu.clients[s.client]++
	}
	g.expire(t0.Add(90 * time.Second))
	if _, ok := g.mu.sessions["idle"]; ok || len(g.mu.sessions) != 2 || g.mu.clients["h"] != 2 {
		t.Fatalf("after expiry: sessions %v, clients %v", g.mu.sessions, g.mu.clients)
	}
	if _, ok := g.mu.expired["idle"]; !ok {
		t.Fatal("the expired session is not remembered")
	}
	g.expire(t0.Add(3 * time.Minute))
	if _, ok := g.mu.expired["idle"]; ok {
		t.Fatal("an expired session is remembered past a timeout")
	}
	if _, ok := g.mu.sessions["busy"]; !ok {
		t.Fatal("a session with a running statement expired")
	}
}

// TestWaitingJobsBelongToTheirOwner: a job waiting for slots is listed and
// described only to its owner and to admins, as a recorded job is.
func TestWaitingJobsBelongToTheirOwner(t *testing.T) {
	var w slotWaits
	w.add("job-a", &slotWait{name: "a", owner: "alice", need: 2})
	w.add("job-b", &slotWait{name: "b", owner: "bob", need: 1})
	bob := clientauth.Principal{Name: "bob", Role: clientauth.Viewer}
	carol := clientauth.Principal{Name: "carol", Role: clientauth.Viewer}
	admin := clientauth.Principal{Name: "root", Role: clientauth.Admin}
	ids := func(p clientauth.Principal) (out []string) {
		for _, s := range w.summaries(p) {
			out = append(out, s.JobId)
		}
		return out
	}
	if got := ids(bob); len(got) != 1 || got[0] != "job-b" {
		t.Errorf("bob sees waiting jobs %v, want [job-b]", got)
	}
	if got := ids(carol); len(got) != 0 {
		t.Errorf("carol sees waiting jobs %v, want none", got)
	}
	if got := ids(admin); len(got) != 2 {
		t.Errorf("an admin sees waiting jobs %v, want both", got)
	}
	if w.summary("job-a", bob) != nil || w.summary("job-a", admin) == nil || w.summary("job-b", bob) == nil {
		t.Error("summary of a waiting job ignores its owner")
	}
}
