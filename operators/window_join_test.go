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

// wjEvent is a row (k, v, window_end in ms; window_start is end - wjSize)
// of input 0 (left) or 1 (right), with a NULL k when null is set; or, with
// wm set, a watermark at end.
type wjEvent struct {
	input  int
	k, v   int64
	end    int64
	null   bool
	wm     bool
	isLate bool // set by wjLate
}

const wjSize = 10

var wjSchema = types.Schema{{Name: "k", Type: types.BigInt.WithNullable(true)}, {Name: "v", Type: types.BigInt},
	{Name: "window_start", Type: types.Timestamp(3)}, {Name: "window_end", Type: types.Timestamp(3)}}

func wjBatch(_ int, evs []wjEvent) types.Batch {
	mem := memory.DefaultAllocator
	kb, vb := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
	sb := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Nanosecond})
	eb := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Nanosecond})
	defer kb.Release()
	defer vb.Release()
	defer sb.Release()
	defer eb.Release()
	for _, e := range evs {
		if e.null {
			kb.AppendNull()
		} else {
			kb.Append(e.k)
		}
		vb.Append(e.v)
		sb.Append(arrow.Timestamp((e.end - wjSize) * 1e6))
		eb.Append(arrow.Timestamp(e.end * 1e6))
	}
	cols := []arrow.Array{kb.NewArray(), vb.NewArray(), sb.NewArray(), eb.NewArray()}
	for _, c := range cols {
		defer c.Release()
	}
	return types.NewInsertBatch(wjSchema.ArrowSchema(), cols, len(evs))
}

// wjSpec joins on k = k and the window columns, as joinType.
func wjSpec(joinType string, residual bool) jobgraph.WindowJoinSpec {
	out := append(append(types.Schema{}, wjSchema...), wjSchema...)
	for i := range out {
		left := i < len(wjSchema)
		if (left && (joinType == jobgraph.WindowJoinRight || joinType == jobgraph.WindowJoinFull)) ||
			(!left && (joinType == jobgraph.WindowJoinLeft || joinType == jobgraph.WindowJoinFull)) {
			out[i].Type = out[i].Type.WithNullable(true)
		}
	}
	s := jobgraph.WindowJoinSpec{LeftSchema: wjSchema, RightSchema: wjSchema, LeftKeys: []int{0}, RightKeys: []int{0},
		LeftWindowStart: 2, LeftWindowEnd: 3, RightWindowStart: 2, RightWindowEnd: 3,
		Window: jobgraph.WindowSpec{Kind: jobgraph.WindowTumble, SizeMs: wjSize}, JoinType: joinType, OutputSchema: out}
	if s.SemiOrAnti() {
		s.OutputSchema = wjSchema
	}
	if residual {
		// l.v < r.v
		s.Residual = &expr.Expr{Op: expr.OpCall, Func: "<", Type: types.Boolean,
			Args: []*expr.Expr{expr.Column(1, types.BigInt), expr.Column(5, types.BigInt)}}
	}
	return s
}

// wjText formats a row of one side as ijCollector does.
func wjText(e *wjEvent) string {
	if e == nil {
		return "NULL NULL NULL NULL"
	}
	k := fmt.Sprint(e.k)
	if e.null {
		k = "NULL"
	}
	return fmt.Sprintf("%s %d %d %d", k, e.v, e.end-wjSize, e.end)
}

func wjRow(l, r *wjEvent, semi bool) string {
	if semi {
		return "+I[" + wjText(l) + "]"
	}
	return "+I[" + wjText(l) + " " + wjText(r) + "]"
}

func openWindowJoin(t testing.TB, spec jobgraph.WindowJoinSpec, subtask, par int) *WindowJoin {
	return openWindowJoinCache(t, spec, subtask, par, 1<<16)
}

