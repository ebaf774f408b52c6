package operators

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/braidflow/braid/types"
)

// validEvents makes n events whose retractions all retract live rows.
func validEvents(r *rand.Rand, n, keys int) []joinEvent {
	var evs []joinEvent
	for _, e := range randomEvents(r, n, keys) {
		if e.kind.IsRetract() && !wasLive(evs, e) {
			continue
		}
		evs = append(evs, e)
	}
	return evs
}

func wasLive(evs []joinEvent, e joinEvent) bool {
	n := 0
	for _, p := range evs {
		if p.input == e.input && sameRow(p.row, e.row) {
			if p.kind.IsAccumulate() {
				n++
			} else {
				n--
			}
		}
	}
	return n > 0
}

func sameRow(a, b jrow) bool {
	return keyStr(a.key) == keyStr(b.key) && a.v == b.v && a.s == b.s
}

// outerOracle joins the rows live at the end, as a batch engine would.
func outerOracle(evs []joinEvent, outerLeft, outerRight bool) []string {
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
	nulls := func(n int) []string { return strings.Split(strings.Repeat("(null),", n-1)+"(null)", ",") }
	matchedRight := make([]bool, len(live[1]))
	for _, l := range live[0] {
		matched := false
		for ri, r := range live[1] {
			if l.key != nil && r.key != nil && *l.key == *r.key {
				out = append(out, "["+strings.Join(append(l.leftStrs(), r.rightStrs()...), ", ")+"]")
				matched, matchedRight[ri] = true, true
			}
		}
		if !matched && outerLeft {
			out = append(out, "["+strings.Join(append(l.leftStrs(), nulls(len(joinRight))...), ", ")+"]")
		}
	}
	if outerRight {
		for ri, r := range live[1] {
			if !matchedRight[ri] {
				out = append(out, "["+strings.Join(append(nulls(len(joinLeft)), r.rightStrs()...), ", ")+"]")
			}
		}
	}
	sort.Strings(out)
	return out
}

// materialize applies a changelog, failing on a retraction of a row that is
// not there.
func materialize(t *testing.T, changes []string) []string {
	t.Helper()
	count := map[string]int{}
	for _, c := range changes {
		kind, row := c[:2], c[2:]
		if kind == "+I" || kind == "+U" {
			count[row]++
			continue
		}
		if count[row] == 0 {
			t.Fatalf("%s retracts a row that is not in the result", c)
		}
		count[row]--
	}
	var out []string
	for row, n := range count {
		for ; n > 0; n-- {
			out = append(out, row)
		}
	}
	sort.Strings(out)
	return out
}

func TestOuterJoinAgainstOracle(t *testing.T) {
	for _, kind := range []struct {
		name        string
		left, right bool
	}{{"left", true, false}, {"right", false, true}, {"full", true, true}} {
		for seed := uint64(0); seed < 20; seed++ {
			for _, batch := range []int{1, 7, 4096} {
				t.Run(fmt.Sprintf("%s/seed=%d/batch=%d", kind.name, seed, batch), func(t *testing.T) {
					r := rand.New(rand.NewPCG(seed, 7))
					evs := validEvents(r, 120, 4)
					spec := baseSpec()
					spec.OuterLeft, spec.OuterRight = kind.left, kind.right
					op, err := NewOperator(&spec)
					if err != nil {
						t.Fatal(err)
					}
					if err := op.Open(withKeyedState(t, &Context{MaxParallelism: 128}, 1<<10, t.TempDir())); err != nil {
						t.Fatal(err)
					}
					out := &collector{}
					for start := 0; start < len(evs); {
						end := start + 1
						for end < len(evs) && end-start < batch && evs[end].input == evs[start].input {
							end++
						}
						b := buildBatch(evs[start].input, evs[start:end])
						if err := op.Process(evs[start].input, b, out); err != nil {
							t.Fatal(err)
						}
						b.Release()
						start = end
					}
					op.Close()
					got, want := materialize(t, out.rows), outerOracle(evs, kind.left, kind.right)
					if strings.Join(got, "\n") != strings.Join(want, "\n") {
						t.Fatalf("final result differs\ngot  %v\nwant %v", got, want)
					}
				})
			}
		}
	}
}

// TestLeftJoinKinds checks the exact changelog Flink emits for a LEFT JOIN.
func TestLeftJoinKinds(t *testing.T) {
	spec := baseSpec()
	spec.OuterLeft = true
	op, err := NewOuterJoin(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Open(withKeyedState(t, &Context{MaxParallelism: 128}, 1<<20, t.TempDir())); err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	k := int64(1)
	l := jrow{key: &k, v: 1, s: "a"}
	rr := jrow{key: &k, v: 9}
	out := &collector{}
	for _, e := range []joinEvent{{0, types.Insert, l}, {1, types.Insert, rr}, {1, types.UpdateBefore, rr}} {
		b := buildBatch(e.input, []joinEvent{e})
		if err := op.Process(e.input, b, out); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	want := []string{"+I[1, 1, a, (null), (null)]", "-D[1, 1, a, (null), (null)]", "+I[1, 1, a, 9, 1]", "-U[1, 1, a, 9, 1]", "+I[1, 1, a, (null), (null)]"}
	if strings.Join(out.rows, " ") != strings.Join(want, " ") {
		t.Fatalf("got  %v\nwant %v", out.rows, want)
	}
}
