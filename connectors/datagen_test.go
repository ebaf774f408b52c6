package connectors

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/operators"
	"github.com/braidflow/braid/types"
)

func datagenTable(opts map[string]string, cols ...types.Field) *catalog.Table {
	t := &catalog.Table{Database: "db", Name: "gen", Options: map[string]string{"connector": "datagen"}}
	for k, v := range opts {
		t.Options[k] = v
	}
	for _, c := range cols {
		t.Columns = append(t.Columns, catalog.Column{Name: c.Name, Type: c.Type})
	}
	return t
}

// batchCollector keeps the emitted batches.
type batchCollector struct{ batches []types.Batch }

func (c *batchCollector) Emit(b types.Batch) error {
	b.Retain()
	c.batches = append(c.batches, b)
	return nil
}

func (c *batchCollector) release() {
	for _, b := range c.batches {
		b.Release()
	}
}

// runDatagen runs every subtask of a datagen table on the unlimited-rate
// fake clock and returns each subtask's batches.
func runDatagen(t *testing.T, tb *catalog.Table, par int) []*batchCollector {
	t.Helper()
	spec, err := DatagenSpecFor(tb)
	if err != nil {
		t.Fatal(err)
	}
	spec.Seed = 7
	out := make([]*batchCollector, par)
	for sub := range par {
		src, err := operators.NewSource(&spec)
		if err != nil {
			t.Fatal(err)
		}
		src.(*DatagenSource).sleep = func(context.Context, time.Duration) error { return nil }
		out[sub] = &batchCollector{}
		t.Cleanup(out[sub].release)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = runSource(t, ctx, src, &operators.Context{Subtask: sub, Parallelism: par}, out[sub])
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func int64s(bs []types.Batch, col int) (vals []int64, nulls int) {
	for _, b := range bs {
		switch a := b.Column(col).(type) {
		case *array.Int64:
			for i := range a.Len() {
				if a.IsNull(i) {
					nulls++
				} else {
					vals = append(vals, a.Value(i))
				}
			}
		case *array.Int32:
			for i := range a.Len() {
				if a.IsNull(i) {
					nulls++
				} else {
					vals = append(vals, int64(a.Value(i)))
				}
			}
		}
	}
	return vals, nulls
}

func TestDatagenSequence(t *testing.T) {
	tb := datagenTable(map[string]string{
		"fields.id.kind": "sequence", "fields.id.start": "1", "fields.id.end": "10001",
		"fields.s.kind": "sequence", "fields.s.start": "5", "fields.s.end": "100000",
	}, types.Field{Name: "id", Type: types.BigInt}, types.Field{Name: "s", Type: types.String})
	out := runDatagen(t, tb, 3)
	var all []int64
	for sub, c := range out {
		vals, _ := int64s(c.batches, 0)
		for i, v := range vals {
			if want := int64(1 + sub + 3*i); v != want {
				t.Fatalf("subtask %d value %d = %d, want %d", sub, i, v, want)
			}
		}
		// s runs beside id, offset by 4.
		strs := c.batches[0].Column(1).(*array.String)
		if strs.Value(0) != strconv.Itoa(5+sub) {
			t.Errorf("subtask %d: s starts at %q", sub, strs.Value(0))
		}
		all = append(all, vals...)
		for _, b := range c.batches {
			if b.NumRows() > maxBatchRows {
				t.Errorf("batch of %d rows", b.NumRows())
			}
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	if len(all) != 10001 || all[0] != 1 || all[10000] != 10001 {
		t.Fatalf("sequence gave %d values %d..%d", len(all), all[0], all[len(all)-1])
	}
}

func TestDatagenNumberOfRowsAndRandom(t *testing.T) {
	tb := datagenTable(map[string]string{
		"number-of-rows":     "25",
		"fields.a.min":       "-5",
		"fields.a.max":       "5",
		"fields.s.length":    "7",
		"fields.n.null-rate": "1",
	},
		types.Field{Name: "a", Type: types.Int},
		types.Field{Name: "s", Type: types.String},
		types.Field{Name: "n", Type: types.BigInt},
		types.Field{Name: "ts", Type: types.Timestamp(3)},
		types.Field{Name: "d", Type: types.Decimal(5, 2)},
		types.Field{Name: "b", Type: types.Boolean},
	)
	before := time.Now()
	out := runDatagen(t, tb, 3)
	total := 0
	for sub, c := range out {
		rows := 0
		for _, b := range c.batches {
			rows += b.NumRows()
			for i := range b.NumRows() {
				if k := b.Kind(i); k != types.Insert {
					t.Fatalf("row kind %v", k)
				}
				if s := b.Column(1).(*array.String).Value(i); len(s) != 7 || strings.Trim(s, "0123456789abcdef") != "" {
					t.Fatalf("random string %q", s)
				}
				ts := b.Column(3).(*array.Timestamp).Value(i)
				if d := time.Duration(int64(ts) - before.UnixNano()); d < -time.Second || d > time.Minute {
					t.Fatalf("timestamp %v from now", d)
				}
			}
		}
		if want := []int{9, 8, 8}[sub]; rows != want {
			t.Errorf("subtask %d made %d rows, want %d", sub, rows, want)
		}
		total += rows
		vals, _ := int64s(c.batches, 0)
		for _, v := range vals {
			if v < -5 || v > 5 {
				t.Fatalf("a = %d outside [-5, 5]", v)
			}
		}
		if _, nulls := int64s(c.batches, 2); nulls != rows {
			t.Errorf("null-rate 1 gave %d NULLs in %d rows", nulls, rows)
		}
	}
	if total != 25 {
		t.Errorf("made %d rows", total)
	}
}

func TestDatagenRate(t *testing.T) {
	tb := datagenTable(map[string]string{"rows-per-second": "100", "number-of-rows": "50"},
		types.Field{Name: "a", Type: types.Int})
	spec, err := DatagenSpecFor(tb)
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewDatagenSource(spec)
	if err != nil {
		t.Fatal(err)
	}
	// A logical clock that advances only when the source sleeps.
	clock := time.Unix(1000, 0)
	src.now = func() time.Time { return clock }
	src.sleep = func(_ context.Context, d time.Duration) error {
		if d > 0 {
			clock = clock.Add(d)
		}
		return nil
	}
	c := &batchCollector{}
	defer c.release()
	if err := runSource(t, context.Background(), src, &operators.Context{Parallelism: 1}, c); err != nil {
		t.Fatal(err)
	}
	if got := clock.Sub(time.Unix(1000, 0)); got != 500*time.Millisecond {
		t.Errorf("50 rows at 100/s took %v of logical time, want 500ms", got)
	}
	if len(c.batches) != 5 || c.batches[0].NumRows() != 10 {
		t.Errorf("%d batches, first of %d rows; want 5 of 10", len(c.batches), c.batches[0].NumRows())
	}
}

func TestDatagenUnboundedStopsOnCancel(t *testing.T) {
	tb := datagenTable(map[string]string{"rows-per-second": "1000"}, types.Field{Name: "a", Type: types.Int})
	spec, err := DatagenSpecFor(tb)
	if err != nil {
		t.Fatal(err)
	}
	src, _ := NewDatagenSource(spec)
	if err := src.Open(&operators.Context{Parallelism: 1}); err != nil {
		t.Fatal(err)
	}
	c := newCollector(spec.Schema)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, c) }()
	c.waitRows(t, 200)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("datagen did not stop on cancel")
	}
}

// TestDatagenVarLen: with 'var-len' random strings and binaries are 1 to
// 'length' long and take several lengths; without it each has the length.
func TestDatagenVarLen(t *testing.T) {
	tb := datagenTable(map[string]string{
		"number-of-rows":  "400",
		"fields.s.length": "6", "fields.s.var-len": "true",
		"fields.b.length": "5", "fields.b.var-len": "true",
		"fields.f.length": "4", "fields.f.var-len": "false",
	},
		types.Field{Name: "s", Type: types.String},
		types.Field{Name: "b", Type: types.Bytes},
		types.Field{Name: "f", Type: types.String},
	)
	strLens, binLens := map[int]int{}, map[int]int{}
	for _, c := range runDatagen(t, tb, 2) {
		for _, b := range c.batches {
			for i := range b.NumRows() {
				strLens[len(b.Column(0).(*array.String).Value(i))]++
				binLens[len(b.Column(1).(*array.Binary).Value(i))]++
				if n := len(b.Column(2).(*array.String).Value(i)); n != 4 {
					t.Fatalf("fixed-length string of %d characters, want 4", n)
				}
			}
		}
	}
	for _, tc := range []struct {
		name    string
		lens    map[int]int
		longest int
	}{{"string", strLens, 6}, {"binary", binLens, 5}} {
		for n := 1; n <= tc.longest; n++ {
			if tc.lens[n] == 0 {
				t.Errorf("no random %s of length %d in 400 rows (lengths %v)", tc.name, n, tc.lens)
			}
		}
		if len(tc.lens) != tc.longest {
			t.Errorf("random %s lengths %v, want 1 to %d", tc.name, tc.lens, tc.longest)
		}
	}
}

func TestDatagenSpecErrors(t *testing.T) {
	a := types.Field{Name: "a", Type: types.Int}
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"fields.a.kind": "zigzag"}, "'fields.a.kind' must be 'random' or 'sequence'"},
		{map[string]string{"fields.b.kind": "random"}, "'fields.b.kind' names no physical column"},
		{map[string]string{"fields.a.kind": "sequence", "fields.a.start": "1"}, "needs options 'fields.a.start' and 'fields.a.end'"},
		{map[string]string{"fields.a.colour": "red"}, "unsupported option 'fields.a.colour'"},
		{map[string]string{"rows-per-sec": "1"}, "unsupported option 'rows-per-sec' for connector 'datagen' (supported: connector, rows-per-second"},
		{map[string]string{"rows-per-second": "-1"}, "'rows-per-second' must be a positive number"},
		{map[string]string{"fields.a.min": "9", "fields.a.max": "1"}, "is above"},
		{map[string]string{"fields.a.max": "99999999999"}, "range of INT"},
		{map[string]string{"fields.a.length": "3"}, "applies to string"},
		{map[string]string{"fields.a.null-rate": "2"}, "from 0 to 1"},
		{map[string]string{"fields.a.max-past": "5m"}, "'fields.a.max-past' applies only to TIMESTAMP columns"},
		{map[string]string{"fields.a.var-len": "true"}, "'fields.a.var-len' applies only to variable-length types (VARCHAR, STRING, VARBINARY, BYTES), a is INT"},
		{map[string]string{"fields.a.var-len": "maybe"}, "option 'fields.a.var-len' must be 'true' or 'false', got 'maybe'"},
		// NaN and infinities compare false with everything: each once
		// slipped through and crashed the job manager at every query.
		{map[string]string{"rows-per-second": "NaN"}, "'rows-per-second' must be a positive number, got 'NaN'"},
		{map[string]string{"rows-per-second": "+Inf"}, "'rows-per-second' must be a positive number"},
		{map[string]string{"fields.a.null-rate": "NaN"}, "'fields.a.null-rate' must be a number from 0 to 1, got 'NaN'"},
	} {
		_, err := DatagenSpecFor(datagenTable(tc.opts, a))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "db.gen") {
			t.Errorf("options %v: error %v, want it to contain %q and the table", tc.opts, err, tc.want)
		}
	}
}

