package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"time"

	"go.uber.org/zap"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/shuffle"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

// Run runs the subtask to completion: it builds and opens the operator
// chain, feeds it from the source or the inbox until every input ended,
// flushes the chain (EndInput down the chain), sends end-of-input on every
// outgoing edge and closes the operators. It returns nil when all of that
// succeeded, ctx.Err() once ctx is done, and otherwise the first error. A
// panic in an operator fails the subtask: its stack is logged and Run
// returns an error. On failure the outgoing channels are aborted, not ended,
// so downstream subtasks fail too rather than see a partial result as
// complete. Run may be called once.
//
// In a job that checkpoints, a subtask whose data ended sends end-of-data
// downstream but keeps its channels open, calls Task.DataEnded, and waits
// until a checkpoint taken after that point completed (its final
// checkpoint: transactional sinks commit the last rows then) before it
// closes them. A subtask stopped at a savepoint (a source that took a stop
// trigger, or a subtask whose inputs stopped) waits for that savepoint to
// complete and ends without flushing: no EndInput, no final watermark, and
// its channels close with a stop.
func (s *Subtask) Run(ctx context.Context) (err error) {
	if s.ran.Swap(true) {
		return errors.New("runtime: subtask run twice")
	}
	defer s.unregister()
	r := &run{s: s, ctx: ctx, doneSeq: -1, lastSnapSeq: -1}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("subtask panicked", zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
			err = types.WithClass(fmt.Errorf("runtime: subtask %d of vertex %d panicked: %v", s.task.Subtask, s.task.VertexID, p), types.ClassInternal)
		}
		if err != nil {
			r.abort()
		}
		if cerr := r.closeOperators(); err == nil {
			err = cerr
		}
		if err != nil && ctx.Err() != nil {
			err = ctx.Err()
		}
	}()
	if err := r.build(); err != nil {
		return err
	}
	if err := r.open(); err != nil {
		return err
	}
	stopped := false
	if r.src != nil {
		r.lastData = time.Now()
		r.startTickers()
		err := r.src.Run(ctx, r.outs[0])
		if stopped = errors.Is(err, errStopped); err != nil && !stopped {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err // Run may return nil once cancelled
		}
		if !stopped {
			if err := r.endData(0); err != nil {
				return err
			}
		}
	} else if stopped, err = r.consume(); err != nil {
		return err
	}
	if !stopped && !r.dataEnded {
		if err := r.endData(len(r.ops)); err != nil {
			return err
		}
	}
	if r.awaitsFinal() || stopped {
		if err := r.awaitFinal(); err != nil {
			return err
		}
	}
	for _, o := range r.outboxes {
		closeOutbox := o.Close
		if stopped {
			closeOutbox = o.Stop
		}
		if err := closeOutbox(ctx); err != nil {
			return err
		}
	}
	return nil
}

// awaitsFinal reports whether the subtask's data ending waits for a final
// checkpoint: the job takes periodic checkpoints.
func (r *run) awaitsFinal() bool {
	return r.s.octx.Checkpointing && r.s.task.Checkpoints != nil
}

// endData ends the subtask's data once its chain's inputs ended: it
// flushes ops[from:] (endChain), sends the end of event time, and in a job
// that checkpoints sends end-of-data on every edge and tells the task
// manager (Task.DataEnded); the channels stay open for the final
// checkpoint's barriers.
func (r *run) endData(from int) error {
	if err := r.endChain(from); err != nil {
		return err
	}
	r.seq++
	r.dataEnded = true
	// NB: whatever the last operator forwarded, downstream sees the end
	// of event time before the end of input.
	if err := r.outs[len(r.ops)].EmitWatermark(operators.MaxWatermark); err != nil {
		return err
	}
	if !r.awaitsFinal() {
		return nil
	}
	for _, o := range r.outboxes {
		if err := o.EndOfData(r.ctx); err != nil {
			return err
		}
	}
	if f := r.s.task.DataEnded; f != nil {
		f()
	}
	return nil
}

