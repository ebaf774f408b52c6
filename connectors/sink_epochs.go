package connectors

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/braidflow/braid/operators"
)

// Exactly-once delivery into Kafka (DESIGN.md, "Exactly-once into Kafka").
//
// An epoch is the rows a sink subtask receives between two checkpoint
// barriers: epoch N ends at barrier N. The subtask produces with one
// deterministic transactional id. At barrier N it writes a marker record
// (its transactional id as key, N as value) to the marker topic inside the
// epoch's transaction, flushes (pre-commit), and returns the epoch's encoded
// records in its checkpoint state; when checkpoint N completes it commits.
//
// A restarted process cannot resume its predecessor's open transaction with
// franz-go, so recovery works from the marker instead. Initialising a
// producer with the same transactional id fences the predecessor and aborts
// its open transaction; a read_committed read of the marker topic then says
// whether epoch N was committed (marker present: skip it) or not (re-produce
// the records from the checkpoint state, with the marker, and commit at once,
// since checkpoint N is complete). Rows after barrier N were in the aborted
// transaction and are replayed by the sources.
//
// NB: Kafka allows one open transaction per producer. Epoch N's transaction
// stays open from its first record until checkpoint N completes; epoch
// N+1's records are kept in memory meanwhile (they are in N+1's checkpoint
// state anyway) and produced when N commits. Putting them into N's
// transaction would commit them with N, and a restore from N would then
// replay them a second time. So at any time the open transaction holds
// either the oldest sealed epoch (pre-committed, with its marker) or, when
// no epoch awaits its checkpoint, the current epoch's records as they
// arrive. One producer and one transactional id keep fencing simple.

// Marker topic settings.
const (
	// sinkEpochTopic holds one marker per committed epoch. It is compacted
	// by key (one key per sink subtask), so it stays small on a real Kafka.
	sinkEpochTopic = "__braid_sink_epochs"
	// sinkEpochPartitions spreads the markers so that one stuck
	// transaction holds back the last stable offset of few sinks only.
	sinkEpochPartitions = 8
	// sinkTxnTimeout is the transaction timeout. A transaction stays open
	// from its epoch's first record until its checkpoint completes, so this
	// must exceed the checkpoint interval plus the time to recover from a
	// failure; the broker aborts a transaction older than this. 15 minutes
	// is the brokers' default transaction.max.timeout.ms and the most they
	// accept unless raised.
	sinkTxnTimeout = 15 * time.Minute
	// sinkRecoveryTimeout bounds fencing and reading the markers on
	// recovery. The read waits until older transactions on the marker
	// partition end (their sinks' checkpoints complete, or the broker times
	// them out).
	sinkRecoveryTimeout = 2 * time.Minute
)

// sinkGuarantee is what a sink promises.
type sinkGuarantee int

const (
	// guaranteeNone produces asynchronously and flushes at the end of input.
	guaranteeNone sinkGuarantee = iota
	// guaranteeAtLeastOnce also flushes at every barrier.
	guaranteeAtLeastOnce
	// guaranteeExactlyOnce uses the epoch transactions above once the job
	// checkpoints.
	guaranteeExactlyOnce
)

// sinkRecord is one record to produce. Partition < 0 leaves the choice to the
// sink's partitioner.
type sinkRecord struct {
	Partition int32
	// Key is nil for a record without a key; Value is nil for a tombstone
	// (upsert-kafka's delete).
	Key   []byte
	Value []byte
}

// sinkEpoch is a sealed epoch: its records and the checkpoint that ends it.
type sinkEpoch struct {
	id   int64
	recs []sinkRecord
}

// sinkWriterConfig is what a sink tells its writer.
type sinkWriterConfig struct {
	Brokers   []string
	Topic     string
	Guarantee sinkGuarantee
	// TxnID returns the transactional id of subtask i of this sink.
	TxnID func(subtask int) string
	// Partitioner places records whose Partition is negative; nil means
	// every record names its partition.
	Partitioner kgo.Partitioner
	// Opts are extra client options (buffer sizes).
	Opts []kgo.Opt
	// Err wraps an error with the sink's topic and brokers.
	Err func(op string, err error) error
}

