package operators

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

// The DISTINCT/FILTER tests' input: a BIGINT key, an INT, a STRING, a
// BOOLEAN for the filters and a DOUBLE, every value column nullable.
var dInput = types.Schema{
	{Name: "k", Type: types.BigInt}, {Name: "x", Type: types.Int}, {Name: "s", Type: types.String},
	{Name: "b", Type: types.Boolean}, {Name: "d", Type: types.Double},
}

type drow struct {
	k int64
	x *int32
	s *string
	b *bool
	d *float64
}

type dEvent struct {
	kind types.RowKind
	row  drow
}

func buildDBatch(evs []dEvent) types.Batch {
	mem := memory.DefaultAllocator
	kb, xb, sb := array.NewInt64Builder(mem), array.NewInt32Builder(mem), array.NewStringBuilder(mem)
	bb, db := array.NewBooleanBuilder(mem), array.NewFloat64Builder(mem)
	kinds := make([]int8, len(evs))
	for i, e := range evs {
		kb.Append(e.row.k)
		appendOpt(xb, e.row.x, xb.Append)
		appendOpt(sb, e.row.s, sb.Append)
		appendOpt(bb, e.row.b, bb.Append)
		appendOpt(db, e.row.d, db.Append)
		kinds[i] = int8(e.kind)
	}
	cols := []arrow.Array{kb.NewArray(), xb.NewArray(), sb.NewArray(), bb.NewArray(), db.NewArray()}
	b := types.NewBatch(dInput.ArrowSchema(), cols, kinds)
	for _, c := range cols {
		c.Release()
	}
	return b
}

func sep(s string) *string { return &s }

// dCalls are the aggregates of dSpec, grouped by k; filter 3 is column b.
var dCalls = []struct {
	call jobgraph.AggCall
	t    types.DataType
}{
	{jobgraph.AggCall{Func: "COUNT", Arg: 1, Distinct: true}, types.BigInt.WithNullable(false)},                            // 0
	{jobgraph.AggCall{Func: "SUM", Arg: 1, Distinct: true}, types.Int},                                                     // 1
	{jobgraph.AggCall{Func: "AVG", Arg: 1, Distinct: true}, types.Int},                                                     // 2
	{jobgraph.AggCall{Func: "COUNT", Arg: -1, Filtered: true, Filter: 3}, types.BigInt.WithNullable(false)},                // 3
	{jobgraph.AggCall{Func: "SUM", Arg: 1, Filtered: true, Filter: 3}, types.Int},                                          // 4
	{jobgraph.AggCall{Func: "COUNT", Arg: 1, Distinct: true, Filtered: true, Filter: 3}, types.BigInt.WithNullable(false)}, // 5
	{jobgraph.AggCall{Func: "LISTAGG", Arg: 2}, types.String},                                                              // 6
	{jobgraph.AggCall{Func: "LISTAGG", Arg: 2, Filtered: true, Filter: 3, Separator: sep("|")}, types.String},              // 7
	{jobgraph.AggCall{Func: "FIRST_VALUE", Arg: 1}, types.Int},                                                             // 8
	{jobgraph.AggCall{Func: "LAST_VALUE", Arg: 2}, types.String},                                                           // 9
	{jobgraph.AggCall{Func: "VAR_POP", Arg: 4}, types.Double},                                                              // 10
	{jobgraph.AggCall{Func: "VAR_SAMP", Arg: 4}, types.Double},                                                             // 11
	{jobgraph.AggCall{Func: "STDDEV_POP", Arg: 1}, types.Int},                                                              // 12
	{jobgraph.AggCall{Func: "STDDEV_SAMP", Arg: 4}, types.Double},                                                          // 13
	{jobgraph.AggCall{Func: "LISTAGG", Arg: 2, Distinct: true}, types.String},                                              // 14
	{jobgraph.AggCall{Func: "MIN", Arg: 1, Filtered: true, Filter: 3}, types.Int},                                          // 15
	{jobgraph.AggCall{Func: "SUM", Arg: 1, Distinct: true, Filtered: true, Filter: 3}, types.Int},                          // 16
	{jobgraph.AggCall{Func: "FIRST_VALUE", Arg: 2, Filtered: true, Filter: 3}, types.String},                               // 17
	{jobgraph.AggCall{Func: "COUNT", Arg: 1, More: []int{2}, Distinct: true}, types.BigInt.WithNullable(false)},            // 18
	{jobgraph.AggCall{Func: "COUNT", Arg: 1, More: []int{2}, Filtered: true, Filter: 3}, types.BigInt.WithNullable(false)}, // 19
}

