package operators

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/zap"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// Test schemas: the key is the first left column and the second right
// column, so key positions differ between the sides.
var (
	joinLeft  = types.Schema{{Name: "lk", Type: types.BigInt}, {Name: "lv", Type: types.Int}, {Name: "ls", Type: types.String}}
	joinRight = types.Schema{{Name: "rv", Type: types.Int}, {Name: "rk", Type: types.BigInt}}
)

// jrow is one input row: key (nil = NULL), an int and, on the left, a string.
type jrow struct {
	key *int64
	v   int32
	s   string
}

type joinEvent struct {
	input int
	kind  types.RowKind
	row   jrow
}

func (r jrow) leftStrs() []string  { return []string{keyStr(r.key), fmt.Sprint(r.v), r.s} }
func (r jrow) rightStrs() []string { return []string{fmt.Sprint(r.v), keyStr(r.key)} }

func keyStr(k *int64) string {
	if k == nil {
		return array.NullValueStr
	}
	return fmt.Sprint(*k)
}

// buildBatch makes a batch of one input's rows.
func buildBatch(input int, evs []joinEvent) types.Batch {
	s := joinLeft
	if input == 1 {
		s = joinRight
	}
	mem := memory.DefaultAllocator
	kb := array.NewInt64Builder(mem)
	vb := array.NewInt32Builder(mem)
	sb := array.NewStringBuilder(mem)
	kinds := make([]int8, len(evs))
	for i, e := range evs {
		if e.row.key == nil {
			kb.AppendNull()
		} else {
			kb.Append(*e.row.key)
		}
		vb.Append(e.row.v)
		sb.Append(e.row.s)
		kinds[i] = int8(e.kind)
	}
	k, v, st := kb.NewArray(), vb.NewArray(), sb.NewArray()
	defer k.Release()
	defer v.Release()
	defer st.Release()
	var cols []arrow.Array
	if input == 0 {
		cols = []arrow.Array{k, v, st}
	} else {
		cols = []arrow.Array{v, k}
	}
	return types.NewBatch(s.ArrowSchema(), cols, kinds)
}

// collector keeps what a join emits, as strings "+I[a, b, ...]".
type collector struct {
	rows    []string
	batches int
	maxRows int
}

func (c *collector) Emit(b types.Batch) error {
	c.batches++
	if b.NumRows() > c.maxRows {
		c.maxRows = b.NumRows()
	}
	for i := 0; i < b.NumRows(); i++ {
		vals := make([]string, b.NumCols())
		for j := range vals {
			vals[j] = b.Column(j).ValueStr(i)
		}
		c.rows = append(c.rows, b.Kind(i).String()+"["+strings.Join(vals, ", ")+"]")
	}
	return nil
}

// oracleJoin is the nested-loop reference: lists of rows per side, and for
// each event every matching row of the other side, row by row.
func oracleJoin(evs []joinEvent, residual func(l, r jrow) bool) []string {
	var sides [2][]jrow
	var out []string
	for _, e := range evs {
		own := &sides[e.input]
		if e.kind.IsAccumulate() {
			*own = append(*own, e.row)
		} else {
			for i, r := range *own {
				if r == e.row || (r.key != nil && e.row.key != nil && *r.key == *e.row.key && r.v == e.row.v && r.s == e.row.s) {
					*own = append((*own)[:i], (*own)[i+1:]...)
					break
				}
			}
		}
		if e.row.key == nil {
			continue
		}
		for _, o := range sides[1-e.input] {
			if o.key == nil || *o.key != *e.row.key {
				continue
			}
			l, r := e.row, o
			if e.input == 1 {
				l, r = o, e.row
			}
			if residual != nil && !residual(l, r) {
				continue
			}
			out = append(out, e.kind.String()+"["+strings.Join(append(l.leftStrs(), r.rightStrs()...), ", ")+"]")
		}
	}
	return out
}

