package operators

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/zap"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

// The restore harness runs a stateful operator over a random input twice:
// straight through, and with a checkpoint at a random point after which
// every subtask is closed (operator and backend) and the rest of the input
// goes to new operators opened on the checkpointed state (real Pebble on
// disk), as the runtime does after a failure. At the same parallelism each
// subtask's output (rows and watermarks) must be exactly the uninterrupted
// one's; restored at another parallelism (the state rebuilt from the old
// subtasks' checkpoints with state.RestoreRanges), the whole changelog must
// be the same multiset of rows.

// restoreMaxPar is the number of key groups of the restore tests.
const restoreMaxPar = 128

// restoreStep is one input event: a batch for input, or, when b.Rec is
// nil, the watermark wm (of every input).
type restoreStep struct {
	input int
	b     types.Batch
	wm    int64
}

// restoreCase is an operator and an input for the harness.
type restoreCase struct {
	name  string
	newOp func() (Operator, error)
	// keys are the key columns of each input, by which rows are routed to
	// subtasks as a hash exchange routes them.
	keys   [2][]int
	inputs int
	steps  []restoreStep
}

// restoreSteps cuts evs into batches of 1 to 40 rows of one input, with a
// step of their own for watermarks (wm reports them).
func restoreSteps[E any](r *rand.Rand, evs []E, input func(E) int, wm func(E) (int64, bool), build func(int, []E) types.Batch) []restoreStep {
	var steps []restoreStep
	for i := 0; i < len(evs); {
		if w, ok := wm(evs[i]); ok {
			steps = append(steps, restoreStep{wm: w})
			i++
			continue
		}
		in, n := input(evs[i]), 1+r.IntN(40)
		j := i + 1
		for j < len(evs) && j-i < n && input(evs[j]) == in {
			if _, ok := wm(evs[j]); ok {
				break
			}
			j++
		}
		steps = append(steps, restoreStep{input: in, b: build(in, evs[i:j])})
		i = j
	}
	return append(steps, restoreStep{wm: MaxWatermark})
}

// restoreOut collects one subtask's output: rows as "+I[a, b]", watermarks
// as "wm N".
type restoreOut struct{ events []string }

func (c *restoreOut) Emit(b types.Batch) error {
	for i := 0; i < b.NumRows(); i++ {
		vals := make([]string, b.NumCols())
		for j := range vals {
			vals[j] = b.Column(j).ValueStr(i)
		}
		c.events = append(c.events, b.Kind(i).String()+"["+strings.Join(vals, ", ")+"]")
	}
	return nil
}

func (c *restoreOut) EmitWatermark(wm int64) error {
	c.events = append(c.events, fmt.Sprint("wm ", wm))
	return nil
}

// restoreJob is the subtasks of one operator at one parallelism.
type restoreJob struct {
	t    *testing.T
	c    *restoreCase
	ops  []Operator
	bes  []*state.Backend
	outs []*restoreOut
}

// openRestoreJob opens par subtasks, subtask i on the state in dirs[i]
// (created when absent) with restore(i) as its Context.Restore.
func openRestoreJob(t *testing.T, c *restoreCase, dirs []string, cacheBytes int64, restore func(i int) Restore) *restoreJob {
	t.Helper()
	par := len(dirs)
	j := &restoreJob{t: t, c: c}
	for i, dir := range dirs {
		kgs := types.KeyGroupRangeFor(i, par, restoreMaxPar)
		be, err := state.Open(dir, state.Options{CacheBytes: cacheBytes, KeyGroups: kgs, MaxParallelism: restoreMaxPar})
		if err != nil {
			t.Fatal(err)
		}
		op, err := c.newOp()
		if err != nil {
			t.Fatal(err)
		}
		ctx := &Context{Subtask: i, Parallelism: par, MaxParallelism: restoreMaxPar, KeyGroups: kgs,
			State: be, OperatorUID: "op", Restore: restore(i), Logger: zap.NewNop(),
			Now: func() time.Time { return time.Unix(1_700_000_000, 0) }}
		j.ops, j.bes, j.outs = append(j.ops, op), append(j.bes, be), append(j.outs, &restoreOut{})
		if err := op.Open(ctx); err != nil {
			j.close()
			t.Fatalf("subtask %d of %d: open: %v", i, par, err)
		}
	}
	return j
}