// sinkWriter produces a sink's records with the guarantee of its config.
// An exactly-once writer of a job that checkpoints (Context.Checkpointing)
// or resumes from a checkpoint writes in transactions from Open on; one
// that learns of checkpoints only at a first barrier (a caller that does
// not set Checkpointing) switches then, and the rows before it are
// delivered at least once.
//
// All methods are called from the subtask's goroutine.
type sinkWriter struct {
	cfg      sinkWriterConfig
	subtask  int
	cl       *kgo.Client
	eos      bool // cl is transactional
	open     bool // a transaction of cl is open
	txnID    string
	markerP  int32 // marker partition of txnID
	scanFrom int64 // marker offset below every marker of this attempt
	lastID   int64 // last checkpoint seen
	ended    bool  // End was called
	// savepointsOnly: the job takes no periodic checkpoints, so the writer
	// never switches to transactions (Context.SavepointsOnly).
	savepointsOnly bool

	// sealed are the epochs whose checkpoint has not completed, oldest
	// first; sealed[0] is pre-committed in the open transaction. cur are
	// the records since the last barrier, in the open transaction when
	// sealed is empty.
	//
	// NB: both are also in the checkpoint state, so a sink's checkpoint
	// holds up to an interval of its output; with large epochs the
	// manifest grows accordingly.
	sealed []sinkEpoch
	cur    []sinkRecord

	ctx    context.Context
	cancel context.CancelFunc
	mu     struct {
		sync.Mutex
		err error // first delivery failure
	}
}

func newSinkWriter(cfg sinkWriterConfig) *sinkWriter {
	return &sinkWriter{cfg: cfg}
}

// Open connects. A subtask that resumes from a checkpoint with an
// exactly-once guarantee first recovers the epochs in rs (see above).
func (w *sinkWriter) Open(ctx *operators.Context) error {
	w.subtask = ctx.Subtask
	w.txnID = w.cfg.TxnID(ctx.Subtask)
	w.lastID = ctx.Restore.ID
	w.ctx, w.cancel = context.WithCancel(context.Background())
	if done := ctx.Done; done != nil {
		// A cancelled subtask stops waiting for the broker (a flush at a
		// barrier, a recovery), rather than for managedOpTimeout or
		// sinkRecoveryTimeout: a job manager that restarts with its
		// embedded broker cancels the attempt whose broker went away.
		wctx := w.ctx
		go func() {
			select {
			case <-done:
				w.cancel()
			case <-wctx.Done():
			}
		}()
	}
	w.savepointsOnly = ctx.SavepointsOnly
	if w.cfg.Guarantee == guaranteeExactlyOnce && (ctx.Restore.ID != 0 || ctx.Checkpointing) {
		if err := w.startTransactions(ctx.Restore, ctx.Parallelism); err != nil || !w.savepointsOnly {
			return err
		}
		// NB: a job without periodic checkpoints that resumes from a
		// savepoint recovers the savepoint's epochs, then writes as it did
		// before the savepoint: a transaction would wait for a checkpoint
		// that never comes.
		w.cl.Close()
		w.cl, w.eos = nil, false
	}
	cl, err := newKafkaClient(w.cfg.Brokers, w.clientOpts()...)
	if err != nil {
		return w.cfg.Err("write", err)
	}
	w.cl = cl
	return nil
}

func (w *sinkWriter) clientOpts(extra ...kgo.Opt) []kgo.Opt {
	opts := append([]kgo.Opt{
		kgo.DefaultProduceTopic(w.cfg.Topic),
		kgo.RecordPartitioner(markerPartitioner{w.cfg.Partitioner}),
		kgo.RecordDeliveryTimeout(managedOpTimeout),
	}, w.cfg.Opts...)
	return append(opts, extra...)
}

// markerPartitioner sends marker records to the partition they name and
// other records through the sink's partitioner.
type markerPartitioner struct{ data kgo.Partitioner }

func (p markerPartitioner) ForTopic(t string) kgo.TopicPartitioner {
	if t == sinkEpochTopic || p.data == nil {
		return kgo.ManualPartitioner().ForTopic(t)
	}
	return p.data.ForTopic(t)
}

// Write produces recs, or keeps them until the pending epoch commits. It
// keeps the values: the caller must not modify them. It may block while
// too many bytes await acknowledgement.
func (w *sinkWriter) Write(recs []sinkRecord) error {
	if err := w.failure(); err != nil {
		return err
	}
	if w.ended {
		return errors.New("connectors: sink written after the end of its input")
	}
	if !w.eos {
		w.produce(recs)
		return nil
	}
	w.cur = append(w.cur, recs...)
	if len(w.sealed) == 0 {
		return w.produceInTxn(recs)
	}
	return nil
}

