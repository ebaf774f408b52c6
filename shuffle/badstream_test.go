package shuffle

import (
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	braidv1 "github.com/braidflow/braid/proto/braid/v1"
	"github.com/braidflow/braid/types"
)

// rawStream opens a DataService stream to addr, as a foreign sender could,
// and sends the messages.
func rawStream(t *testing.T, ctx context.Context, addr string, msgs ...*braidv1.DataMessage) error {
	t.Helper()
	conn, err := grpc.NewClient(addr, DialOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := braidv1.NewDataServiceClient(conn).Exchange(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if err := stream.Send(m); err != nil {
			if !errors.Is(err, io.EOF) {
				return err
			}
			break // the server ended the stream; CloseAndRecv has its status
		}
	}
	_, err = stream.CloseAndRecv()
	return err
}

func headerMsg(h *braidv1.ChannelHeader) *braidv1.DataMessage {
	return &braidv1.DataMessage{Payload: &braidv1.DataMessage_Header{Header: h}}
}

func ipcMsg(p []byte) *braidv1.DataMessage {
	return &braidv1.DataMessage{Payload: &braidv1.DataMessage_ArrowIpc{ArrowIpc: p}}
}

func eventMsg(kind braidv1.ControlEvent_Kind, v int64) *braidv1.DataMessage {
	return &braidv1.DataMessage{Payload: &braidv1.DataMessage_Event{Event: &braidv1.ControlEvent{Kind: kind, Value: v}}}
}

// registerOne registers an inbox fed by subtask 0 of vertex 1 as subtask
// `subtask` of vertex 2 of job jobID, and returns it with the header its
// sender uses.
func registerOne(t *testing.T, x *Exchange, jobID string, subtask int) (*Inbox, *braidv1.ChannelHeader) {
	t.Helper()
	in, err := NewInbox(1, []ChannelSpec{{Input: 0, SourceVertex: 1, SourceSubtask: 0}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	key := SubtaskKey{JobID: jobID, Vertex: 2, Subtask: subtask}
	if err := x.Register(key, in); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Unregister(key, in) })
	return in, &braidv1.ChannelHeader{JobId: jobID, SourceVertex: 1, TargetVertex: 2, TargetSubtask: int32(subtask)}
}

// wantInputFailed checks that the inbox's subtask sees its input fail with
// an internal error that names the channel and contains want.
func wantInputFailed(t *testing.T, in *Inbox, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, ev, err := in.Next(ctx)
		if err == nil {
			ev.Batch.Release() // queued before the failure
			continue
		}
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			t.Fatal("the inbox's input did not fail")
		case !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "input channel {Input:0 SourceVertex:1 SourceSubtask:0}"):
			t.Fatalf("input failed with %q, want it to name the channel and contain %q", err, want)
		case types.ClassOf(err) != types.ClassInternal:
			t.Fatalf("input failed with class %v, want internal", types.ClassOf(err))
		}
		return
	}
}

// TestExchangeRefusesCraftedIPC sends the crafted payloads to a task
// manager's data service: each stream fails with InvalidArgument, quickly
// and without a large allocation, the receiving subtask's input fails, and
// the task manager goes on serving other streams.
func TestExchangeRefusesCraftedIPC(t *testing.T) {
	p, _ := startTM(t)
	x, addr := startTM(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i, c := range craftedPayloads(t) {
		in, h := registerOne(t, x, "crafted", i)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		err := rawStream(t, ctx, addr, headerMsg(h), ipcMsg(c.payload))
		runtime.ReadMemStats(&after)
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: stream ended with %v, want InvalidArgument containing %q", c.name, err, c.want)
		}
		// NB: TotalAlloc counts every allocation since the start, freed or
		// not, so a short-lived huge one shows too.
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
			t.Fatalf("%s: the task manager allocated %d MB refusing it", c.name, grew>>20)
		}
		wantInputFailed(t, in, c.want)
	}
	// Still serving: a whole remote shuffle through the same task manager.
	runShuffle(t, []*Exchange{p, x}, []string{"", addr}, []int{1, 1}, 2, 10)
}

