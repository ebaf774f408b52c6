package operators

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"go.uber.org/zap"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// tjEvent is an ijEvent with a row kind for the versioned (right) input.
type tjEvent struct {
	ijEvent
	kind types.RowKind
}

func tjL(k, v, ts int64) tjEvent { return tjEvent{ijEvent: ijL(k, v, ts)} }
func tjR(k, v, ts int64) tjEvent { return tjEvent{ijEvent: ijR(k, v, ts)} }
func tjWM(ts int64) tjEvent      { return tjEvent{ijEvent: ijWM(ts)} }
func tjKind(kind types.RowKind, k, v, ts int64) tjEvent {
	return tjEvent{ijEvent: ijR(k, v, ts), kind: kind}
}

// tjSpec joins on lk = rk, the right input versioned by rts.
func tjSpec(outerLeft bool, residual *expr.Expr) jobgraph.TemporalJoinSpec {
	s := ijSpec(0, 0, outerLeft, false)
	s.Residual = residual
	return jobgraph.TemporalJoinSpec{JoinSpec: s.JoinSpec, LeftTime: 2, RightTime: 2}
}

func openTemporalJoin(t *testing.T, spec jobgraph.TemporalJoinSpec, subtask, par int) *TemporalJoin {
	t.Helper()
	op, err := NewOperator(&spec)
	if err != nil {
		t.Fatal(err)
	}
	j := op.(*TemporalJoin)
	ctx := withKeyedState(t, &Context{Subtask: subtask, Parallelism: par, MaxParallelism: 128,
		KeyGroups: types.KeyGroupRangeFor(subtask, par, 128), Logger: zap.NewNop()}, 1<<16, "")
	if err := j.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

// tjBatch is a batch of evs (all of one input) with their row kinds.
func tjBatch(input int, evs []tjEvent) types.Batch {
	plain := make([]ijEvent, len(evs))
	kinds := make([]int8, len(evs))
	for i, e := range evs {
		plain[i], kinds[i] = e.ijEvent, int8(e.kind)
	}
	b := ijBatch(input, plain)
	defer b.Release()
	return types.NewBatch(b.Rec.Schema(), b.Rec.Columns()[:b.NumCols()], kinds)
}

// runTemporalJoin feeds evs in batches of up to batchSize rows of one
// input, routed by key to par subtasks, then MaxWatermark, and returns the
// emitted rows sorted (watermarks left out).
func runTemporalJoin(t *testing.T, spec jobgraph.TemporalJoinSpec, evs []tjEvent, batchSize, par int) []string {
	t.Helper()
	joins := make([]*TemporalJoin, par)
	for p := range joins {
		joins[p] = openTemporalJoin(t, spec, p, par)
	}
	out := &ijCollector{}
	evs = append(append([]tjEvent{}, evs...), tjWM(MaxWatermark))
	for start := 0; start < len(evs); {
		if evs[start].wm {
			for _, j := range joins {
				if err := j.ProcessWatermark(evs[start].ts, out); err != nil {
					t.Fatal(err)
				}
			}
			start++
			continue
		}
		end := start + 1
		for end < len(evs) && end-start < batchSize && !evs[end].wm && evs[end].input == evs[start].input {
			end++
		}
		in := evs[start].input
		per := make([][]tjEvent, par)
		for _, e := range evs[start:end] {
			h := make([]uint64, 1)
			b := ijBatch(in, []ijEvent{e.ijEvent})
			types.HashColumns([]arrow.Array{b.Column(0)}, h)
			b.Release()
			p := types.SubtaskForKeyGroup(types.KeyGroupForHash(h[0], 128), par, 128)
			per[p] = append(per[p], e)
		}
		for p, pe := range per {
			if len(pe) == 0 {
				continue
			}
			pb := tjBatch(in, pe)
			if err := joins[p].Process(in, pb, out); err != nil {
				t.Fatal(err)
			}
			pb.Release()
		}
		start = end
	}
	var rows []string
	for _, e := range out.events {
		if !strings.HasPrefix(e, "wm ") {
			rows = append(rows, e)
		}
	}
	sort.Strings(rows)
	return rows
}

// tjCheck runs evs with several batch sizes and parallelisms and compares
// the sorted rows with want.
func tjCheck(t *testing.T, spec jobgraph.TemporalJoinSpec, evs []tjEvent, want []string) {
	t.Helper()
	want = append([]string(nil), want...)
	sort.Strings(want)
	for _, bs := range []int{1, 3, 1024} {
		for _, par := range []int{1, 4} {
			got := runTemporalJoin(t, spec, evs, bs, par)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("batch %d, parallelism %d:\ngot  %v\nwant %v", bs, par, got, want)
			}
		}
	}
}

func TestTemporalJoinPicksVersion(t *testing.T) {
	evs := []tjEvent{
		tjR(1, 10, 1000), tjR(1, 20, 2000), tjR(1, 30, 3000), tjR(2, 99, 0),
		tjL(1, 1, 500),  // before any version: dropped
		tjL(1, 2, 1000), // exactly at a version
		tjL(1, 3, 2500),
		tjL(1, 4, 3000),
		tjL(1, 5, 9999),
		tjL(2, 6, 5),
		tjL(3, 7, 5), // no version of key 3
	}
	want := []string{
		"+I[1 2 1000 1 10 1000]", "+I[1 3 2500 1 20 2000]", "+I[1 4 3000 1 30 3000]",
		"+I[1 5 9999 1 30 3000]", "+I[2 6 5 2 99 0]",
	}
	tjCheck(t, tjSpec(false, nil), evs, want)
	// LEFT: the unmatched rows are padded.
	tjCheck(t, tjSpec(true, nil), evs, append(want, "+I[1 1 500 NULL NULL NULL]", "+I[3 7 5 NULL NULL NULL]"))
}