// randomEvents makes n events over few keys, with NULL keys, duplicate rows
// and retractions of rows that exist (and sometimes of rows that do not).
func randomEvents(r *rand.Rand, n, keys int) []joinEvent {
	var live [2][]jrow
	var evs []joinEvent
	for len(evs) < n {
		in := r.IntN(2)
		if len(live[in]) > 0 && r.IntN(3) == 0 {
			i := r.IntN(len(live[in]))
			row := live[in][i]
			live[in] = append(live[in][:i], live[in][i+1:]...)
			kind := types.Delete
			if r.IntN(2) == 0 {
				kind = types.UpdateBefore
			}
			evs = append(evs, joinEvent{in, kind, row})
			continue
		}
		var row jrow
		if r.IntN(10) > 0 {
			k := int64(r.IntN(keys))
			row.key = &k
		}
		row.v = int32(r.IntN(4))
		if in == 0 {
			row.s = []string{"a", "bb", ""}[r.IntN(3)]
		}
		kind := types.Insert
		if r.IntN(4) == 0 {
			kind = types.UpdateAfter
		}
		if r.IntN(20) == 0 {
			kind = types.Delete // a retraction of a row that may not exist
		} else {
			live[in] = append(live[in], row)
		}
		evs = append(evs, joinEvent{in, kind, row})
	}
	return evs
}

// runJoin feeds events to `parallelism` join subtasks, routing rows by key
// group as a hash shuffle does, in batches of at most batchSize rows.
func runJoin(t *testing.T, spec jobgraph.JoinSpec, evs []joinEvent, batchSize, parallelism int, cacheBytes int64) *collector {
	t.Helper()
	return runTwoInputs(t, &spec, evs, batchSize, parallelism, cacheBytes)
}

