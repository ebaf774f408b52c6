package render

import (
	"bytes"
	"testing"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/types"
)

// A Top-N's changelog arrives in the order the rank emits it; the TSV
// prints the survivors in ORDER BY order, comparing numbers as numbers.
func TestTSVOrderBy(t *testing.T) {
	cols := []client.ResultColumn{{Name: "name", Type: types.String}, {Name: "total", Type: types.Int}}
	b := makeBatch(t, cols, []row{
		{types.Insert, []any{"A", 7}},
		{types.Insert, []any{"B", 10}},
		{types.Insert, []any{"C", 1}},
		{types.Insert, []any{"D", 9}},
		{types.Delete, []any{"C", 1}},
		{types.UpdateBefore, []any{"D", 9}},
		{types.UpdateAfter, []any{"D", 14}},
	})
	var buf bytes.Buffer
	tsv := NewTSV(&buf, cols, nil)
	tsv.OrderBy([]client.SortKey{{Column: 1, Desc: true}})
	render(t, tsv, []types.Batch{b})
	want := "name\ttotal\nD\t14\nB\t10\nA\t7\n"
	if got := buf.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// NULLs go where the sort key says, whatever the direction; equal keys keep
// arrival order; a second key breaks ties.
func TestTSVOrderByNullsAndTies(t *testing.T) {
	cols := []client.ResultColumn{{Name: "k", Type: types.String}, {Name: "v", Type: types.Double}, {Name: "d", Type: types.Decimal(10, 2)}}
	rows := []row{
		{types.Insert, []any{"x", 2.5, int64(100)}},
		{types.Insert, []any{"n1", nil, int64(5)}},
		{types.Insert, []any{"y", 2.5, int64(100)}},
		{types.Insert, []any{"z", -1.0, int64(-200)}},
		{types.Insert, []any{"n2", nil, nil}},
		{types.Insert, []any{"w", 2.5, int64(50)}},
	}
	for _, c := range []struct {
		name string
		keys []client.SortKey
		want string
	}{
		{"asc nulls first", []client.SortKey{{Column: 1, NullsFirst: true}},
			"n1 n2 z x y w"},
		{"asc nulls last", []client.SortKey{{Column: 1}},
			"z x y w n1 n2"},
		{"desc nulls first", []client.SortKey{{Column: 1, Desc: true, NullsFirst: true}},
			"n1 n2 x y w z"},
		{"desc nulls last, then decimal asc", []client.SortKey{{Column: 1, Desc: true}, {Column: 2}},
			"w x y z n1 n2"},
		{"decimal desc nulls last", []client.SortKey{{Column: 2, Desc: true}},
			"x y w n1 z n2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			tsv := NewTSV(&buf, cols, nil)
			tsv.OrderBy(c.keys)
			render(t, tsv, []types.Batch{makeBatch(t, cols, rows)})
			if got := firstColumn(buf.String()); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestTableOrderBy(t *testing.T) {
	cols := []client.ResultColumn{{Name: "k", Type: types.String}, {Name: "n", Type: types.BigInt}}
	var buf bytes.Buffer
	tb := NewTable(&buf, cols, nil, 0)
	tb.OrderBy([]client.SortKey{{Column: 1}})
	render(t, tb, []types.Batch{makeBatch(t, cols, []row{
		{types.Insert, []any{"b", 20}},
		{types.Insert, []any{"c", 3}},
		{types.Insert, []any{"a", 100}},
		{types.Delete, []any{"c", 3}},
	})})
	want := "+---+-----+\n| k |   n |\n+---+-----+\n| b |  20 |\n| a | 100 |\n+---+-----+\n2 rows in set\n"
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// firstColumn returns the first column of a TSV's rows, space-separated.
func firstColumn(tsv string) string {
	var out []byte
	lines := bytes.Split(bytes.TrimRight([]byte(tsv), "\n"), []byte("\n"))
	for i, l := range lines[1:] {
		if i > 0 {
			out = append(out, ' ')
		}
		out = append(out, bytes.SplitN(l, []byte("\t"), 2)[0]...)
	}
	return string(out)
}