// TestDatagenLimits: values and batches stay bounded whatever the options
// say.
func TestDatagenLimits(t *testing.T) {
	d := types.Field{Name: "d", Type: types.Double}
	for _, tc := range []struct {
		opts  map[string]string
		field types.Field
		want  string
	}{
		{map[string]string{"fields.d.min": "NaN"}, d, "'fields.d.min' must be a finite number, got 'NaN'"},
		{map[string]string{"fields.d.max": "Inf"}, d, "'fields.d.max' must be a finite number"},
		{map[string]string{"fields.s.length": "2000000000"}, types.Field{Name: "s", Type: types.String}, "'fields.s.length' must be a whole number from 1 to 1048576"},
		{nil, types.Field{Name: "c", Type: types.Char(2000000000)}, "datagen makes values of at most 1048576"},
		{map[string]string{"fields.r.length": "3"}, types.Field{Name: "r", Type: types.Row(types.Field{Name: "x", Type: types.Int})}, "'fields.r.length' applies to string, binary, ARRAY, MAP and MULTISET columns"},
		{nil, types.Field{Name: "a", Type: types.Array(types.IntervalDayTime())}, "datagen cannot generate"},
	} {
		_, err := DatagenSpecFor(datagenTable(tc.opts, tc.field))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("options %v on %v: error %v, want %q", tc.opts, tc.field.Type, err, tc.want)
		}
	}
	spec, err := DatagenSpecFor(datagenTable(map[string]string{"number-of-rows": "40", "fields.s.length": "1048576"},
		types.Field{Name: "s", Type: types.String}))
	if err != nil {
		t.Fatal(err)
	}
	spec.RowsPerSecond = 0
	src, err := NewDatagenSource(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Open(&operators.Context{Parallelism: 1}); err != nil {
		t.Fatal(err)
	}
	var batches, rows int
	err = src.Run(context.Background(), emitFunc(func(b types.Batch) error {
		batches++
		rows += b.NumRows()
		if b.NumRows() > 16 {
			t.Errorf("a batch of %d rows of 1 MiB strings", b.NumRows())
		}
		return nil
	}))
	if err != nil || rows != 40 || batches < 3 {
		t.Fatalf("%d rows in %d batches, %v", rows, batches, err)
	}
}