func TestTemporalJoinDeletesAndUpdates(t *testing.T) {
	evs := []tjEvent{
		tjR(1, 10, 1000),
		tjKind(types.UpdateBefore, 1, 10, 1000), // ignored
		tjKind(types.UpdateAfter, 1, 20, 2000),
		tjKind(types.Delete, 1, 20, 3000),
		tjR(1, 40, 4000),
		tjL(1, 1, 1500), tjL(1, 2, 2000), tjL(1, 3, 3500), tjL(1, 4, 4500),
	}
	tjCheck(t, tjSpec(true, nil), evs, []string{
		"+I[1 1 1500 1 10 1000]", "+I[1 2 2000 1 20 2000]", "+I[1 3 3500 NULL NULL NULL]", "+I[1 4 4500 1 40 4000]",
	})
}

func TestTemporalJoinResidual(t *testing.T) {
	// lv > rv: a failing version pads a LEFT row, never an older one.
	res := &expr.Expr{Op: expr.OpCall, Func: ">", Type: types.Boolean,
		Args: []*expr.Expr{expr.Column(1, types.BigInt), expr.Column(4, types.BigInt)}}
	evs := []tjEvent{tjR(1, 10, 1000), tjR(1, 50, 2000), tjL(1, 30, 1500), tjL(1, 30, 2500)}
	tjCheck(t, tjSpec(false, res), evs, []string{"+I[1 30 1500 1 10 1000]"})
	tjCheck(t, tjSpec(true, res), evs, []string{"+I[1 30 1500 1 10 1000]", "+I[1 30 2500 NULL NULL NULL]"})
}

func TestTemporalJoinWatermarkTiming(t *testing.T) {
	j := openTemporalJoin(t, tjSpec(false, nil), 0, 1)
	step := func(evs ...tjEvent) string {
		out := &ijCollector{}
		for _, e := range evs {
			if e.wm {
				if err := j.ProcessWatermark(e.ts, out); err != nil {
					t.Fatal(err)
				}
				continue
			}
			b := tjBatch(e.input, []tjEvent{e})
			err := j.Process(e.input, b, out)
			b.Release()
			if err != nil {
				t.Fatal(err)
			}
		}
		return out.take()
	}
	if got := step(tjR(1, 10, 1000), tjL(1, 1, 1500), tjL(1, 2, 1700), tjWM(1499)); got != "wm 1499" {
		t.Fatalf("before the left row's time: %q", got)
	}
	if got := step(tjWM(1500)); got != "+I[1 1 1500 1 10 1000] wm 1500" {
		t.Fatalf("at the left row's time: %q", got)
	}
	// A version that arrives late, but before the left row is due, is used.
	if got := step(tjR(1, 20, 1600), tjWM(1650)); got != "wm 1650" {
		t.Fatalf("late version: %q", got)
	}
	if got := step(tjWM(1700)); got != "+I[1 2 1700 1 20 1600] wm 1700" {
		t.Fatalf("after the late version: %q", got)
	}
	// Versions older than the latest at or before the watermark are gone.
	step(tjR(1, 30, 5000), tjWM(6000))
	kg, key := tjKey(t, j, 1)
	rows, err := j.right.state.Get(kg, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("%d versions left, want 1", len(rows))
	}
	// A left row behind the watermark joins at the next one.
	if got := step(tjL(1, 3, 5500), tjWM(6001)); got != "+I[1 3 5500 1 30 5000] wm 6001" {
		t.Fatalf("late left row: %q", got)
	}
}

// tjKey is the key group and encoded key of key k.
func tjKey(t *testing.T, j *TemporalJoin, k int64) (int, []byte) {
	b := ijBatch(1, []ijEvent{ijR(k, 0, 0)})
	defer b.Release()
	j.right.bind(b.Rec.Columns()[:b.NumCols()], 1)
	kg, key, _ := j.right.keyAt(0, j.maxPar)
	return kg, append([]byte(nil), key...)
}

func TestTemporalJoinAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	var evs []tjEvent
	for i := 0; i < 300; i++ {
		k, ts := r.Int64N(5), r.Int64N(20)*250
		if r.IntN(2) == 0 {
			evs = append(evs, tjL(k, int64(i), ts))
		} else {
			evs = append(evs, tjR(k, int64(i), ts))
		}
	}
	// Oracle: the last-arriving version with the greatest time <= t.
	var want []string
	for _, l := range evs {
		if l.input != 0 {
			continue
		}
		var best *tjEvent
		for i := range evs {
			v := &evs[i]
			if v.input == 1 && v.k == l.k && v.ts <= l.ts && (best == nil || v.ts >= best.ts) {
				best = v
			}
		}
		if best != nil {
			want = append(want, fmt.Sprintf("+I[%d %d %d %d %d %d]", l.k, l.v, l.ts, best.k, best.v, best.ts))
		}
	}
	tjCheck(t, tjSpec(false, nil), evs, want)
}
