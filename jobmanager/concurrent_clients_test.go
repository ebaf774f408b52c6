package jobmanager_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/jobmanager"
)

// settle runs the garbage collector and returns the heap in use and the
// number of goroutines once the goroutines stop shrinking (or after a few
// seconds).
func settle() (heap uint64, goroutines int) {
	prev := -1
	for i := 0; i < 50; i++ {
		runtime.GC()
		n := runtime.NumGoroutine()
		if n == prev {
			break
		}
		prev = n
		time.Sleep(100 * time.Millisecond)
	}
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse, runtime.NumGoroutine()
}

// TestThirtyConcurrentClients: on a 4-slot cluster (2 task managers of 2
// slots), 30 clients at once each open a session and run a bounded
// aggregate. Every one either gets the right count or the clear slot
// timeout error (none should with the default timeout), and afterwards
// the process's goroutines and heap return near their baseline: nothing
// of the sessions, the queue or the jobs is left running.
func TestThirtyConcurrentClients(t *testing.T) {
	const clients = 30
	cl, c0 := startLimitedCluster(t, jobmanager.Limits{SlotRequestTimeout: 2 * time.Minute})
	// Warm up: the first query opens the connections and pools that stay.
	s0 := openSession(t, c0)
	run(t, s0, "SELECT 1;")
	s0.Close(context.Background())
	heap0, g0 := settle()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		done     int
		timedOut int
	)
	start := time.Now()
	for i := range clients {
		wg.Go(func() {
			c, err := client.Dial(ctx, cl.Endpoint())
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			s, err := c.OpenSession(ctx, nil)
			if err != nil {
				t.Errorf("client %d: open session: %v", i, err)
				return
			}
			defer s.Close(context.WithoutCancel(ctx))
			n := 50 + i
			r := newRows()
			err = s.Execute(ctx, fmt.Sprintf("CREATE TEMPORARY TABLE g (x INT) WITH ('connector' = 'datagen', 'number-of-rows' = '%d');"+
				"SELECT COUNT(*) FROM g;", n), false, r)
			var se *client.ServerError
			switch {
			case errors.As(err, &se) && se.Code == codes.ResourceExhausted && strings.Contains(err.Error(), "slot.request.timeout"):
				mu.Lock()
				timedOut++
				mu.Unlock()
			case err != nil:
				t.Errorf("client %d: %v", i, err)
			default:
				if got := r.rows[len(r.rows)-1]; !strings.HasSuffix(got, fmt.Sprintf("[%d]", n)) {
					t.Errorf("client %d: last row %s, want a count of %d (rows %v)", i, got, n, r.rows)
				}
				mu.Lock()
				done++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if done+timedOut != clients {
		t.Fatalf("%d of %d clients completed, %d timed out waiting for slots", done, clients, timedOut)
	}
	c0.Close()
	heap1, g1 := settle()
	t.Logf("%d clients in %s: %d completed, %d timed out; heap in use %.1f MiB -> %.1f MiB, goroutines %d -> %d",
		clients, elapsed.Round(time.Millisecond), done, timedOut, float64(heap0)/(1<<20), float64(heap1)/(1<<20), g0, g1)
	for _, tm := range cl.JobManager().SlotsSnapshot() {
		if tm.Used != 0 {
			t.Errorf("task manager %s still has %d slots in use", tm.ID, tm.Used)
		}
	}
	// NB: the job manager keeps the last 256 ended jobs in memory, and
	// gRPC and Pebble keep caches: the heap may grow a little, not by
	// what 30 queries held.
	if g1 > g0+20 {
		t.Errorf("goroutines %d after the clients left, %d before", g1, g0)
	}
	if heap1 > heap0+heap0/2+16<<20 {
		t.Errorf("heap in use %d bytes after the clients left, %d before", heap1, heap0)
	}
}
