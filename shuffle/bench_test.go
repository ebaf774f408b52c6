package shuffle

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/braidflow/braid/types"
)

const benchRows = 4096

func reportRows(b *testing.B, rowsPerOp int) {
	b.ReportMetric(float64(rowsPerOp)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkHashPartition(b *testing.B) {
	batch := makeBatch(0, benchRows, 1<<20, false)
	defer batch.Release()
	for _, n := range []int{1, 4} {
		b.Run(fmt.Sprintf("targets=%d", n), func(b *testing.B) {
			p, err := NewPartitioner(types.PartitionHash, n, []int{0}, 128)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = p.Partition(batch, func(int, types.Batch) error { return nil })
			}
			reportRows(b, benchRows)
		})
	}
}

// BenchmarkDecode decodes a channel's stream of 4096-row batches as the
// server does, against arrow-go's own reader on the same bytes: the cost
// of checking what a peer sent.
func BenchmarkDecode(b *testing.B) {
	batch := makeBatch(0, benchRows, 1<<20, true)
	defer batch.Release()
	first := encodePayloads(b, false, batch, batch)
	schemaAndBatch, next := first[0], first[1]
	b.Run("decoder", func(b *testing.B) {
		var d decoder
		defer d.release()
		drop := func(b types.Batch) error { b.Release(); return nil }
		if err := d.feed(schemaAndBatch, drop); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := d.feed(next, drop); err != nil {
				b.Fatal(err)
			}
		}
		reportRows(b, benchRows)
	})
	b.Run("ipc.Reader", func(b *testing.B) {
		r, err := ipc.NewReader(io.MultiReader(bytes.NewReader(schemaAndBatch), &repeatReader{p: next}))
		if err != nil {
			b.Fatal(err)
		}
		defer r.Release()
		r.Next()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if !r.Next() {
				b.Fatal(r.Err())
			}
		}
		reportRows(b, benchRows)
	})
}

// repeatReader reads p over and over.
type repeatReader struct {
	p   []byte
	off int
}

func (r *repeatReader) Read(b []byte) (int, error) {
	n := copy(b, r.p[r.off:])
	r.off = (r.off + n) % len(r.p)
	return n, nil
}

// benchExchange sends b.N batches from one producer to `consumers` subtasks
// that drain their inboxes.
func benchExchange(b *testing.B, px, cx *Exchange, target Target, kind types.Partitioning, consumers int) {
	ctx := context.Background()
	batch := makeBatch(0, benchRows, 1<<20, false)
	defer batch.Release()
	done := make(chan error, consumers)
	keys := make([]SubtaskKey, consumers)
	inboxes := make([]*Inbox, consumers)
	for c := 0; c < consumers; c++ {
		in, err := NewInbox(1, []ChannelSpec{{Input: 0, SourceVertex: 1}}, 0)
		if err != nil {
			b.Fatal(err)
		}
		keys[c], inboxes[c] = SubtaskKey{JobID: job, Vertex: 2, Subtask: c}, in
		if err := cx.Register(keys[c], in); err != nil {
			b.Fatal(err)
		}
		go func() {
			for {
				_, ev, err := in.Next(ctx)
				if err != nil {
					if err == io.EOF {
						err = nil
					}
					done <- err
					return
				}
				ev.Batch.Release()
			}
		}()
	}
	targets := make([]Target, consumers)
	for i := range targets {
		targets[i] = target
	}
	o, err := NewOutbox(px, OutboxSpec{JobID: job, SourceVertex: 1, TargetVertex: 2,
		Partitioning: kind, KeyColumns: []int{0}, Targets: targets})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := o.Send(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	if err := o.Close(ctx); err != nil {
		b.Fatal(err)
	}
	for c := 0; c < consumers; c++ {
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportRows(b, benchRows)
	for c := range keys {
		cx.Unregister(keys[c], inboxes[c])
	}
}

func BenchmarkLocalExchange(b *testing.B) {
	b.Run("forward", func(b *testing.B) {
		x := NewExchange(ExchangeOptions{})
		defer x.Close()
		benchExchange(b, x, x, Target{Local: true}, types.PartitionForward, 1)
	})
	b.Run("hash=4", func(b *testing.B) {
		x := NewExchange(ExchangeOptions{})
		defer x.Close()
		benchExchange(b, x, x, Target{Local: true}, types.PartitionHash, 4)
	})
}

func BenchmarkRemoteShuffle(b *testing.B) {
	a, _ := startTM(b)
	c, addr := startTM(b)
	b.Run("forward", func(b *testing.B) {
		benchExchange(b, a, c, Target{Address: addr}, types.PartitionForward, 1)
	})
	b.Run("hash=4", func(b *testing.B) {
		benchExchange(b, a, c, Target{Address: addr}, types.PartitionHash, 4)
	})
}
