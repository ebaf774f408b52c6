package operators

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

// overSpec partitions winInput (k, x, ts) by k and computes COUNT(*),
// SUM(x), MIN(x), MAX(x) and AVG(x) over the frame.
func overSpec(rows, unbounded bool, preceding int64) jobgraph.OverAggSpec {
	out := append(types.Schema{}, winInput...)
	out = append(out, types.Field{Name: "c", Type: types.BigInt.WithNullable(false)},
		types.Field{Name: "s", Type: types.BigInt}, types.Field{Name: "mn", Type: types.BigInt},
		types.Field{Name: "mx", Type: types.BigInt}, types.Field{Name: "av", Type: types.BigInt})
	return jobgraph.OverAggSpec{
		InputSchema: winInput, Partition: []int{0}, Rowtime: 2, Rows: rows, Unbounded: unbounded, Preceding: preceding,
		Aggs: []jobgraph.AggCall{{Func: jobgraph.AggCount, Arg: -1}, {Func: jobgraph.AggSum, Arg: 1},
			{Func: jobgraph.AggMin, Arg: 1}, {Func: jobgraph.AggMax, Arg: 1}, {Func: jobgraph.AggAvg, Arg: 1}},
		OutputSchema: out,
	}
}

func openOverAgg(t testing.TB, spec jobgraph.OverAggSpec) *OverAgg {
	t.Helper()
	a, err := NewOverAgg(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Open(withKeyedState(t, &Context{}, 0, "")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func overStep(t *testing.T, a *OverAgg, out *winCollector, wm int64, rows ...winRow) string {
	t.Helper()
	if len(rows) > 0 {
		b := winBatch(rows...)
		defer b.Release()
		if err := a.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.ProcessWatermark(wm, out); err != nil {
		t.Fatal(err)
	}
	return out.take()
}

func TestOverAggRowsBounded(t *testing.T) {
	a := openOverAgg(t, overSpec(true, false, 2))
	out := &winCollector{}
	// Out of order within the watermark: rows wait for it, then go in
	// rowtime order; equal rowtimes in arrival order.
	got := overStep(t, a, out, 1000, winRow{1, 30, 3000}, winRow{1, 10, 1000}, winRow{1, 20, 2000})
	if got != "+I[1 10 1000 1 10 10 10 10] wm 1000" {
		t.Fatalf("got %s", got)
	}
	got = overStep(t, a, out, 5000, winRow{1, 5, 5000}, winRow{1, 40, 5000}, winRow{2, 7, 4000})
	want := "+I[1 20 2000 2 30 10 20 15] +I[1 30 3000 3 60 10 30 20] +I[2 7 4000 1 7 7 7 7] " +
		"+I[1 5 5000 3 55 5 30 18] +I[1 40 5000 3 75 5 40 25] wm 5000"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// A late row of key 1 (its partition processed 5000) is dropped; key
	// 2 has only processed 4000, so 4500 is taken at the next watermark.
	got = overStep(t, a, out, 6000, winRow{1, 99, 4000}, winRow{2, 1, 4500})
	if got != "+I[2 1 4500 2 8 1 7 4] wm 6000" {
		t.Fatalf("got %s", got)
	}
}

func TestOverAggRangeBounded(t *testing.T) {
	a := openOverAgg(t, overSpec(false, false, 1000))
	out := &winCollector{}
	got := overStep(t, a, out, 3000,
		winRow{1, 1, 1000}, winRow{1, 2, 1500}, winRow{1, 3, 2500}, winRow{1, 4, 2500}, winRow{1, 5, 3000})
	// 2500: the frame is [1500, 2500], both rows at 2500 included in each.
	want := "+I[1 1 1000 1 1 1 1 1] +I[1 2 1500 2 3 1 2 1] +I[1 3 2500 3 9 2 4 3] +I[1 4 2500 3 9 2 4 3] " +
		"+I[1 5 3000 3 12 3 5 4] wm 3000"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// The frame empties and refills: MIN and MAX come back from their
	// retractions.
	got = overStep(t, a, out, 10000, winRow{1, 8, 9000})
	if got != "+I[1 8 9000 1 8 8 8 8] wm 10000" {
		t.Fatalf("got %s", got)
	}
}

func TestOverAggUnbounded(t *testing.T) {
	for _, c := range []struct {
		rows bool
		want string
	}{
		{true, "+I[1 2 1000 1 2 2 2 2] +I[1 4 1000 2 6 2 4 3] +I[2 9 1500 1 9 9 9 9] +I[1 1 2000 3 7 1 4 2] wm 2000"},
		{false, "+I[1 2 1000 2 6 2 4 3] +I[1 4 1000 2 6 2 4 3] +I[2 9 1500 1 9 9 9 9] +I[1 1 2000 3 7 1 4 2] wm 2000"},
	} {
		a := openOverAgg(t, overSpec(c.rows, true, 0))
		out := &winCollector{}
		got := overStep(t, a, out, 2000, winRow{1, 2, 1000}, winRow{2, 9, 1500}, winRow{1, 4, 1000}, winRow{1, 1, 2000})
		if got != c.want {
			t.Fatalf("rows=%v: got  %s\nwant %s", c.rows, got, c.want)
		}
		// An unbounded frame drops rows at or behind the watermark, even of
		// a partition that has not passed them.
		got = overStep(t, a, out, 3000, winRow{2, 5, 2000}, winRow{1, 3, 2500})
		if want := "+I[1 3 2500 4 10 1 4 2] wm 3000"; got != want {
			t.Fatalf("rows=%v: got %s, want %s", c.rows, got, want)
		}
	}
}

// overOracle computes, from every row that was not late, what each row
// emits: the rows of a partition in rowtime then arrival order, each with
// the aggregates over its frame.
func overOracle(spec jobgraph.OverAggSpec, rows []winRow) []string {
	byKey := map[int64][]winRow{}
	for _, r := range rows {
		byKey[r.k] = append(byKey[r.k], r)
	}
	var out []string
	for _, rs := range byKey {
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].ts < rs[j].ts })
		for i, r := range rs {
			var frame []winRow
			for j, o := range rs {
				var in bool
				switch {
				case spec.Rows && spec.Unbounded:
					in = j <= i
				case spec.Rows:
					in = j <= i && int64(i-j) <= spec.Preceding
				case spec.Unbounded:
					in = o.ts <= r.ts
				default:
					in = o.ts <= r.ts && o.ts >= r.ts-spec.Preceding
				}
				if in {
					frame = append(frame, o)
				}
			}
			s, mn, mx := int64(0), frame[0].x, frame[0].x
			for _, o := range frame {
				s += o.x
				mn, mx = min(mn, o.x), max(mx, o.x)
			}
			n := int64(len(frame))
			out = append(out, fmt.Sprintf("+I[%d %d %d %d %d %d %d %d]", r.k, r.x, r.ts, n, s, mn, mx, s/n))
		}
	}
	sort.Strings(out)
	return out
}

// TestOverAggOracle feeds random rows, out of order within a watermark
// delay and sometimes late, in batches of several sizes, and compares the
// output with overOracle over the rows the operator's lateness rule keeps.
func TestOverAggOracle(t *testing.T) {
	for _, fr := range []struct {
		rows, unbounded bool
		preceding       int64
	}{{true, false, 0}, {true, false, 3}, {false, false, 0}, {false, false, 700}, {true, true, 0}, {false, true, 0}} {
		for _, batch := range []int{1, 7, 256} {
			r := rand.New(rand.NewPCG(uint64(batch), 9))
			spec := overSpec(fr.rows, fr.unbounded, fr.preceding)
			a := openOverAgg(t, spec)
			out := &winCollector{}
			var kept, pend []winRow
			wm, last := int64(MinWatermark), map[int64]int64{}
			flush := func() {
				for len(pend) > 0 {
					n := min(batch, len(pend))
					b := winBatch(pend[:n]...)
					if err := a.Process(0, b, out); err != nil {
						t.Fatal(err)
					}
					b.Release()
					pend = pend[n:]
				}
			}
			var all []string
			hi := int64(0)
			for i := 0; i < 600; i++ {
				row := winRow{k: r.Int64N(5), x: r.Int64N(100) - 20, ts: 1 + hi + r.Int64N(400) - 300}
				hi = max(hi, row.ts)
				if row.ts%10 == 0 {
					row.ts = hi - hi%100 // collide rowtimes
				}
				// The operator's lateness rule, applied at arrival.
				late := (fr.unbounded && row.ts <= wm) || (!fr.unbounded && row.ts <= max(last[row.k], 0))
				if !late {
					kept = append(kept, row)
				}
				pend = append(pend, row)
				if r.IntN(20) == 0 {
					flush()
					wm = hi - 200
					for _, k := range kept {
						if k.ts <= wm && k.ts > last[k.k] {
							last[k.k] = k.ts
						}
					}
					if err := a.ProcessWatermark(wm, out); err != nil {
						t.Fatal(err)
					}
				}
			}
			flush()
			if err := a.ProcessWatermark(MaxWatermark, out); err != nil {
				t.Fatal(err)
			}
			for _, e := range out.events {
				if strings.HasPrefix(e, "+I") {
					all = append(all, e)
				}
			}
			sort.Strings(all)
			want := overOracle(spec, kept)
			if strings.Join(all, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%+v batch %d: got %d rows, want %d\ngot  %v\nwant %v", fr, batch, len(all), len(want), all, want)
			}
		}
	}
}

func TestRestoreOverAgg(t *testing.T) {
	for _, fr := range []struct {
		rows, unbounded bool
		preceding       int64
	}{{true, false, 2}, {false, false, 1500}, {true, true, 0}, {false, true, 0}} {
		testRestore(t, func(r *rand.Rand) *restoreCase {
			spec := overSpec(fr.rows, fr.unbounded, fr.preceding)
			build := func(_ int, evs []ijEvent) types.Batch {
				rows := make([]winRow, len(evs))
				for i, e := range evs {
					rows[i] = winRow{k: e.k, x: e.v, ts: e.ts}
				}
				return winBatch(rows...)
			}
			return &restoreCase{
				name: fmt.Sprintf("over-rows=%v-unbounded=%v", fr.rows, fr.unbounded), newOp: registered(&spec),
				inputs: 1, keys: [2][]int{spec.Partition},
				steps: restoreSteps(r, lateEvents(r, 500, 8), func(ijEvent) int { return 0 }, ijWatermark, build),
			}
		})
	}
}

// BenchmarkOverAggRowsBounded measures SUM, COUNT(*) and MAX over ROWS
// BETWEEN 2 PRECEDING AND CURRENT ROW, 1000 keys, a watermark every 4096
// rows; it reports input rows per second.
func BenchmarkOverAggRowsBounded(b *testing.B) {
	spec := overSpec(true, false, 2)
	a := openOverAgg(b, spec)
	out := &discardOut{}
	const n = 4096
	r := rand.New(rand.NewPCG(1, 2))
	ts := int64(1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		rows := make([]winRow, n)
		for j := range rows {
			ts++
			rows[j] = winRow{k: r.Int64N(1000), x: r.Int64N(100), ts: ts}
		}
		batch := winBatch(rows...)
		b.StartTimer()
		if err := a.Process(0, batch, out); err != nil {
			b.Fatal(err)
		}
		if err := a.ProcessWatermark(ts, out); err != nil {
			b.Fatal(err)
		}
		batch.Release()
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "rows/s")
}

type discardOut struct{}

func (*discardOut) Emit(b types.Batch) error  { return nil }
func (*discardOut) EmitWatermark(int64) error { return nil }
