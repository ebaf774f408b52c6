package operators

import (
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

var upsertSchema = types.Schema{{Name: "id", Type: types.Int}, {Name: "v", Type: types.String}}

// upsertBatch builds rows "kind id v" such as "+I 1 a"; "NULL" as an id is
// a NULL key.
func upsertBatch(t *testing.T, rows ...string) types.Batch {
	t.Helper()
	ids := array.NewInt32Builder(memory.DefaultAllocator)
	vs := array.NewStringBuilder(memory.DefaultAllocator)
	var kinds []int8
	for _, r := range rows {
		f := strings.Fields(r)
		kind := map[string]types.RowKind{"+I": types.Insert, "-U": types.UpdateBefore, "+U": types.UpdateAfter, "-D": types.Delete}[f[0]]
		kinds = append(kinds, int8(kind))
		if f[1] == "NULL" {
			ids.AppendNull()
		} else {
			ids.Append(int32(f[1][0] - '0'))
		}
		vs.Append(f[2])
	}
	cols := []arrow.Array{ids.NewArray(), vs.NewArray()}
	defer cols[0].Release()
	defer cols[1].Release()
	return types.NewBatch(upsertSchema.ArrowSchema(), cols, kinds)
}

func TestNormalize(t *testing.T) {
	for _, cache := range []int64{1 << 10, 64 << 20} {
		op, err := NewOperator(&jobgraph.NormalizeSpec{Schema: upsertSchema, Keys: []int{0}})
		if err != nil {
			t.Fatal(err)
		}
		if err := op.Open(withKeyedState(t, &Context{MaxParallelism: 128}, cache, t.TempDir())); err != nil {
			t.Fatal(err)
		}
		out := &calcSink{}
		for _, b := range []types.Batch{
			upsertBatch(t, "+I 1 a", "+I 2 b", "+I 1 c"),
			upsertBatch(t, "+U 2 b", "-U 1 c", "+U 1 d", "-D 2 b", "-D 3 x", "+I NULL z"),
			upsertBatch(t, "+I 2 e"),
		} {
			if err := op.Process(0, b, out); err != nil {
				t.Fatal(err)
			}
			b.Release()
		}
		if err := op.Close(); err != nil {
			t.Fatal(err)
		}
		want := []string{
			"+I[1, a]", "+I[2, b]", "-U[1, a]", "+U[1, c]", // a new key, then its update
			// +U 2 b repeats the stored row: nothing; -U is dropped;
			"-U[1, c]", "+U[1, d]", "-D[2, b]", // -D of 3 and a NULL key: nothing
			"+I[2, e]", // a deleted key comes back as new
		}
		if strings.Join(out.rows, " ") != strings.Join(want, " ") {
			t.Errorf("cache %d:\ngot  %v\nwant %v", cache, out.rows, want)
		}
	}
}

// TestNormalizeTTL: with a TTL an unchanged row is emitted again as -U/+U
// (Flink refreshes downstream state so), and a key not written for the TTL
// is gone: its next row is +I and a delete of it emits nothing.
func TestNormalizeTTL(t *testing.T) {
	clock := time.UnixMilli(1_000_000)
	op, err := NewOperator(&jobgraph.NormalizeSpec{Schema: upsertSchema, Keys: []int{0}, TTLMs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Open(withKeyedState(t, &Context{MaxParallelism: 128, Now: func() time.Time { return clock }}, 1<<20, t.TempDir())); err != nil {
		t.Fatal(err)
	}
	out := &calcSink{}
	step := func(advance time.Duration, rows ...string) {
		t.Helper()
		clock = clock.Add(advance)
		b := upsertBatch(t, rows...)
		defer b.Release()
		if err := op.Process(0, b, out); err != nil {
			t.Fatal(err)
		}
	}
	step(0, "+I 1 a", "+I 2 b")
	step(500*time.Millisecond, "+U 1 a")           // unchanged: refreshed, emitted again
	step(700*time.Millisecond, "+U 1 c", "-D 2 b") // 2 expired at 1000 ms
	step(1000*time.Millisecond, "+U 1 d")          // 1 expired too
	if err := op.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"+I[1, a]", "+I[2, b]",
		"-U[1, a]", "+U[1, a]",
		"-U[1, a]", "+U[1, c]", // 2's delete finds nothing
		"+I[1, d]",
	}
	if strings.Join(out.rows, " ") != strings.Join(want, " ") {
		t.Errorf("got  %v\nwant %v", out.rows, want)
	}
}