// feed processes steps: batches routed by key group, watermarks to every
// subtask.
func (j *restoreJob) feed(steps []restoreStep) {
	t := j.t
	t.Helper()
	par := len(j.ops)
	for _, s := range steps {
		if s.b.Rec == nil {
			for i, op := range j.ops {
				if wh, ok := op.(WatermarkHandler); ok {
					if err := wh.ProcessWatermark(s.wm, j.outs[i]); err != nil {
						t.Fatal(err)
					}
				}
			}
			continue
		}
		var keyCols []arrow.Array
		for _, k := range j.c.keys[s.input] {
			keyCols = append(keyCols, s.b.Column(k))
		}
		n := s.b.NumRows()
		h := make([]uint64, n)
		types.HashColumns(keyCols, h)
		subtask := func(i int) int {
			return types.SubtaskForKeyGroup(types.KeyGroupForHash(h[i], restoreMaxPar), par, restoreMaxPar)
		}
		// Runs of rows bound for one subtask, in order.
		for lo := 0; lo < n; {
			p, hi := subtask(lo), lo+1
			for hi < n && subtask(hi) == p {
				hi++
			}
			part := types.Batch{Rec: s.b.Rec.NewSlice(int64(lo), int64(hi))}
			err := j.ops[p].Process(s.input, part, j.outs[p])
			part.Release()
			if err != nil {
				t.Fatal(err)
			}
			lo = hi
		}
	}
}

// end ends every input of every subtask.
func (j *restoreJob) end() {
	j.t.Helper()
	for i, op := range j.ops {
		for in := 0; in < j.c.inputs; in++ {
			if err := op.EndInput(in, j.outs[i]); err != nil {
				j.t.Fatal(err)
			}
		}
	}
}

// checkpoint takes checkpoint 1 of every subtask as the runtime does
// (SnapshotState, then the backend's Pebble checkpoint into dir/ckpt-i),
// then closes the job. It returns the checkpoint directories and the
// operator states.
func (j *restoreJob) checkpoint(dir string) ([]string, [][]byte) {
	t := j.t
	t.Helper()
	var dirs []string
	var states [][]byte
	for i, op := range j.ops {
		var st []byte
		if cp, ok := op.(Checkpointer); ok {
			var err error
			if st, err = cp.SnapshotState(1); err != nil {
				t.Fatal(err)
			}
		}
		ck := filepath.Join(dir, fmt.Sprint("ckpt-", i))
		if err := j.bes[i].Checkpoint(ck); err != nil {
			t.Fatal(err)
		}
		dirs, states = append(dirs, ck), append(states, st)
	}
	j.close()
	return dirs, states
}

func (j *restoreJob) close() {
	for i, op := range j.ops {
		if err := op.Close(); err != nil {
			j.t.Error(err)
		}
		if err := j.bes[i].Close(); err != nil {
			j.t.Error(err)
		}
	}
}

// rows returns every subtask's rows, watermarks left out, sorted.
func (j *restoreJob) rows() []string {
	var rows []string
	for _, o := range j.outs {
		for _, e := range o.events {
			if !strings.HasPrefix(e, "wm ") {
				rows = append(rows, e)
			}
		}
	}
	slices.Sort(rows)
	return rows
}

func newDirs(root, prefix string, n int) []string {
	dirs := make([]string, n)
	for i := range dirs {
		dirs[i] = filepath.Join(root, fmt.Sprintf("%s-%d", prefix, i))
	}
	return dirs
}