func (w *sinkWriter) produce(recs []sinkRecord) {
	for _, r := range recs {
		w.cl.Produce(w.ctx, &kgo.Record{Partition: r.Partition, Key: r.Key, Value: r.Value}, w.ack)
	}
}

// produceInTxn produces recs into the open transaction, opening one if
// none is open.
func (w *sinkWriter) produceInTxn(recs []sinkRecord) error {
	if len(recs) == 0 {
		return nil
	}
	if err := w.begin(); err != nil {
		return err
	}
	w.produce(recs)
	return nil
}

// begin opens a transaction unless one is open.
func (w *sinkWriter) begin() error {
	if w.open {
		return nil
	}
	if err := w.cl.BeginTransaction(); err != nil {
		return w.cfg.Err("begin transaction "+w.txnID, err)
	}
	w.open = true
	return nil
}

func (w *sinkWriter) marker(epoch int64) sinkRecord {
	return sinkRecord{Partition: w.markerP, Value: binary.BigEndian.AppendUint64(nil, uint64(epoch))}
}

// produceMarker writes the marker of epoch to the open transaction.
func (w *sinkWriter) produceMarker(epoch int64) {
	m := w.marker(epoch)
	w.cl.Produce(w.ctx, &kgo.Record{Topic: sinkEpochTopic, Partition: m.Partition, Key: []byte(w.txnID), Value: m.Value}, w.ack)
}

func (w *sinkWriter) ack(_ *kgo.Record, err error) {
	if err == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.err == nil {
		w.mu.err = w.cfg.Err("write", err)
	}
}

func (w *sinkWriter) failure() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mu.err
}

// flush waits until every produced record is acknowledged.
func (w *sinkWriter) flush() error {
	ctx, cancel := context.WithTimeout(w.ctx, managedOpTimeout)
	defer cancel()
	if err := w.cl.Flush(ctx); err != nil {
		if ferr := w.failure(); ferr != nil {
			return ferr
		}
		return w.cfg.Err("flush", err)
	}
	return w.failure()
}

// end commits (or aborts) the open transaction.
func (w *sinkWriter) end(commit kgo.TransactionEndTry) error {
	ctx, cancel := context.WithTimeout(w.ctx, managedOpTimeout)
	defer cancel()
	w.open = false
	if err := w.cl.EndTransaction(ctx, commit); err != nil {
		op := "commit transaction " + w.txnID
		if !commit {
			op = "abort transaction " + w.txnID
		}
		return w.cfg.Err(op, err)
	}
	return nil
}

// Snapshot implements the barrier of checkpoint id: it seals the current
// epoch and returns the state that recovery needs.
func (w *sinkWriter) Snapshot(id int64) ([]byte, error) {
	if err := w.failure(); err != nil {
		return nil, err
	}
	w.lastID = id
	if !w.eos {
		if w.cfg.Guarantee >= guaranteeAtLeastOnce {
			if err := w.flush(); err != nil {
				return nil, err
			}
		}
		if w.cfg.Guarantee != guaranteeExactlyOnce || w.savepointsOnly {
			return nil, nil
		}
		// The job checkpoints: switch to transactions from this epoch on
		// (the records so far were flushed above).
		w.cl.Close()
		w.cl = nil
		if err := w.startTransactions(operators.Restore{}, 0); err != nil {
			return nil, err
		}
		return encodeSinkState(w.markerP, w.scanFrom, nil), nil
	}
	if len(w.cur) > 0 {
		if len(w.sealed) == 0 {
			// cur is in the open transaction: pre-commit it.
			w.produceMarker(id)
			if err := w.flush(); err != nil {
				return nil, err
			}
		}
		w.sealed = append(w.sealed, sinkEpoch{id: id, recs: w.cur})
		w.cur = nil
	}
	return encodeSinkState(w.markerP, w.scanFrom, w.sealed), nil
}

