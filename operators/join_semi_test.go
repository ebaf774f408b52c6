package operators

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

func semiSpec(anti, residual bool) jobgraph.SemiJoinSpec {
	s := jobgraph.SemiJoinSpec{LeftSchema: joinLeft, RightSchema: joinRight, LeftKeys: []int{0}, RightKeys: []int{1}, Anti: anti}
	if residual {
		// lv < rv: left column 1, right column 0 (joined column 3).
		s.Residual = semiResidual()
	}
	return s
}

func semiResidual() *expr.Expr {
	e, err := expr.ResolveCall("<", []*expr.Expr{expr.Column(1, types.Int), expr.Column(3, types.Int)})
	if err != nil {
		panic(err)
	}
	return e
}

// semiOracle replays evs the way Flink's StreamingSemiAntiJoinOperator
// does, by brute force over lists of the live rows of each side: no counts
// are kept, every match is found by scanning.
func semiOracle(evs []joinEvent, anti, residual bool) []string {
	var sides [2][]jrow
	matches := func(l, r jrow) bool {
		return l.key != nil && r.key != nil && *l.key == *r.key && (!residual || l.v < r.v)
	}
	count := func(l jrow, except int) int {
		n := 0
		for i, r := range sides[1] {
			if i != except && matches(l, r) {
				n++
			}
		}
		return n
	}
	str := func(kind types.RowKind, l jrow) string {
		return kind.String() + "[" + strings.Join(l.leftStrs(), ", ") + "]"
	}
	var out []string
	for _, e := range evs {
		acc := e.kind.IsAccumulate()
		if e.input == 0 {
			if (count(e.row, -1) > 0) != anti {
				out = append(out, str(e.kind, e.row))
			}
			if acc {
				sides[0] = append(sides[0], e.row)
			} else {
				for i, l := range sides[0] {
					if sameRow(l, e.row) {
						sides[0] = append(sides[0][:i], sides[0][i+1:]...)
						break
					}
				}
			}
			continue
		}
		// A right row: compare each left row's matches before and after.
		removed := -1
		if !acc {
			for i, r := range sides[1] {
				if sameRow(r, e.row) {
					removed = i
					break
				}
			}
			if removed < 0 {
				continue // validEvents retracts only live rows
			}
		}
		for _, l := range sides[0] {
			if !matches(l, e.row) {
				continue
			}
			before := count(l, -1)
			if acc && before == 0 {
				k := e.kind
				if anti {
					k = types.Delete
				}
				out = append(out, str(k, l))
			}
			if !acc && count(l, removed) == 0 {
				k := e.kind
				if anti {
					k = types.Insert
				}
				out = append(out, str(k, l))
			}
		}
		if acc {
			sides[1] = append(sides[1], e.row)
		} else {
			sides[1] = append(sides[1][:removed], sides[1][removed+1:]...)
		}
	}
	return out
}

// semiFinal is what a batch engine returns for the rows live at the end.
func semiFinal(evs []joinEvent, anti, residual bool) []string {
	var live [2][]jrow
	for _, e := range evs {
		if e.kind.IsAccumulate() {
			live[e.input] = append(live[e.input], e.row)
			continue
		}
		for i, r := range live[e.input] {
			if sameRow(r, e.row) {
				live[e.input] = append(live[e.input][:i], live[e.input][i+1:]...)
				break
			}
		}
	}
	var out []string
	for _, l := range live[0] {
		found := false
		for _, r := range live[1] {
			if l.key != nil && r.key != nil && *l.key == *r.key && (!residual || l.v < r.v) {
				found = true
			}
		}
		if found != anti {
			out = append(out, "["+strings.Join(l.leftStrs(), ", ")+"]")
		}
	}
	return out
}

// runSemi feeds events to `parallelism` subtasks routed by key group, in
// batches of at most batchSize rows of one input.
func runSemi(t *testing.T, spec jobgraph.SemiJoinSpec, evs []joinEvent, batchSize, parallelism int, cacheBytes int64) *collector {
	t.Helper()
	return runTwoInputs(t, &spec, evs, batchSize, parallelism, cacheBytes)
}

