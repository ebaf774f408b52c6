package shuffle

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/braidflow/braid/types"
)

// TestWatermarkOrder: a watermark sent after batches arrives after them and
// before end-of-input, on a local and on a remote channel (where the
// batches are still coalescing in the encode buffer when it is sent).
func TestWatermarkOrder(t *testing.T) {
	for _, remote := range []bool{false, true} {
		a, _ := startTM(t)
		b, addrB := startTM(t)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		in, err := NewInbox(1, []ChannelSpec{{Input: 0, SourceVertex: 1, SourceSubtask: 0}}, 4)
		if err != nil {
			t.Fatal(err)
		}
		x, target := a, Target{Local: true}
		if remote {
			x, target = b, Target{Address: addrB}
		}
		key := SubtaskKey{JobID: job, Vertex: 2, Subtask: 0}
		if err := x.Register(key, in); err != nil {
			t.Fatal(err)
		}
		o, err := NewOutbox(a, OutboxSpec{JobID: job, SourceVertex: 1, TargetVertex: 2,
			Partitioning: types.PartitionForward, Targets: []Target{target},
			CoalesceBytes: 1 << 20, Linger: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for i, wm := range []int64{10, 20} {
				batch := makeBatch(i*3, 3, 3, false)
				_ = o.Send(ctx, batch)
				batch.Release()
				_ = o.SendWatermark(ctx, wm)
			}
			_ = o.Close(ctx)
		}()
		var got []string
		for {
			_, ev, err := in.Next(ctx)
			if err != nil {
				break
			}
			switch ev.Kind {
			case EventBatch:
				got = append(got, "batch")
				ev.Batch.Release()
			case EventWatermark:
				got = append(got, "wm"+string(rune('0'+ev.Value/10)))
			default:
				got = append(got, ev.Kind.String())
			}
		}
		want := "[batch wm1 batch wm2 end-of-input]"
		if g := fmt.Sprint(got); g != want {
			t.Errorf("remote=%v: got %s, want %s", remote, g, want)
		}
		x.Unregister(key, in)
		cancel()
	}
}