type emitFunc func(types.Batch) error

func (f emitFunc) Emit(b types.Batch) error { return f(b) }

func BenchmarkDatagen(b *testing.B) {
	tb := datagenTable(map[string]string{"number-of-rows": strconv.Itoa(b.N), "fields.id.kind": "sequence",
		"fields.id.start": "0", "fields.id.end": "1000000000", "fields.s.length": "16"},
		types.Field{Name: "id", Type: types.BigInt}, types.Field{Name: "v", Type: types.BigInt},
		types.Field{Name: "s", Type: types.String})
	spec, err := DatagenSpecFor(tb)
	if err != nil {
		b.Fatal(err)
	}
	spec.RowsPerSecond = 0
	src, _ := NewDatagenSource(spec)
	if err := src.Open(&operators.Context{Parallelism: 1}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	if err := src.Run(context.Background(), discard{}); err != nil {
		b.Fatal(err)
	}
}

type discard struct{}

func (discard) Emit(types.Batch) error { return nil }

// TestDatagenComposite makes random ROW, ARRAY, MAP and MULTISET values:
// every ROW field set, 3 elements by default, fields.<col>.length elements
// when given, each value a valid encoding of its type.
func TestDatagenComposite(t *testing.T) {
	row := types.Row(types.Field{Name: "id", Type: types.BigInt}, types.Field{Name: "name", Type: types.String},
		types.Field{Name: "tags", Type: types.Array(types.Int)})
	cols := []types.Field{
		{Name: "r", Type: row},
		{Name: "a", Type: types.Array(types.String)},
		{Name: "m", Type: types.Map(types.Int, types.Double)},
		{Name: "ms", Type: types.Multiset(types.Boolean)},
	}
	tb := datagenTable(map[string]string{"number-of-rows": "20", "fields.a.length": "5"}, cols...)
	out := runDatagen(t, tb, 2)
	rows := 0
	for _, c := range out {
		for _, b := range c.batches {
			for i := range b.NumRows() {
				rows++
				for j, f := range cols {
					enc := b.Column(j).(*array.Binary).Value(i)
					keys, vals, err := types.DecodeComposite(f.Type, enc)
					if err != nil {
						t.Fatalf("%s: %v", f.Name, err)
					}
					want := map[string]int{"r": 3, "a": 5, "m": 3}[f.Name]
					if f.Name == "ms" {
						if len(keys) != 3 {
							t.Fatalf("ms has %d elements", len(keys))
						}
						continue
					}
					if len(vals) != want {
						t.Fatalf("%s has %d elements, want %d", f.Name, len(vals), want)
					}
					for _, v := range vals {
						if v == nil {
							t.Fatalf("%s holds a NULL", f.Name)
						}
					}
				}
			}
		}
	}
	if rows != 20 {
		t.Fatalf("made %d rows", rows)
	}
}

// TestDatagenMaxPastDurations: 'max-past' reads durations as every other
// duration option does ("5m" included).
func TestDatagenMaxPastDurations(t *testing.T) {
	ts := types.Field{Name: "ts", Type: types.Timestamp(3)}
	for v, wantMs := range map[string]string{"5m": "300000", "5 min": "300000", "10s": "10000", "250": "250", "1 d": "86400000"} {
		spec, err := DatagenSpecFor(datagenTable(map[string]string{"fields.ts.max-past": v}, ts))
		if err != nil {
			t.Errorf("max-past %q: %v", v, err)
			continue
		}
		if got := spec.Fields[0].Max; got != wantMs {
			t.Errorf("max-past %q is %s ms, want %s", v, got, wantMs)
		}
	}
	if _, err := DatagenSpecFor(datagenTable(map[string]string{"fields.ts.max-past": "5 fortnights"}, ts)); err == nil ||
		!strings.Contains(err.Error(), "unknown unit 'fortnights'") {
		t.Errorf("bad unit: %v", err)
	}
}