// run is the state of one Run.
type run struct {
	s   *Subtask
	ctx context.Context
	src operators.Source
	// ops are the chain's operators after the source, if any.
	ops []operators.Operator
	// outs[i] receives what feeds ops[i]; outs[len(ops)] feeds the outboxes.
	outs     []*collector
	outboxes []*shuffle.Outbox
	// inWM is the watermark of each inbox channel; an ended input's
	// channels are at MaxWatermark.
	inWM []int64
	// inIdle marks the inbox channels whose sender said it is idle
	// (shuffle.EventIdle); they are left out of the input watermark.
	inIdle []bool
	// outIdle says the outboxes were told this subtask is idle: its
	// source emitted nothing for table.exec.source.idle-timeout (lastData
	// is when it last emitted), or every live input channel is idle.
	outIdle  bool
	lastData time.Time
	opened   int  // ops opened
	srcOpen  bool // src opened

	// uids are the stable ids of src (if any) and then ops, in chain order.
	uids []string
	// be is the subtask's keyed state, nil when no operator keeps any.
	be      *state.Backend
	aligner *BarrierAligner

	// seq counts the data the chain processed (batches, watermarks, input
	// ends); snapSeq holds it at each snapshot not yet known complete,
	// lastSnapSeq at the latest snapshot, and doneSeq at the latest
	// completed one. doneSeq == seq means a completed checkpoint holds the
	// chain as it is (see awaitFinal).
	seq, lastSnapSeq, doneSeq int64
	snapSeq                   map[int64]int64
	// dataEnded is set once endData ran.
	dataEnded bool
	// tickers are the chain's processing-time handlers (proctime.go).
	tickers []ticker
}

func (r *run) build() error {
	s := r.s
	chain := s.vertex.Chain
	for i := range chain {
		r.uids = append(r.uids, s.vertex.OperatorUID(i))
	}
	if s.inbox == nil {
		src, err := operators.NewSource(chain[0].Spec)
		if err != nil {
			return err
		}
		r.src = src
		chain = chain[1:]
	}
	for _, spec := range chain {
		op, err := operators.NewOperator(spec.Spec)
		if err != nil {
			return fmt.Errorf("runtime: vertex %d operator %q: %w", s.vertex.ID, spec.Name, err)
		}
		r.ops = append(r.ops, op)
	}
	for i := 0; i <= len(r.ops); i++ {
		r.outs = append(r.outs, &collector{r: r, next: i, wm: operators.MinWatermark})
	}
	r.outs[0].countIn = r.src != nil
	for _, e := range s.out {
		o, err := r.newOutbox(e)
		if err != nil {
			return err
		}
		r.outboxes = append(r.outboxes, o)
	}
	return nil
}

func (r *run) newOutbox(e *jobgraph.Edge) (*shuffle.Outbox, error) {
	s := r.s
	tv := s.findVertex(int(e.Target))
	if tv == nil {
		return nil, fmt.Errorf("runtime: edge to unknown vertex %d", e.Target)
	}
	targets := make([]shuffle.Target, tv.Parallelism)
	found := make([]bool, tv.Parallelism)
	for _, p := range s.task.Placements {
		if int(p.Vertex) != int(e.Target) || int(p.Subtask) >= len(targets) || p.Subtask < 0 {
			continue
		}
		targets[p.Subtask] = shuffle.Target{Local: p.TaskManagerId == s.task.TaskManagerID, Address: p.Address}
		found[p.Subtask] = true
	}
	for i, ok := range found {
		if !ok {
			return nil, fmt.Errorf("runtime: no placement for subtask %d of vertex %d", i, e.Target)
		}
	}
	keys := make([]int, len(e.KeyColumns))
	for i, k := range e.KeyColumns {
		keys[i] = int(k)
	}
	return shuffle.NewOutbox(s.task.Exchange, shuffle.OutboxSpec{
		JobID: s.key.JobID, SourceVertex: s.task.VertexID, SourceSubtask: s.task.Subtask,
		TargetVertex: int(e.Target), TargetInput: int(e.TargetInput),
		Partitioning: e.Partitioning, KeyColumns: keys, MaxParallelism: s.octx.MaxParallelism,
		Targets: targets, RemoteRows: &s.metrics.RowsRemote,
	})
}