func openWindowJoinCache(t testing.TB, spec jobgraph.WindowJoinSpec, subtask, par int, cacheBytes int64) *WindowJoin {
	t.Helper()
	op, err := NewOperator(&spec)
	if err != nil {
		t.Fatal(err)
	}
	j := op.(*WindowJoin)
	ctx := withKeyedState(t, &Context{Subtask: subtask, Parallelism: par, MaxParallelism: 128,
		KeyGroups: types.KeyGroupRangeFor(subtask, par, 128), Logger: zap.NewNop()}, cacheBytes, "")
	if err := j.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

func wjStep(t *testing.T, j *WindowJoin, evs ...wjEvent) string {
	t.Helper()
	out := &ijCollector{}
	for _, e := range evs {
		if e.wm {
			if err := j.ProcessWatermark(e.end, out); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b := wjBatch(e.input, []wjEvent{e})
		err := j.Process(e.input, b, out)
		b.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	return out.take()
}

func wjL(k, v, end int64) wjEvent { return wjEvent{input: 0, k: k, v: v, end: end} }
func wjR(k, v, end int64) wjEvent { return wjEvent{input: 1, k: k, v: v, end: end} }
func wjWM(wm int64) wjEvent       { return wjEvent{end: wm, wm: true} }

func TestWindowJoinFiresAtWindowEndMinusOne(t *testing.T) {
	j := openWindowJoin(t, wjSpec(jobgraph.WindowJoinInner, false), 0, 1)
	if got := wjStep(t, j, wjL(1, 1, 10), wjR(1, 2, 10), wjR(1, 3, 20), wjWM(8)); got != "wm 8" {
		t.Fatalf("before the window's end: %q", got)
	}
	if got, want := wjStep(t, j, wjWM(9)), "+I[1 1 0 10 1 2 0 10] wm 9"; got != want {
		t.Fatalf("at window_end - 1: %q, want %q", got, want)
	}
	// The window's state is gone: a second firing emits nothing new.
	if got, want := wjStep(t, j, wjL(1, 4, 20), wjWM(100)), "+I[1 4 10 20 1 3 10 20] wm 100"; got != want {
		t.Fatalf("second window: %q, want %q", got, want)
	}
}

func TestWindowJoinDropsLateRows(t *testing.T) {
	j := openWindowJoin(t, wjSpec(jobgraph.WindowJoinFull, false), 0, 1)
	if got, want := wjStep(t, j, wjL(1, 1, 10), wjWM(9)), "+I[1 1 0 10 NULL NULL NULL NULL] wm 9"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	// Window [0, 10) has fired: its rows are late on either side; the next
	// window is not.
	if got, want := wjStep(t, j, wjL(1, 2, 10), wjR(1, 3, 10), wjR(1, 4, 10), wjR(2, 5, 20), wjWM(19)),
		"+I[NULL NULL NULL NULL 2 5 10 20] wm 19"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if l, r := j.LateRowsDropped(); l != 1 || r != 2 {
		t.Fatalf("late rows dropped: %d left, %d right; want 1 and 2", l, r)
	}
}

func TestWindowJoinPaddingFollowsResidual(t *testing.T) {
	// l.v < r.v: (1,5) matches only r (1,7); r (1,3) is padded.
	for _, c := range []struct {
		joinType, want string
	}{
		{jobgraph.WindowJoinInner, "+I[1 5 0 10 1 7 0 10]"},
		{jobgraph.WindowJoinLeft, "+I[1 5 0 10 1 7 0 10] +I[1 9 0 10 NULL NULL NULL NULL]"},
		{jobgraph.WindowJoinRight, "+I[1 5 0 10 1 7 0 10] +I[NULL NULL NULL NULL 1 3 0 10]"},
		{jobgraph.WindowJoinSemi, "+I[1 5 0 10]"},
		{jobgraph.WindowJoinAnti, "+I[1 9 0 10]"},
	} {
		j := openWindowJoin(t, wjSpec(c.joinType, true), 0, 1)
		got := wjStep(t, j, wjL(1, 5, 10), wjL(1, 9, 10), wjR(1, 3, 10), wjR(1, 7, 10), wjWM(MaxWatermark))
		got = strings.TrimSuffix(got, fmt.Sprintf(" wm %d", MaxWatermark))
		if !sameRows(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.joinType, got, c.want)
		}
	}
}

func TestWindowJoinNullKeysNeverMatch(t *testing.T) {
	l, r := wjL(0, 1, 10), wjR(0, 2, 10)
	l.null, r.null = true, true
	j := openWindowJoin(t, wjSpec(jobgraph.WindowJoinFull, false), 0, 1)
	got := wjStep(t, j, l, r, wjWM(9))
	if want := "+I[NULL 1 0 10 NULL NULL NULL NULL] +I[NULL NULL NULL NULL NULL 2 0 10] wm 9"; !sameRows(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	j = openWindowJoin(t, wjSpec(jobgraph.WindowJoinAnti, false), 0, 1)
	if got, want := wjStep(t, j, l, r, wjWM(9)), "+I[NULL 1 0 10] wm 9"; got != want {
		t.Fatalf("anti: got %q, want %q", got, want)
	}
}

func TestWindowJoinRefusesUpdates(t *testing.T) {
	j := openWindowJoin(t, wjSpec(jobgraph.WindowJoinInner, false), 0, 1)
	b := wjBatch(0, []wjEvent{wjL(1, 1, 10)})
	defer b.Release()
	b.Kinds()[0] = int8(types.Delete)
	if err := j.Process(0, b, &ijCollector{}); err == nil || !strings.Contains(err.Error(), "insert-only") {
		t.Fatalf("err = %v", err)
	}
}

// sameRows compares space-joined "+I[...]" lists as multisets.
func sameRows(a, b string) bool {
	split := func(s string) map[string]int {
		m := map[string]int{}
		for _, r := range strings.SplitAfter(s, "]") {
			if r = strings.TrimSpace(r); r != "" {
				m[r]++
			}
		}
		return m
	}
	ma, mb := split(a), split(b)
	if len(ma) != len(mb) {
		return false
	}
	for k, v := range ma {
		if mb[k] != v {
			return false
		}
	}
	return true
}

// wjRandom makes rows in windows ending at multiples of wjSize around a
// rising watermark, some of them late (their window has fired), a few
// with NULL keys and duplicates, with a watermark every few rows. It marks
// the late rows: with watermarks broadcast at the same point of every
// subtask's input, lateness is the same whatever the routing.
func wjRandom(r *rand.Rand, n, keys int) []wjEvent {
	evs := []wjEvent{wjWM(0)}
	wm := int64(0)
	for i := 0; i < n; i++ {
		if r.IntN(8) == 0 {
			wm += r.Int64N(15)
			evs = append(evs, wjWM(wm))
		}
		end := (wm/wjSize + 1 + r.Int64N(3)) * wjSize
		if r.IntN(7) == 0 {
			end -= 3 * wjSize
		}
		e := wjEvent{input: r.IntN(2), k: r.Int64N(int64(keys)), v: r.Int64N(6), end: end, null: r.IntN(25) == 0}
		e.isLate = fired(end, wm)
		evs = append(evs, e)
		if r.IntN(20) == 0 {
			evs = append(evs, e) // a duplicate row
		}
	}
	return append(evs, wjWM(MaxWatermark))
}

// wjOracle joins the rows that are not late, window by window and key by
// key, as a batch engine would.
func wjOracle(evs []wjEvent, spec jobgraph.WindowJoinSpec, residual func(l, r wjEvent) bool) []string {
	var ls, rs []wjEvent
	for _, e := range evs {
		switch {
		case e.wm || e.isLate:
		case e.input == 0:
			ls = append(ls, e)
		default:
			rs = append(rs, e)
		}
	}
	match := func(l, r wjEvent) bool {
		return !l.null && !r.null && l.k == r.k && l.end == r.end && residual(l, r)
	}
	var out []string
	semi := spec.SemiOrAnti()
	rMatched := make([]bool, len(rs))
	for _, l := range ls {
		matched := false
		for ri, r := range rs {
			if match(l, r) {
				if !semi {
					out = append(out, wjRow(&l, &r, false))
				}
				matched, rMatched[ri] = true, true
			}
		}
		switch {
		case spec.JoinType == jobgraph.WindowJoinSemi && matched, spec.JoinType == jobgraph.WindowJoinAnti && !matched:
			out = append(out, wjRow(&l, nil, true))
		case !matched && (spec.JoinType == jobgraph.WindowJoinLeft || spec.JoinType == jobgraph.WindowJoinFull):
			out = append(out, wjRow(&l, nil, false))
		}
	}
	if spec.JoinType == jobgraph.WindowJoinRight || spec.JoinType == jobgraph.WindowJoinFull {
		for ri, r := range rs {
			if !rMatched[ri] {
				out = append(out, wjRow(nil, &r, false))
			}
		}
	}
	return out
}

// runWindowJoin routes rows by key to par subtasks in batches of up to
// batchSize rows of one input, and broadcasts watermarks. It returns the
// rows emitted and the late rows dropped.
func runWindowJoin(t testing.TB, spec jobgraph.WindowJoinSpec, evs []wjEvent, batchSize, par int) ([]string, int64, int) {
	t.Helper()
	joins := make([]*WindowJoin, par)
	for p := range joins {
		joins[p] = openWindowJoin(t, spec, p, par)
	}
	out := &ijCollector{}
	for start := 0; start < len(evs); {
		if evs[start].wm {
			for _, j := range joins {
				if err := j.ProcessWatermark(evs[start].end, out); err != nil {
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
		b := wjBatch(in, evs[start:end])
		h := make([]uint64, b.NumRows())
		types.HashColumns([]arrow.Array{b.Column(0)}, h)
		b.Release()
		per := make([][]wjEvent, par)
		for i, e := range evs[start:end] {
			p := types.SubtaskForKeyGroup(types.KeyGroupForHash(h[i], 128), par, 128)
			per[p] = append(per[p], e)
		}
		for p, pe := range per {
			if len(pe) == 0 {
				continue
			}
			pb := wjBatch(in, pe)
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
	var late int64
	for _, j := range joins {
		l, r := j.LateRowsDropped()
		late += l + r
	}
	return rows, late, out.maxRows
}

func TestWindowJoinAgainstOracle(t *testing.T) {
	evs := wjRandom(rand.New(rand.NewPCG(7, 3)), 1500, 5)
	wantLate := int64(0)
	for _, e := range evs {
		if e.isLate {
			wantLate++
		}
	}
	if wantLate == 0 {
		t.Fatal("the input has no late rows")
	}
	for _, jt := range []string{jobgraph.WindowJoinInner, jobgraph.WindowJoinLeft, jobgraph.WindowJoinRight,
		jobgraph.WindowJoinFull, jobgraph.WindowJoinSemi, jobgraph.WindowJoinAnti} {
		for _, residual := range []bool{false, true} {
			spec := wjSpec(jt, residual)
			res := func(l, r wjEvent) bool { return !residual || l.v < r.v }
			want := wjOracle(evs, spec, res)
			for _, bs := range []int{1, 7, 4096} {
				for _, par := range []int{1, 3} {
					t.Run(fmt.Sprintf("%s/residual=%v/batch=%d/par=%d", jt, residual, bs, par), func(t *testing.T) {
						got, late, maxRows := runWindowJoin(t, spec, evs, bs, par)
						sameMultiset(t, got, want)
						if late != wantLate {
							t.Errorf("%d late rows dropped, want %d", late, wantLate)
						}
						if maxRows > joinBatchRows {
							t.Errorf("a batch of %d rows", maxRows)
						}
					})
				}
			}
		}
	}
}

// TestWindowJoinBigWindow joins one key's window of more pairs than a
// batch holds, with a residual: the candidates are evaluated in several
// batches and padding waits for all of them.
func TestWindowJoinBigWindow(t *testing.T) {
	var evs []wjEvent
	for i := int64(0); i < 100; i++ {
		evs = append(evs, wjL(1, i, 10), wjR(1, i, 10))
	}
	evs = append(evs, wjWM(MaxWatermark))
	for _, jt := range []string{jobgraph.WindowJoinFull, jobgraph.WindowJoinAnti} {
		spec := wjSpec(jt, true)
		spec.Residual.Func = ">" // l.v > r.v: left 0 and right 99 match nothing
		want := wjOracle(evs, spec, func(l, r wjEvent) bool { return l.v > r.v })
		got, _, maxRows := runWindowJoin(t, spec, evs, 50, 1)
		sameMultiset(t, got, want)
		if maxRows > joinBatchRows {
			t.Errorf("a batch of %d rows", maxRows)
		}
	}
}

func TestRestoreWindowJoin(t *testing.T) {
	for _, c := range []struct {
		joinType string
		residual bool
	}{{jobgraph.WindowJoinInner, false}, {jobgraph.WindowJoinFull, true}, {jobgraph.WindowJoinAnti, true}} {
		testRestore(t, func(r *rand.Rand) *restoreCase {
			spec := wjSpec(c.joinType, c.residual)
			return &restoreCase{
				name: "window-join-" + strings.ToLower(c.joinType), newOp: registered(&spec), inputs: 2,
				keys: [2][]int{{0}, {0}},
				steps: restoreSteps(r, wjRandom(r, 400, 6)[:400], func(e wjEvent) int { return e.input },
					func(e wjEvent) (int64, bool) { return e.end, e.wm }, wjBatch),
			}
		})
	}
}

// BenchmarkWindowJoin buffers 4096 rows per side into a tumbling window,
// 1000 keys with about 4 rows each per side, then fires the window (16
// pairs per key): rows/s counts input rows, state-B/key the cached state
// of a key's open window (its 8 rows, 4 per side, and its timer).
func BenchmarkWindowJoin(b *testing.B) {
	for _, jt := range []string{jobgraph.WindowJoinInner, jobgraph.WindowJoinFull} {
		b.Run(strings.ToLower(jt), func(b *testing.B) {
			j := openWindowJoinCache(b, wjSpec(jt, false), 0, 1, 64<<20)
			const keys, perBatch = 1000, 4096
			out := &countCollector{}
			rows, perKey := 0, 0.0
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				var in [2]types.Batch
				end := int64(i+1) * wjSize
				for s := range in {
					evs := make([]wjEvent, perBatch)
					for k := range evs {
						evs[k] = wjEvent{input: s, k: int64(k % keys), v: int64(k), end: end}
					}
					in[s] = wjBatch(s, evs)
				}
				b.StartTimer()
				for s := range in {
					if err := j.Process(s, in[s], out); err != nil {
						b.Fatal(err)
					}
				}
				if i == 0 {
					// The open window's state: 8 rows per key, in the cache.
					perKey = float64(j.StateStats().CacheBytes) / keys
				}
				if err := j.ProcessWatermark(end-1, out); err != nil {
					b.Fatal(err)
				}
				rows += 2 * perBatch
				in[0].Release()
				in[1].Release()
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(perKey, "state-B/key")
		})
	}
}
