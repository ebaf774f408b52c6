package shuffle

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/braidflow/braid/types"
)

const job = "job-1"

// consume reads an inbox to the end, recording the v column and checking
// every row landed at the subtask its key group maps to.
func consume(ctx context.Context, in *Inbox, subtask, parallelism int, mu *sync.Mutex, seen map[int64]int) error {
	ended := 0
	for {
		input, ev, err := in.Next(ctx)
		if err == io.EOF {
			if ended != 1 {
				return errors.New("io.EOF before end-of-input")
			}
			return nil
		}
		if err != nil {
			return err
		}
		if input != 0 {
			return errors.New("unexpected input")
		}
		switch ev.Kind {
		case EventEndOfInput:
			ended++
		case EventBatch:
			hs := make([]uint64, ev.Batch.NumRows())
			ks := ev.Batch.Column(0)
			types.HashColumns([]arrow.Array{ks}, hs)
			mu.Lock()
			for i, h := range hs {
				if got := types.SubtaskForKeyGroup(types.KeyGroupForHash(h, 128), parallelism, 128); got != subtask {
					mu.Unlock()
					return errors.New("row at the wrong subtask")
				}
				seen[ev.Batch.Column(1).(*array.Int64).Value(i)]++
			}
			mu.Unlock()
			ev.Batch.Release()
		}
	}
}

// runShuffle runs `producers` subtasks of vertex 1 sending `batches` batches
// each over a HASH edge to `consumers` subtasks of vertex 2. consumerTM says
// which Exchange each consumer is registered on; producers run on xs[0].
func runShuffle(t *testing.T, xs []*Exchange, addrs []string, consumerTM []int, producers, batches int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	consumers := len(consumerTM)
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	errs := make(chan error, producers+consumers)
	for c := 0; c < consumers; c++ {
		var specs []ChannelSpec
		for _, s := range Sources(types.PartitionHash, c, producers, consumers) {
			specs = append(specs, ChannelSpec{Input: 0, SourceVertex: 1, SourceSubtask: s})
		}
		in, err := NewInbox(1, specs, 2)
		if err != nil {
			t.Fatal(err)
		}
		key := SubtaskKey{JobID: job, Vertex: 2, Subtask: c}
		x := xs[consumerTM[c]]
		if err := x.Register(key, in); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			defer x.Unregister(key, in)
			errs <- consume(ctx, in, c, consumers, &mu, seen)
		}(c)
	}
	var remote atomic.Int64
	for p := 0; p < producers; p++ {
		targets := make([]Target, consumers)
		for c, tm := range consumerTM {
			targets[c] = Target{Local: tm == 0, Address: addrs[tm]}
		}
		o, err := NewOutbox(xs[0], OutboxSpec{
			JobID: job, SourceVertex: 1, SourceSubtask: p, TargetVertex: 2,
			Partitioning: types.PartitionHash, KeyColumns: []int{0},
			Targets: targets, RemoteRows: &remote, CoalesceBytes: 4096,
		})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < batches; i++ {
				// Small batches of varying size exercise coalescing.
				n := 1 + (i*37)%300
				b := makeBatch((p*batches+i)*1000, n, 101, true)
				err := o.Send(ctx, b)
				b.Release()
				if err != nil {
					o.Abort()
					errs <- err
					return
				}
			}
			errs <- o.Close(ctx)
		}(p)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := 0
	for p := 0; p < producers; p++ {
		for i := 0; i < batches; i++ {
			n := 1 + (i*37)%300
			want += n
			for r := 0; r < n; r++ {
				v := int64((p*batches+i)*1000 + r)
				if seen[v] != 1 {
					t.Fatalf("row %d arrived %d times", v, seen[v])
				}
			}
		}
	}
	if len(seen) != want {
		t.Fatalf("%d distinct rows arrived, want %d", len(seen), want)
	}
	anyRemote := false
	for _, tm := range consumerTM {
		anyRemote = anyRemote || tm != 0
	}
	if anyRemote != (remote.Load() > 0) {
		t.Fatalf("remote rows = %d with consumers on %v", remote.Load(), consumerTM)
	}
}

