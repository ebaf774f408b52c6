package connectors

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/braidflow/braid/operators"
)

// recordDecoder turns the records of a topic into batches: the part in
// which the kafka source (JSON values) and the managed source (Arrow IPC
// values) differ.
type recordDecoder interface {
	// add decodes r into rows it buffers; full reports that they should be
	// emitted now.
	add(r *kgo.Record) (full bool, err error)
	// flush emits every buffered row through out. It may emit nothing.
	flush(out operators.Collector) error
}

// logReader reads the partitions of one topic that a subtask owns, for the
// kafka and the managed sources, and keeps the subtask's position.
//
// It reads with isolation level read_committed: records of transactions
// that are open or were aborted (exactly-once sinks) are never returned, and
// a bounded read stops at the last stable offset, below any open
// transaction. Control records (transaction markers) produce no rows but
// advance the position, so a bounded read whose last offset is a commit
// marker ends.
//
// Partition p belongs to subtask p % parallelism. Each owned partition
// starts at its restored offset when the checkpoint holds one, otherwise
// at the offset the source's startup listing gives.
//
// Its methods are called from the subtask's goroutine only.
type logReader struct {
	kind    string // "kafka", "managed table": the prefix of position errors
	topic   string
	brokers []string
	bounded bool
	subtask int
	par     int
	logger  *zap.Logger
	// wrapErr names the topic and brokers of a failed read.
	wrapErr func(err error) error
	// startOffsets lists where reading starts for partitions without a
	// restored offset.
	startOffsets func(ctx context.Context, adm *kadm.Client) (map[int32]int64, error)

	// next is the position: for each owned partition, the offset after
	// every record whose rows were passed to Emit. It starts as the
	// restored positions.
	next map[int32]int64
	// read holds the offsets after records read since the last emit,
	// whose rows may still be buffered in the decoder.
	read map[int32]int64
	// end holds, for a bounded read, the offset each unfinished partition
	// must reach; nil when unbounded. bound holds every owned partition's
	// end offset, restored or listed when the read first started, and is
	// part of the position.
	end   map[int32]int64
	bound map[int32]int64
	// cl is the client of a running Run; nil otherwise.
	cl *kgo.Client
}

// open prepares the reader for subtask sub of par, restoring its position
// from r.
func (l *logReader) open(r operators.Restore, sub, par int, logger *zap.Logger) error {
	l.subtask, l.par = sub, max(par, 1)
	l.logger = logger
	if l.logger == nil {
		l.logger = zap.NewNop()
	}
	restored, bound, err := restoredOffsets(l.kind, l.topic, r, l.subtask, l.par)
	if err != nil {
		return err
	}
	l.next = map[int32]int64{}
	for p, o := range restored {
		l.next[p] = o
	}
	l.bound = map[int32]int64{}
	for p, o := range bound {
		l.bound[p] = o
	}
	l.read = map[int32]int64{}
	return nil
}

// snapshot encodes the reader's position.
func (l *logReader) snapshot() ([]byte, error) {
	pos := logPosition{V: positionVersion, Topic: l.topic, Offsets: l.next}
	if l.bounded {
		pos.Ends = l.bound
	}
	return encodePosition(pos)
}

// position returns a copy of the reader's position.
func (l *logReader) position() map[int32]int64 {
	out := make(map[int32]int64, len(l.next))
	for p, o := range l.next {
		out[p] = o
	}
	return out
}

// run reads until a bounded read is done (nil) or ctx ends (ctx.Err()).
// The client it creates is closed before it returns.
func (l *logReader) run(ctx context.Context, out operators.Collector, dec recordDecoder) error {
	cl, err := newKafkaClient(l.brokers, kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	if err != nil {
		return l.wrapErr(err)
	}
	l.cl = cl
	defer func() {
		l.cl = nil
		cl.Close()
	}()
	adm := kadm.NewClient(cl)
	assign, err := l.assign(ctx, adm)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return l.wrapErr(err)
	}
	if l.bounded && len(l.end) == 0 {
		return nil
	}
	if len(assign) == 0 {
		return idleUntilDone(ctx, out)
	}
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{l.topic: assign})
	l.logger.Debug("reading topic", zap.String("kind", l.kind), zap.String("topic", l.topic),
		zap.Any("from", l.next), zap.Bool("bounded", l.bounded))
	for {
		// NB: a short poll lets Idle take checkpoint barriers while the
		// topic is quiet.
		pctx, cancel := context.WithTimeout(ctx, idleEvery)
		fetches := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for _, fe := range fetches.Errors() {
			if errors.Is(fe.Err, context.Canceled) || errors.Is(fe.Err, context.DeadlineExceeded) {
				continue // the poll's own timeout
			}
			return l.wrapErr(fmt.Errorf("partition %d: %w", fe.Partition, fe.Err))
		}
		var recErr error
		fetches.EachRecord(func(r *kgo.Record) {
			if recErr == nil {
				recErr = l.take(r, dec, out)
			}
		})
		if recErr != nil {
			return recErr
		}
		if err := l.flush(dec, out); err != nil {
			return err
		}
		if l.end != nil && len(l.end) == 0 {
			return nil
		}
		if err := operators.Idle(out); err != nil {
			return err
		}
	}
}

