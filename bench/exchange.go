package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/shuffle"
	"github.com/braidflow/braid/types"
)

// Defaults of ExchangeOptions.
const (
	DefaultLocalExchangeRows = 50_000_000
	DefaultRemoteShuffleRows = 10_000_000
	DefaultConsumers         = 4
	DefaultExchangeKeys      = 1 << 20
)

// ExchangeOptions size an exchange run. Zero values take defaults.
type ExchangeOptions struct {
	// Rows is the number of rows sent (the last batch may be partial).
	Rows int64
	// Consumers is the number of consuming subtasks (hash-partitioned
	// channels); DefaultConsumers when zero.
	Consumers int
	// Keys is the number of distinct keys the rows draw from.
	Keys int
}

func (o *ExchangeOptions) setDefaults(rows int64) {
	if o.Rows <= 0 {
		o.Rows = rows
	}
	if o.Consumers <= 0 {
		o.Consumers = DefaultConsumers
	}
	if o.Keys <= 0 {
		o.Keys = DefaultExchangeKeys
	}
}

// LocalExchange sends opts.Rows rows from one producer, hash-partitioned on
// the first column, into opts.Consumers local channels of one
// shuffle.Exchange, each drained by its own goroutine. It measures the
// partitioner (gathering each target's rows column by column) and the
// channel hand-off.
func LocalExchange(ctx context.Context, opts ExchangeOptions) (Result, error) {
	opts.setDefaults(DefaultLocalExchangeRows)
	x := shuffle.NewExchange(shuffle.ExchangeOptions{})
	defer x.Close()
	return runExchange(ctx, "local-exchange", x, x, shuffle.Target{Local: true}, opts)
}

// RemoteShuffle sends opts.Rows rows from one producer, hash-partitioned into
// opts.Consumers channels, from one Exchange to another over loopback gRPC:
// Arrow IPC encoding, the DataService stream, decoding and the receiving
// inboxes. Both Exchanges serve DataService on their own gRPC server, as two
// task managers do.
func RemoteShuffle(ctx context.Context, opts ExchangeOptions) (Result, error) {
	opts.setDefaults(DefaultRemoteShuffleRows)
	px, _, stopP, err := serveExchange()
	if err != nil {
		return Result{}, err
	}
	defer stopP()
	cx, addr, stopC, err := serveExchange()
	if err != nil {
		return Result{}, err
	}
	defer stopC()
	return runExchange(ctx, "remote-shuffle", px, cx, shuffle.Target{Address: addr}, opts)
}

// serveExchange serves a new Exchange on a loopback port. stop shuts the
// server down and closes the Exchange.
func serveExchange() (x *shuffle.Exchange, addr string, stop func(), err error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", nil, fmt.Errorf("bench: %w", err)
	}
	x = shuffle.NewExchange(shuffle.ExchangeOptions{})
	srv := grpc.NewServer(shuffle.ServerOptions()...)
	braidv1.RegisterDataServiceServer(srv, x)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(lis) }()
	stop = func() {
		_ = x.Close()
		srv.Stop()
		<-done
	}
	return x, lis.Addr().String(), stop, nil
}

// runID tells the jobs of successive runs on one Exchange apart.
var runID atomic.Int64

// runExchange is the body of both exchange runners: consumers register with
// cx, the producer's Outbox (resolved through px) sends to target.
func runExchange(ctx context.Context, name string, px, cx *shuffle.Exchange, target shuffle.Target, opts ExchangeOptions) (Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	job := "bench-" + strconv.FormatInt(runID.Add(1), 10)
	defer cx.UnregisterJob(job)

	batches := exchangeBatches(opts.Keys)
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()

	counts := make([]int64, opts.Consumers)
	errs := make([]error, opts.Consumers)
	var wg sync.WaitGroup
	for c := 0; c < opts.Consumers; c++ {
		in, err := shuffle.NewInbox(1, []shuffle.ChannelSpec{{Input: 0, SourceVertex: 1, SourceSubtask: 0}}, 0)
		if err != nil {
			return Result{}, err
		}
		if err := cx.Register(shuffle.SubtaskKey{JobID: job, Vertex: 2, Subtask: c}, in); err != nil {
			in.Close()
			return Result{}, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[c], errs[c] = drain(ctx, in)
			if errs[c] != nil {
				cancel()
			}
		}()
	}
	targets := make([]shuffle.Target, opts.Consumers)
	for i := range targets {
		targets[i] = target
	}
	out, err := shuffle.NewOutbox(px, shuffle.OutboxSpec{
		JobID: job, SourceVertex: 1, TargetVertex: 2,
		Partitioning: types.PartitionHash, KeyColumns: []int{0},
		Targets: targets,
	})
	if err != nil {
		cancel()
		wg.Wait()
		return Result{}, err
	}

	start := time.Now()
	err = produce(ctx, out, batches, opts.Rows)
	if err == nil {
		err = out.Close(ctx)
	} else {
		out.Abort()
		cancel()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err = errors.Join(append([]error{err}, errs...)...); err != nil {
		return Result{}, fmt.Errorf("bench: %s: %w", name, err)
	}

	var got, least, most int64
	for i, n := range counts {
		got += n
		if i == 0 || n < least {
			least = n
		}
		most = max(most, n)
	}
	if got != opts.Rows {
		return Result{}, fmt.Errorf("bench: %s: consumers received %d rows, sent %d", name, got, opts.Rows)
	}
	r := newResult(name, got, elapsed)
	r.Extra["consumers"] = strconv.Itoa(opts.Consumers)
	r.Extra["batch"] = strconv.Itoa(BatchRows)
	r.Extra["consumer-rows-min/max"] = fmt.Sprintf("%d/%d", least, most)
	return r, nil
}

// exchangeBatches builds a fixed set of full batches with random keys; the
// producer cycles through them (Send borrows, so they can be reused).
func exchangeBatches(keys int) []types.Batch {
	bb := newBatchBuilder(rowSchema(""))
	defer bb.release()
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]types.Batch, 16)
	ks := make([]int64, BatchRows)
	for i := range out {
		for j := range ks {
			ks[j] = rng.Int64N(int64(keys))
		}
		out[i] = bb.build(ks, int64(i*BatchRows))
	}
	return out
}

// produce sends rows rows, cycling through batches; the last one is a slice.
func produce(ctx context.Context, out *shuffle.Outbox, batches []types.Batch, rows int64) error {
	for sent, i := int64(0), 0; sent < rows; i++ {
		b := batches[i%len(batches)]
		if left := rows - sent; left < BatchRows {
			part := types.Batch{Rec: b.Rec.NewSlice(0, left)}
			err := out.Send(ctx, part)
			part.Release()
			return err
		}
		if err := out.Send(ctx, b); err != nil {
			return err
		}
		sent += BatchRows
	}
	return nil
}

// drain consumes an inbox until end of input and counts its rows.
func drain(ctx context.Context, in *shuffle.Inbox) (int64, error) {
	var rows int64
	for {
		_, ev, err := in.Next(ctx)
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		if ev.Kind == shuffle.EventBatch {
			rows += int64(ev.Batch.NumRows())
			ev.Batch.Release()
		}
	}
}
