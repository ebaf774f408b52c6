package runtime

import (
	"time"

	"github.com/braidflow/braid/operators"
)

// ticker is an operator of the chain that acts on processing time
// (operators.ProcessingTimeHandler): ops[op], called about every every,
// next when it is due.
type ticker struct {
	op    int
	h     operators.ProcessingTimeHandler
	every time.Duration
	next  time.Time
}

// startTickers finds the opened chain's processing-time handlers and
// returns the shortest of their intervals (0 when there is none).
func (r *run) startTickers() time.Duration {
	now := r.now()
	var shortest time.Duration
	for i, op := range r.ops {
		h, ok := op.(operators.ProcessingTimeHandler)
		if !ok {
			continue
		}
		every := h.ProcessingTimeInterval()
		if every <= 0 {
			continue
		}
		r.tickers = append(r.tickers, ticker{op: i, h: h, every: every, next: now.Add(every)})
		if shortest == 0 || every < shortest {
			shortest = every
		}
	}
	return shortest
}

func (r *run) now() time.Time {
	if f := r.s.octx.Now; f != nil {
		return f()
	}
	return time.Now()
}

// tick calls the handlers that are due. It runs on the subtask's
// goroutine, between batches: after a source's batch, while the source
// waits (Idle), and on the inbox's wakeups.
func (r *run) tick() error {
	if len(r.tickers) == 0 || r.dataEnded {
		return nil
	}
	now := r.now()
	for i := range r.tickers {
		t := &r.tickers[i]
		if now.Before(t.next) {
			continue
		}
		t.next = now.Add(t.every)
		if err := t.h.OnProcessingTime(now, r.outs[t.op+1]); err != nil {
			return err
		}
	}
	return nil
}

// wakeEvery wakes the inbox every d until stop is closed, so that a chain
// whose input is quiet still gets its processing-time calls.
func (r *run) wakeEvery(d time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			r.s.inbox.Wake()
		case <-stop:
			return
		case <-r.ctx.Done():
			return
		}
	}
}