func dSpec(retract bool) jobgraph.GroupAggSpec {
	spec := jobgraph.GroupAggSpec{InputSchema: dInput, Keys: []int{0}, InputRetracts: retract,
		OutputSchema: types.Schema{dInput[0]}}
	for i, c := range dCalls {
		spec.Aggs = append(spec.Aggs, c.call)
		spec.OutputSchema = append(spec.OutputSchema, types.Field{Name: fmt.Sprintf("a%d", i), Type: c.t})
	}
	return spec
}

// dGroup is the oracle's state of one group: its live rows, and what
// replaying the events gives for the order-dependent aggregates: the
// arrival-ordered value lists of LISTAGG, FIRST_VALUE and LAST_VALUE (a
// retraction removes the earliest equal value, as Flink's WithRetract
// functions do) and Welford's running m2 (whose rounding depends on the
// order of the events, as Flink's does).
type dGroup struct {
	rows  []drow
	lists map[int][]string
	wf    map[int]*welfordOracle
}

type welfordOracle struct{ a aggAcc }

func isTrue(b *bool) bool { return b != nil && *b }

// dListArgs are the list aggregates of dCalls: their argument's value
// (nil for NULL) and whether the filter lets the row through.
func dListValue(j int, r drow) (string, bool) {
	c := dCalls[j].call
	if c.Filtered && !isTrue(r.b) {
		return "", false
	}
	switch c.Arg {
	case 1:
		if r.x == nil {
			return "", false
		}
		return fmt.Sprint(*r.x), true
	case 2:
		if r.s == nil {
			return "", false
		}
		return *r.s, true
	}
	panic("bad list argument")
}

var dListAggs = []int{6, 7, 8, 9, 17}
var dWelford = []int{10, 11, 12, 13}

// apply updates the oracle's replayed state for an event of a live group
// (rows already updated with it).
func (g *dGroup) apply(r drow, retract bool) {
	for _, j := range dListAggs {
		v, ok := dListValue(j, r)
		if !ok {
			continue
		}
		l := g.lists[j]
		if !retract {
			g.lists[j] = append(l, v)
			continue
		}
		for i, w := range l {
			if w == v {
				g.lists[j] = append(l[:i:i], l[i+1:]...)
				break
			}
		}
	}
	// LISTAGG(DISTINCT s): a value enters when its first live row arrives
	// and leaves with its last.
	if r.s != nil {
		n := 0
		for _, lr := range g.rows {
			if lr.s != nil && *lr.s == *r.s {
				n++
			}
		}
		switch {
		case !retract && n == 1:
			g.lists[14] = append(g.lists[14], *r.s)
		case retract && n == 0:
			l := g.lists[14]
			for i, w := range l {
				if w == *r.s {
					g.lists[14] = append(l[:i:i], l[i+1:]...)
					break
				}
			}
		}
	}
	for _, j := range dWelford {
		var x float64
		switch dCalls[j].call.Arg {
		case 1:
			if r.x == nil {
				continue
			}
			x = float64(*r.x)
		case 4:
			if r.d == nil {
				continue
			}
			x = *r.d
		}
		w := g.wf[j]
		if retract {
			w.a.n--
		} else {
			w.a.n++
		}
		welfordOracleStep(&w.a, x, retract)
	}
}

// welfordOracleStep is Welford's update and its inverse, written out again
// from Flink's WelfordM2AggFunction.
func welfordOracleStep(a *aggAcc, x float64, retract bool) {
	if a.n <= 0 {
		a.f, a.m2 = 0, 0
		return
	}
	if !retract {
		d := x - a.f
		a.f += float64(d / float64(a.n))
		a.m2 += float64(d * (x - a.f))
		return
	}
	d2 := x - a.f
	a.f -= float64(d2 / float64(a.n))
	a.m2 -= float64((x - a.f) * d2)
}