func (r *run) open() error {
	if err := r.openState(); err != nil {
		return err
	}
	i := 0
	if r.src != nil {
		r.srcOpen = true
		if err := r.src.Open(r.opContext(0)); err != nil {
			return err
		}
		i = 1
	}
	for _, op := range r.ops {
		r.opened++
		if err := op.Open(r.opContext(i)); err != nil {
			return err
		}
		i++
	}
	return nil
}

// opContext returns the context of the chain's i-th operator (the source
// counts): the subtask's, with the operator's uid and restored state.
func (r *run) opContext(i int) *operators.Context {
	c := r.s.octx
	c.State = r.be
	c.OperatorUID = r.uids[i]
	c.Done = r.ctx.Done()
	if rs := r.s.task.Restore; rs.ID != 0 {
		c.Restore = operators.Restore{ID: rs.ID, State: rs.Operators[r.uids[i]], Rescaled: rs.Rescaled}
	}
	return &c
}

// openState opens the keyed state backend when an operator of the chain
// keeps keyed state.
func (r *run) openState() error {
	need := false
	for _, op := range r.ops {
		if so, ok := op.(operators.StatefulOperator); ok && so.UsesKeyedState() {
			need = true
		}
	}
	if !need {
		return nil
	}
	t := r.s.task
	if t.StateDir == "" {
		return errors.New("runtime: the chain keeps keyed state but the subtask has no state directory")
	}
	be, err := state.Open(filepath.Join(t.StateDir, "db"), state.Options{
		CacheBytes: t.StateCacheBytes, KeyGroups: r.s.octx.KeyGroups, MaxParallelism: r.s.octx.MaxParallelism,
		FS: t.StateFS, Logger: r.s.log,
	})
	if err != nil {
		return err
	}
	r.be = be
	return nil
}

// consume feeds the inbox's events to the first operator until every
// channel closed. Once every input ended it flushes the rest of the chain
// (endData) and, in a job that checkpoints, keeps taking barriers until
// its upstream closes the channels after the final checkpoint. stopped
// says that a channel closed with a stop before its data ended: the job
// stopped at a savepoint, and nothing is flushed.
func (r *run) consume() (stopped bool, err error) {
	in := r.s.inbox
	first := r.ops[0]
	specs := in.Channels()
	in.ReportChannelEnds()
	r.aligner = NewBarrierAligner(len(specs), !r.s.task.Graph.Checkpoint.AtLeastOnce)
	if d := r.startTickers(); d > 0 {
		stop := make(chan struct{})
		defer close(stop)
		go r.wakeEvery(d, stop)
	}
	r.inWM = make([]int64, len(specs))
	r.inIdle = make([]bool, len(specs))
	for i := range r.inWM {
		r.inWM[i] = operators.MinWatermark
	}
	inputsEnded := 0
	for {
		input, ev, err := in.Next(r.ctx)
		if err == io.EOF {
			if in.Stopped() {
				return true, nil
			}
			if !r.dataEnded {
				return false, r.endData(1)
			}
			return false, nil
		}
		if err != nil {
			return false, err
		}
		switch ev.Kind {
		case shuffle.EventBatch:
			if r.inIdle[ev.Channel] {
				err = r.setInputIdle(ev.Channel, false)
			}
			r.seq++
			r.s.metrics.RowsIn.Add(int64(ev.Batch.NumRows()))
			if err == nil {
				err = first.Process(input, ev.Batch, r.outs[1])
			}
			ev.Batch.Release()
			if err == nil {
				err = r.tick()
			}
		case shuffle.EventEndOfInput:
			r.seq++
			for i, c := range specs {
				if c.Input == input {
					r.inWM[i] = operators.MaxWatermark
					r.inIdle[i] = false
				}
			}
			if err = r.advanceInput(); err == nil {
				err = first.EndInput(input, r.outs[1])
			}
			if inputsEnded++; err == nil && inputsEnded == in.NumInputs() && r.awaitsFinal() {
				err = r.endData(1)
			}
		case shuffle.EventWatermark:
			if ev.Value > r.inWM[ev.Channel] {
				r.seq++
				r.inWM[ev.Channel] = ev.Value
				err = r.advanceInput()
			}
		case shuffle.EventIdle:
			err = r.setInputIdle(ev.Channel, ev.Value == 1)
		case shuffle.EventBarrier:
			err = r.align(r.aligner.Barrier(ev.Channel, ev.Value))
		case shuffle.EventChannelEnd:
			err = r.align(r.aligner.ChannelEnded(ev.Channel))
		case shuffle.EventWakeup:
			if err = r.drainNotices(); err == nil {
				err = r.tick()
			}
		}
		if err != nil {
			return false, err
		}
	}
}

