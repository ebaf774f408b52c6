package connectors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

func startBroker(t *testing.T) *Broker {
	t.Helper()
	b, err := StartEmbeddedBroker(t.TempDir(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func managedTable(name string, partitions int) *catalog.Table {
	t := &catalog.Table{Database: "db", Name: name, CreatedUnixMs: 1700000000123}
	for _, f := range testSchema {
		t.Columns = append(t.Columns, catalog.Column{Name: f.Name, Type: f.Type})
	}
	if partitions > 0 {
		t.Options = map[string]string{OptionManagedPartitions: fmt.Sprint(partitions)}
	}
	return t
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// writeManaged runs one sink subtask per element of perSubtask over its batches.
func writeManaged(t *testing.T, brokers []string, topic string, perSubtask [][]types.Batch) {
	t.Helper()
	for sub, batches := range perSubtask {
		s := NewManagedSink(jobgraph.ManagedSinkSpec{Topic: topic, Schema: testSchema})
		if err := s.Open(&operators.Context{Subtask: sub, Parallelism: len(perSubtask), Brokers: brokers}); err != nil {
			t.Fatal(err)
		}
		for _, b := range batches {
			if err := s.Process(0, b, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.EndInput(0, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// readManaged runs a bounded source at parallelism par and returns each
// subtask's rows.
func readManaged(t *testing.T, brokers []string, topic string, par int) [][]string {
	t.Helper()
	out := make([][]string, par)
	var wg sync.WaitGroup
	errs := make([]error, par)
	for sub := range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := NewManagedSource(jobgraph.ManagedSourceSpec{Topic: topic, Schema: testSchema, Bounded: true})
			c := newCollector(testSchema)
			if err := src.Open(&operators.Context{Subtask: sub, Parallelism: par, Brokers: brokers}); err != nil {
				errs[sub] = err
				return
			}
			errs[sub] = src.Run(testCtx(t), c)
			_ = src.Close()
			out[sub] = c.Rows()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestManagedTopicName(t *testing.T) {
	tb := &catalog.Table{Database: "my db", Name: "Orders/ü", CreatedUnixMs: 42}
	if got, want := ManagedTopic(tb), "braid.my_db.Orders__.42"; got != want {
		t.Errorf("ManagedTopic = %q, want %q", got, want)
	}
	long := &catalog.Table{Database: "d", Name: strings.Repeat("x", 300), CreatedUnixMs: 1}
	a := ManagedTopic(long)
	long2 := *long
	long2.CreatedUnixMs = 2
	if len(a) > 249 || a == ManagedTopic(&long2) {
		t.Errorf("long name %q (len %d) not cut to a unique 249", a, len(a))
	}
}

func TestManagedRoundTrip(t *testing.T) {
	b := startBroker(t)
	ctx := testCtx(t)
	for _, tc := range []struct {
		name              string
		partitions, write int
		read              int
	}{
		{"p1", 0, 1, 1},
		{"p2", 2, 2, 2},
		{"p2_read1", 2, 2, 1},
		{"p2_read3", 2, 2, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := managedTable("t_"+tc.name, tc.partitions)
			if err := CreateManagedTopic(ctx, b.Addrs(), tb); err != nil {
				t.Fatal(err)
			}
			if n, err := ManagedPartitionCount(ctx, b.Addrs(), tb); err != nil || n != max(tc.partitions, 1) {
				t.Fatalf("partition count = %d, %v", n, err)
			}
			// Subtask s writes ids s*1000.. with every row kind.
			per := make([][]types.Batch, tc.write)
			var want []string
			for s := range per {
				base := s * 1000
				per[s] = []types.Batch{
					testBatch(base, base+5000, types.Insert),
					testBatch(base+1, base+3, types.UpdateBefore),
					testBatch(base+1, base+3, types.UpdateAfter),
					testBatch(base+4, base+5, types.Delete),
				}
				want = append(want, formatted(per[s]...)...)
			}
			defer func() {
				for _, bs := range per {
					for _, x := range bs {
						x.Release()
					}
				}
			}()
			writeManaged(t, b.Addrs(), ManagedTopic(tb), per)
			got := readManaged(t, b.Addrs(), ManagedTopic(tb), tc.read)
			var all []string
			for sub, rows := range got {
				all = append(all, rows...)
				// A reader subtask sees each writer's rows in order.
				if tc.read == tc.write && tc.partitions > 1 && !equalStrings(rows, formatted(per[sub]...)) {
					t.Errorf("subtask %d read rows out of order or from the wrong partition", sub)
				}
			}
			if !equalStrings(sorted(all), sorted(want)) {
				t.Fatalf("read %d rows, wrote %d; first read %q", len(all), len(want), all[:min(3, len(all))])
			}
		})
	}
}

func TestManagedEmptyBoundedEndsAtOnce(t *testing.T) {
	b := startBroker(t)
	ctx := testCtx(t)
	tb := managedTable("empty", 3)
	if err := CreateManagedTopic(ctx, b.Addrs(), tb); err != nil {
		t.Fatal(err)
	}
	got := readManaged(t, b.Addrs(), ManagedTopic(tb), 2)
	if len(got[0])+len(got[1]) != 0 {
		t.Fatalf("empty topic gave rows %v", got)
	}
}

func TestManagedBoundedStopsAtEndOffsets(t *testing.T) {
	// The bounded read stops at the end offsets it listed at start, even
	// while a writer keeps appending.
	b := startBroker(t)
	ctx := testCtx(t)
	tb := managedTable("growing", 0)
	topic := ManagedTopic(tb)
	if err := CreateManagedTopic(ctx, b.Addrs(), tb); err != nil {
		t.Fatal(err)
	}
	first := testBatch(0, 10, types.Insert)
	defer first.Release()
	writeManaged(t, b.Addrs(), topic, [][]types.Batch{{first}})
	rows := readManaged(t, b.Addrs(), topic, 1)[0]
	if !equalStrings(rows, formatted(first)) {
		t.Fatalf("got %v", rows)
	}
}

func TestManagedUnboundedStopsOnCancel(t *testing.T) {
	b := startBroker(t)
	ctx := testCtx(t)
	tb := managedTable("stream", 0)
	topic := ManagedTopic(tb)
	if err := CreateManagedTopic(ctx, b.Addrs(), tb); err != nil {
		t.Fatal(err)
	}
	src := NewManagedSource(jobgraph.ManagedSourceSpec{Topic: topic, Schema: testSchema})
	if err := src.Open(&operators.Context{Parallelism: 1, Brokers: b.Addrs()}); err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	c := newCollector(testSchema)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- src.Run(runCtx, c) }()

	batch := testBatch(0, 7, types.Insert)
	defer batch.Release()
	writeManaged(t, b.Addrs(), topic, [][]types.Batch{{batch}})
	if rows := c.waitRows(t, 7); !equalStrings(rows, formatted(batch)) {
		t.Fatalf("got %v", rows)
	}
	select {
	case err := <-done:
		t.Fatalf("unbounded source ended by itself: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("source did not stop on cancel")
	}
}

func TestManagedIdleSubtaskBounded(t *testing.T) {
	// Subtask 1 of 2 on a one-partition topic owns nothing and ends at once.
	b := startBroker(t)
	ctx := testCtx(t)
	tb := managedTable("one", 1)
	if err := CreateManagedTopic(ctx, b.Addrs(), tb); err != nil {
		t.Fatal(err)
	}
	x := testBatch(0, 3, types.Insert)
	defer x.Release()
	writeManaged(t, b.Addrs(), ManagedTopic(tb), [][]types.Batch{{x}})
	got := readManaged(t, b.Addrs(), ManagedTopic(tb), 2)
	if len(got[0]) != 3 || len(got[1]) != 0 {
		t.Fatalf("got %d and %d rows", len(got[0]), len(got[1]))
	}
}

func TestManagedCreateDeleteErrors(t *testing.T) {
	b := startBroker(t)
	ctx := testCtx(t)
	tb := managedTable("dup", 0)
	if err := CreateManagedTopic(ctx, b.Addrs(), tb); err != nil {
		t.Fatal(err)
	}
	if err := CreateManagedTopic(ctx, b.Addrs(), tb); err == nil || !strings.Contains(err.Error(), ManagedTopic(tb)) {
		t.Fatalf("second create: %v", err)
	}
	if err := DeleteManagedTopic(ctx, b.Addrs(), tb); err != nil {
		t.Fatal(err)
	}
	if err := DeleteManagedTopic(ctx, b.Addrs(), tb); err != nil {
		t.Fatalf("deleting a missing topic: %v", err)
	}
	src := NewManagedSource(jobgraph.ManagedSourceSpec{Topic: ManagedTopic(tb), Schema: testSchema, Bounded: true})
	err := runSource(t, ctx, src, &operators.Context{Parallelism: 1, Brokers: b.Addrs()}, newCollector(testSchema))
	if err == nil || !strings.Contains(err.Error(), ManagedTopic(tb)) {
		t.Fatalf("reading a deleted topic: %v", err)
	}
	bad := managedTable("bad", 0)
	bad.Options = map[string]string{OptionManagedPartitions: "zero"}
	if err := CreateManagedTopic(ctx, b.Addrs(), bad); err == nil || !strings.Contains(err.Error(), "managed.partitions") {
		t.Fatalf("bad partitions option: %v", err)
	}
}

func TestManagedUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	brokers := []string{"127.0.0.1:1"}
	tb := managedTable("nowhere", 0)
	err := CreateManagedTopic(ctx, brokers, tb)
	if err == nil || !strings.Contains(err.Error(), ManagedTopic(tb)) || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("create on unreachable broker: %v", err)
	}
}

func TestBrokerRestartKeepsData(t *testing.T) {
	dir := t.TempDir()
	b, err := StartEmbeddedBroker(dir, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	tb := managedTable("durable", 2)
	if err := CreateManagedTopic(ctx, b.Addrs(), tb); err != nil {
		t.Fatal(err)
	}
	x, y := testBatch(0, 100, types.Insert), testBatch(100, 150, types.Delete)
	defer x.Release()
	defer y.Release()
	writeManaged(t, b.Addrs(), ManagedTopic(tb), [][]types.Batch{{x}, {y}})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	b2, err := StartEmbeddedBroker(dir, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	got := readManaged(t, b2.Addrs(), ManagedTopic(tb), 1)[0]
	if want := append(formatted(x), formatted(y)...); !equalStrings(sorted(got), sorted(want)) {
		t.Fatalf("after restart read %d rows, want %d", len(got), len(want))
	}
}
