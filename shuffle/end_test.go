package shuffle

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/braidflow/braid/types"
)

// drain reads in until io.EOF and returns the kinds it saw, with barrier
// and watermark values.
func drain(t *testing.T, ctx context.Context, in *Inbox) []string {
	t.Helper()
	var seq []string
	for {
		i, ev, err := in.Next(ctx)
		if err == io.EOF {
			return seq
		}
		if err != nil {
			t.Fatal(err)
		}
		s := ev.Kind.String()
		switch ev.Kind {
		case EventBatch:
			ev.Batch.Release()
		case EventBarrier, EventWatermark:
			s += "=" + strconv.FormatInt(ev.Value, 10)
		case EventEndOfInput:
			s += "@" + strconv.Itoa(i)
		}
		seq = append(seq, s)
	}
}

// TestEndOfDataThenBarriers: after EndOfData the input ends at once, a
// barrier still passes, and Close ends the stream; over local and remote
// channels alike.
func TestEndOfDataThenBarriers(t *testing.T) {
	for _, remote := range []bool{false, true} {
		name := "local"
		if remote {
			name = "remote"
		}
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			x, addr := startTM(t)
			in, err := NewInbox(1, []ChannelSpec{{Input: 0, SourceVertex: 0, SourceSubtask: 0}}, 4)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			key := SubtaskKey{JobID: "j", Vertex: 1, Subtask: 0}
			if err := x.Register(key, in); err != nil {
				t.Fatal(err)
			}
			defer x.Unregister(key, in)
			o, err := NewOutbox(x, OutboxSpec{JobID: "j", SourceVertex: 0, TargetVertex: 1,
				Partitioning: types.PartitionForward, Targets: []Target{{Local: !remote, Address: addr}}})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				b := makeBatch(0, 10, 3, false)
				defer b.Release()
				err := o.Send(ctx, b)
				if err == nil {
					err = o.EndOfData(ctx)
				}
				if err == nil {
					if werr := o.SendWatermark(ctx, 5); werr == nil || !strings.Contains(werr.Error(), "after end of data") {
						err = errorf("watermark after end of data: %v", werr)
					}
				}
				if err == nil {
					err = o.SendBarrier(ctx, 7)
				}
				if err == nil {
					err = o.Close(ctx)
				}
				done <- err
			}()
			in.ReportChannelEnds()
			got := strings.Join(drain(t, ctx, in), " ")
			if want := "batch end-of-input@0 barrier=7 channel-end"; got != want {
				t.Fatalf("events %q, want %q", got, want)
			}
			if in.Stopped() {
				t.Fatal("Stopped after a channel whose data ended")
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestStopClosesWithoutEnd: a channel closed with Stop does not end its
// input; Next reaches io.EOF and Stopped says why.
func TestStopClosesWithoutEnd(t *testing.T) {
	for _, remote := range []bool{false, true} {
		name := "local"
		if remote {
			name = "remote"
		}
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			x, addr := startTM(t)
			specs := []ChannelSpec{{Input: 0, SourceVertex: 0, SourceSubtask: 0}, {Input: 0, SourceVertex: 0, SourceSubtask: 1}}
			in, err := NewInbox(1, specs, 4)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			key := SubtaskKey{JobID: "j", Vertex: 1, Subtask: 0}
			if err := x.Register(key, in); err != nil {
				t.Fatal(err)
			}
			defer x.Unregister(key, in)
			done := make(chan error, 2)
			for sub := 0; sub < 2; sub++ {
				o, err := NewOutbox(x, OutboxSpec{JobID: "j", SourceVertex: 0, SourceSubtask: sub, TargetVertex: 1,
					Partitioning: types.PartitionSingle, Targets: []Target{{Local: !remote, Address: addr}}})
				if err != nil {
					t.Fatal(err)
				}
				go func() {
					err := o.SendBarrier(ctx, 3)
					if err == nil && sub == 0 {
						// One sender's data ended before the stop: the
						// input still does not end.
						err = o.EndOfData(ctx)
					}
					if err == nil {
						err = o.Stop(ctx)
					}
					done <- err
				}()
			}
			seq := drain(t, ctx, in)
			for _, s := range seq {
				if strings.HasPrefix(s, "end-of-input") {
					t.Fatalf("input ended after a stop: %v", seq)
				}
			}
			if len(seq) != 2 || !in.Stopped() {
				t.Fatalf("events %v, stopped %v; want two barriers, stopped", seq, in.Stopped())
			}
			for i := 0; i < 2; i++ {
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestBatchAfterEndOfDataFails: a sender that breaks the protocol fails
// the receiver with a clear error.
func TestBatchAfterEndOfDataFails(t *testing.T) {
	ctx := context.Background()
	in, err := NewInbox(1, []ChannelSpec{{Input: 0}}, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	ch := in.chans[0]
	if err := ch.put(ctx, Event{Kind: EventEndOfData}); err != nil {
		t.Fatal(err)
	}
	if err := ch.put(ctx, Event{Kind: EventWatermark, Value: 1}); err != nil {
		t.Fatal(err)
	}
	if _, ev, err := in.Next(ctx); err != nil || ev.Kind != EventEndOfInput {
		t.Fatalf("first: %v %v", ev.Kind, err)
	}
	if _, _, err := in.Next(ctx); err == nil || !strings.Contains(err.Error(), "watermark after end-of-data") {
		t.Fatalf("watermark after end of data: %v", err)
	}
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
