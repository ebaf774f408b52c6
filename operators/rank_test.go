package operators

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"go.uber.org/zap"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/state"
	"github.com/braidflow/braid/types"
)

// rankOrder is the tests' ORDER BY: x DESC (NULLs last), s ASC (NULLs
// first), d ASC NULLS LAST.
var rankOrder = []jobgraph.SortKey{{Col: 1, Desc: true}, {Col: 4}, {Col: 2, NullsLast: true}}

func cmpOpt[T cmp.Ordered](a, b *T, nullsFirst bool) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		if nullsFirst {
			return -1
		}
		return 1
	case b == nil:
		if nullsFirst {
			return 1
		}
		return -1
	}
	return cmp.Compare(*a, *b)
}

// oracleRankCompare orders two rows as rankOrder does.
func oracleRankCompare(a, b arow) int {
	if c := -cmpOpt(a.x, b.x, true); c != 0 {
		return c
	}
	if c := cmpOpt(a.s, b.s, true); c != 0 {
		return c
	}
	return cmpOpt(a.d, b.d, false)
}

// rankOracle keeps every partition's live rows in arrival order.
type rankOracle struct {
	partitioned bool
	limit       int
	// rowNumber appends each row's rank to it, as a Rank with
	// OutputRankNumber emits it.
	rowNumber bool
	parts     map[string][]arow
}

func (o *rankOracle) apply(e aggEvent) {
	if o.parts == nil {
		o.parts = map[string][]arow{}
	}
	key := ""
	if o.partitioned {
		key = optStr(e.row.k)
	}
	rows := o.parts[key]
	if e.kind.IsRetract() {
		for i, r := range rows {
			if sameArow(r, e.row) {
				o.parts[key] = append(rows[:i], rows[i+1:]...)
				break
			}
		}
		return
	}
	o.parts[key] = append(rows, e.row)
}

