package connectors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

// checkpointSource is a source that takes part in checkpoints.
type checkpointSource interface {
	operators.Source
	operators.Checkpointer
}

var errStopped = errors.New("stopped after the snapshot")

// snapCollector plays the runtime's part: it keeps the emitted rows and,
// from inside the after-th Emit (once the batch went downstream), takes a
// snapshot of src and stops the source by failing the Emit. It counts the
// source's Idle calls.
type snapCollector struct {
	*collector
	src   operators.Checkpointer
	after int // 0: never
	emits int
	snap  []byte
	mu    sync.Mutex
	idles int
	// onSnapshot, if set, runs after the snapshot, inside Emit.
	onSnapshot func()
}

func (c *snapCollector) Emit(b types.Batch) error {
	if err := c.collector.Emit(b); err != nil {
		return err
	}
	c.emits++
	if c.after == 0 || c.emits != c.after {
		return nil
	}
	snap, err := c.src.SnapshotState(1)
	if err != nil {
		return err
	}
	c.snap = snap
	if c.onSnapshot != nil {
		c.onSnapshot()
		return nil
	}
	return errStopped
}

func (c *snapCollector) Idle() error {
	c.mu.Lock()
	c.idles++
	c.mu.Unlock()
	return nil
}

var _ operators.Idler = (*snapCollector)(nil)

// stopAt runs src as subtask sub of par with restore r until the after-th
// Emit and returns the rows emitted and the snapshot taken then.
func stopAt(t *testing.T, src checkpointSource, schema types.Schema, octx *operators.Context, after int) ([]string, []byte) {
	t.Helper()
	c := &snapCollector{collector: newCollector(schema), src: src, after: after}
	if err := runSource(t, testCtx(t), src, octx, c); !errors.Is(err, errStopped) {
		t.Fatalf("subtask %d: run before the snapshot: %v (after %d emits)", octx.Subtask, err, c.emits)
	}
	return c.Rows(), c.snap
}

// runToEnd runs src to its end and returns its rows.
func runToEnd(t *testing.T, src operators.Source, schema types.Schema, octx *operators.Context) []string {
	t.Helper()
	c := newCollector(schema)
	if err := runSource(t, testCtx(t), src, octx, c); err != nil {
		t.Fatalf("subtask %d: %v", octx.Subtask, err)
	}
	return c.Rows()
}

func checkRows(t *testing.T, what string, got, want []string) {
	t.Helper()
	if equalStrings(got, want) {
		return
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Errorf("%s: %d rows, want %d; row %d is %s, want %s", what, len(got), len(want), i, got[i], want[i])
			return
		}
	}
	t.Errorf("%s: %d rows, want %d", what, len(got), len(want))
}