// assign decides where each owned partition starts (its restored offset,
// else the source's startup listing), records that as the position, lists
// a bounded read's end offsets and returns the partitions to consume.
func (l *logReader) assign(ctx context.Context, adm *kadm.Client) (map[int32]kgo.Offset, error) {
	nparts, err := topicPartitions(ctx, adm, l.topic)
	if err != nil {
		return nil, err
	}
	var mine []int32
	for p := int32(0); p < int32(nparts); p++ {
		if int(p)%l.par == l.subtask {
			mine = append(mine, p)
		}
	}
	if len(mine) == 0 {
		if l.bounded {
			l.end = map[int32]int64{}
		}
		return nil, nil
	}
	var starts map[int32]int64
	for _, p := range mine {
		if _, ok := l.next[p]; !ok {
			if starts, err = l.startOffsets(ctx, adm); err != nil {
				return nil, err
			}
			break
		}
	}
	for _, p := range mine {
		if _, ok := l.next[p]; !ok {
			o, ok := starts[p]
			if !ok {
				return nil, fmt.Errorf("no start offset for partition %d", p)
			}
			l.next[p] = o
		}
	}
	if l.bounded {
		if err := l.listBounds(ctx, adm, mine); err != nil {
			return nil, err
		}
		l.end = map[int32]int64{}
		for _, p := range mine {
			if e := l.bound[p]; e > l.next[p] {
				l.end[p] = e
			}
		}
	}
	assign := map[int32]kgo.Offset{}
	for _, p := range mine {
		if l.end == nil || l.end[p] > 0 {
			assign[p] = kgo.NewOffset().At(l.next[p])
		}
	}
	return assign, nil
}

// listBounds lists the end offsets of the partitions in mine that have no
// restored bound: the last stable offset, which a read_committed read
// cannot pass.
func (l *logReader) listBounds(ctx context.Context, adm *kadm.Client, mine []int32) error {
	missing := false
	for _, p := range mine {
		if _, ok := l.bound[p]; !ok {
			missing = true
		}
	}
	if !missing {
		return nil
	}
	ends, err := adm.ListCommittedOffsets(ctx, l.topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return err
	}
	for _, p := range mine {
		if _, ok := l.bound[p]; ok {
			continue
		}
		e, ok := ends.Lookup(l.topic, p)
		if !ok {
			return fmt.Errorf("no end offset for partition %d", p)
		}
		l.bound[p] = e.Offset
	}
	return nil
}

// take decodes record r, unless a bounded read is past r's partition's
// end, and emits when the decoder is full.
func (l *logReader) take(r *kgo.Record, dec recordDecoder, out operators.Collector) error {
	p := r.Partition
	if l.end != nil {
		if e, open := l.end[p]; !open || r.Offset >= e {
			return nil // written after the bounded read started
		}
	}
	full := false
	if !r.Attrs.IsControl() {
		var err error
		if full, err = dec.add(r); err != nil {
			return err
		}
	}
	l.read[p] = r.Offset + 1
	if l.end != nil && r.Offset+1 >= l.end[p] {
		delete(l.end, p)
	}
	if full {
		return l.flush(dec, out)
	}
	return nil
}

// flush emits what the decoder holds. The position moves first: a
// checkpoint taken inside Emit counts the rows being emitted.
func (l *logReader) flush(dec recordDecoder, out operators.Collector) error {
	for p, o := range l.read {
		l.next[p] = o
	}
	clear(l.read)
	return dec.flush(out)
}

// commitOffsets commits offsets to consumer group, for monitoring tools
// only: the source never reads them back. It uses the running client and
// does nothing when Run is not running. Failures are logged, not returned.
func (l *logReader) commitOffsets(group string, offsets map[int32]int64) {
	if l.cl == nil || group == "" || len(offsets) == 0 {
		return
	}
	os := kadm.Offsets{}
	for p, o := range offsets {
		os.Add(kadm.Offset{Topic: l.topic, Partition: p, At: o, LeaderEpoch: -1})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(l.cl).CommitOffsets(ctx, group, os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		l.logger.Warn("committing offsets to the consumer group failed", zap.String("topic", l.topic),
			zap.String("group", group), zap.Error(err))
	}
}