func TestLocalShuffle(t *testing.T) {
	x := NewExchange(ExchangeOptions{})
	defer x.Close()
	runShuffle(t, []*Exchange{x}, []string{""}, []int{0, 0, 0}, 2, 40)
}

func TestRemoteShuffle(t *testing.T) {
	a, addrA := startTM(t)
	b, addrB := startTM(t)
	// Consumers 0 and 2 on the other task manager, 1 beside the producers.
	runShuffle(t, []*Exchange{a, b}, []string{addrA, addrB}, []int{1, 0, 1}, 2, 40)
}

func TestInboxEndOfInputPerInput(t *testing.T) {
	ctx := context.Background()
	in, err := NewInbox(3, []ChannelSpec{
		{Input: 0, SourceVertex: 1, SourceSubtask: 0},
		{Input: 0, SourceVertex: 1, SourceSubtask: 1},
		{Input: 1, SourceVertex: 2, SourceSubtask: 0},
	}, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	ch := func(i int) *inboxChannel { return in.chans[i] }
	// Input 2 has no channels: it ends at once.
	if i, ev, err := in.Next(ctx); err != nil || i != 2 || ev.Kind != EventEndOfInput {
		t.Fatalf("first event: %d %v %v", i, ev.Kind, err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ch(0).put(ctx, Event{Kind: EventEndOfInput}))
	must(ch(2).put(ctx, Event{Kind: EventWatermark, Value: 7}))
	must(ch(2).put(ctx, Event{Kind: EventEndOfInput}))
	must(ch(1).put(ctx, Event{Kind: EventBarrier, Value: 3}))
	must(ch(1).put(ctx, Event{Kind: EventEndOfInput}))
	type got struct {
		input int
		kind  EventKind
		value int64
	}
	var seq []got
	for {
		i, ev, err := in.Next(ctx)
		if err == io.EOF {
			break
		}
		must(err)
		seq = append(seq, got{i, ev.Kind, ev.Value})
	}
	want := []got{{1, EventWatermark, 7}, {1, EventEndOfInput, 0}, {0, EventBarrier, 3}, {0, EventEndOfInput, 0}}
	if len(seq) != len(want) {
		t.Fatalf("events %v, want %v", seq, want)
	}
	for i := range want {
		if seq[i] != want[i] {
			t.Fatalf("events %v, want %v", seq, want)
		}
	}
	if _, err := in.attach(ChannelSpec{Input: 0, SourceVertex: 1, SourceSubtask: 0}); err != nil {
		t.Fatal(err)
	}
	if _, err := in.attach(ChannelSpec{Input: 0, SourceVertex: 1, SourceSubtask: 0}); err == nil {
		t.Fatal("second sender attached to one channel")
	}
}

// blockedOutbox sets up a producer whose single consumer never reads, and
// returns the outbox and a counter of completed sends.
func startBlockedProducer(t *testing.T, ctx context.Context, x *Exchange, target Target) (sent *atomic.Int64, done chan error, in *Inbox) {
	t.Helper()
	in, err := NewInbox(1, []ChannelSpec{{Input: 0, SourceVertex: 1, SourceSubtask: 0}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	o, err := NewOutbox(x, OutboxSpec{
		JobID: job, SourceVertex: 1, SourceSubtask: 0, TargetVertex: 2,
		Partitioning: types.PartitionForward, Targets: []Target{target}, InFlight: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	sent = new(atomic.Int64)
	done = make(chan error, 1)
	b := makeBatch(0, 4096, 1000, false)
	go func() {
		defer b.Release()
		for i := 0; i < 1000; i++ {
			if err := o.Send(ctx, b); err != nil {
				o.Abort()
				done <- err
				return
			}
			sent.Add(1)
		}
		done <- o.Close(ctx)
	}()
	return sent, done, in
}

// waitSent waits until the producer completed at least n sends: the most
// the pipeline takes in whatever the timing.
func waitSent(t *testing.T, sent *atomic.Int64, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for sent.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("producer sent %d batches in 10s, want at least %d", sent.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitStalled waits until sent stops growing and returns its value.
//
// NB: a quiet spell proves nothing on a loaded machine: a producer that
// still has room may get no CPU for the whole of it. So the value is only
// good as an upper bound (a producer that backpressure does not stop runs
// far past it); callers first waitSent for what must get through.
func waitStalled(t *testing.T, sent *atomic.Int64) int64 {
	t.Helper()
	last, quiet := int64(-1), 0
	for i := 0; i < 200; i++ {
		time.Sleep(20 * time.Millisecond)
		n := sent.Load()
		if n != last {
			last, quiet = n, 0
			continue
		}
		if quiet++; quiet == 2 {
			return n
		}
	}
	t.Fatalf("producer never blocked: %d batches sent", last)
	return 0
}

func TestLocalBackpressure(t *testing.T) {
	x := NewExchange(ExchangeOptions{})
	defer x.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sent, done, in := startBlockedProducer(t, ctx, x, Target{Local: true})
	if err := x.Register(SubtaskKey{JobID: job, Vertex: 2, Subtask: 0}, in); err != nil {
		t.Fatal(err)
	}
	waitSent(t, sent, 2)
	if n := waitStalled(t, sent); n != 2 {
		t.Fatalf("producer sent %d batches into an inbox of capacity 2", n)
	}
	// Reading one batch lets exactly one more through.
	_, ev, err := in.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ev.Batch.Release()
	waitSent(t, sent, 3)
	if n := waitStalled(t, sent); n != 3 {
		t.Fatalf("after one read the producer sent %d batches, want 3", n)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("blocked send returned %v, want context.Canceled", err)
	}
	x.UnregisterJob(job)
}

func TestRemoteBackpressureAndCancel(t *testing.T) {
	a, _ := startTM(t)
	b, addrB := startTM(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sent, done, in := startBlockedProducer(t, ctx, a, Target{Address: addrB})
	if err := b.Register(SubtaskKey{JobID: job, Vertex: 2, Subtask: 0}, in); err != nil {
		t.Fatal(err)
	}
	// A 4096-row batch is ~150 KB encoded: the inbox (2) and the receiving
	// handler (1) take 3 whatever the timing; with the 1 MB stream window
	// (~7), the in-flight queue (2) and the batch being encoded they bound
	// what the producer gets out.
	waitSent(t, sent, 3)
	if n := waitStalled(t, sent); n > 20 {
		t.Fatalf("producer sent %d batches to a consumer that does not read", n)
	}
	// Cancelling the receiving job fails the stream and the producer cleanly.
	b.UnregisterJob(job)
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("producer finished although its consumer was cancelled")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("producer still blocked after its consumer was cancelled")
	}
}

func TestRemoteSenderCancel(t *testing.T) {
	a, _ := startTM(t)
	b, addrB := startTM(t)
	ctx, cancel := context.WithCancel(context.Background())
	sent, done, in := startBlockedProducer(t, ctx, a, Target{Address: addrB})
	key := SubtaskKey{JobID: job, Vertex: 2, Subtask: 0}
	if err := b.Register(key, in); err != nil {
		t.Fatal(err)
	}
	waitStalled(t, sent)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("producer returned %v, want context.Canceled", err)
	}
	// The receiver sees its channel fail, not end: Next does not report
	// end-of-input. Drain what was queued, then expect a block.
	rctx, rcancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer rcancel()
	for {
		_, ev, err := in.Next(rctx)
		if err != nil {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("receiver: %v", err)
			}
			break
		}
		if ev.Kind != EventBatch {
			t.Fatalf("receiver got %v from a cancelled sender", ev.Kind)
		}
		ev.Batch.Release()
	}
	b.Unregister(key, in)
}

func TestUnregisteredTargetTimesOut(t *testing.T) {
	x := NewExchange(ExchangeOptions{RegisterTimeout: 50 * time.Millisecond})
	defer x.Close()
	o, err := NewOutbox(x, OutboxSpec{JobID: job, SourceVertex: 1, TargetVertex: 2,
		Partitioning: types.PartitionForward, Targets: []Target{{Local: true}}})
	if err != nil {
		t.Fatal(err)
	}
	b := makeBatch(0, 10, 3, false)
	defer b.Release()
	if err := o.Send(context.Background(), b); err == nil {
		t.Fatal("send to an unregistered subtask succeeded")
	}
	o.Abort()
}

func TestRemoteLingerFlushesSmallBatch(t *testing.T) {
	a, _ := startTM(t)
	b, addrB := startTM(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in, err := NewInbox(1, []ChannelSpec{{Input: 0, SourceVertex: 1, SourceSubtask: 0}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	key := SubtaskKey{JobID: job, Vertex: 2, Subtask: 0}
	if err := b.Register(key, in); err != nil {
		t.Fatal(err)
	}
	defer b.Unregister(key, in)
	o, err := NewOutbox(a, OutboxSpec{JobID: job, SourceVertex: 1, TargetVertex: 2,
		Partitioning: types.PartitionForward, Targets: []Target{{Address: addrB}},
		CoalesceBytes: 1 << 20, Linger: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Abort()
	batch := makeBatch(0, 3, 3, false)
	defer batch.Release()
	if err := o.Send(ctx, batch); err != nil {
		t.Fatal(err)
	}
	// Far below the coalescing threshold and not closed: only the linger
	// timer can deliver it.
	_, ev, err := in.Next(ctx)
	if err != nil {
		t.Fatalf("small batch not flushed: %v", err)
	}
	if ev.Kind != EventBatch || ev.Batch.NumRows() != 3 {
		t.Fatalf("got %v with %d rows", ev.Kind, ev.Batch.NumRows())
	}
	ev.Batch.Release()
}

// TestInboxBlockHoldsChannel checks that a blocked channel's events stay
// queued, in order, while other channels flow, and that Wake interrupts a
// waiting Next.
func TestInboxBlockHoldsChannel(t *testing.T) {
	ctx := context.Background()
	in, err := NewInbox(1, []ChannelSpec{
		{Input: 0, SourceVertex: 1, SourceSubtask: 0},
		{Input: 0, SourceVertex: 1, SourceSubtask: 1},
	}, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	put := func(c int, ev Event) {
		t.Helper()
		if err := in.chans[c].put(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	next := func() (int, EventKind, int64) {
		t.Helper()
		_, ev, err := in.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ev.Channel, ev.Kind, ev.Value
	}
	put(0, Event{Kind: EventBarrier, Value: 1})
	if c, k, v := next(); c != 0 || k != EventBarrier || v != 1 {
		t.Fatalf("got %d %v %d", c, k, v)
	}
	in.Block(0)
	put(0, Event{Kind: EventWatermark, Value: 10})
	put(0, Event{Kind: EventWatermark, Value: 11})
	put(1, Event{Kind: EventWatermark, Value: 20})
	put(1, Event{Kind: EventBarrier, Value: 1})
	if c, k, v := next(); c != 1 || k != EventWatermark || v != 20 {
		t.Fatalf("blocked channel leaked: got %d %v %d", c, k, v)
	}
	if c, k, _ := next(); c != 1 || k != EventBarrier {
		t.Fatalf("got %d %v", c, k)
	}
	in.Wake()
	if c, k, _ := next(); c != -1 || k != EventWakeup {
		t.Fatalf("after Wake got %d %v", c, k)
	}
	put(1, Event{Kind: EventWatermark, Value: 21})
	in.Unblock(0)
	for _, want := range []struct {
		c int
		v int64
	}{{0, 10}, {0, 11}, {1, 21}} {
		if c, k, v := next(); c != want.c || k != EventWatermark || v != want.v {
			t.Fatalf("after Unblock got %d %v %d, want channel %d value %d", c, k, v, want.c, want.v)
		}
	}
}