// Complete commits every epoch up to checkpoint id, then pre-commits the
// next sealed epoch or reopens a transaction for the current one.
func (w *sinkWriter) Complete(id int64) error {
	if !w.eos || len(w.sealed) == 0 || w.sealed[0].id > id {
		return nil
	}
	if err := w.failure(); err != nil {
		return err
	}
	if err := w.end(kgo.TryCommit); err != nil {
		return err
	}
	w.sealed = w.sealed[1:]
	k := 0
	for k < len(w.sealed) && w.sealed[k].id <= id {
		k++
	}
	if k > 0 {
		// Lost notices: these were never produced, their checkpoints are
		// complete, so they commit together at once.
		if err := w.produceEpochs(w.sealed[:k], w.sealed[k-1].id); err != nil {
			return err
		}
		if err := w.end(kgo.TryCommit); err != nil {
			return err
		}
		w.sealed = w.sealed[k:]
	}
	if len(w.sealed) > 0 {
		return w.produceEpochs(w.sealed[:1], w.sealed[0].id)
	}
	return w.produceInTxn(w.cur)
}

// produceEpochs opens a transaction with the records of eps and the marker
// of epoch markerID, and flushes it.
func (w *sinkWriter) produceEpochs(eps []sinkEpoch, markerID int64) error {
	if err := w.begin(); err != nil {
		return err
	}
	for _, ep := range eps {
		w.produce(ep.recs)
	}
	w.produceMarker(markerID)
	return w.flush()
}

// End is called at the end of the sink's input. A transactional writer
// keeps the last rows in the current epoch: the runtime takes a final
// checkpoint after the end of a checkpointing job's data, whose barrier
// seals the epoch and whose completion commits it (a job that fails first
// replays the rows from an earlier checkpoint, so nothing is committed
// twice). Any other writer flushes.
func (w *sinkWriter) End() error {
	if w.ended {
		return nil
	}
	w.ended = true
	if w.eos {
		return nil
	}
	return w.flush()
}

// Close closes the client. An open transaction is aborted on a best-effort
// basis (a crashed process leaves it to fencing or the broker's timeout);
// recovery does not depend on it.
func (w *sinkWriter) Close() {
	if w.cl == nil {
		if w.cancel != nil {
			w.cancel()
		}
		return
	}
	if w.open && w.failure() == nil {
		// NB: short: a healthy broker aborts in milliseconds, and a cancelled
		// subtask whose broker is gone must not keep its attempt alive.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if w.cl.AbortBufferedRecords(ctx) == nil {
			_ = w.cl.EndTransaction(ctx, kgo.TryAbort)
		}
		cancel()
	}
	w.cancel()
	w.cl.Close()
	w.cl = nil
}

// startTransactions turns the writer transactional. It fences this
// subtask's transactional id (and, when rescaled, those of the old subtasks
// whose state rs hands to it), commits every epoch in rs that the markers
// do not show as committed, and opens the client that writes from now on.
func (w *sinkWriter) startTransactions(rs operators.Restore, parallelism int) error {
	ctx, cancel := context.WithTimeout(w.ctx, sinkRecoveryTimeout)
	defer cancel()
	parts, err := w.ensureMarkerTopic(ctx)
	if err != nil {
		return err
	}
	type owned struct {
		txnID  string
		state  []byte
		cl     *kgo.Client
		fenced int64 // offset of the probe that fenced txnID
	}
	var own []*owned
	switch {
	case rs.ID == 0:
		own = append(own, &owned{txnID: w.txnID})
	case !rs.Rescaled:
		o := &owned{txnID: w.txnID}
		if len(rs.State) > 0 {
			o.state = rs.State[0]
		}
		own = append(own, o)
	default:
		mine := false
		for j, st := range rs.State {
			if parallelism > 0 && j%parallelism == w.subtask {
				own = append(own, &owned{txnID: w.cfg.TxnID(j), state: st})
				mine = mine || j == w.subtask
			}
		}
		if !mine {
			own = append(own, &owned{txnID: w.txnID})
		}
	}
	defer func() {
		for _, o := range own {
			if o.cl != nil && o.cl != w.cl {
				o.cl.Close()
			}
		}
	}()
	// Fence every id first: an open transaction of one of them would
	// hold back the marker partition's last stable offset.
	for _, o := range own {
		o.cl, err = newKafkaClient(w.cfg.Brokers, w.clientOpts(
			kgo.TransactionalID(o.txnID), kgo.TransactionTimeout(sinkTxnTimeout))...)
		if err != nil {
			return w.cfg.Err("write", err)
		}
		if o.fenced, err = fenceTxnID(ctx, o.cl, o.txnID, markerPartitionOf(o.txnID, parts)); err != nil {
			return w.cfg.Err("fence transactional id "+o.txnID, err)
		}
		if o.txnID == w.txnID {
			w.cl = o.cl
			w.markerP = markerPartitionOf(o.txnID, parts)
			w.scanFrom = o.fenced + 1
		}
	}
	for _, o := range own {
		if err := w.recoverEpochs(ctx, o.cl, o.txnID, o.state, o.fenced); err != nil {
			return err
		}
	}
	w.eos = true
	return nil
}