// runTwoInputs is runJoin for any operator of two inputs keyed on the
// events' key (column 0 of the left input, column 1 of the right).
func runTwoInputs(t *testing.T, spec jobgraph.Spec, evs []joinEvent, batchSize, parallelism int, cacheBytes int64) *collector {
	t.Helper()
	const maxPar = 128
	joins := make([]Operator, parallelism)
	for p := range joins {
		op, err := NewOperator(spec)
		if err != nil {
			t.Fatal(err)
		}
		ctx := withKeyedState(t, &Context{Subtask: p, Parallelism: parallelism, MaxParallelism: maxPar,
			KeyGroups: types.KeyGroupRangeFor(p, parallelism, maxPar), Logger: zap.NewNop()}, cacheBytes, "")
		if err := op.Open(ctx); err != nil {
			t.Fatal(err)
		}
		joins[p] = op
	}
	out := &collector{}
	for start := 0; start < len(evs); {
		end := start + 1
		for end < len(evs) && end-start < batchSize && evs[end].input == evs[start].input {
			end++
		}
		in := evs[start].input
		// Route each row to the subtask owning its key group.
		per := make([][]joinEvent, parallelism)
		b := buildBatch(in, evs[start:end])
		keyCol := 0
		if in == 1 {
			keyCol = 1
		}
		h := make([]uint64, b.NumRows())
		types.HashColumns([]arrow.Array{b.Column(keyCol)}, h)
		b.Release()
		for i, e := range evs[start:end] {
			p := types.SubtaskForKeyGroup(types.KeyGroupForHash(h[i], maxPar), parallelism, maxPar)
			per[p] = append(per[p], e)
		}
		for p, pe := range per {
			if len(pe) == 0 {
				continue
			}
			pb := buildBatch(in, pe)
			if err := joins[p].Process(in, pb, out); err != nil {
				t.Fatal(err)
			}
			pb.Release()
		}
		start = end
	}
	for _, j := range joins {
		for in := 0; in < 2; in++ {
			if err := j.EndInput(in, out); err != nil {
				t.Fatal(err)
			}
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func sameMultiset(t *testing.T, got, want []string) {
	t.Helper()
	g := append([]string(nil), got...)
	w := append([]string(nil), want...)
	sort.Strings(g)
	sort.Strings(w)
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Fatalf("join output differs from the oracle: got %d rows, want %d\ngot:  %v\nwant: %v", len(g), len(w), firstN(g), firstN(w))
	}
}

func firstN(s []string) []string {
	if len(s) > 20 {
		return s[:20]
	}
	return s
}

func baseSpec() jobgraph.JoinSpec {
	return jobgraph.JoinSpec{LeftSchema: joinLeft, RightSchema: joinRight, LeftKeys: []int{0}, RightKeys: []int{1}}
}

func TestInnerJoinAgainstOracle(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		evs := randomEvents(rand.New(rand.NewPCG(seed, 7)), 1500, 12)
		want := oracleJoin(evs, nil)
		for _, bs := range []int{1, 7, 256, 4096} {
			for _, par := range []int{1, 4} {
				for _, cache := range []int64{1024, 64 << 20} {
					name := fmt.Sprintf("seed%d/batch%d/par%d/cache%d", seed, bs, par, cache)
					t.Run(name, func(t *testing.T) {
						got := runJoin(t, baseSpec(), evs, bs, par, cache)
						sameMultiset(t, got.rows, want)
					})
				}
			}
		}
	}
}

// TestInnerJoinKinds pins Flink's row kinds for a small changelog.
func TestInnerJoinKinds(t *testing.T) {
	k1, k2 := int64(1), int64(2)
	evs := []joinEvent{
		{0, types.Insert, jrow{key: &k1, v: 10, s: "a"}},
		{1, types.Insert, jrow{key: &k1, v: 20}},               // +I[1,10,a,20,1]
		{1, types.Insert, jrow{key: &k1, v: 20}},               // duplicate: +I again
		{0, types.Insert, jrow{key: nil, v: 11}},               // NULL key: nothing
		{1, types.Insert, jrow{key: nil, v: 21}},               // NULL key: nothing
		{0, types.UpdateBefore, jrow{key: &k1, v: 10, s: "a"}}, // -U twice
		{0, types.UpdateAfter, jrow{key: &k1, v: 12, s: "a"}},  // +U twice
		{1, types.Delete, jrow{key: &k1, v: 20}},               // -D[1,12,a,20,1]
		{1, types.Delete, jrow{key: &k2, v: 20}},               // retraction matching nothing
		{0, types.Delete, jrow{key: &k2, v: 1}},                // nothing
	}
	got := runJoin(t, baseSpec(), evs, 100, 1, 1<<20)
	want := []string{
		"+I[1, 10, a, 20, 1]", "+I[1, 10, a, 20, 1]",
		"-U[1, 10, a, 20, 1]", "-U[1, 10, a, 20, 1]",
		"+U[1, 12, a, 20, 1]", "+U[1, 12, a, 20, 1]",
		"-D[1, 12, a, 20, 1]",
	}
	if strings.Join(got.rows, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got.rows, "\n"), strings.Join(want, "\n"))
	}
}

// TestInnerJoinBatchesAreBounded: a hot key yields output batches of at most
// joinBatchRows rows.
func TestInnerJoinBatchesAreBounded(t *testing.T) {
	k := int64(7)
	var evs []joinEvent
	for i := 0; i < 100; i++ {
		evs = append(evs, joinEvent{1, types.Insert, jrow{key: &k, v: int32(i)}})
	}
	for i := 0; i < 100; i++ {
		evs = append(evs, joinEvent{0, types.Insert, jrow{key: &k, v: int32(i), s: "x"}})
	}
	got := runJoin(t, baseSpec(), evs, 100, 1, 64<<20)
	if len(got.rows) != 100*100 {
		t.Fatalf("%d rows, want 10000", len(got.rows))
	}
	if got.maxRows > joinBatchRows || got.batches < 3 {
		t.Fatalf("%d batches, largest %d rows", got.batches, got.maxRows)
	}
}