func TestSemiJoinAgainstOracle(t *testing.T) {
	for _, mode := range []struct {
		name           string
		anti, residual bool
	}{{"semi", false, false}, {"anti", true, false}, {"semi-residual", false, true}, {"anti-residual", true, true}} {
		for seed := uint64(1); seed <= 4; seed++ {
			evs := validEvents(rand.New(rand.NewPCG(seed, 11)), 600, 6)
			want := semiOracle(evs, mode.anti, mode.residual)
			final := semiFinal(evs, mode.anti, mode.residual)
			for _, bs := range []int{1, 7, 256, 4096} {
				for _, par := range []int{1, 4} {
					for _, cache := range []int64{1024, 64 << 20} {
						name := fmt.Sprintf("%s/seed%d/batch%d/par%d/cache%d", mode.name, seed, bs, par, cache)
						t.Run(name, func(t *testing.T) {
							got := runSemi(t, semiSpec(mode.anti, mode.residual), evs, bs, par, cache)
							sameMultiset(t, got.rows, want)
							sameMultiset(t, materialize(t, got.rows), final)
						})
					}
				}
			}
		}
	}
}

// TestSemiJoinKinds pins Flink's row kinds for a small changelog.
func TestSemiJoinKinds(t *testing.T) {
	k1 := int64(1)
	l := jrow{key: &k1, v: 1, s: "a"}
	r := jrow{key: &k1, v: 5}
	evs := []joinEvent{
		{0, types.Insert, l},                  // semi: nothing; anti: +I
		{1, types.Insert, r},                  // first match: semi +I, anti -D
		{1, types.Insert, r},                  // second match: nothing
		{1, types.UpdateBefore, r},            // one match left: nothing
		{1, types.Delete, r},                  // last match goes: semi -D, anti +I
		{0, types.Insert, jrow{v: 2, s: "n"}}, // NULL key: semi nothing, anti +I
		{1, types.UpdateAfter, r},             // semi +U, anti -D
		{0, types.Delete, l},                  // semi -D; anti nothing
	}
	for _, c := range []struct {
		anti bool
		want []string
	}{
		{false, []string{"+I[1, 1, a]", "-D[1, 1, a]", "+U[1, 1, a]", "-D[1, 1, a]"}},
		{true, []string{"+I[1, 1, a]", "-D[1, 1, a]", "+I[1, 1, a]", "+I[(null), 2, n]", "-D[1, 1, a]"}},
	} {
		for _, residual := range []bool{false, true} {
			got := runSemi(t, semiSpec(c.anti, residual), evs, 1, 1, 1<<20)
			if strings.Join(got.rows, " ") != strings.Join(c.want, " ") {
				t.Errorf("anti=%v residual=%v:\ngot  %v\nwant %v", c.anti, residual, got.rows, c.want)
			}
		}
	}
}

// TestSemiJoinWithoutKeys: an uncorrelated EXISTS joins on no keys.
func TestSemiJoinWithoutKeys(t *testing.T) {
	k1, k2 := int64(1), int64(2)
	spec := jobgraph.SemiJoinSpec{LeftSchema: joinLeft, RightSchema: joinRight}
	evs := []joinEvent{
		{0, types.Insert, jrow{key: &k1, v: 1, s: "a"}},
		{0, types.Insert, jrow{v: 2, s: "b"}},
		{1, types.Insert, jrow{key: &k2, v: 9}},
		{1, types.Delete, jrow{key: &k2, v: 9}},
	}
	got := runSemi(t, spec, evs, 1, 1, 1<<20)
	want := []string{"+I[1, 1, a]", "+I[(null), 2, b]", "-D[1, 1, a]", "-D[(null), 2, b]"}
	if strings.Join(got.rows, " ") != strings.Join(want, " ") {
		t.Fatalf("got  %v\nwant %v", got.rows, want)
	}
}

// TestSemiJoinStateTTL: rows stop counting once their time to live has
// passed since their last write (table.exec.state.ttl).
func TestSemiJoinStateTTL(t *testing.T) {
	for _, residual := range []bool{false, true} {
		spec := semiSpec(false, residual)
		spec.LeftTTLMs = (24 * time.Hour).Milliseconds()
		spec.RightTTLMs = time.Hour.Milliseconds()
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
		feed(1, jrow{key: &k, v: 9})
		clock = clock.Add(59 * time.Minute)
		feed(0, jrow{key: &k, v: 1, s: "a"}) // the right row is 59 minutes old: a match
		clock = clock.Add(2 * time.Minute)
		feed(0, jrow{key: &k, v: 2, s: "b"}) // 61 minutes: expired, no match
		op.Close()
		want := []string{"+I[1, 1, a]"}
		if strings.Join(out.rows, " ") != strings.Join(want, " ") {
			t.Fatalf("residual=%v: got %v, want %v", residual, out.rows, want)
		}
	}
}
