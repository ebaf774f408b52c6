package operators

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/braidflow/braid/expr"
	"github.com/braidflow/braid/jobgraph"
	"github.com/braidflow/braid/types"
)

type calcSink struct{ rows []string }

func (s *calcSink) Emit(b types.Batch) error {
	schema, err := types.SchemaFromArrow(b.Rec.Schema())
	if err != nil {
		return err
	}
	for r := 0; r < b.NumRows(); r++ {
		row := b.Kind(r).String() + "["
		for c := 0; c < b.NumCols(); c++ {
			v, isNull := types.FormatValue(b.Column(c), r, schema[c].Type, nil)
			if isNull {
				v = "NULL"
			}
			if c > 0 {
				row += ", "
			}
			row += v
		}
		s.rows = append(s.rows, row+"]")
	}
	return nil
}

var calcIn = types.Schema{{Name: "id", Type: types.BigInt}, {Name: "name", Type: types.String}, {Name: "ts", Type: types.TimestampLTZ(3)}}

// calcBatch builds n rows: id i, name "n<i>" (NULL when i%5 == 4), ts i
// seconds after the epoch; row kinds cycle +I, -U, +U, -D.
func calcBatch(start, n int) types.Batch {
	mem := memory.DefaultAllocator
	ib := array.NewInt64Builder(mem)
	sb := array.NewStringBuilder(mem)
	tb := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"})
	defer ib.Release()
	defer sb.Release()
	defer tb.Release()
	kinds := make([]int8, n)
	for i := start; i < start+n; i++ {
		ib.Append(int64(i))
		if i%5 == 4 {
			sb.AppendNull()
		} else {
			sb.Append(fmt.Sprintf("n%d", i))
		}
		tb.Append(arrow.Timestamp(int64(i) * 1_000_000_000))
		kinds[i-start] = int8(i % 4)
	}
	cols := []arrow.Array{ib.NewArray(), sb.NewArray(), tb.NewArray()}
	b := types.NewBatch(calcIn.ArrowSchema(), cols, kinds)
	for _, c := range cols {
		c.Release()
	}
	return b
}

func resolve(t testing.TB, name string, args ...*expr.Expr) *expr.Expr {
	t.Helper()
	e, err := expr.ResolveCall(name, args)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func calcSpec(t testing.TB) jobgraph.CalcSpec {
	id := expr.Column(0, types.BigInt)
	filter := resolve(t, "=", resolve(t, "%", id, expr.Literal(int64(2), types.Int.WithNullable(false))), expr.Literal(int64(0), types.Int.WithNullable(false)))
	upper := resolve(t, "UPPER", expr.Column(1, types.String))
	tsStr := expr.Cast(expr.Column(2, types.TimestampLTZ(3)), types.String)
	return jobgraph.CalcSpec{
		InputSchema: calcIn,
		Filter:      filter,
		Projections: []*expr.Expr{id, upper, tsStr},
		OutputSchema: types.Schema{
			{Name: "id", Type: types.BigInt}, {Name: "up", Type: upper.Type}, {Name: "t", Type: types.String},
		},
	}
}

func TestCalc(t *testing.T) {
	for _, size := range []int{1, 7, 4096} {
		for _, zone := range []string{"", "Asia/Tokyo"} {
			t.Run(fmt.Sprintf("%d/%s", size, zone), func(t *testing.T) {
				spec := calcSpec(t)
				op, err := NewOperator(&spec)
				if err != nil {
					t.Fatal(err)
				}
				ctx := &Context{}
				if zone != "" {
					if ctx.TimeZone, err = time.LoadLocation(zone); err != nil {
						t.Fatal(err)
					}
				}
				if err := op.Open(ctx); err != nil {
					t.Fatal(err)
				}
				defer op.Close()
				sink := &calcSink{}
				const total = 20
				for start := 0; start < total; start += size {
					n := min(size, total-start)
					b := calcBatch(start, n)
					if err := op.Process(0, b, sink); err != nil {
						t.Fatal(err)
					}
					b.Release()
				}
				if err := op.EndInput(0, sink); err != nil {
					t.Fatal(err)
				}
				var want []string
				hour := "00"
				if zone != "" {
					hour = "09"
				}
				kinds := []string{"+I", "-U", "+U", "-D"}
				for i := 0; i < total; i += 2 {
					name := fmt.Sprintf("N%d", i)
					if i%5 == 4 {
						name = "NULL"
					}
					want = append(want, fmt.Sprintf("%s[%d, %s, 1970-01-01 %s:00:%02d.000]", kinds[i%4], i, name, hour, i))
				}
				if fmt.Sprint(sink.rows) != fmt.Sprint(want) {
					t.Errorf("got  %v\nwant %v", sink.rows, want)
				}
			})
		}
	}
}

func TestCalcAllFiltered(t *testing.T) {
	spec := calcSpec(t)
	spec.Filter = resolve(t, "<", expr.Column(0, types.BigInt), expr.Literal(int64(0), types.Int.WithNullable(false)))
	op, err := NewCalc(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Open(&Context{}); err != nil {
		t.Fatal(err)
	}
	sink := &countingSink{}
	b := calcBatch(0, 100)
	defer b.Release()
	if err := op.Process(0, b, sink); err != nil {
		t.Fatal(err)
	}
	if sink.batches != 0 {
		t.Errorf("emitted %d batches for an all-filtered input", sink.batches)
	}
}

func TestCalcErrors(t *testing.T) {
	spec := calcSpec(t)
	spec.OutputSchema = spec.OutputSchema[:1]
	if _, err := NewCalc(spec); err == nil {
		t.Error("mismatched output schema accepted")
	}
	spec = calcSpec(t)
	spec.OutputSchema[0].Type = types.String
	if _, err := NewCalc(spec); err == nil {
		t.Error("mistyped output column accepted")
	}
	if _, err := SpecAs[*jobgraph.CalcSpec](&jobgraph.JoinSpec{}); err == nil ||
		err.Error() != "operators: a join_inner operator needs a *jobgraph.CalcSpec, not a *jobgraph.JoinSpec" {
		t.Errorf("wrong spec type: %v", err)
	}
	// A division by zero in a projection fails Process with a clear error.
	spec = calcSpec(t)
	spec.Filter = nil
	spec.Projections[0] = resolve(t, "/", expr.Literal(int64(10), types.BigInt.WithNullable(false)), expr.Column(0, types.BigInt))
	op, err := NewCalc(spec)
	if err != nil {
		t.Fatal(err)
	}
	b := calcBatch(0, 3)
	defer b.Release()
	if err := op.Process(0, b, &countingSink{}); err == nil {
		t.Error("10 / 0 did not fail")
	}
}

type countingSink struct{ batches, rows int }

func (s *countingSink) Emit(b types.Batch) error {
	s.batches++
	s.rows += b.NumRows()
	return nil
}

func BenchmarkCalc(b *testing.B) {
	op, err := NewCalc(calcSpec(b))
	if err != nil {
		b.Fatal(err)
	}
	if err := op.Open(&Context{}); err != nil {
		b.Fatal(err)
	}
	batch := calcBatch(0, 4096)
	defer batch.Release()
	sink := &countingSink{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := op.Process(0, batch, sink); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*4096/b.Elapsed().Seconds(), "rows/s")
}