func TestInnerJoinResidual(t *testing.T) {
	// lv < rv, over the joined row (lk, lv, ls, rv, rk).
	spec := baseSpec()
	spec.Residual = &expr.Expr{Op: expr.OpCall, Func: "<", Type: types.Boolean,
		Args: []*expr.Expr{expr.Column(1, types.Int), expr.Column(3, types.Int)}}
	evs := randomEvents(rand.New(rand.NewPCG(9, 9)), 1500, 8)
	want := oracleJoin(evs, func(l, r jrow) bool { return l.v < r.v })
	for _, bs := range []int{1, 64, 4096} {
		got := runJoin(t, spec, evs, bs, 2, 1<<20)
		sameMultiset(t, got.rows, want)
	}
}

func TestInnerJoinSpecErrors(t *testing.T) {
	bad := []jobgraph.JoinSpec{
		{LeftSchema: joinLeft, RightSchema: joinRight, LeftKeys: []int{0}, RightKeys: []int{}},
		{LeftSchema: joinLeft, RightSchema: joinRight, LeftKeys: []int{5}, RightKeys: []int{1}},
		{LeftSchema: joinLeft, RightSchema: joinRight, LeftKeys: []int{0}, RightKeys: []int{0}}, // BIGINT = INT
		{LeftSchema: joinLeft, RightSchema: joinRight, LeftKeys: []int{0}, RightKeys: []int{1}, OutputSchema: joinLeft},
	}
	for i, s := range bad {
		if _, err := NewInnerJoin(s); err == nil {
			t.Errorf("spec %d accepted", i)
		}
	}
	if _, err := NewOperator(nil); err == nil {
		t.Error("an operator without a spec was built")
	}
}

// TestJoinStateTTL: a side's rows stop matching once their time to live has
// passed since their last write.
func TestJoinStateTTL(t *testing.T) {
	for _, kind := range []string{jobgraph.KindJoinInner, jobgraph.KindJoinOuter} {
		spec := baseSpec()
		spec.OuterLeft = kind == jobgraph.KindJoinOuter
		spec.LeftTTLMs = time.Hour.Milliseconds()
		spec.RightTTLMs = (24 * time.Hour).Milliseconds()
		op, err := NewOperator(&spec)
		if err != nil {
			t.Fatal(err)
		}
		clock := time.UnixMilli(1_000_000)
		if err := op.Open(withKeyedState(t, &Context{MaxParallelism: 128,
			Now: func() time.Time { return clock }}, 1<<20, t.TempDir())); err != nil {
			t.Fatal(err)
		}
		k := int64(1)
		out := &collector{}
		feed := func(input int, row jrow) {
			b := buildBatch(input, []joinEvent{{input, types.Insert, row}})
			if err := op.Process(input, b, out); err != nil {
				t.Fatal(err)
			}
			b.Release()
		}
		feed(0, jrow{key: &k, v: 1, s: "a"})
		clock = clock.Add(59 * time.Minute)
		feed(1, jrow{key: &k, v: 2}) // the left row is 59 minutes old: a match
		clock = clock.Add(2 * time.Minute)
		feed(1, jrow{key: &k, v: 3}) // now 61 minutes: expired, no match
		feed(0, jrow{key: &k, v: 4, s: "b"})
		op.Close()
		joined := 0
		for _, r := range out.rows {
			if !strings.Contains(r, "(null)") {
				joined++
			}
		}
		// a-2; then b arrives and meets both right rows (a day's TTL).
		if joined != 3 {
			t.Fatalf("%s: %d joined rows, want 3: %v", kind, joined, out.rows)
		}
		if strings.Contains(strings.Join(out.rows, " "), "a, 3, 1") {
			t.Fatalf("%s: an expired row matched: %v", kind, out.rows)
		}
	}
}