func (g *dGroup) result(key int64) string {
	distinct := func(filter bool) (n, sum int64) {
		seen := map[int32]bool{}
		for _, r := range g.rows {
			if r.x != nil && (!filter || isTrue(r.b)) && !seen[*r.x] {
				seen[*r.x] = true
				n++
				sum += int64(*r.x)
			}
		}
		return n, sum
	}
	nullOr := func(ok bool, v any) string {
		if !ok {
			return "NULL"
		}
		return fmt.Sprint(v)
	}
	vals := []string{fmt.Sprint(key)}
	dn, ds := distinct(false)
	vals = append(vals, fmt.Sprint(dn), nullOr(dn > 0, ds), nullOr(dn > 0, func() int64 {
		if dn == 0 {
			return 0
		}
		return ds / dn
	}()))
	var fc, fs, fx int64
	var fmin *int32
	for _, r := range g.rows {
		if isTrue(r.b) {
			fc++
			if r.x != nil {
				fx++
				fs += int64(*r.x)
				if fmin == nil || *r.x < *fmin {
					fmin = r.x
				}
			}
		}
	}
	fdn, fds := distinct(true)
	vals = append(vals, fmt.Sprint(fc), nullOr(fx > 0, fs), fmt.Sprint(fdn))
	list := func(j int, sep string) string {
		l := g.lists[j]
		return nullOr(len(l) > 0, strings.Join(l, sep))
	}
	first := func(j int) string {
		l := g.lists[j]
		return nullOr(len(l) > 0, func() string {
			if len(l) == 0 {
				return ""
			}
			return l[0]
		}())
	}
	last := g.lists[9]
	vals = append(vals, list(6, ","), list(7, "|"), first(8), nullOr(len(last) > 0, func() string {
		if len(last) == 0 {
			return ""
		}
		return last[len(last)-1]
	}()))
	vals = append(vals, g.variance(10, false, false), g.variance(11, true, false), g.variance(12, false, true),
		g.variance(13, true, true), list(14, ","), optStr(fmin), nullOr(fdn > 0, fds), first(17))
	pairs := map[string]bool{}
	var counted int
	for _, r := range g.rows {
		if r.x != nil && r.s != nil {
			pairs[fmt.Sprint(*r.x, "/", *r.s)] = true
			if isTrue(r.b) {
				counted++
			}
		}
	}
	vals = append(vals, fmt.Sprint(len(pairs)), fmt.Sprint(counted))
	return "[" + strings.Join(vals, ", ") + "]"
}

// variance formats aggregate j from the replayed m2, after checking it
// against the variance of the live values computed exactly.
func (g *dGroup) variance(j int, samp, sqrt bool) string {
	w := g.wf[j].a
	den := w.n
	if samp {
		den--
	}
	if w.n <= 0 || den <= 0 || w.m2 < 0 {
		return "NULL"
	}
	v := w.m2 / float64(den)
	// The exact m2 of the live values.
	var xs []float64
	for _, r := range g.rows {
		switch {
		case dCalls[j].call.Arg == 1 && r.x != nil:
			xs = append(xs, float64(*r.x))
		case dCalls[j].call.Arg == 4 && r.d != nil:
			xs = append(xs, *r.d)
		}
	}
	var mean, m2 float64
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		m2 += (x - mean) * (x - mean)
	}
	if int64(len(xs)) != w.n || math.Abs(m2/float64(den)-v) > 1e-9 {
		panic(fmt.Sprintf("oracle: Welford's variance %v of %v drifted from %v", v, xs, m2/float64(den)))
	}
	if sqrt {
		v = math.Sqrt(v)
	}
	if dCalls[j].t.Kind == types.KindInt {
		return fmt.Sprint(int64(v))
	}
	return fmtDouble(v)
}

