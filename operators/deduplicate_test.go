package operators

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// dedupModes are the four Deduplicate variants over winInput (k, x, ts).
var dedupModes = []struct {
	name string
	spec jobgraph.DeduplicateSpec
}{
	{"proctime-first", jobgraph.DeduplicateSpec{InputSchema: winInput, Keys: []int{0}, RowtimeCol: -1}},
	{"proctime-last", jobgraph.DeduplicateSpec{InputSchema: winInput, Keys: []int{0}, RowtimeCol: -1, KeepLastRow: true}},
	{"rowtime-first", jobgraph.DeduplicateSpec{InputSchema: winInput, Keys: []int{0}, RowtimeCol: 2}},
	{"rowtime-last", jobgraph.DeduplicateSpec{InputSchema: winInput, Keys: []int{0}, RowtimeCol: 2, KeepLastRow: true}},
}

func openDedups(t *testing.T, spec jobgraph.DeduplicateSpec, parallelism int, now func() time.Time) []*Deduplicate {
	t.Helper()
	const maxPar = 128
	ops := make([]*Deduplicate, parallelism)
	for p := range ops {
		op, err := NewOperator(&spec)
		if err != nil {
			t.Fatal(err)
		}
		d := op.(*Deduplicate)
		if err := d.Open(withKeyedState(t, &Context{Subtask: p, Parallelism: parallelism, MaxParallelism: maxPar,
			KeyGroups: types.KeyGroupRangeFor(p, parallelism, maxPar), Logger: zap.NewNop(), Now: now}, 1<<16, "")); err != nil {
			t.Fatal(err)
		}
		ops[p] = d
		t.Cleanup(func() { d.Close() })
	}
	return ops
}

func dedupFeeder(t *testing.T, op *Deduplicate) func(rows ...winRow) string {
	return func(rows ...winRow) string {
		t.Helper()
		out := &aggCollector{schema: winInput}
		b := winBatch(rows...)
		defer b.Release()
		if err := op.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
		return strings.Join(out.rows, " ")
	}
}

// TestDeduplicateChangelog pins Flink's output for each variant: the
// processing-time keep-first row is insert-only; keep-last updates with
// -U/+U (an equal row emits nothing without TTL); event time replaces the
// kept row by rowtime whatever the arrival order (keep-last takes the later
// arrival on a tie, keep-first keeps the earlier one).
func TestDeduplicateChangelog(t *testing.T) {
	const (
		a1 = "[1, 10, 1970-01-01 00:00:00.005]"
		a2 = "[1, 20, 1970-01-01 00:00:00.003]"
		a3 = "[1, 30, 1970-01-01 00:00:00.005]"
		b1 = "[2, 40, 1970-01-01 00:00:00.001]"
	)
	rows := []winRow{{1, 10, 5}, {1, 20, 3}, {1, 30, 5}, {1, 30, 5}, {2, 40, 1}}
	want := map[string][]string{
		"proctime-first": {"+I" + a1, "", "", "", "+I" + b1},
		"proctime-last":  {"+I" + a1, "-U" + a1 + " +U" + a2, "-U" + a2 + " +U" + a3, "", "+I" + b1},
		"rowtime-first":  {"+I" + a1, "-U" + a1 + " +U" + a2, "", "", "+I" + b1},
		"rowtime-last":   {"+I" + a1, "", "-U" + a1 + " +U" + a3, "-U" + a3 + " +U" + a3, "+I" + b1},
	}
	for _, m := range dedupModes {
		t.Run(m.name, func(t *testing.T) {
			feed := dedupFeeder(t, openDedups(t, m.spec, 1, nil)[0])
			for i, r := range rows {
				if got := feed(r); got != want[m.name][i] {
					t.Fatalf("row %d %+v:\ngot  %q\nwant %q", i, r, got, want[m.name][i])
				}
			}
		})
	}
}

// TestDeduplicateTTL: with table.exec.state.ttl a key's row is gone a TTL
// after its last write (reads do not extend it), so the next row is a
// first row again (+I); processing-time keep-last emits -U/+U for an equal
// row, as Flink does to keep downstream state alive.
func TestDeduplicateTTL(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	spec := dedupModes[1].spec
	spec.TTLMs = 1000
	feed := dedupFeeder(t, openDedups(t, spec, 1, clock)[0])
	const r = "[1, 10, 1970-01-01 00:00:00.005]"
	for i, c := range []struct {
		advance time.Duration
		want    string
	}{
		{0, "+I" + r},
		{900 * time.Millisecond, "-U" + r + " +U" + r},
		{900 * time.Millisecond, "-U" + r + " +U" + r},
		{1000 * time.Millisecond, "+I" + r},
	} {
		now = now.Add(c.advance)
		if got := feed(winRow{1, 10, 5}); got != c.want {
			t.Fatalf("step %d: got %q, want %q", i, got, c.want)
		}
	}
	first := dedupModes[0].spec
	first.TTLMs = 1000
	feed = dedupFeeder(t, openDedups(t, first, 1, clock)[0])
	for i, c := range []struct {
		advance time.Duration
		want    string
	}{
		{0, "+I" + r},
		{600 * time.Millisecond, ""},
		// The marker was written once, at the first row: it expires a TTL
		// after it although rows kept arriving.
		{600 * time.Millisecond, "+I" + r},
	} {
		now = now.Add(c.advance)
		if got := feed(winRow{1, 10, 5}); got != c.want {
			t.Fatalf("keep-first step %d: got %q, want %q", i, got, c.want)
		}
	}
}