// runRestore runs c straight through at parallelism from, and again with a
// checkpoint after split steps and a restore at parallelism to, and
// compares the outputs.
func runRestore(t *testing.T, c *restoreCase, split, from, to int, cacheBytes int64) {
	t.Helper()
	root := t.TempDir()
	none := func(int) Restore { return Restore{} }

	ref := openRestoreJob(t, c, newDirs(root, "ref", from), cacheBytes, none)
	ref.feed(c.steps)
	ref.end()
	ref.close()

	before := openRestoreJob(t, c, newDirs(root, "before", from), cacheBytes, none)
	before.feed(c.steps[:split])
	ckpts, states := before.checkpoint(root)

	dirs, restore := ckpts, func(i int) Restore { return Restore{ID: 1, State: [][]byte{states[i]}} }
	if to != from {
		dirs = newDirs(root, "rescaled", to)
		for i, dst := range dirs {
			kgs := types.KeyGroupRangeFor(i, to, restoreMaxPar)
			opts := state.Options{KeyGroups: kgs, MaxParallelism: restoreMaxPar}
			if err := state.RestoreRanges(dst, ckpts, kgs, opts); err != nil {
				t.Fatal(err)
			}
		}
		restore = func(int) Restore { return Restore{ID: 1, State: states, Rescaled: true} }
	}
	after := openRestoreJob(t, c, dirs, cacheBytes, restore)
	after.feed(c.steps[split:])
	after.end()
	after.close()

	if to == from {
		for i := range ref.outs {
			got := append(wms(before.outs[i]), wms(after.outs[i])...)
			if want := wms(ref.outs[i]); !slices.Equal(got, want) {
				t.Fatalf("subtask %d: restored after step %d of %d, watermarks:\ngot  %v\nwant %v", i, split, len(c.steps), got, want)
			}
		}
	}
	got := append(before.rows(), after.rows()...)
	slices.Sort(got)
	if want := ref.rows(); !slices.Equal(got, want) {
		t.Fatalf("restored after step %d of %d at parallelism %d -> %d:\ngot  %v\nwant %v", split, len(c.steps), from, to, got, want)
	}
}

// wms returns the watermarks o received, in order.
func wms(o *restoreOut) []string {
	var w []string
	for _, e := range o.events {
		if strings.HasPrefix(e, "wm ") {
			w = append(w, e)
		}
	}
	return w
}

// testRestore runs c's restore matrix: random split points, at parallelism
// 1 and 2, and from 2 to 1 and 3, with a tiny and a large cache. The runs
// share the input batches (operators only borrow them) and run in
// parallel.
func testRestore(t *testing.T, make func(r *rand.Rand) *restoreCase) {
	seeds := uint64(3)
	if testing.Short() {
		seeds = 1
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		r := rand.New(rand.NewPCG(seed, 11))
		c := make(r)
		t.Cleanup(func() {
			for _, s := range c.steps {
				s.b.Release()
			}
		})
		for _, p := range []struct{ from, to int }{{1, 1}, {2, 2}, {2, 1}, {2, 3}} {
			split := r.IntN(len(c.steps) + 1)
			cache := []int64{2 << 10, 64 << 20}[r.IntN(2)]
			t.Run(fmt.Sprintf("%s/seed=%d/par=%d-%d/split=%d", c.name, seed, p.from, p.to, split), func(t *testing.T) {
				t.Parallel()
				runRestore(t, c, split, p.from, p.to, cache)
			})
		}
	}
}

// registered builds spec's operator through the registry, as the runtime
// does. The operators share spec: they must not change it.
func registered(spec jobgraph.Spec) func() (Operator, error) {
	return func() (Operator, error) { return NewOperator(spec) }
}

func joinRestoreCase(name string, spec jobgraph.JoinSpec, evs []joinEvent, r *rand.Rand) *restoreCase {
	return &restoreCase{
		name: name, newOp: registered(&spec), inputs: 2,
		keys: [2][]int{spec.LeftKeys, spec.RightKeys},
		steps: restoreSteps(r, evs, func(e joinEvent) int { return e.input },
			func(joinEvent) (int64, bool) { return 0, false }, buildBatch),
	}
}

func TestRestoreInnerJoin(t *testing.T) {
	testRestore(t, func(r *rand.Rand) *restoreCase {
		return joinRestoreCase("inner", baseSpec(), randomEvents(r, 500, 12), r)
	})
}

func TestRestoreOuterJoin(t *testing.T) {
	for _, kind := range []struct {
		name        string
		left, right bool
	}{{"left", true, false}, {"right", false, true}, {"full", true, true}} {
		testRestore(t, func(r *rand.Rand) *restoreCase {
			spec := baseSpec()
			spec.OuterLeft, spec.OuterRight = kind.left, kind.right
			return joinRestoreCase(kind.name, spec, validEvents(r, 400, 8), r)
		})
		// With a residual the outer sides keep per-row match counts.
		testRestore(t, func(r *rand.Rand) *restoreCase {
			spec := baseSpec()
			spec.OuterLeft, spec.OuterRight = kind.left, kind.right
			spec.Residual = outerResiduals[1].cond
			return joinRestoreCase(kind.name+"-residual", spec, validEvents(r, 400, 8), r)
		})
	}
}