// oracleDistinct replays events per group and derives Flink's changelog.
func oracleDistinct(evs []dEvent) []string {
	groups := map[int64]*dGroup{}
	var out []string
	for _, e := range evs {
		g := groups[e.row.k]
		if g == nil && e.kind.IsRetract() {
			continue
		}
		old := ""
		if g != nil {
			old = g.result(e.row.k)
		} else {
			g = &dGroup{lists: map[int][]string{}, wf: map[int]*welfordOracle{}}
			for _, j := range dWelford {
				g.wf[j] = &welfordOracle{}
			}
			groups[e.row.k] = g
		}
		if e.kind.IsAccumulate() {
			g.rows = append(g.rows, e.row)
		} else {
			for i, r := range g.rows {
				if sameDrow(r, e.row) {
					g.rows = append(g.rows[:i:i], g.rows[i+1:]...)
					break
				}
			}
		}
		g.apply(e.row, e.kind.IsRetract())
		if len(g.rows) == 0 {
			delete(groups, e.row.k)
			out = append(out, "-D"+old)
			continue
		}
		now := g.result(e.row.k)
		switch {
		case old == "":
			out = append(out, "+I"+now)
		case old != now:
			out = append(out, "-U"+old, "+U"+now)
		}
	}
	return out
}

func sameDrow(a, b drow) bool {
	return a.k == b.k && optStr(a.x) == optStr(b.x) && optStr(a.s) == optStr(b.s) &&
		optStr(a.b) == optStr(b.b) && optStr(a.d) == optStr(b.d)
}

// randomDEvents makes n events over keys groups with few distinct values,
// so that values often enter and leave the distinct views, and
// retractions of live rows (or of groups without rows, ignored).
func randomDEvents(r *rand.Rand, n, keys int, retract bool) []dEvent {
	var live []drow
	var evs []dEvent
	maybe := func(p int) bool { return r.IntN(p) > 0 }
	for len(evs) < n {
		if retract && len(live) > 0 && r.IntN(3) == 0 {
			i := r.IntN(len(live))
			row := live[i]
			live = append(live[:i], live[i+1:]...)
			evs = append(evs, dEvent{[]types.RowKind{types.Delete, types.UpdateBefore}[r.IntN(2)], row})
			continue
		}
		row := drow{k: int64(r.IntN(keys))}
		if maybe(6) {
			row.x = ptr(int32(r.IntN(7) - 3))
		}
		if maybe(6) {
			row.s = ptr([]string{"", "a", "b", "cc", "é"}[r.IntN(5)])
		}
		if maybe(5) {
			row.b = ptr(r.IntN(2) == 0)
		}
		if maybe(6) {
			row.d = ptr(float64(r.IntN(9)-4) / 4)
		}
		if retract && r.IntN(25) == 0 {
			row.k = int64(1000 + r.IntN(3))
			evs = append(evs, dEvent{types.Delete, row})
			continue
		}
		kind := types.Insert
		if retract && r.IntN(4) == 0 {
			kind = types.UpdateAfter
		}
		live = append(live, row)
		evs = append(evs, dEvent{kind, row})
	}
	return evs
}

// runDistinct feeds events to parallelism subtasks routed by key group, in
// batches of at most batchSize rows.
func runDistinct(t *testing.T, spec jobgraph.GroupAggSpec, evs []dEvent, batchSize, parallelism int, cacheBytes int64) *aggCollector {
	t.Helper()
	return runGroupAgg(t, spec, evs, buildDBatch, batchSize, parallelism, cacheBytes)
}

// TestDistinctFilterAgainstOracle runs random changelogs with retractions
// through DISTINCT and FILTER aggregates, LISTAGG, FIRST_VALUE, LAST_VALUE
// and the variances, and compares the changelog with the oracle's, at
// several batch sizes, parallelisms and cache sizes (a tiny cache spills
// the distinct views and value lists to Pebble).
func TestDistinctFilterAgainstOracle(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		evs := randomDEvents(rand.New(rand.NewPCG(seed, 7)), 1500, 6, true)
		want := oracleDistinct(evs)
		for _, bs := range []int{1, 7, 4096} {
			for _, par := range []int{1, 4} {
				for _, cache := range []int64{1024, 64 << 20} {
					t.Run(fmt.Sprintf("seed%d/batch%d/par%d/cache%d", seed, bs, par, cache), func(t *testing.T) {
						sameChangelogs(t, runDistinct(t, dSpec(true), evs, bs, par, cache), want, par)
					})
				}
			}
		}
	}
}