func datagenRestoreSpec(t *testing.T, opts map[string]string) jobgraph.DatagenSpec {
	t.Helper()
	tb := datagenTable(opts,
		types.Field{Name: "id", Type: types.BigInt}, types.Field{Name: "r", Type: types.Int},
		types.Field{Name: "s", Type: types.String}, types.Field{Name: "d", Type: types.Double})
	spec, err := DatagenSpecFor(tb)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func newTestDatagen(t *testing.T, spec jobgraph.DatagenSpec) *DatagenSource {
	t.Helper()
	src, err := NewDatagenSource(spec)
	if err != nil {
		t.Fatal(err)
	}
	src.sleep = func(context.Context, time.Duration) error { return nil }
	return src
}

func TestDatagenSourceRestore(t *testing.T) {
	spec := datagenRestoreSpec(t, map[string]string{
		"rows-per-second": "1000", "number-of-rows": "1001", // batches of 50 rows per subtask
		"fields.id.kind": "sequence", "fields.id.start": "1", "fields.id.end": "100000",
		"fields.r.min": "0", "fields.r.max": "1000000", "fields.r.null-rate": "0.2",
		"fields.s.length": "6",
	})
	const par = 2
	for sub := range par {
		// Seed 0 picks a seed from the clock: the snapshot must carry it.
		before, snap := stopAt(t, newTestDatagen(t, spec), spec.Schema, &operators.Context{Subtask: sub, Parallelism: par}, 3)
		if len(before) != 150 {
			t.Fatalf("subtask %d: %d rows before the snapshot, want 150", sub, len(before))
		}
		restore := operators.Restore{ID: 1, State: [][]byte{snap}}
		after := runToEnd(t, newTestDatagen(t, spec), spec.Schema, &operators.Context{Subtask: sub, Parallelism: par, Restore: restore})

		var pos datagenPosition
		if err := decodePosition("datagen", snap, &pos, &pos.V); err != nil || pos.Rows != 150 || pos.Seed == 0 {
			t.Fatalf("snapshot %s: %v", snap, err)
		}
		seeded := spec
		seeded.Seed = pos.Seed
		whole := runToEnd(t, newTestDatagen(t, seeded), spec.Schema, &operators.Context{Subtask: sub, Parallelism: par})
		if len(whole) != 501-sub {
			t.Fatalf("subtask %d made %d rows", sub, len(whole))
		}
		checkRows(t, fmt.Sprintf("subtask %d: before + after restore", sub), append(before, after...), whole)
	}

	// Rows and sequences are split by subtask number: no rescaling.
	_, snap := stopAt(t, newTestDatagen(t, spec), spec.Schema, &operators.Context{Subtask: 0, Parallelism: 2}, 1)
	src := newTestDatagen(t, spec)
	err := src.Open(&operators.Context{Subtask: 0, Parallelism: 3, Restore: operators.Restore{ID: 1, State: [][]byte{snap, snap}, Rescaled: true}})
	if err == nil || !strings.Contains(err.Error(), "datagen table db.gen cannot be restored at another parallelism (2 -> 3)") {
		t.Errorf("rescaled restore: %v", err)
	}
	// A position of an unknown version is refused.
	err = newTestDatagen(t, spec).Open(&operators.Context{Parallelism: 1, Restore: operators.Restore{ID: 1, State: [][]byte{[]byte(`{"v":99,"rows":3}`)}}})
	if err == nil || !strings.Contains(err.Error(), "version 99") {
		t.Errorf("unknown version: %v", err)
	}
}

func TestDatagenRandomRescales(t *testing.T) {
	// Random values only, unbounded: subtask i continues old subtask i.
	spec := datagenRestoreSpec(t, map[string]string{"rows-per-second": "1000"})
	spec.Seed = 11
	var snaps [][]byte
	var before [][]string
	for sub := range 2 {
		rows, snap := stopAt(t, newTestDatagen(t, spec), spec.Schema, &operators.Context{Subtask: sub, Parallelism: 2}, 2)
		before, snaps = append(before, rows), append(snaps, snap)
	}
	for sub := range 3 {
		src := newTestDatagen(t, spec)
		after, _ := stopAt(t, src, spec.Schema, &operators.Context{Subtask: sub, Parallelism: 3,
			Restore: operators.Restore{ID: 1, State: snaps, Rescaled: true}}, 1)
		// Compare with an uninterrupted run of the same subtask number.
		whole, _ := stopAt(t, newTestDatagen(t, spec), spec.Schema, &operators.Context{Subtask: sub, Parallelism: 3}, 6)
		var prev []string
		if sub < 2 {
			prev = before[sub]
		}
		got := append(append([]string(nil), prev...), after...)
		if len(whole) < len(got) {
			t.Fatalf("subtask %d: %d rows uninterrupted", sub, len(whole))
		}
		checkRows(t, fmt.Sprintf("subtask %d", sub), got, whole[:len(got)])
	}
}

func TestDatagenThrottleIdles(t *testing.T) {
	spec := datagenRestoreSpec(t, map[string]string{"rows-per-second": "10", "number-of-rows": "3"})
	src, err := NewDatagenSource(spec)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Unix(1000, 0)
	src.now = func() time.Time { return clock }
	src.sleep = func(_ context.Context, d time.Duration) error {
		if d > idleEvery {
			return fmt.Errorf("slept %v at once", d)
		}
		clock = clock.Add(d)
		return nil
	}
	c := &snapCollector{collector: newCollector(spec.Schema), src: src}
	if err := runSource(t, context.Background(), src, &operators.Context{Parallelism: 1}, c); err != nil {
		t.Fatal(err)
	}
	// One row per 100 ms batch: two 50 ms sleeps after each.
	if c.idles != 6 {
		t.Errorf("%d Idle calls, want 6", c.idles)
	}
}

func TestValuesSourceRestore(t *testing.T) {
	schema := types.Schema{{Name: "a", Type: types.BigInt}}
	rows := make([][]*expr.Expr, 2*maxBatchRows+10)
	for i := range rows {
		rows[i] = []*expr.Expr{expr.Literal(int64(i), types.BigInt)}
	}
	spec := jobgraph.ValuesSpec{Schema: schema, Rows: rows}
	newSrc := func() *ValuesSource {
		s, err := NewValuesSource(spec)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	whole := runToEnd(t, newSrc(), schema, &operators.Context{Parallelism: 1})
	before, snap := stopAt(t, newSrc(), schema, &operators.Context{Parallelism: 1}, 1)
	if string(snap) != fmt.Sprintf(`{"v":1,"next":%d}`, maxBatchRows) {
		t.Errorf("snapshot %s", snap)
	}
	for _, par := range []int{1, 2} {
		var after []string
		for sub := range par {
			after = append(after, runToEnd(t, newSrc(), schema, &operators.Context{Subtask: sub, Parallelism: par,
				Restore: operators.Restore{ID: 1, State: [][]byte{snap}, Rescaled: par != 1}})...)
		}
		checkRows(t, fmt.Sprintf("parallelism %d: before + after restore", par), append(append([]string(nil), before...), after...), whole)
	}
	err := newSrc().Open(&operators.Context{Parallelism: 1, Restore: operators.Restore{ID: 1, State: [][]byte{[]byte(`{"v":2,"next":1}`)}}})
	if err == nil || !strings.Contains(err.Error(), "values: checkpointed source position has version 2") {
		t.Errorf("unknown version: %v", err)
	}
}

// logSourceCase drives the restore tests of a source that reads a topic.
type logSourceCase struct {
	schema types.Schema
	// newSrc returns a source of the topic.
	newSrc func(bounded bool) checkpointSource
	// ctx returns the operator context of subtask sub of par.
	ctx func(sub, par int, r operators.Restore) *operators.Context
	// produce writes the rows of ids to partition p, in a transaction
	// that commits (txn "commit"), aborts ("abort") or stays open
	// ("open"), or in none (""); it returns the rows as the source
	// formats them. An open transaction's client is closed by cleanup.
	produce func(t *testing.T, p int32, txn string, ids ...int) []string
}

// checkLogRestore writes to a 4-partition topic, reads part of it at
// parallelism 2 and snapshots, writes more (with an aborted and a
// committed transaction), and restores at parallelism 1, 2 and 3: each
// time the rows before the snapshot and after the restore together are
// every committed row exactly once.
func checkLogRestore(t *testing.T, c logSourceCase) {
	var want []string
	for p := range int32(4) {
		want = append(want, c.produce(t, p, "", ids(int(p)*1000, 20)...)...)
	}
	var before []string
	var snaps [][]byte
	for sub := range 2 {
		rows, snap := stopAt(t, c.newSrc(false), c.schema, c.ctx(sub, 2, operators.Restore{}), 1)
		if len(rows) == 0 {
			t.Fatalf("subtask %d emitted nothing before the snapshot", sub)
		}
		before, snaps = append(before, rows...), append(snaps, snap)
	}
	for p := range int32(4) {
		want = append(want, c.produce(t, p, "", ids(int(p)*1000+20, 10)...)...)
	}
	c.produce(t, 1, "abort", ids(1500, 5)...)
	want = append(want, c.produce(t, 2, "commit", ids(2500, 5)...)...)
	want = append(want, c.produce(t, 3, "", ids(3500, 2)...)...)

	for _, par := range []int{1, 2, 3} {
		var got []string
		for sub := range par {
			r := operators.Restore{ID: 1, State: snaps, Rescaled: par != 2}
			if par == 2 {
				r.State = snaps[sub : sub+1]
			}
			got = append(got, runToEnd(t, c.newSrc(true), c.schema, c.ctx(sub, par, r))...)
		}
		checkRows(t, fmt.Sprintf("restored at parallelism %d: before + after", par), sorted(append(append([]string(nil), before...), got...)), sorted(want))
	}
}

// checkLogBoundRestore: a bounded read restored from a checkpoint stops
// where the original read would have, at the end offsets listed when it
// first started, even after more rows were written; also when restored
// at another parallelism. (A job that restarts after a failure must not
// read rows the failed attempt would never have read.)
func checkLogBoundRestore(t *testing.T, c logSourceCase) {
	var want []string
	for p := range int32(4) {
		want = append(want, c.produce(t, p, "", ids(int(p)*1000, 20)...)...)
	}
	var before []string
	var snaps [][]byte
	for sub := range 2 {
		rows, snap := stopAt(t, c.newSrc(true), c.schema, c.ctx(sub, 2, operators.Restore{}), 1)
		before, snaps = append(before, rows...), append(snaps, snap)
	}
	for p := range int32(4) {
		c.produce(t, p, "", ids(int(p)*1000+20, 10)...) // after the bound
	}
	for _, par := range []int{1, 2, 3} {
		var got []string
		for sub := range par {
			r := operators.Restore{ID: 1, State: snaps, Rescaled: par != 2}
			if par == 2 {
				r.State = snaps[sub : sub+1]
			}
			got = append(got, runToEnd(t, c.newSrc(true), c.schema, c.ctx(sub, par, r))...)
		}
		checkRows(t, fmt.Sprintf("bounded read restored at parallelism %d", par), sorted(append(append([]string(nil), before...), got...)), sorted(want))
	}
}

// checkLogReadCommitted checks that a bounded read sees committed
// transactions, never aborted ones, and stops below an open one.
func checkLogReadCommitted(t *testing.T, c logSourceCase) {
	var want []string
	want = append(want, c.produce(t, 0, "", ids(1, 3)...)...)
	c.produce(t, 0, "abort", ids(10, 3)...)
	want = append(want, c.produce(t, 0, "commit", ids(20, 3)...)...)
	c.produce(t, 1, "open", ids(30, 3)...)
	want = append(want, c.produce(t, 0, "", ids(40, 1)...)...)
	got := runToEnd(t, c.newSrc(true), c.schema, c.ctx(0, 1, operators.Restore{}))
	checkRows(t, "read_committed", sorted(got), sorted(want))
}

func ids(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

// produceRecords writes values to partition p of topic, in a transaction
// as txn says (see logSourceCase.produce).
func produceRecords(t *testing.T, brokers []string, topic string, p int32, txn string, values [][]byte) {
	t.Helper()
	opts := []kgo.Opt{kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner())}
	if txn != "" {
		opts = append(opts, kgo.TransactionalID(fmt.Sprintf("test-%s-%d-%d", txn, p, time.Now().UnixNano())))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	if txn == "" {
		defer cl.Close()
	} else if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	recs := make([]*kgo.Record, len(values))
	for i, v := range values {
		recs[i] = &kgo.Record{Topic: topic, Partition: p, Value: v}
	}
	if err := cl.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	switch txn {
	case "commit", "abort":
		end := kgo.TryCommit
		if txn == "abort" {
			end = kgo.TryAbort
		}
		if err := cl.EndTransaction(testCtx(t), end); err != nil {
			t.Fatal(err)
		}
		cl.Close()
	case "open":
		t.Cleanup(cl.Close)
	}
}

func kafkaLogCase(t *testing.T, topic string, partitions int32, group string) logSourceCase {
	b := startBroker(t)
	kafkaTopic(t, b.Addrs(), topic, partitions)
	schema := types.Schema{{Name: "id", Type: types.BigInt}}
	return logSourceCase{
		schema: schema,
		newSrc: func(bounded bool) checkpointSource {
			return NewKafkaSource(jobgraph.KafkaSourceSpec{Topic: topic, Brokers: b.Addrs(), Schema: schema,
				StartupMode: jobgraph.KafkaStartEarliest, Bounded: bounded, GroupID: group})
		},
		ctx: func(sub, par int, r operators.Restore) *operators.Context {
			return &operators.Context{Subtask: sub, Parallelism: par, Restore: r}
		},
		produce: func(t *testing.T, p int32, txn string, ids ...int) []string {
			vals := make([][]byte, len(ids))
			rows := make([]string, len(ids))
			for i, id := range ids {
				vals[i] = []byte(fmt.Sprintf(`{"id":%d}`, id))
				rows[i] = fmt.Sprintf("+I[%d]", id)
			}
			produceRecords(t, b.Addrs(), topic, p, txn, vals)
			return rows
		},
	}
}

func managedLogCase(t *testing.T, topic string, partitions int32) logSourceCase {
	b := startBroker(t)
	kafkaTopic(t, b.Addrs(), topic, partitions)
	return logSourceCase{
		schema: testSchema,
		newSrc: func(bounded bool) checkpointSource {
			return NewManagedSource(jobgraph.ManagedSourceSpec{Topic: topic, Schema: testSchema, Bounded: bounded})
		},
		ctx: func(sub, par int, r operators.Restore) *operators.Context {
			return &operators.Context{Subtask: sub, Parallelism: par, Restore: r, Brokers: b.Addrs()}
		},
		produce: func(t *testing.T, p int32, txn string, ids ...int) []string {
			// One record per id, each a one-row batch.
			vals := make([][]byte, len(ids))
			var rows []string
			for i, id := range ids {
				bt := testBatch(id, id+1, types.Insert)
				v, err := encodeBatch(testSchema.ArrowSchema(), bt, 0)
				if err != nil {
					t.Fatal(err)
				}
				vals[i] = v
				rows = append(rows, formatted(bt)...)
				bt.Release()
			}
			produceRecords(t, b.Addrs(), topic, p, txn, vals)
			return rows
		},
	}
}

func TestKafkaSourceRestore(t *testing.T) {
	checkLogRestore(t, kafkaLogCase(t, "pos", 4, ""))
}

func TestKafkaSourceBoundRestore(t *testing.T) {
	checkLogBoundRestore(t, kafkaLogCase(t, "bound", 4, ""))
}

func TestManagedSourceBoundRestore(t *testing.T) {
	checkLogBoundRestore(t, managedLogCase(t, "braid.db.bound.1", 4))
}

func TestKafkaSourceReadCommitted(t *testing.T) {
	checkLogReadCommitted(t, kafkaLogCase(t, "txn", 2, ""))
}

func TestManagedSourceRestore(t *testing.T) {
	checkLogRestore(t, managedLogCase(t, "braid.db.pos.1", 4))
}

func TestManagedSourceReadCommitted(t *testing.T) {
	checkLogReadCommitted(t, managedLogCase(t, "braid.db.txn.1", 2))
}

func TestKafkaSourceCommitsToGroup(t *testing.T) {
	c := kafkaLogCase(t, "grp", 2, "monitor")
	c.produce(t, 0, "", ids(0, 5)...)
	c.produce(t, 1, "", ids(100, 3)...)
	src := c.newSrc(false).(*KafkaSource)
	// A quiet topic: the source calls Idle while it waits.
	sc := &snapCollector{collector: newCollector(c.schema), src: src, after: 1}
	ctx, cancel := context.WithCancel(testCtx(t))
	sc.onSnapshot = func() {
		if err := src.NotifyCheckpointComplete(1); err != nil {
			t.Error(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- runSource(t, ctx, src, c.ctx(0, 1, operators.Restore{}), sc) }()
	sc.waitRows(t, 1)
	deadline := time.Now().Add(10 * time.Second)
	for {
		sc.mu.Lock()
		idles := sc.idles
		sc.mu.Unlock()
		if idles >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v", err)
	}
	if sc.idles < 3 {
		t.Errorf("%d Idle calls while waiting", sc.idles)
	}
	var pos logPosition
	if err := decodePosition("kafka", sc.snap, &pos, &pos.V); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokersOf(t, src)...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	fetched, err := kadm.NewClient(cl).FetchOffsets(testCtx(t), "monitor")
	if err != nil {
		t.Fatal(err)
	}
	for p, o := range pos.Offsets {
		got, ok := fetched.Lookup("grp", p)
		if !ok || got.At != o {
			t.Errorf("partition %d: group offset %v, snapshot %d", p, got, o)
		}
	}
	if len(pos.Offsets) != 2 {
		t.Errorf("snapshot offsets %v", pos.Offsets)
	}
}

func brokersOf(t *testing.T, s *KafkaSource) []string {
	t.Helper()
	return s.spec.Brokers
}

func TestManagedSourceIdlesWithoutPartitions(t *testing.T) {
	c := managedLogCase(t, "braid.db.idle.1", 1)
	src := c.newSrc(false)
	sc := &snapCollector{collector: newCollector(c.schema), src: src}
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error, 1)
	// Subtask 1 of 2 owns no partition of a one-partition topic.
	go func() { done <- runSource(t, ctx, src, c.ctx(1, 2, operators.Restore{}), sc) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		sc.mu.Lock()
		idles := sc.idles
		sc.mu.Unlock()
		if idles >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d Idle calls in 10s", idles)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Its position is empty, and reads back.
	snap, err := src.SnapshotState(1)
	if err != nil || string(snap) != `{"v":1,"topic":"braid.db.idle.1","offsets":{}}` {
		t.Errorf("snapshot %s, %v", snap, err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v", err)
	}
}
