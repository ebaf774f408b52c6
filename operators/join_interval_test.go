package operators

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/zap"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// ijEvent is a row (k, v, ts in ms) of input 0 (left) or 1 (right), or,
// with wm set, a watermark.
type ijEvent struct {
	input    int
	k, v, ts int64
	wm       bool
}

var (
	ijLeft  = types.Schema{{Name: "lk", Type: types.BigInt}, {Name: "lv", Type: types.BigInt}, {Name: "lts", Type: types.Timestamp(3)}}
	ijRight = types.Schema{{Name: "rk", Type: types.BigInt}, {Name: "rv", Type: types.BigInt}, {Name: "rts", Type: types.Timestamp(3)}}
)

func ijBatch(input int, evs []ijEvent) types.Batch {
	mem := memory.DefaultAllocator
	kb, vb := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
	tb := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Nanosecond})
	defer kb.Release()
	defer vb.Release()
	defer tb.Release()
	for _, e := range evs {
		kb.Append(e.k)
		vb.Append(e.v)
		tb.Append(arrow.Timestamp(e.ts * 1e6))
	}
	cols := []arrow.Array{kb.NewArray(), vb.NewArray(), tb.NewArray()}
	for _, c := range cols {
		defer c.Release()
	}
	s := ijLeft
	if input == 1 {
		s = ijRight
	}
	return types.NewInsertBatch(s.ArrowSchema(), cols, len(evs))
}

// ijSpec joins on lk = rk with lower <= lts - rts <= upper.
func ijSpec(lower, upper int64, outerLeft, outerRight bool) jobgraph.IntervalJoinSpec {
	out := append(append(types.Schema{}, ijLeft...), ijRight...)
	for i := range out {
		if (i < 3 && outerRight) || (i >= 3 && outerLeft) {
			out[i].Type = out[i].Type.WithNullable(true)
		}
	}
	return jobgraph.IntervalJoinSpec{
		JoinSpec: jobgraph.JoinSpec{LeftSchema: ijLeft, RightSchema: ijRight, LeftKeys: []int{0}, RightKeys: []int{0},
			OutputSchema: out, OuterLeft: outerLeft, OuterRight: outerRight},
		LeftTime: 2, RightTime: 2, LowerMs: lower, UpperMs: upper,
	}
}

// ijRow formats a joined row as the collector does: "+I[lk lv lts rk rv rts]"
// with NULL for a padded side.
func ijRow(l, r *ijEvent) string {
	side := func(e *ijEvent) string {
		if e == nil {
			return "NULL NULL NULL"
		}
		return fmt.Sprintf("%d %d %d", e.k, e.v, e.ts)
	}
	return "+I[" + side(l) + " " + side(r) + "]"
}

// ijCollector formats rows as ijRow does and watermarks as "wm N".
type ijCollector struct {
	events  []string
	maxRows int
}

func (c *ijCollector) Emit(b types.Batch) error {
	if b.NumRows() > c.maxRows {
		c.maxRows = b.NumRows()
	}
	for i := 0; i < b.NumRows(); i++ {
		var parts []string
		for j := 0; j < b.NumCols(); j++ {
			col := b.Column(j)
			switch {
			case col.IsNull(i):
				parts = append(parts, "NULL")
			case col.DataType().ID() == arrow.TIMESTAMP:
				parts = append(parts, fmt.Sprint(int64(col.(*array.Timestamp).Value(i))/1e6))
			default:
				parts = append(parts, fmt.Sprint(col.(*array.Int64).Value(i)))
			}
		}
		c.events = append(c.events, types.RowKind(b.Kind(i)).String()+"["+strings.Join(parts, " ")+"]")
	}
	return nil
}

func (c *ijCollector) EmitWatermark(wm int64) error {
	c.events = append(c.events, fmt.Sprintf("wm %d", wm))
	return nil
}

func (c *ijCollector) take() string {
	s := strings.Join(c.events, " ")
	c.events = nil
	return s
}