// dedupOracle computes each key's expected changelog row by row.
type dedupOracle struct {
	spec jobgraph.DeduplicateSpec
	kept map[int64]*winRow
	out  map[string][]string
}

func (o *dedupOracle) apply(r winRow) {
	if o.kept == nil {
		o.kept, o.out = map[int64]*winRow{}, map[string][]string{}
	}
	f := func(r winRow) string {
		return fmt.Sprintf("[%d, %d, %s]", r.k, r.x, time.UnixMilli(r.ts).UTC().Format("2006-01-02 15:04:05.000"))
	}
	key := fmt.Sprint(r.k)
	old := o.kept[r.k]
	switch {
	case old == nil:
		o.out[key] = append(o.out[key], "+I"+f(r))
	case o.spec.RowtimeCol < 0 && !o.spec.KeepLastRow:
		return
	case o.spec.RowtimeCol < 0 && *old == r:
		return
	case o.spec.RowtimeCol >= 0 && o.spec.KeepLastRow && r.ts < old.ts,
		o.spec.RowtimeCol >= 0 && !o.spec.KeepLastRow && r.ts >= old.ts:
		return
	default:
		o.out[key] = append(o.out[key], "-U"+f(*old), "+U"+f(r))
	}
	o.kept[r.k] = &r
}

// TestDeduplicateAgainstOracle feeds random rows (few keys, repeated
// values and rowtimes, out of order) to every variant at several batch
// sizes and parallelisms, tiny and large caches, and compares each key's
// changelog with the oracle's.
func TestDeduplicateAgainstOracle(t *testing.T) {
	for _, m := range dedupModes {
		for _, batch := range []int{1, 7, 4096} {
			for _, par := range []int{1, 4} {
				t.Run(fmt.Sprintf("%s/batch=%d/par=%d", m.name, batch, par), func(t *testing.T) {
					r := rand.New(rand.NewPCG(uint64(batch), uint64(par)))
					rows := make([]winRow, 2000)
					for i := range rows {
						rows[i] = winRow{k: r.Int64N(50), x: r.Int64N(3), ts: r.Int64N(40)}
					}
					ops := openDedups(t, m.spec, par, nil)
					out := &aggCollector{schema: winInput}
					oracle := &dedupOracle{spec: m.spec}
					for start := 0; start < len(rows); start += batch {
						chunk := rows[start:min(start+batch, len(rows))]
						b := winBatch(chunk...)
						h := make([]uint64, b.NumRows())
						types.HashColumns(b.Rec.Columns()[:1], h)
						b.Release()
						per := make([][]winRow, par)
						for i, row := range chunk {
							p := types.SubtaskForKeyGroup(types.KeyGroupForHash(h[i], 128), par, 128)
							per[p] = append(per[p], row)
							oracle.apply(row)
						}
						for p, pr := range per {
							if len(pr) == 0 {
								continue
							}
							pb := winBatch(pr...)
							if err := ops[p].Process(0, pb, out); err != nil {
								t.Fatal(err)
							}
							pb.Release()
						}
					}
					for k, want := range oracle.out {
						if got := out.byKey[k]; !slices.Equal(got, want) {
							t.Fatalf("key %s:\ngot  %v\nwant %v", k, got, want)
						}
					}
					if len(out.byKey) != len(oracle.out) {
						t.Fatalf("%d keys emitted, want %d", len(out.byKey), len(oracle.out))
					}
					if out.maxRows > joinBatchRows {
						t.Fatalf("emitted a batch of %d rows", out.maxRows)
					}
				})
			}
		}
	}
}

// TestDeduplicateRefusesRetractions: the planner admits insert-only input
// only; a retraction is an error, not a silent drop.
func TestDeduplicateRefusesRetractions(t *testing.T) {
	op := openDedups(t, dedupModes[3].spec, 1, nil)[0]
	b := winBatch(winRow{1, 1, 1})
	defer b.Release()
	kinds := b.Kinds()
	kinds[0] = int8(types.Delete)
	if err := op.Process(0, b, &aggCollector{schema: winInput}); err == nil || !strings.Contains(err.Error(), "insert-only") {
		t.Fatalf("got %v", err)
	}
}

func TestRestoreDeduplicate(t *testing.T) {
	for _, m := range dedupModes {
		testRestore(t, func(r *rand.Rand) *restoreCase {
			spec := m.spec
			var rows []winRow
			for i := 0; i < 500; i++ {
				rows = append(rows, winRow{k: r.Int64N(20), x: r.Int64N(3), ts: r.Int64N(100)})
			}
			build := func(_ int, rs []winRow) types.Batch { return winBatch(rs...) }
			return &restoreCase{
				name: "dedup-" + m.name, newOp: registered(&spec), inputs: 1, keys: [2][]int{spec.Keys},
				steps: restoreSteps(r, rows, func(winRow) int { return 0 }, func(winRow) (int64, bool) { return 0, false }, build),
			}
		})
	}
}

// TestDeduplicateSpecErrors: specs the operator refuses.
func TestDeduplicateSpecErrors(t *testing.T) {
	for _, spec := range []jobgraph.DeduplicateSpec{
		{InputSchema: winInput, Keys: []int{5}, RowtimeCol: -1},
		{InputSchema: winInput, Keys: []int{0}, RowtimeCol: 1},
		{InputSchema: winInput, Keys: []int{0}, RowtimeCol: 7},
		{InputSchema: winInput, Keys: []int{0}, RowtimeCol: -1, TTLMs: -1},
	} {
		if _, err := NewDeduplicate(spec); err == nil {
			t.Errorf("%+v: no error", spec)
		}
	}
}