// advanceInput hands the first operator the input watermark when it rose:
// the minimum over the channels that are not idle. When every channel
// whose input has not ended is idle, it is the highest of those idle
// channels' watermarks, as Flink's StatusWatermarkValve does when its
// last active channel goes idle; the ended channels' MaxWatermark must not
// fire what an idle channel may still send rows for.
func (r *run) advanceInput() error {
	wm, active := operators.MaxWatermark, false
	idleMax, idle := operators.MinWatermark, false
	for i, c := range r.inWM {
		if r.inIdle[i] {
			idle, idleMax = true, max(idleMax, c)
			continue
		}
		active = active || c != operators.MaxWatermark
		wm = min(wm, c)
	}
	if !active && idle {
		wm = idleMax
	}
	return r.outs[0].EmitWatermark(wm)
}

func (r *run) anyIdle() bool {
	for _, idle := range r.inIdle {
		if idle {
			return true
		}
	}
	return false
}

// setInputIdle records that inbox channel ch went idle or active, moves
// the input watermark, and tells the outboxes this subtask is idle when
// every channel whose input has not ended is.
func (r *run) setInputIdle(ch int, idle bool) error {
	if r.inIdle[ch] == idle {
		return nil
	}
	r.inIdle[ch] = idle
	r.seq++
	if err := r.advanceInput(); err != nil {
		return err
	}
	all := r.anyIdle()
	for i, wm := range r.inWM {
		if !r.inIdle[i] && wm != operators.MaxWatermark {
			all = false
		}
	}
	return r.setOutIdle(all)
}

// setOutIdle tells every outbox that this subtask went idle or active.
func (r *run) setOutIdle(idle bool) error {
	if r.outIdle == idle {
		return nil
	}
	r.outIdle = idle
	for _, o := range r.outboxes {
		if err := o.SendIdle(r.ctx, idle); err != nil {
			return err
		}
	}
	return nil
}