// recoverEpochs commits the epochs of state (written by txnID) that the
// marker topic does not show as committed. fenced is the offset of the
// probe that fenced txnID: every marker of the old attempt is below it.
func (w *sinkWriter) recoverEpochs(ctx context.Context, cl *kgo.Client, txnID string, state []byte, fenced int64) error {
	if state == nil {
		return nil
	}
	st, err := decodeSinkState(state)
	if err != nil {
		return fmt.Errorf("%s: restore: %w", w.cfg.Topic, err)
	}
	committed, err := committedEpoch(ctx, w.cfg.Brokers, txnID, st.markerP, st.scanFrom, fenced)
	if err != nil {
		return w.cfg.Err("read markers", err)
	}
	var unwritten []sinkRecord
	last := int64(0)
	for _, ep := range st.epochs {
		if ep.id > committed {
			unwritten = append(unwritten, ep.recs...)
			last = ep.id
		}
	}
	if last == 0 {
		return nil
	}
	if err := cl.BeginTransaction(); err != nil {
		return w.cfg.Err("begin transaction", err)
	}
	for _, r := range unwritten {
		cl.Produce(ctx, &kgo.Record{Partition: r.Partition, Key: r.Key, Value: r.Value}, w.ack)
	}
	cl.Produce(ctx, &kgo.Record{Topic: sinkEpochTopic, Partition: st.markerP, Key: []byte(txnID),
		Value: binary.BigEndian.AppendUint64(nil, uint64(last))}, w.ack)
	if err := cl.Flush(ctx); err != nil {
		return w.cfg.Err("flush", err)
	}
	if err := w.failure(); err != nil {
		return err
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return w.cfg.Err("commit transaction "+txnID, err)
	}
	return nil
}

// ensureMarkerTopic creates the marker topic when absent and returns its
// partition count.
func (w *sinkWriter) ensureMarkerTopic(ctx context.Context) (int, error) {
	cl, err := newKafkaClient(w.cfg.Brokers)
	if err != nil {
		return 0, w.cfg.Err("write", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	compact := "compact"
	resp, err := adm.CreateTopic(ctx, sinkEpochPartitions, -1, map[string]*string{"cleanup.policy": &compact}, sinkEpochTopic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return 0, w.cfg.Err("create marker topic "+sinkEpochTopic, err)
	}
	n, err := topicPartitions(ctx, adm, sinkEpochTopic)
	if err == nil && n == 0 {
		err = errors.New("topic has no partitions")
	}
	if err != nil {
		return 0, w.cfg.Err("describe marker topic "+sinkEpochTopic, err)
	}
	return n, nil
}

// markerPartitionOf is the marker partition of a transactional id.
func markerPartitionOf(txnID string, partitions int) int32 {
	h := fnv.New32a()
	h.Write([]byte(txnID))
	return int32(h.Sum32() % uint32(partitions))
}

// fenceTxnID initialises cl's transactional producer, which fences any
// earlier producer with the same id and aborts its open transaction, by
// committing a probe record to the marker partition. It returns the
// probe's offset.
func fenceTxnID(ctx context.Context, cl *kgo.Client, txnID string, partition int32) (int64, error) {
	if err := cl.BeginTransaction(); err != nil {
		return 0, err
	}
	r, err := cl.ProduceSync(ctx, &kgo.Record{Topic: sinkEpochTopic, Partition: partition,
		Key: []byte(txnID + "/probe")}).First()
	if err != nil {
		_ = cl.EndTransaction(ctx, kgo.TryAbort)
		return 0, err
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return 0, err
	}
	return r.Offset, nil
}

// committedEpoch reads the marker partition read_committed from offset
// from up to offset until and returns the highest epoch committed by txnID
// there (0 for none).
func committedEpoch(ctx context.Context, brokers []string, txnID string, partition int32, from, until int64) (int64, error) {
	if from >= until {
		return 0, nil
	}
	cl, err := newKafkaClient(brokers,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{sinkEpochTopic: {partition: kgo.NewOffset().At(from)}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	var epoch int64
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return 0, ferr
		}
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset >= until {
				done = true
				return
			}
			if string(r.Key) == txnID && len(r.Value) == 8 {
				if e := int64(binary.BigEndian.Uint64(r.Value)); e > epoch {
					epoch = e
				}
			}
		})
		if done {
			return epoch, nil
		}
	}
}