// lateEvents makes rows of two inputs whose times mostly lead a rising
// watermark and are sometimes behind it (late), with a watermark every few
// rows.
func lateEvents(r *rand.Rand, n, keys int) []ijEvent {
	var evs []ijEvent
	wm := int64(0)
	for i := 0; i < n; i++ {
		if r.IntN(8) == 0 {
			wm += r.Int64N(1500)
			evs = append(evs, ijWM(wm))
		}
		ts := wm + 1 + r.Int64N(3000)
		if r.IntN(6) == 0 {
			ts -= 4000
		}
		evs = append(evs, ijEvent{input: r.IntN(2), k: r.Int64N(int64(keys)), v: int64(i), ts: ts})
	}
	return evs
}

func ijWatermark(e ijEvent) (int64, bool) { return e.ts, e.wm }

func TestRestoreIntervalJoin(t *testing.T) {
	for _, c := range []struct {
		name           string
		lower, upper   int64
		outerL, outerR bool
	}{{"inner", -1000, 1500, false, false}, {"left", -2000, 0, true, false}, {"full", -500, 2500, true, true}} {
		testRestore(t, func(r *rand.Rand) *restoreCase {
			spec := ijSpec(c.lower, c.upper, c.outerL, c.outerR)
			return &restoreCase{
				name: "interval-" + c.name, newOp: registered(&spec), inputs: 2,
				keys:  [2][]int{{0}, {0}},
				steps: restoreSteps(r, lateEvents(r, 400, 6), func(e ijEvent) int { return e.input }, ijWatermark, ijBatch),
			}
		})
	}
}

func TestRestoreTemporalJoin(t *testing.T) {
	for _, outer := range []bool{false, true} {
		testRestore(t, func(r *rand.Rand) *restoreCase {
			var evs []tjEvent
			for _, e := range lateEvents(r, 400, 5) {
				te := tjEvent{ijEvent: e}
				if e.input == 1 && !e.wm {
					te.kind = []types.RowKind{types.Insert, types.UpdateAfter, types.UpdateBefore, types.Delete}[r.IntN(4)]
				}
				evs = append(evs, te)
			}
			spec := tjSpec(outer, nil)
			return &restoreCase{
				name: fmt.Sprintf("temporal-outer=%v", outer), newOp: registered(&spec), inputs: 2,
				keys: [2][]int{{0}, {0}},
				steps: restoreSteps(r, evs, func(e tjEvent) int { return e.input },
					func(e tjEvent) (int64, bool) { return e.ts, e.wm }, tjBatch),
			}
		})
	}
}

func aggRestoreSteps(r *rand.Rand, evs []aggEvent) []restoreStep {
	return restoreSteps(r, evs, func(aggEvent) int { return 0 },
		func(aggEvent) (int64, bool) { return 0, false }, func(_ int, evs []aggEvent) types.Batch { return buildAggBatch(evs) })
}

func TestRestoreGroupAgg(t *testing.T) {
	for _, retract := range []bool{false, true} {
		testRestore(t, func(r *rand.Rand) *restoreCase {
			spec := fullAggSpec()
			spec.InputRetracts = retract
			return &restoreCase{
				name: fmt.Sprintf("group-agg-retract=%v", retract), newOp: registered(&spec),
				inputs: 1, keys: [2][]int{spec.Keys}, steps: aggRestoreSteps(r, randomAggEvents(r, 500, 8, retract)),
			}
		})
	}
}