// top returns every partition's first limit rows, formatted, sorted.
func (o *rankOracle) top() []string {
	var out []string
	for _, rows := range o.parts {
		s := slices.Clone(rows)
		slices.SortStableFunc(s, oracleRankCompare)
		for i, r := range s[:min(o.limit, len(s))] {
			f := formatArow(r)
			if o.rowNumber {
				f = fmt.Sprintf("%s, %d]", f[:len(f)-1], i+1)
			}
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

func formatArow(r arow) string {
	d := "NULL"
	if r.d != nil {
		d = fmtDouble(*r.d)
	}
	m := "NULL"
	if r.m != nil {
		m = fmt.Sprintf("%d.%02d", *r.m/100, abs(*r.m%100))
		if *r.m < 0 && *r.m > -100 {
			m = "-" + m
		}
	}
	return fmt.Sprintf("[%s, %s, %s, %s, %s]", optStr(r.k), optStr(r.x), d, m, optStr(r.s))
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// materialized applies a changelog of "+I[...]"/"-D[...]" rows to a
// multiset and fails on a deletion of a row it does not hold.
type materialized struct {
	t    *testing.T
	rows map[string]int
	seen int
}

func (m *materialized) apply(rows []string) {
	if m.rows == nil {
		m.rows = map[string]int{}
	}
	for _, r := range rows[m.seen:] {
		kind, body := r[:2], r[2:]
		switch kind {
		case "+I", "+U":
			m.rows[body]++
		case "-D", "-U":
			if m.rows[body] == 0 {
				m.t.Fatalf("retraction of a row not emitted: %s", r)
			}
			m.rows[body]--
		default:
			m.t.Fatalf("bad row %s", r)
		}
	}
	m.seen = len(rows)
}

func (m *materialized) sorted() []string {
	var out []string
	for r, n := range m.rows {
		for i := 0; i < n; i++ {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

func openRanks(t *testing.T, spec jobgraph.RankSpec, parallelism int) []*Rank {
	t.Helper()
	const maxPar = 128
	ops := make([]*Rank, parallelism)
	for p := range ops {
		op, err := NewOperator(&spec)
		if err != nil {
			t.Fatal(err)
		}
		r := op.(*Rank)
		if err := r.Open(withKeyedState(t, &Context{Subtask: p, Parallelism: parallelism, MaxParallelism: maxPar,
			KeyGroups: types.KeyGroupRangeFor(p, parallelism, maxPar), Logger: zap.NewNop()}, 1<<16, "")); err != nil {
			t.Fatal(err)
		}
		ops[p] = r
		t.Cleanup(func() { r.Close() })
	}
	return ops
}

// TestRankAgainstOracle feeds random insert-only and retracting changelogs
// (NULLs and ties in every sort key) to Top-N operators partitioned by k and
// global, at several batch sizes and parallelisms, and checks after every
// batch that the materialized output is the oracle's top rows.
//
// With the row number in the output the materialized rows carry their rank,
// so every -U/+U that moves a row must be right.
func TestRankAgainstOracle(t *testing.T) {
	for _, rowNumber := range []bool{false, true} {
		for _, retract := range []bool{false, true} {
			for _, partitioned := range []bool{true, false} {
				for _, limit := range []int64{1, 3} {
					for _, batch := range []int{1, 7, 4096} {
						for _, par := range []int{1, 4} {
							if !partitioned && par > 1 {
								continue
							}
							name := fmt.Sprintf("rn=%v/retract=%v/partitioned=%v/limit=%d/batch=%d/par=%d", rowNumber, retract, partitioned, limit, batch, par)
							t.Run(name, func(t *testing.T) {
								r := rand.New(rand.NewPCG(uint64(limit)*31+uint64(batch), 7))
								evs := randomAggEvents(r, 600, 5, retract)
								spec := jobgraph.RankSpec{InputSchema: aggInput, OrderBy: rankOrder, Limit: limit,
									InputRetracts: retract, OutputRankNumber: rowNumber}
								if partitioned {
									spec.Partition = []int{0}
								}
								runRank(t, spec, evs, batch, par, partitioned)
							})
						}
					}
				}
			}
		}
	}
}

func runRank(t *testing.T, spec jobgraph.RankSpec, evs []aggEvent, batchSize, parallelism int, partitioned bool) {
	const maxPar = 128
	ops := openRanks(t, spec, parallelism)
	out := &aggCollector{schema: spec.OutputSchema()}
	oracle := &rankOracle{partitioned: partitioned, limit: int(spec.Limit), rowNumber: spec.OutputRankNumber}
	got := &materialized{t: t}
	for start := 0; start < len(evs); start += batchSize {
		chunk := evs[start:min(start+batchSize, len(evs))]
		b := buildAggBatch(chunk)
		var keyCols []arrow.Array
		for _, k := range spec.Partition {
			keyCols = append(keyCols, b.Column(k))
		}
		h := make([]uint64, b.NumRows())
		types.HashColumns(keyCols, h)
		b.Release()
		per := make([][]aggEvent, parallelism)
		for i, e := range chunk {
			p := types.SubtaskForKeyGroup(types.KeyGroupForHash(h[i], maxPar), parallelism, maxPar)
			per[p] = append(per[p], e)
			oracle.apply(e)
		}
		for p, pe := range per {
			if len(pe) == 0 {
				continue
			}
			pb := buildAggBatch(pe)
			if err := ops[p].Process(0, pb, out); err != nil {
				t.Fatal(err)
			}
			pb.Release()
		}
		got.apply(out.rows)
		if g, w := got.sorted(), oracle.top(); !slices.Equal(g, w) {
			t.Fatalf("after %d events:\ngot  %v\nwant %v", start+len(chunk), g, w)
		}
	}
	if out.maxRows > joinBatchRows {
		t.Fatalf("emitted a batch of %d rows", out.maxRows)
	}
}

// TestRankAppendOnlyChangelog pins Flink's AppendOnlyTopNFunction output: a
// newcomer that enters the top evicts the last row with -D evicted, +I new;
// one that does not enter (ties included: the earlier row stays ahead)
// emits nothing; NULL sorts last under DESC.
func TestRankAppendOnlyChangelog(t *testing.T) {
	spec := jobgraph.RankSpec{InputSchema: aggInput, Partition: []int{0}, OrderBy: []jobgraph.SortKey{{Col: 1, Desc: true}}, Limit: 2}
	op := openRanks(t, spec, 1)[0]
	feed := func(k int64, x *int32, s string) string {
		out := &aggCollector{schema: aggInput}
		b := buildAggBatch([]aggEvent{{types.Insert, arow{k: &k, x: x, s: &s}}})
		defer b.Release()
		if err := op.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
		return strings.Join(out.rows, " ")
	}
	for _, c := range []struct {
		k    int64
		x    *int32
		s    string
		want string
	}{
		{1, ptr(int32(5)), "a", "+I[1, 5, NULL, NULL, a]"},
		{1, nil, "null", "+I[1, NULL, NULL, NULL, null]"},
		{1, ptr(int32(3)), "b", "-D[1, NULL, NULL, NULL, null] +I[1, 3, NULL, NULL, b]"},
		{1, ptr(int32(1)), "c", ""},
		{1, ptr(int32(3)), "tie", ""},
		{2, ptr(int32(0)), "other", "+I[2, 0, NULL, NULL, other]"},
		{1, ptr(int32(9)), "d", "-D[1, 3, NULL, NULL, b] +I[1, 9, NULL, NULL, d]"},
		{1, nil, "null2", ""},
	} {
		if got := feed(c.k, c.x, c.s); got != c.want {
			t.Fatalf("k=%d x=%s s=%s: got %q, want %q", c.k, optStr(c.x), c.s, got, c.want)
		}
	}
}

// TestRankRetractChangelog: retracting a top row emits -D of it and +I of
// the row that moves up; retracting a row below the top, or one that is not
// there, emits nothing.
func TestRankRetractChangelog(t *testing.T) {
	spec := jobgraph.RankSpec{InputSchema: aggInput, OrderBy: []jobgraph.SortKey{{Col: 1}}, Limit: 2, InputRetracts: true}
	op := openRanks(t, spec, 1)[0]
	feed := func(kind types.RowKind, x int32) string {
		out := &aggCollector{schema: aggInput}
		b := buildAggBatch([]aggEvent{{kind, arow{x: &x}}})
		defer b.Release()
		if err := op.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
		return strings.Join(out.rows, " ")
	}
	for i, c := range []struct {
		kind types.RowKind
		x    int32
		want string
	}{
		{types.Insert, 5, "+I[NULL, 5, NULL, NULL, NULL]"},
		{types.Insert, 7, "+I[NULL, 7, NULL, NULL, NULL]"},
		{types.Insert, 9, ""},
		{types.Insert, 1, "-D[NULL, 7, NULL, NULL, NULL] +I[NULL, 1, NULL, NULL, NULL]"},
		{types.UpdateBefore, 9, ""},
		{types.Delete, 4, ""},
		{types.Delete, 1, "-D[NULL, 1, NULL, NULL, NULL] +I[NULL, 7, NULL, NULL, NULL]"},
		{types.UpdateBefore, 5, "-D[NULL, 5, NULL, NULL, NULL]"},
		{types.UpdateAfter, 6, "+I[NULL, 6, NULL, NULL, NULL]"},
	} {
		if got := feed(c.kind, c.x); got != c.want {
			t.Fatalf("step %d (%s %d): got %q, want %q", i, c.kind, c.x, got, c.want)
		}
	}
}

// TestRankSpecErrors: specs the operator refuses.
func TestRankSpecErrors(t *testing.T) {
	for _, spec := range []jobgraph.RankSpec{
		{InputSchema: aggInput, OrderBy: rankOrder, Limit: 0},
		{InputSchema: aggInput, Limit: 1},
		{InputSchema: aggInput, OrderBy: []jobgraph.SortKey{{Col: 9}}, Limit: 1},
		{InputSchema: aggInput, Partition: []int{-1}, OrderBy: rankOrder, Limit: 1},
	} {
		if _, err := NewRank(spec); err == nil {
			t.Errorf("%+v: no error", spec)
		}
	}
}

// rankFeeder feeds one row at a time to a Rank and returns its output.
func rankFeeder(t *testing.T, op *Rank, schema types.Schema) func(kind types.RowKind, row arow) string {
	return func(kind types.RowKind, row arow) string {
		t.Helper()
		out := &aggCollector{schema: schema}
		b := buildAggBatch([]aggEvent{{kind, row}})
		defer b.Release()
		if err := op.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
		return strings.Join(out.rows, " ")
	}
}

// TestRankAppendOnlyRowNumberChangelog pins Flink's AppendOnlyTopNFunction
// "with row number" output: a newcomer at rank r updates every rank from r
// to the last one held (-U old, +U new), a new last rank gets +I, and the
// row pushed out of a full top leaves by its -U alone.
func TestRankAppendOnlyRowNumberChangelog(t *testing.T) {
	spec := jobgraph.RankSpec{InputSchema: aggInput, OrderBy: []jobgraph.SortKey{{Col: 1}}, Limit: 3, OutputRankNumber: true}
	op := openRanks(t, spec, 1)[0]
	feed := rankFeeder(t, op, spec.OutputSchema())
	for i, c := range []struct {
		x    int32
		want string
	}{
		{5, "+I[NULL, 5, NULL, NULL, NULL, 1]"},
		{7, "+I[NULL, 7, NULL, NULL, NULL, 2]"},
		{6, "-U[NULL, 7, NULL, NULL, NULL, 2] +U[NULL, 6, NULL, NULL, NULL, 2] +I[NULL, 7, NULL, NULL, NULL, 3]"},
		{9, ""},
		{7, ""}, // a tie with the last row: the earlier one stays ahead
		{1, "-U[NULL, 5, NULL, NULL, NULL, 1] +U[NULL, 1, NULL, NULL, NULL, 1] " +
			"-U[NULL, 6, NULL, NULL, NULL, 2] +U[NULL, 5, NULL, NULL, NULL, 2] " +
			"-U[NULL, 7, NULL, NULL, NULL, 3] +U[NULL, 6, NULL, NULL, NULL, 3]"},
		{5, "-U[NULL, 6, NULL, NULL, NULL, 3] +U[NULL, 5, NULL, NULL, NULL, 3]"},
	} {
		if got := feed(types.Insert, arow{x: ptr(c.x)}); got != c.want {
			t.Fatalf("step %d (+I %d):\ngot  %q\nwant %q", i, c.x, got, c.want)
		}
	}
}

// TestRankRetractRowNumberChangelog pins RetractableTopNFunction "with row
// number": retracting the row at rank r updates every rank a row moves up
// into and deletes the last rank when nothing fills it; a retraction below
// the top or of a row not held emits nothing. The state survives a
// checkpoint and restore in the middle.
func TestRankRetractRowNumberChangelog(t *testing.T) {
	spec := jobgraph.RankSpec{InputSchema: aggInput, Partition: []int{0}, OrderBy: []jobgraph.SortKey{{Col: 1, Desc: true}},
		Limit: 2, InputRetracts: true, OutputRankNumber: true}
	op, be := openRankAt(t, spec, filepath.Join(t.TempDir(), "state"))
	k := int64(1)
	row := func(x int32) arow { return arow{k: &k, x: ptr(x)} }
	steps := []struct {
		kind types.RowKind
		x    int32
		want string
	}{
		{types.Insert, 5, "+I[1, 5, NULL, NULL, NULL, 1]"},
		{types.Insert, 3, "+I[1, 3, NULL, NULL, NULL, 2]"},
		{types.Insert, 8, "-U[1, 5, NULL, NULL, NULL, 1] +U[1, 8, NULL, NULL, NULL, 1] -U[1, 3, NULL, NULL, NULL, 2] +U[1, 5, NULL, NULL, NULL, 2]"},
		{types.UpdateBefore, 3, ""},
		{types.Delete, 4, ""},
		{types.Insert, 1, ""},
		// restore here
		{types.UpdateBefore, 8, "-U[1, 8, NULL, NULL, NULL, 1] +U[1, 5, NULL, NULL, NULL, 1] -U[1, 5, NULL, NULL, NULL, 2] +U[1, 1, NULL, NULL, NULL, 2]"},
		{types.UpdateAfter, 6, "-U[1, 5, NULL, NULL, NULL, 1] +U[1, 6, NULL, NULL, NULL, 1] -U[1, 1, NULL, NULL, NULL, 2] +U[1, 5, NULL, NULL, NULL, 2]"},
		{types.Delete, 5, "-U[1, 5, NULL, NULL, NULL, 2] +U[1, 1, NULL, NULL, NULL, 2]"},
		{types.Delete, 6, "-U[1, 6, NULL, NULL, NULL, 1] +U[1, 1, NULL, NULL, NULL, 1] -D[1, 1, NULL, NULL, NULL, 2]"},
		{types.Delete, 1, "-D[1, 1, NULL, NULL, NULL, 1]"},
	}
	feed := rankFeeder(t, op, spec.OutputSchema())
	for i, c := range steps {
		if i == 6 {
			ck := filepath.Join(t.TempDir(), "ckpt")
			if err := be.Checkpoint(ck); err != nil {
				t.Fatal(err)
			}
			if err := errors.Join(op.Close(), be.Close()); err != nil {
				t.Fatal(err)
			}
			op, be = openRankAt(t, spec, ck)
			feed = rankFeeder(t, op, spec.OutputSchema())
		}
		if got := feed(c.kind, row(c.x)); got != c.want {
			t.Fatalf("step %d (%s %d):\ngot  %q\nwant %q", i, c.kind, c.x, got, c.want)
		}
	}
}

// openRankAt opens a Rank of one subtask on Pebble state in dir (a
// checkpoint directory restores it); the test closes both.
func openRankAt(t *testing.T, spec jobgraph.RankSpec, dir string) (*Rank, *state.Backend) {
	t.Helper()
	kgs := types.KeyGroupRangeFor(0, 1, 128)
	be, err := state.Open(dir, state.Options{CacheBytes: 1 << 16, KeyGroups: kgs, MaxParallelism: 128})
	if err != nil {
		t.Fatal(err)
	}
	op, err := NewRank(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Open(&Context{Parallelism: 1, MaxParallelism: 128, KeyGroups: kgs, State: be, OperatorUID: "op",
		Restore: Restore{ID: 1}, Logger: zap.NewNop()}); err != nil {
		t.Fatal(err)
	}
	return op, be
}

// TestRankEmitAtEnd (batch mode) checks the final rows of ROW_NUMBER, RANK
// and DENSE_RANK, with and without the rank number, over random insert-only
// and retracting inputs with many ties, against a recomputation: nothing
// is emitted before the input ends, then +I of each partition's rows of
// rank <= Limit.
func TestRankEmitAtEnd(t *testing.T) {
	order := []jobgraph.SortKey{{Col: 1, Desc: true}, {Col: 4}}
	compare := func(a, b arow) int {
		if c := -cmpOpt(a.x, b.x, true); c != 0 {
			return c
		}
		return cmpOpt(a.s, b.s, true)
	}
	for _, rankType := range []string{"", jobgraph.RankTypeRank, jobgraph.RankTypeDenseRank} {
		for _, rn := range []bool{false, true} {
			for _, retract := range []bool{false, true} {
				for _, par := range []int{1, 4} {
					t.Run(fmt.Sprintf("type=%q/rn=%v/retract=%v/par=%d", rankType, rn, retract, par), func(t *testing.T) {
						r := rand.New(rand.NewPCG(uint64(par), 9))
						evs := randomAggEvents(r, 800, 5, retract)
						spec := jobgraph.RankSpec{InputSchema: aggInput, Partition: []int{0}, OrderBy: order, Limit: 3,
							InputRetracts: retract, OutputRankNumber: rn, RankType: rankType, EmitAtEnd: true}
						ops := openRanks(t, spec, par)
						out := &aggCollector{schema: spec.OutputSchema()}
						oracle := &rankOracle{partitioned: true}
						per := make([][]aggEvent, par)
						b := buildAggBatch(evs)
						h := make([]uint64, b.NumRows())
						types.HashColumns([]arrow.Array{b.Column(0)}, h)
						b.Release()
						for i, e := range evs {
							p := types.SubtaskForKeyGroup(types.KeyGroupForHash(h[i], 128), par, 128)
							per[p] = append(per[p], e)
							oracle.apply(e)
						}
						for p, pe := range per {
							pb := buildAggBatch(pe)
							if err := ops[p].Process(0, pb, out); err != nil {
								t.Fatal(err)
							}
							pb.Release()
						}
						if len(out.rows) != 0 {
							t.Fatalf("emitted before the end: %v", out.rows)
						}
						for _, op := range ops {
							if err := op.EndInput(0, out); err != nil {
								t.Fatal(err)
							}
						}
						var want []string
						for _, rows := range oracle.parts {
							s := slices.Clone(rows)
							slices.SortStableFunc(s, compare)
							var rank int64
							for i, row := range s {
								tie := i > 0 && compare(s[i-1], row) == 0
								switch {
								case rankType == jobgraph.RankTypeRank && tie:
								case rankType == jobgraph.RankTypeRank:
									rank = int64(i) + 1
								case rankType == jobgraph.RankTypeDenseRank && tie:
								default:
									rank++
								}
								if rank > 3 {
									break
								}
								f := formatArow(row)
								if rn {
									f = fmt.Sprintf("%s, %d]", f[:len(f)-1], rank)
								}
								want = append(want, "+I"+f)
							}
						}
						got := slices.Clone(out.rows)
						slices.Sort(got)
						slices.Sort(want)
						if !slices.Equal(got, want) {
							t.Fatalf("got  %v\nwant %v", got, want)
						}
					})
				}
			}
		}
	}
}

// TestRankTTL: with a TTL a stored row expires that long after it was
// written and leaves the top silently, as Flink's Top-N state TTL has it:
// a later row then takes its rank without evicting anything.
func TestRankTTL(t *testing.T) {
	clock := time.UnixMilli(1_000_000)
	spec := jobgraph.RankSpec{InputSchema: aggInput, Partition: []int{0}, OrderBy: []jobgraph.SortKey{{Col: 1, Desc: true}}, Limit: 2, TTLMs: 1000}
	op, err := NewOperator(&spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Open(withKeyedState(t, &Context{MaxParallelism: 128, Logger: zap.NewNop(), Now: func() time.Time { return clock }}, 1<<16, "")); err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	feed := func(advance time.Duration, x int32, s string) string {
		t.Helper()
		clock = clock.Add(advance)
		k := int64(1)
		out := &aggCollector{schema: aggInput}
		b := buildAggBatch([]aggEvent{{types.Insert, arow{k: &k, x: &x, s: &s}}})
		defer b.Release()
		if err := op.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
		return strings.Join(out.rows, " ")
	}
	for _, c := range []struct {
		advance time.Duration
		x       int32
		s, want string
	}{
		{0, 5, "a", "+I[1, 5, NULL, NULL, a]"},
		{600 * time.Millisecond, 3, "b", "+I[1, 3, NULL, NULL, b]"},
		{0, 4, "c", "-D[1, 3, NULL, NULL, b] +I[1, 4, NULL, NULL, c]"},
		// a (written at 0) has expired: c and d are the top, nothing evicted.
		{500 * time.Millisecond, 1, "d", "+I[1, 1, NULL, NULL, d]"},
		// e ranks above d and evicts it.
		{0, 2, "e", "-D[1, 1, NULL, NULL, d] +I[1, 2, NULL, NULL, e]"},
	} {
		if got := feed(c.advance, c.x, c.s); got != c.want {
			t.Fatalf("x=%d s=%s: got %q, want %q", c.x, c.s, got, c.want)
		}
	}
}