func openIntervalJoin(t *testing.T, spec jobgraph.IntervalJoinSpec, subtask, par int) *IntervalJoin {
	t.Helper()
	op, err := NewOperator(&spec)
	if err != nil {
		t.Fatal(err)
	}
	j := op.(*IntervalJoin)
	ctx := withKeyedState(t, &Context{Subtask: subtask, Parallelism: par, MaxParallelism: 128,
		KeyGroups: types.KeyGroupRangeFor(subtask, par, 128), Logger: zap.NewNop()}, 1<<16, "")
	if err := j.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

// step feeds events to j one by one (rows as one-row batches) and returns
// what it emitted.
func ijStep(t *testing.T, j *IntervalJoin, evs ...ijEvent) string {
	t.Helper()
	out := &ijCollector{}
	for _, e := range evs {
		if e.wm {
			if err := j.ProcessWatermark(e.ts, out); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b := ijBatch(e.input, []ijEvent{e})
		err := j.Process(e.input, b, out)
		b.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	return out.take()
}

func ijL(k, v, ts int64) ijEvent { return ijEvent{input: 0, k: k, v: v, ts: ts} }
func ijR(k, v, ts int64) ijEvent { return ijEvent{input: 1, k: k, v: v, ts: ts} }
func ijWM(ts int64) ijEvent      { return ijEvent{ts: ts, wm: true} }

func TestIntervalJoinBoundsInclusive(t *testing.T) {
	// lts - rts in [-1000, 2000].
	j := openIntervalJoin(t, ijSpec(-1000, 2000, false, false), 0, 1)
	if got := ijStep(t, j, ijR(1, 0, 10_000)); got != "" {
		t.Fatalf("right row alone emitted %q", got)
	}
	for _, c := range []struct {
		ts   int64
		want bool
	}{{8_999, false}, {9_000, true}, {10_000, true}, {12_000, true}, {12_001, false}} {
		got := ijStep(t, j, ijL(1, c.ts, c.ts))
		want := ""
		if c.want {
			want = fmt.Sprintf("+I[1 %d %d 1 0 10000]", c.ts, c.ts)
		}
		if got != want {
			t.Errorf("left at %d: got %q, want %q", c.ts, got, want)
		}
	}
	// Another key never matches.
	if got := ijStep(t, j, ijL(2, 0, 10_000)); got != "" {
		t.Errorf("other key: %q", got)
	}
}

func TestIntervalJoinExpiryAndLeftPadding(t *testing.T) {
	// LEFT join, lts - rts in [0, 3000]: a left row at t matches right rows
	// in [t-3000, t] and expires once the watermark reaches t; buckets are
	// 1500 ms wide, so it is padded once the watermark passes its bucket.
	j := openIntervalJoin(t, ijSpec(0, 3000, true, false), 0, 1)
	if got := ijStep(t, j, ijL(1, 1, 10_000), ijL(1, 2, 20_000), ijR(1, 0, 19_000)); got != "+I[1 2 20000 1 0 19000]" {
		t.Fatalf("got %q", got)
	}
	// Watermark 9999: nothing has expired.
	if got := ijStep(t, j, ijWM(9_999)); got != "wm 9999" {
		t.Fatalf("got %q", got)
	}
	// 10000's bucket is [9000, 10500): it fires at 10499.
	if got := ijStep(t, j, ijWM(10_498)); got != "wm 10498" {
		t.Fatalf("got %q", got)
	}
	if got := ijStep(t, j, ijWM(10_499)); got != "+I[1 1 10000 NULL NULL NULL] wm 10499" {
		t.Fatalf("got %q", got)
	}
	// The matched row is not padded; the right row is not outer.
	if got := ijStep(t, j, ijWM(MaxWatermark-1)); got != fmt.Sprintf("wm %d", MaxWatermark-1) {
		t.Fatalf("got %q", got)
	}
	// State is empty: a late right row matches nothing.
	if got := ijStep(t, j, ijR(1, 5, 20_000)); got != "" {
		t.Fatalf("got %q", got)
	}
}

func TestIntervalJoinRightAndFullPadding(t *testing.T) {
	j := openIntervalJoin(t, ijSpec(-1000, 1000, true, true), 0, 1)
	got := ijStep(t, j, ijL(1, 1, 5_000), ijR(1, 2, 5_500), ijR(2, 3, 5_000), ijL(3, 4, 7_000), ijWM(MaxWatermark))
	want := "+I[1 1 5000 1 2 5500] +I[NULL NULL NULL 2 3 5000] +I[3 4 7000 NULL NULL NULL] " + fmt.Sprintf("wm %d", MaxWatermark)
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestIntervalJoinLateRows(t *testing.T) {
	// A row that arrives expired still joins what is stored; an outer one
	// that matches nothing is padded at once.
	j := openIntervalJoin(t, ijSpec(0, 10_000, true, false), 0, 1)
	ijStep(t, j, ijR(1, 0, 50_000), ijWM(30_000))
	if got := ijStep(t, j, ijL(1, 1, 25_000)); got != "+I[1 1 25000 NULL NULL NULL]" {
		t.Fatalf("got %q", got)
	}
	if got := ijStep(t, j, ijL(2, 2, 20_000)); got != "+I[2 2 20000 NULL NULL NULL]" {
		t.Fatalf("got %q", got)
	}
	if got := ijStep(t, j, ijL(1, 3, 55_000)); got != "+I[1 3 55000 1 0 50000]" {
		t.Fatalf("got %q", got)
	}
}

func TestIntervalJoinResidualDecidesMatch(t *testing.T) {
	// lv < rv: a pair in time but failing the residual is not a match, so
	// the left row is padded at expiry.
	spec := ijSpec(-1000, 1000, true, false)
	spec.Residual = &expr.Expr{Op: expr.OpCall, Func: "<", Type: types.Boolean,
		Args: []*expr.Expr{expr.Column(1, types.BigInt), expr.Column(4, types.BigInt)}}
	j := openIntervalJoin(t, spec, 0, 1)
	got := ijStep(t, j, ijL(1, 5, 1_000), ijR(1, 5, 1_000), ijL(1, 4, 1_000), ijWM(MaxWatermark))
	want := "+I[1 4 1000 1 5 1000] +I[1 5 1000 NULL NULL NULL] " + fmt.Sprintf("wm %d", MaxWatermark)
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestIntervalJoinRefusesUpdates(t *testing.T) {
	j := openIntervalJoin(t, ijSpec(0, 1, false, false), 0, 1)
	b := ijBatch(0, []ijEvent{ijL(1, 1, 1)})
	defer b.Release()
	b.Kinds()[0] = int8(types.UpdateAfter)
	if err := j.Process(0, b, &ijCollector{}); err == nil || !strings.Contains(err.Error(), "insert-only") {
		t.Fatalf("err = %v", err)
	}
}

// ijOracle is the batch result of the join over every row (none late).
func ijOracle(evs []ijEvent, spec jobgraph.IntervalJoinSpec, residual func(l, r ijEvent) bool) []string {
	var out []string
	var ls, rs []ijEvent
	for _, e := range evs {
		if e.wm {
			continue
		}
		if e.input == 0 {
			ls = append(ls, e)
		} else {
			rs = append(rs, e)
		}
	}
	rMatched := make([]bool, len(rs))
	for _, l := range ls {
		matched := false
		for ri, r := range rs {
			d := l.ts - r.ts
			if l.k == r.k && d >= spec.LowerMs && d <= spec.UpperMs && residual(l, r) {
				out = append(out, ijRow(&l, &r))
				matched, rMatched[ri] = true, true
			}
		}
		if !matched && spec.OuterLeft {
			out = append(out, ijRow(&l, nil))
		}
	}
	for ri, r := range rs {
		if !rMatched[ri] && spec.OuterRight {
			out = append(out, ijRow(nil, &r))
		}
	}
	return out
}

// ijRandom makes rows whose times trail a rising watermark by at most 3 s,
// never at or below it, with a watermark every few rows.
func ijRandom(r *rand.Rand, n, keys int) []ijEvent {
	var evs []ijEvent
	wm := int64(0)
	for i := 0; i < n; i++ {
		if r.IntN(10) == 0 {
			wm += r.Int64N(1500)
			evs = append(evs, ijWM(wm))
		}
		e := ijEvent{input: r.IntN(2), k: r.Int64N(int64(keys)), v: r.Int64N(10), ts: wm + 1 + r.Int64N(3000)}
		evs = append(evs, e)
	}
	return append(evs, ijWM(MaxWatermark))
}

// runIntervalJoin routes rows by key to par subtasks in batches of up to
// batchSize rows of one input, and broadcasts watermarks.
func runIntervalJoin(t *testing.T, spec jobgraph.IntervalJoinSpec, evs []ijEvent, batchSize, par int) *ijCollector {
	t.Helper()
	joins := make([]*IntervalJoin, par)
	for p := range joins {
		joins[p] = openIntervalJoin(t, spec, p, par)
	}
	out := &ijCollector{}
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
		b := ijBatch(in, evs[start:end])
		h := make([]uint64, b.NumRows())
		types.HashColumns([]arrow.Array{b.Column(0)}, h)
		b.Release()
		per := make([][]ijEvent, par)
		for i, e := range evs[start:end] {
			p := types.SubtaskForKeyGroup(types.KeyGroupForHash(h[i], 128), par, 128)
			per[p] = append(per[p], e)
		}
		for p, pe := range per {
			if len(pe) == 0 {
				continue
			}
			pb := ijBatch(in, pe)
			if err := joins[p].Process(in, pb, out); err != nil {
				t.Fatal(err)
			}
			pb.Release()
		}
		start = end
	}
	return out
}

func TestIntervalJoinAgainstOracle(t *testing.T) {
	lessV := &expr.Expr{Op: expr.OpCall, Func: "<", Type: types.Boolean,
		Args: []*expr.Expr{expr.Column(1, types.BigInt), expr.Column(4, types.BigInt)}}
	evs := ijRandom(rand.New(rand.NewPCG(4, 2)), 1500, 6)
	for _, c := range []struct {
		name         string
		lower, upper int64
		outerL       bool
		outerR       bool
		residual     bool
	}{
		{"inner", -500, 1000, false, false, false},
		{"left", 0, 2000, true, false, false},
		{"right-residual", -2000, 0, false, true, true},
		{"full-residual", -300, 300, true, true, true},
	} {
		spec := ijSpec(c.lower, c.upper, c.outerL, c.outerR)
		res := func(l, r ijEvent) bool { return true }
		if c.residual {
			spec.Residual = lessV
			res = func(l, r ijEvent) bool { return l.v < r.v }
		}
		want := ijOracle(evs, spec, res)
		for _, bs := range []int{1, 7, 4096} {
			for _, par := range []int{1, 4} {
				t.Run(fmt.Sprintf("%s/batch=%d/par=%d", c.name, bs, par), func(t *testing.T) {
					got := runIntervalJoin(t, spec, evs, bs, par)
					var rows []string
					for _, e := range got.events {
						if !strings.HasPrefix(e, "wm ") {
							rows = append(rows, e)
						}
					}
					sameMultiset(t, rows, want)
					if got.maxRows > joinBatchRows {
						t.Errorf("a batch of %d rows", got.maxRows)
					}
				})
			}
		}
	}
}