// sinkState is a sink subtask's checkpoint state.
type sinkState struct {
	markerP  int32
	scanFrom int64
	epochs   []sinkEpoch
}

// sinkStateVersion 2 added record keys and tombstones; version 1 state
// (no keys, no nil values) still decodes.
const sinkStateVersion = 2

// encodeSinkState lays out: version, marker partition, scan offset, epoch
// count, then per epoch its id, record count and records (partition, key
// length + 1 or 0 for none, key, value length + 1 or 0 for a tombstone,
// value), all as varints.
func encodeSinkState(markerP int32, scanFrom int64, epochs []sinkEpoch) []byte {
	b := []byte{sinkStateVersion}
	b = binary.AppendVarint(b, int64(markerP))
	b = binary.AppendVarint(b, scanFrom)
	b = binary.AppendUvarint(b, uint64(len(epochs)))
	for _, ep := range epochs {
		b = binary.AppendVarint(b, ep.id)
		b = binary.AppendUvarint(b, uint64(len(ep.recs)))
		for _, r := range ep.recs {
			b = binary.AppendVarint(b, int64(r.Partition))
			b = appendNullable(b, r.Key)
			b = appendNullable(b, r.Value)
		}
	}
	return b
}

// appendNullable appends v's length + 1, or 0 when v is nil, then v.
func appendNullable(b, v []byte) []byte {
	if v == nil {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(v))+1)
	return append(b, v...)
}

var errBadSinkState = errors.New("corrupt sink state")

// stateReader reads varints with a sticky error.
type stateReader struct {
	b   []byte
	err error
}

func (r *stateReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errBadSinkState
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a length that cannot exceed what is left.
func (r *stateReader) count() int {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > uint64(len(r.b)) {
		r.err = errBadSinkState
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

// nullable reads what appendNullable wrote.
func (r *stateReader) nullable() []byte {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > uint64(len(r.b)-n)+1 {
		r.err = errBadSinkState
		return nil
	}
	r.b = r.b[n:]
	if v == 0 {
		return nil
	}
	return r.bytes(int(v - 1))
}

func (r *stateReader) bytes(l int) []byte {
	if r.err != nil || l > len(r.b) {
		r.err = errBadSinkState
		return nil
	}
	v := r.b[:l:l]
	r.b = r.b[l:]
	return v
}

// decodeSinkState reverses encodeSinkState; empty input is no state. The
// records' values alias b.
func decodeSinkState(b []byte) (sinkState, error) {
	var st sinkState
	if len(b) == 0 {
		return st, nil
	}
	version := b[0]
	if version != 1 && version != sinkStateVersion {
		return st, fmt.Errorf("sink state version %d, want %d", b[0], sinkStateVersion)
	}
	r := &stateReader{b: b[1:]}
	st.markerP = int32(r.varint())
	st.scanFrom = r.varint()
	n := r.count()
	for i := 0; i < n && r.err == nil; i++ {
		ep := sinkEpoch{id: r.varint()}
		m := r.count()
		for j := 0; j < m && r.err == nil; j++ {
			rec := sinkRecord{Partition: int32(r.varint())}
			if version == 1 {
				rec.Value = r.bytes(r.count())
			} else {
				rec.Key, rec.Value = r.nullable(), r.nullable()
			}
			ep.recs = append(ep.recs, rec)
		}
		st.epochs = append(st.epochs, ep)
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errBadSinkState
	}
	return st, r.err
}

// sinkTxnID is the transactional id of subtask i of sink uid in job:
// prefix-<job>-<uid>-<i>.
func sinkTxnID(prefix, job, uid string, i int) string {
	return prefix + "-" + job + "-" + uid + "-" + strconv.Itoa(i)
}