// TestDistinctFilterInsertOnly: over an insert-only input the list
// aggregates keep their result in the accumulator, with the same results.
func TestDistinctFilterInsertOnly(t *testing.T) {
	evs := randomDEvents(rand.New(rand.NewPCG(9, 9)), 1000, 6, false)
	want := oracleDistinct(evs)
	for _, bs := range []int{1, 4096} {
		sameChangelogs(t, runDistinct(t, dSpec(false), evs, bs, 1, 1024), want, 1)
	}
}

// TestDistinctViewState: a view's counts are one state entry per (group,
// value), shared by the aggregates of one argument and filter, and gone
// when their values are.
func TestDistinctViewState(t *testing.T) {
	spec := dSpec(true)
	op, err := NewGroupAgg(spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(op.views) != 4 { // x; x FILTER b; s; (x, s)
		t.Fatalf("%d views, want 4", len(op.views))
	}
	if op.aggs[0].view != op.aggs[1].view || op.aggs[5].view != op.aggs[16].view || op.aggs[0].view == op.aggs[5].view {
		t.Fatalf("views not shared by argument and filter: %d %d %d %d", op.aggs[0].view, op.aggs[1].view, op.aggs[5].view, op.aggs[16].view)
	}
	if err := op.Open(withKeyedState(t, &Context{MaxParallelism: 128}, 1<<20, "")); err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	entries := func() int {
		n := 0
		if err := op.views[0].counts.Scan(func(int, []byte, []byte) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var evs []dEvent
	for i := 0; i < 100; i++ {
		evs = append(evs, dEvent{types.Insert, drow{k: 1, x: ptr(int32(i % 10))}})
	}
	b := buildDBatch(evs)
	if err := op.Process(0, b, &aggCollector{schema: spec.OutputSchema}); err != nil {
		t.Fatal(err)
	}
	b.Release()
	if n := entries(); n != 10 {
		t.Fatalf("%d count entries for 10 distinct values", n)
	}
	for i := range evs {
		evs[i].kind = types.Delete
	}
	out := &aggCollector{schema: spec.OutputSchema}
	b = buildDBatch(evs)
	if err := op.Process(0, b, out); err != nil {
		t.Fatal(err)
	}
	b.Release()
	if n := entries(); n != 0 {
		t.Fatalf("%d count entries left after every row was retracted", n)
	}
	if last := out.rows[len(out.rows)-1]; !strings.HasPrefix(last, "-D[1, 1, ") {
		t.Fatalf("last change %s, want -D with COUNT(DISTINCT x) 1", last)
	}
}

// TestVarianceNulls pins the NULL rules: VAR_SAMP and STDDEV_SAMP of one
// value are NULL, the POP ones 0; of no values all are NULL; an INT
// argument gives an INT, truncated.
func TestVarianceNulls(t *testing.T) {
	calls := []jobgraph.AggCall{{Func: "VAR_POP", Arg: 1}, {Func: "VAR_SAMP", Arg: 1}, {Func: "STDDEV_POP", Arg: 1}, {Func: "STDDEV_SAMP", Arg: 1}}
	spec := jobgraph.GroupAggSpec{InputSchema: dInput, Keys: []int{0}, Aggs: calls, InputRetracts: true, OutputSchema: types.Schema{dInput[0]}}
	for i := range calls {
		spec.OutputSchema = append(spec.OutputSchema, types.Field{Name: fmt.Sprintf("a%d", i), Type: types.Int})
	}
	evs := []dEvent{
		{types.Insert, drow{k: 1}},
		{types.Insert, drow{k: 1, x: ptr(int32(1))}},
		{types.Insert, drow{k: 1, x: ptr(int32(3))}},
		{types.Insert, drow{k: 1, x: ptr(int32(5))}},
		{types.Delete, drow{k: 1, x: ptr(int32(1))}},
	}
	got := strings.Join(runDistinct(t, spec, evs, 1, 1, 1<<20).rows, " ")
	// {1}: pop 0, samp NULL. {1, 3}: m2 2, pop 1, samp 2 (stddev 1.41 -> 1).
	// {1, 3, 5}: m2 8, pop 2.67 -> 2, samp 4 (stddev 1.63 -> 1, 2).
	// {3, 5} after the retraction: as {1, 3}.
	want := "+I[1, NULL, NULL, NULL, NULL] -U[1, NULL, NULL, NULL, NULL] +U[1, 0, NULL, 0, NULL] " +
		"-U[1, 0, NULL, 0, NULL] +U[1, 1, 2, 1, 1] -U[1, 1, 2, 1, 1] +U[1, 2, 4, 1, 2] " +
		"-U[1, 2, 4, 1, 2] +U[1, 1, 2, 1, 1]"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// TestFirstLastValueRetraction pins Flink's WithRetract fallback: taking
// away the current first (last) value falls back to the earliest (latest)
// one left, and a retraction removes the earliest occurrence of its value.
func TestFirstLastValueRetraction(t *testing.T) {
	calls := []jobgraph.AggCall{{Func: "FIRST_VALUE", Arg: 2}, {Func: "LAST_VALUE", Arg: 2}, {Func: "LISTAGG", Arg: 2}}
	spec := jobgraph.GroupAggSpec{InputSchema: dInput, Keys: []int{0}, Aggs: calls, InputRetracts: true, OutputSchema: types.Schema{dInput[0]}}
	for i := range calls {
		spec.OutputSchema = append(spec.OutputSchema, types.Field{Name: fmt.Sprintf("a%d", i), Type: types.String})
	}
	row := func(kind types.RowKind, s string, x int32) dEvent {
		return dEvent{kind, drow{k: 1, s: &s, x: &x}}
	}
	evs := []dEvent{
		row(types.Insert, "a", 1), row(types.Insert, "b", 2), row(types.Insert, "a", 3),
		row(types.Delete, "a", 3), // removes the first "a": b, a
		row(types.Delete, "a", 1), // b
		row(types.Insert, "c", 4), // b, c
		row(types.Delete, "c", 4), // b
	}
	got := strings.Join(runDistinct(t, spec, evs, 1, 1, 1<<20).rows, " ")
	want := "+I[1, a, a, a] -U[1, a, a, a] +U[1, a, b, a,b] -U[1, a, b, a,b] +U[1, a, a, a,b,a] " +
		"-U[1, a, a, a,b,a] +U[1, b, a, b,a] -U[1, b, a, b,a] +U[1, b, b, b] " +
		"-U[1, b, b, b] +U[1, b, c, b,c] -U[1, b, c, b,c] +U[1, b, b, b]"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// distinctWindowSpec is windowSpec (COUNT(*), SUM(x)) with COUNT(DISTINCT
// x) and SUM(DISTINCT x), sharing one view.
func distinctWindowSpec(w jobgraph.WindowSpec) jobgraph.WindowAggSpec {
	spec := windowSpec(w)
	spec.Aggs = append(spec.Aggs, jobgraph.AggCall{Func: "COUNT", Arg: 1, Distinct: true}, jobgraph.AggCall{Func: "SUM", Arg: 1, Distinct: true})
	spec.OutputSchema = append(spec.OutputSchema, types.Field{Name: "cd", Type: types.BigInt.WithNullable(false)},
		types.Field{Name: "sd", Type: types.BigInt})
	return spec
}

// TestWindowAggDistinct runs random rows (some late) through HOP windows
// with DISTINCT aggregates and compares every firing with the distinct
// values per (key, window); once every window has fired, the views hold
// nothing.
func TestWindowAggDistinct(t *testing.T) {
	w := jobgraph.WindowSpec{Kind: jobgraph.WindowHop, SizeMs: 40, StepMs: 10}
	for _, cache := range []int64{1 << 10, 0} {
		a, err := NewWindowAgg(distinctWindowSpec(w))
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Open(withKeyedState(t, &Context{}, cache, "")); err != nil {
			t.Fatal(err)
		}
		type group struct {
			rows int64
			sum  int64
			seen map[int64]bool
		}
		type win struct {
			order []int64
			gs    map[int64]*group
		}
		wins := map[window]*win{}
		wm := int64(MinWatermark)
		fire := func(to int64) string {
			wm = to
			var fired []window
			for w := range wins {
				if w.end-1 <= to {
					fired = append(fired, w)
				}
			}
			sortWindows(fired)
			var evs []string
			for _, fw := range fired {
				for _, k := range wins[fw].order {
					g := wins[fw].gs[k]
					var sd int64
					for x := range g.seen {
						sd += x
					}
					evs = append(evs, fmt.Sprintf("+I[%d %d %d %d %d %d %d %d]", k, fw.start, fw.end, fw.end-1, g.rows, g.sum, len(g.seen), sd))
				}
				delete(wins, fw)
			}
			if to == MaxWatermark {
				return strings.Join(append(evs, "wm max"), " ")
			}
			return strings.Join(append(evs, fmt.Sprintf("wm %d", to)), " ")
		}
		out := &winCollector{}
		r := rand.New(rand.NewPCG(3, 3))
		for step := int64(0); step < 15; step++ {
			rows := make([]winRow, 300)
			for i := range rows {
				rows[i] = winRow{k: int64(r.IntN(20)), x: int64(r.IntN(6)), ts: step*25 + int64(r.IntN(40)) - 30}
				for _, aw := range assignWindows(nil, w, rows[i].ts) {
					if aw.end-1 <= wm {
						continue
					}
					ow := wins[aw]
					if ow == nil {
						ow = &win{gs: map[int64]*group{}}
						wins[aw] = ow
					}
					g := ow.gs[rows[i].k]
					if g == nil {
						g = &group{seen: map[int64]bool{}}
						ow.gs[rows[i].k] = g
						ow.order = append(ow.order, rows[i].k)
					}
					g.rows++
					g.sum += rows[i].x
					g.seen[rows[i].x] = true
				}
			}
			process(t, a, out, rows...)
			if got, want := watermark(t, a, out, step*25-5), fire(step*25-5); got != want {
				t.Fatalf("step %d:\n got %s\nwant %s", step, got, want)
			}
		}
		if got, want := watermark(t, a, out, MaxWatermark), fire(MaxWatermark); got != want {
			t.Fatalf("end:\n got %s\nwant %s", got, want)
		}
		left := 0
		if err := a.views[0].counts.Scan(func(int, []byte, []byte) error { left++; return nil }); err != nil {
			t.Fatal(err)
		}
		if err := a.views[0].values.Scan(func(_ int, _ []byte, rows []state.MultisetRow) error { left += len(rows); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(a.views) != 1 || left != 0 {
			t.Fatalf("%d views, %d distinct entries left after every window fired", len(a.views), left)
		}
		a.Close()
	}
}

func sortWindows(ws []window) {
	sort.Slice(ws, func(i, j int) bool { return ws[i].end < ws[j].end })
}

// TestDistinctTTL: a distinct view's counts expire with their group's
// state, so a group that starts over after its TTL counts its values anew.
func TestDistinctTTL(t *testing.T) {
	calls := []jobgraph.AggCall{{Func: "COUNT", Arg: 1, Distinct: true}, {Func: "LISTAGG", Arg: 2}}
	spec := jobgraph.GroupAggSpec{InputSchema: dInput, Keys: []int{0}, Aggs: calls, InputRetracts: true, TTLMs: time.Hour.Milliseconds(),
		OutputSchema: types.Schema{dInput[0], {Name: "c", Type: types.BigInt.WithNullable(false)}, {Name: "l", Type: types.String}}}
	clock := time.UnixMilli(1_000_000)
	op, err := NewGroupAgg(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Open(withKeyedState(t, &Context{MaxParallelism: 128, Now: func() time.Time { return clock }}, 1<<20, "")); err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	for _, c := range []struct {
		kind    types.RowKind
		x       int32
		s       string
		advance time.Duration
		want    string
	}{
		{types.Insert, 5, "a", 0, "+I[1, 1, a]"},
		{types.Insert, 5, "b", time.Minute, "-U[1, 1, a] +U[1, 1, a,b]"},
		{types.Insert, 5, "c", 61 * time.Minute, "+I[1, 1, c]"}, // expired: starts over
		{types.Delete, 5, "c", 0, "-D[1, 1, c]"},
		{types.Insert, 6, "d", 0, "+I[1, 1, d]"},
	} {
		clock = clock.Add(c.advance)
		out := &aggCollector{schema: spec.OutputSchema}
		b := buildDBatch([]dEvent{{c.kind, drow{k: 1, x: &c.x, s: &c.s}}})
		if err := op.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
		b.Release()
		if got := strings.Join(out.rows, " "); got != c.want {
			t.Fatalf("%v %d %s: got %q, want %q", c.kind, c.x, c.s, got, c.want)
		}
	}
}