// TestExchangeRefusesBadStreams checks headers, events and message orders no
// Braid sender writes: the stream fails with InvalidArgument at once (not
// after the register timeout), and once a channel is attached its subtask's
// input fails too.
func TestExchangeRefusesBadStreams(t *testing.T) {
	x, addr := startTM(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hdr := func(edit func(h *braidv1.ChannelHeader)) *braidv1.DataMessage {
		h := &braidv1.ChannelHeader{JobId: job, SourceVertex: 1, TargetVertex: 2}
		edit(h)
		return headerMsg(h)
	}
	for _, c := range []struct {
		name string
		msg  *braidv1.DataMessage
		want string
	}{
		{"negative target subtask", hdr(func(h *braidv1.ChannelHeader) { h.TargetSubtask = -1 }), "target subtask -1 out of range [0, 32768)"},
		{"huge source subtask", hdr(func(h *braidv1.ChannelHeader) { h.SourceSubtask = 1 << 30 }), "source subtask 1073741824 out of range"},
		{"negative target vertex", hdr(func(h *braidv1.ChannelHeader) { h.TargetVertex = -7 }), "target vertex -7 out of range"},
		{"negative input", hdr(func(h *braidv1.ChannelHeader) { h.TargetInput = -1 }), "target input -1 out of range"},
		{"long job id", hdr(func(h *braidv1.ChannelHeader) { h.JobId = strings.Repeat("j", 1000) }), "job id of 1000 bytes (limit 256)"},
		{"no header", ipcMsg(nil), "not a channel header"},
	} {
		err := rawStream(t, ctx, addr, c.msg)
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: stream ended with %v, want InvalidArgument containing %q", c.name, err, c.want)
		}
	}

	b := makeBatch(0, 10, 3, false)
	valid := encodePayloads(t, true, b)[0]
	b.Release()
	for i, c := range []struct {
		name string
		msgs []*braidv1.DataMessage
		want string
	}{
		{"barrier 0", []*braidv1.DataMessage{eventMsg(braidv1.ControlEvent_KIND_BARRIER, 0)}, "barrier of checkpoint 0"},
		{"negative barrier", []*braidv1.DataMessage{ipcMsg(valid), eventMsg(braidv1.ControlEvent_KIND_BARRIER, -5)}, "barrier of checkpoint -5"},
		{"unknown event", []*braidv1.DataMessage{eventMsg(braidv1.ControlEvent_KIND_UNSPECIFIED, 0)}, "unknown control event"},
		{"header twice", []*braidv1.DataMessage{headerMsg(&braidv1.ChannelHeader{})}, "unexpected exchange message"},
		{"empty message", []*braidv1.DataMessage{{}}, "unexpected exchange message <nil>"},
		{"closed before end-of-input", []*braidv1.DataMessage{ipcMsg(valid)}, "exchange stream closed before end-of-input"},
	} {
		in, h := registerOne(t, x, "bad-"+job, i)
		err := rawStream(t, ctx, addr, append([]*braidv1.DataMessage{headerMsg(h)}, c.msgs...)...)
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: stream ended with %v, want InvalidArgument containing %q", c.name, err, c.want)
		}
		wantInputFailed(t, in, c.want)
	}

	// After its end, the channel's input is whole: the stream fails, the
	// subtask does not.
	in, h := registerOne(t, x, "bad-"+job, 100)
	err := rawStream(t, ctx, addr, headerMsg(h), eventMsg(braidv1.ControlEvent_KIND_END_OF_INPUT, 0), ipcMsg(valid))
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "exchange message after end-of-input") {
		t.Fatalf("message after end-of-input: stream ended with %v", err)
	}
	if _, ev, err := in.Next(ctx); err != nil || ev.Kind != EventEndOfInput {
		t.Fatalf("after end-of-input Next returned %v, %v", ev.Kind, err)
	}
	if _, _, err := in.Next(ctx); err != io.EOF {
		t.Fatalf("after end-of-input Next returned %v, want io.EOF", err)
	}
}

// TestInboxFailReachesNext checks that a failed channel fails Next even
// while other channels have events queued, and that only the first failure
// counts.
func TestInboxFailReachesNext(t *testing.T) {
	ctx := context.Background()
	in, err := NewInbox(1, []ChannelSpec{{Input: 0, SourceVertex: 1, SourceSubtask: 0}, {Input: 0, SourceVertex: 1, SourceSubtask: 1}}, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	for i := 0; i < 4; i++ {
		if err := in.chans[0].put(ctx, Event{Kind: EventWatermark, Value: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	in.chans[1].fail(errors.New("first"), "peer-a")
	in.chans[0].fail(errors.New("second"), "peer-b")
	for i := 0; ; i++ {
		_, _, err := in.Next(ctx)
		if err == nil {
			if i > 4 {
				t.Fatal("Next kept returning events after a failure")
			}
			continue
		}
		if want := "first (input channel {Input:0 SourceVertex:1 SourceSubtask:1}, from peer-a)"; err.Error() != want {
			t.Fatalf("Next failed with %q, want %q", err, want)
		}
		return
	}
}