func TestRestoreRank(t *testing.T) {
	for _, rn := range []bool{false, true} {
		for _, retract := range []bool{false, true} {
			testRestore(t, func(r *rand.Rand) *restoreCase {
				spec := jobgraph.RankSpec{InputSchema: aggInput, Partition: []int{0}, OrderBy: rankOrder, Limit: 3,
					InputRetracts: retract, OutputRankNumber: rn}
				return &restoreCase{
					name: fmt.Sprintf("rank-retract=%v-rn=%v", retract, rn), newOp: registered(&spec),
					inputs: 1, keys: [2][]int{spec.Partition}, steps: aggRestoreSteps(r, randomAggEvents(r, 500, 6, retract)),
				}
			})
		}
	}
	// Batch mode's RANK keeps every row and emits at the end of input.
	testRestore(t, func(r *rand.Rand) *restoreCase {
		spec := jobgraph.RankSpec{InputSchema: aggInput, Partition: []int{0}, OrderBy: []jobgraph.SortKey{{Col: 1}}, Limit: 2,
			InputRetracts: true, OutputRankNumber: true, RankType: jobgraph.RankTypeRank, EmitAtEnd: true}
		return &restoreCase{
			name: "rank-batch-RANK", newOp: registered(&spec),
			inputs: 1, keys: [2][]int{spec.Partition}, steps: aggRestoreSteps(r, randomAggEvents(r, 500, 6, true)),
		}
	})
}

func TestRestoreWindowAgg(t *testing.T) {
	for _, w := range []jobgraph.WindowSpec{
		{Kind: jobgraph.WindowTumble, SizeMs: 1000},
		{Kind: jobgraph.WindowHop, SizeMs: 3000, StepMs: 1000},
		{Kind: jobgraph.WindowCumulate, SizeMs: 4000, StepMs: 1000},
		{Kind: jobgraph.WindowSession, GapMs: 700},
	} {
		testRestore(t, func(r *rand.Rand) *restoreCase {
			spec := windowSpec(w)
			build := func(_ int, evs []ijEvent) types.Batch {
				rows := make([]winRow, len(evs))
				for i, e := range evs {
					rows[i] = winRow{k: e.k, x: e.v, ts: e.ts}
				}
				return winBatch(rows...)
			}
			return &restoreCase{
				name: fmt.Sprintf("window-%v", w.Kind), newOp: registered(&spec),
				inputs: 1, keys: [2][]int{spec.Keys},
				steps: restoreSteps(r, lateEvents(r, 500, 8), func(ijEvent) int { return 0 }, ijWatermark, build),
			}
		})
	}
}

// upsertEvent is a row of an upsert stream: key, value and kind.
type upsertEvent struct {
	kind types.RowKind
	id   int32
	v    string
}

func upsertEvents(r *rand.Rand, n, keys int) []upsertEvent {
	last := map[int32]string{}
	var evs []upsertEvent
	for len(evs) < n {
		id := int32(r.IntN(keys))
		v := fmt.Sprint("v", r.IntN(4))
		old, live := last[id]
		switch {
		case live && r.IntN(4) == 0:
			evs = append(evs, upsertEvent{types.Delete, id, old})
			delete(last, id)
		case live:
			if r.IntN(2) == 0 {
				evs = append(evs, upsertEvent{types.UpdateBefore, id, old})
			}
			evs = append(evs, upsertEvent{types.UpdateAfter, id, v})
			last[id] = v
		default:
			evs = append(evs, upsertEvent{[]types.RowKind{types.Insert, types.UpdateAfter}[r.IntN(2)], id, v})
			last[id] = v
		}
	}
	return evs
}

func upsertEventBatch(_ int, evs []upsertEvent) types.Batch {
	ids := array.NewInt32Builder(memory.DefaultAllocator)
	vs := array.NewStringBuilder(memory.DefaultAllocator)
	defer ids.Release()
	defer vs.Release()
	kinds := make([]int8, len(evs))
	for i, e := range evs {
		ids.Append(e.id)
		vs.Append(e.v)
		kinds[i] = int8(e.kind)
	}
	cols := []arrow.Array{ids.NewArray(), vs.NewArray()}
	defer cols[0].Release()
	defer cols[1].Release()
	return types.NewBatch(upsertSchema.ArrowSchema(), cols, kinds)
}

func TestRestoreNormalize(t *testing.T) {
	testRestore(t, func(r *rand.Rand) *restoreCase {
		spec := jobgraph.NormalizeSpec{Schema: upsertSchema, Keys: []int{0}}
		return &restoreCase{
			name: "normalize", newOp: registered(&spec), inputs: 1, keys: [2][]int{spec.Keys},
			steps: restoreSteps(r, upsertEvents(r, 500, 10), func(upsertEvent) int { return 0 },
				func(upsertEvent) (int64, bool) { return 0, false }, upsertEventBatch),
		}
	})
}