// endChain tells ops[from:] in order that their input 0 ended, each after
// MaxWatermark (a no-op when it already had it); what each emits while
// flushing reaches the later ones first.
func (r *run) endChain(from int) error {
	for i := from; i < len(r.ops); i++ {
		if err := r.outs[i].EmitWatermark(operators.MaxWatermark); err != nil {
			return err
		}
		if err := r.ops[i].EndInput(0, r.outs[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// align performs the aligner's actions.
func (r *run) align(acts []AlignAction) error {
	for _, a := range acts {
		switch a.Kind {
		case AlignBlock:
			r.s.inbox.Block(a.Channel)
		case AlignUnblockAll:
			for i := range r.inWM {
				r.s.inbox.Unblock(i)
			}
		case AlignSnapshot:
			if err := r.checkpoint(a.ID); err != nil {
				return err
			}
		case AlignAbort:
			if h := r.s.task.Checkpoints; h != nil {
				h.Decline(a.ID, fmt.Errorf("checkpoint %d: a newer barrier arrived before alignment completed", a.ID))
			}
		}
	}
	return nil
}

func (r *run) abort() {
	for _, o := range r.outboxes {
		o.Abort()
	}
}

// closeOperators closes what was opened, in chain order, even after a
// panic in an earlier Close.
func (r *run) closeOperators() error {
	var errs []error
	if r.srcOpen {
		errs = append(errs, r.safeClose(r.src.Close))
	}
	for _, op := range r.ops[:r.opened] {
		errs = append(errs, r.safeClose(op.Close))
	}
	if r.be != nil {
		// NB: not flushed: what a checkpoint did not capture is of no use
		// (a failed subtask restores from its checkpoint, a finished one is
		// done).
		errs = append(errs, r.be.Close())
	}
	return errors.Join(errs...)
}

func (r *run) safeClose(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			r.s.log.Error("operator close panicked", zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
			err = types.WithClass(fmt.Errorf("runtime: close panicked: %v", p), types.ClassInternal)
		}
	}()
	return f()
}

// collector passes emitted batches and watermarks down the chain: to
// ops[next], or to the outboxes after the last operator.
type collector struct {
	r       *run
	next    int
	countIn bool // the source's collector counts rows in
	// wm is the last watermark passed on; only higher ones pass.
	wm int64
}

var (
	_ operators.WatermarkCollector = (*collector)(nil)
	_ operators.Idler              = (*collector)(nil)
)

// EmitWatermark passes wm on when it is above the last one: to ops[next]'s
// ProcessWatermark when it handles watermarks, else through it, or to
// every outbox.
func (c *collector) EmitWatermark(wm int64) error {
	if wm <= c.wm {
		return nil
	}
	c.wm = wm
	r := c.r
	if c.countIn {
		r.seq++ // a source's watermark changes what the chain holds
	}
	if c.next < len(r.ops) {
		if h, ok := r.ops[c.next].(operators.WatermarkHandler); ok {
			return h.ProcessWatermark(wm, r.outs[c.next+1])
		}
		return r.outs[c.next+1].EmitWatermark(wm)
	}
	if err := r.setOutIdle(false); err != nil {
		return err
	}
	for _, o := range r.outboxes {
		if err := o.SendWatermark(r.ctx, wm); err != nil {
			return err
		}
	}
	return nil
}

// Emit passes b down the chain: to ops[next], or to the outboxes.
func (c *collector) Emit(b types.Batch) error {
	if c.countIn {
		return c.emitFromSource(b)
	}
	return c.forward(b)
}

// Idle takes the checkpoints triggered while a source waits between
// batches (see operators.Idle); through any other collector it does nothing.
//
// A source that emitted nothing for table.exec.source.idle-timeout makes
// the subtask idle here; its next batch makes it active again.
func (c *collector) Idle() error {
	if !c.countIn {
		return nil
	}
	r := c.r
	if d := r.s.task.Graph.Session.SourceIdleTimeout; d > 0 && !r.outIdle && time.Since(r.lastData) >= d {
		if err := r.setOutIdle(true); err != nil {
			return err
		}
	}
	if err := r.tick(); err != nil {
		return err
	}
	return r.control()
}

func (c *collector) forward(b types.Batch) error {
	r := c.r
	if c.countIn {
		r.s.metrics.RowsIn.Add(int64(b.NumRows()))
	}
	if c.next < len(r.ops) {
		return r.ops[c.next].Process(0, b, r.outs[c.next+1])
	}
	r.s.metrics.RowsOut.Add(int64(b.NumRows()))
	if err := r.setOutIdle(false); err != nil {
		return err
	}
	for _, o := range r.outboxes {
		if err := o.Send(r.ctx, b); err != nil {
			return err
		}
	}
	return nil
}

// emitFromSource passes a source's batch down the chain, then takes the
// checkpoints triggered meanwhile: the batch is part of the position the
// source reports.
func (c *collector) emitFromSource(b types.Batch) error {
	c.r.seq++
	c.r.lastData = time.Now()
	if err := c.r.setOutIdle(false); err != nil {
		return err
	}
	if err := c.forward(b); err != nil {
		return err
	}
	if err := c.r.tick(); err != nil {
		return err
	}
	return c.r.control()
}