// TestRestoreKeepsWatermark restores a window aggregate whose replayed
// input sends a row late for a window that fired before the checkpoint,
// and a watermark lower than the checkpointed one: the row stays dropped
// and the window fires once, as in an uninterrupted run.
func TestRestoreKeepsWatermark(t *testing.T) {
	spec := windowSpec(jobgraph.WindowSpec{Kind: jobgraph.WindowTumble, SizeMs: 1000})
	c := &restoreCase{name: "window", newOp: registered(&spec), inputs: 1, keys: [2][]int{spec.Keys}}
	c.steps = []restoreStep{
		{b: winBatch(winRow{k: 1, x: 1, ts: 500}, winRow{k: 2, x: 1, ts: 1500})},
		{wm: 1500},
		{b: winBatch(winRow{k: 1, x: 7, ts: 600})}, // late: [0, 1000) fired
		{wm: 1200},
		{wm: MaxWatermark},
	}
	defer func() {
		for _, s := range c.steps {
			s.b.Release()
		}
	}()
	for _, p := range []struct{ from, to int }{{1, 1}, {2, 2}, {2, 1}} {
		runRestore(t, c, 2, p.from, p.to, 0)
	}
	root := t.TempDir()
	j := openRestoreJob(t, c, newDirs(root, "ref", 1), 0, func(int) Restore { return Restore{} })
	j.feed(c.steps)
	j.close()
	want := []string{"+I[1, 1970-01-01T00:00:00, 1970-01-01T00:00:01, 1970-01-01T00:00:00.999, 1, 1]",
		"+I[2, 1970-01-01T00:00:01, 1970-01-01T00:00:02, 1970-01-01T00:00:01.999, 1, 1]"}
	if got := j.rows(); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestRestoreSemiJoin(t *testing.T) {
	for _, mode := range []struct {
		name           string
		anti, residual bool
	}{{"semi", false, false}, {"anti", true, false}, {"semi-residual", false, true}, {"anti-residual", true, true}} {
		testRestore(t, func(r *rand.Rand) *restoreCase {
			spec := semiSpec(mode.anti, mode.residual)
			return &restoreCase{
				name: mode.name, newOp: registered(&spec), inputs: 2,
				keys: [2][]int{spec.LeftKeys, spec.RightKeys},
				steps: restoreSteps(r, validEvents(r, 400, 8), func(e joinEvent) int { return e.input },
					func(joinEvent) (int64, bool) { return 0, false }, buildBatch),
			}
		})
	}
}

// TestRestoreDistinctAgg: the distinct views and the value lists of
// LISTAGG, FIRST_VALUE and LAST_VALUE live in the backend and survive a
// restore, at the same and at another parallelism.
func TestRestoreDistinctAgg(t *testing.T) {
	testRestore(t, func(r *rand.Rand) *restoreCase {
		spec := dSpec(true)
		return &restoreCase{
			name: "group-agg-distinct", newOp: registered(&spec), inputs: 1, keys: [2][]int{spec.Keys},
			steps: restoreSteps(r, randomDEvents(r, 500, 8, true), func(dEvent) int { return 0 },
				func(dEvent) (int64, bool) { return 0, false }, func(_ int, evs []dEvent) types.Batch { return buildDBatch(evs) }),
		}
	})
	for _, w := range []jobgraph.WindowSpec{
		{Kind: jobgraph.WindowHop, SizeMs: 3000, StepMs: 1000},
		{Kind: jobgraph.WindowSession, GapMs: 700},
	} {
		testRestore(t, func(r *rand.Rand) *restoreCase {
			spec := distinctWindowSpec(w)
			build := func(_ int, evs []ijEvent) types.Batch {
				rows := make([]winRow, len(evs))
				for i, e := range evs {
					rows[i] = winRow{k: e.k, x: e.v % 5, ts: e.ts}
				}
				return winBatch(rows...)
			}
			return &restoreCase{
				name: "window-distinct-" + w.Kind, newOp: registered(&spec), inputs: 1, keys: [2][]int{spec.Keys},
				steps: restoreSteps(r, lateEvents(r, 500, 8), func(ijEvent) int { return 0 }, ijWatermark, build),
			}
		})
	}
}
