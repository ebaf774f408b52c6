package types

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// codecSchema covers every physical layout.
var codecSchema = Schema{
	{"b", Boolean}, {"i8", TinyInt}, {"i16", SmallInt}, {"i32", Int}, {"i64", BigInt},
	{"f32", Float}, {"f64", Double}, {"dec", Decimal(20, 2)}, {"s", String}, {"bin", Bytes},
	{"d", Date}, {"t", Time(3)}, {"ts", Timestamp(3)}, {"ltz", TimestampLTZ(3)},
	{"ids", IntervalDayTime()}, {"iym", IntervalYearMonth()}, {"n", Null},
}

// randomColumns builds n rows of s with about nullRate NULLs, drawing each
// value from a small domain so duplicates occur.
func randomColumns(t testing.TB, r *rand.Rand, s Schema, n int, nullRate float64) []arrow.Array {
	t.Helper()
	rb := NewRowBuilder(memory.DefaultAllocator, s)
	defer rb.Release()
	for i := 0; i < n; i++ {
		for c, f := range s {
			cb := &rb.cols[c]
			if f.Type.Kind == KindNull || r.Float64() < nullRate {
				cb.b.AppendNull()
				continue
			}
			v := r.IntN(7) - 3
			switch cb.kind {
			case pBool:
				cb.bl.Append(v > 0)
			case pInt8:
				cb.i8.Append(int8(v))
			case pInt16:
				cb.i16.Append(int16(v * 1000))
			case pInt32:
				cb.i32.Append(int32(v * 100000))
			case pInt64:
				cb.i64.Append(int64(v) << 40)
			case pFloat32:
				cb.f32.Append(float32(v) / 3)
			case pFloat64:
				cb.f64.Append(float64(v) / 7)
			case pDecimal:
				cb.dec.Append(decimal128.FromI64(int64(v) * 12345))
			case pString:
				cb.str.Append(fmt.Sprintf("s%d-%s", v, string(bytes.Repeat([]byte{'x'}, r.IntN(20)))))
			case pBinary:
				cb.bin.Append(bytes.Repeat([]byte{byte(v)}, r.IntN(4)))
			case pDate32:
				cb.d32.Append(arrow.Date32(v * 365))
			case pTime32:
				cb.t32.Append(arrow.Time32(v * 1000))
			case pTimestamp:
				cb.ts.Append(arrow.Timestamp(int64(v) * 1e12))
			case pDuration:
				cb.dur.Append(arrow.Duration(v * 60000))
			}
		}
		rb.EndRow()
	}
	return rb.NewArrays()
}

func release(cols []arrow.Array) {
	for _, c := range cols {
		c.Release()
	}
}

func TestRowCodecRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, nullRate := range []float64{0, 0.3, 1} {
		cols := randomColumns(t, r, codecSchema, 500, nullRate)
		enc := NewRowEncoder(codecSchema)
		rb := NewRowBuilder(nil, codecSchema)
		rb.Reserve(500)
		dec := rb.Decoder(0, len(codecSchema))
		var buf []byte
		for i := 0; i < 500; i++ {
			buf = enc.AppendRow(buf[:0], cols, i)
			if err := dec.Append(buf); err != nil {
				t.Fatalf("row %d: %v", i, err)
			}
			rb.EndRow()
		}
		if rb.Len() != 500 {
			t.Fatalf("Len = %d", rb.Len())
		}
		got := rb.NewArrays()
		for c := range cols {
			if !array.Equal(cols[c], got[c]) {
				t.Errorf("nullRate %v: column %s differs:\n%v\n%v", nullRate, codecSchema[c].Name, cols[c], got[c])
			}
		}
		release(got)
		release(cols)
		rb.Release()
	}
}

// TestRowBuilderParts builds rows from an Arrow part, an encoded part and a
// NULL part, as a join does.
func TestRowBuilderParts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	left := Schema{{"a", BigInt}, {"s", String}}
	right := Schema{{"c", Double}, {"d", Decimal(10, 3)}}
	out := append(append(Schema{}, left...), right...)
	lc := randomColumns(t, r, left, 50, 0.2)
	rc := randomColumns(t, r, right, 50, 0.2)
	defer release(lc)
	defer release(rc)
	renc := NewRowEncoder(right)
	rb := NewRowBuilder(nil, out)
	defer rb.Release()
	dec := rb.Decoder(2, 2)
	for i := 0; i < 50; i++ {
		rb.AppendColumns(0, lc, i)
		if i%5 == 0 {
			rb.AppendNulls(2, 2)
		} else if err := dec.Append(renc.AppendRow(nil, rc, i)); err != nil {
			t.Fatal(err)
		}
		rb.EndRow()
	}
	got := rb.NewArrays()
	defer release(got)
	for i := 0; i < 50; i++ {
		for c := 0; c < 2; c++ {
			if lc[c].ValueStr(i) != got[c].ValueStr(i) {
				t.Fatalf("row %d left col %d: %s vs %s", i, c, lc[c].ValueStr(i), got[c].ValueStr(i))
			}
			want := rc[c].ValueStr(i)
			if i%5 == 0 {
				want = array.NullValueStr
			}
			if g := got[2+c].ValueStr(i); g != want {
				t.Fatalf("row %d right col %d: %s vs %s", i, c, want, g)
			}
		}
	}
}

// TestEncodeKeyEquality: keys are equal exactly when the rows' values are.
func TestEncodeKeyEquality(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	s := Schema{{"i", Int}, {"s", String}, {"f", Double}, {"b", Bytes}}
	cols := randomColumns(t, r, s, 300, 0.2)
	defer release(cols)
	enc := NewRowEncoder(s)
	rowStr := func(i int) string {
		var out string
		for _, c := range cols {
			out += c.ValueStr(i) + "\x00"
		}
		return out
	}
	for i := 0; i < 300; i++ {
		ki := enc.EncodeKey(nil, cols, i)
		for j := 0; j < 300; j++ {
			kj := enc.EncodeKey(nil, cols, j)
			if (rowStr(i) == rowStr(j)) != bytes.Equal(ki, kj) {
				t.Fatalf("rows %d and %d: values equal %v, keys equal %v", i, j, rowStr(i) == rowStr(j), bytes.Equal(ki, kj))
			}
		}
	}
	// A NULL string column and an empty string differ; so do ("a","") and ("","a").
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	sb.AppendNull()
	sb.Append("")
	sb.Append("a")
	sb.Append("")
	a := sb.NewArray()
	sb.Append("")
	sb.Append("")
	sb.Append("")
	sb.Append("a")
	b := sb.NewArray()
	defer a.Release()
	defer b.Release()
	two := NewRowEncoder(Schema{{"x", String}, {"y", String}})
	seen := map[string]int{}
	for i := 0; i < 4; i++ {
		k := string(two.EncodeKey(nil, []arrow.Array{a, b}, i))
		if j, dup := seen[k]; dup {
			t.Fatalf("rows %d and %d share key %q", j, i, k)
		}
		seen[k] = i
	}
}

func TestEncodeKeyFloatCanonical(t *testing.T) {
	fb := array.NewFloat64Builder(memory.DefaultAllocator)
	fb.AppendValues([]float64{0, math.Copysign(0, -1), math.NaN(), math.Float64frombits(0x7ff8000000000001)}, nil)
	a := fb.NewArray()
	defer a.Release()
	enc := NewRowEncoder(Schema{{"f", Double}})
	k := func(i int) []byte { return enc.EncodeKey(nil, []arrow.Array{a}, i) }
	if !bytes.Equal(k(0), k(1)) {
		t.Error("0.0 and -0.0 have different keys")
	}
	if !bytes.Equal(k(2), k(3)) {
		t.Error("two NaNs have different keys")
	}
	if bytes.Equal(k(0), k(2)) {
		t.Error("0.0 and NaN share a key")
	}
}

func TestAnyNull(t *testing.T) {
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	ib.AppendValues([]int64{1, 2}, []bool{true, false})
	a := ib.NewArray()
	defer a.Release()
	if AnyNull([]arrow.Array{a}, 0) || !AnyNull([]arrow.Array{a}, 1) {
		t.Fatal("AnyNull wrong")
	}
}

func TestRowDecoderRejectsBadRows(t *testing.T) {
	s := Schema{{"i", BigInt}, {"s", String}}
	rb := NewRowBuilder(nil, s)
	defer rb.Release()
	dec := rb.Decoder(0, 2)
	for _, bad := range [][]byte{nil, {0}, {0, 1, 2, 3, 4, 5, 6, 7, 8}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 5, 'a'}, {2, 1, 2, 3, 4, 5, 6, 7, 8, 9}} {
		if err := dec.Append(bad); err == nil {
			t.Errorf("row %v decoded", bad)
		}
	}
	if rb.cols[0].b.Len() != 0 || rb.cols[1].b.Len() != 0 {
		t.Fatal("a rejected row left values behind")
	}
}

func FuzzRowDecoder(f *testing.F) {
	s := Schema{{"i", Int}, {"s", String}, {"d", Decimal(10, 2)}, {"b", Boolean}}
	f.Add([]byte{0, 1, 0, 0, 0, 1, 'a', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Add([]byte{15})
	f.Fuzz(func(t *testing.T, enc []byte) {
		rb := NewRowBuilder(nil, s)
		defer rb.Release()
		if err := rb.Decoder(0, len(s)).Append(enc); err != nil {
			return
		}
		rb.EndRow()
		cols := rb.NewArrays()
		defer release(cols)
		// A row that decodes re-encodes to a canonical form that is stable.
		enc2 := NewRowEncoder(s).AppendRow(nil, cols, 0)
		if err := rb.Decoder(0, len(s)).Append(enc2); err != nil {
			t.Fatalf("re-encoded row %x does not decode: %v", enc2, err)
		}
		rb.EndRow()
		cols2 := rb.NewArrays()
		defer release(cols2)
		if enc3 := NewRowEncoder(s).AppendRow(nil, cols2, 0); !bytes.Equal(enc2, enc3) {
			t.Fatalf("encoding not stable: %x then %x", enc2, enc3)
		}
	})
}

func BenchmarkRowCodec(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	s := Schema{{"k", BigInt}, {"v", BigInt}, {"s", String}}
	cols := randomColumns(b, r, s, 4096, 0.05)
	defer release(cols)
	enc := NewRowEncoder(s)
	rb := NewRowBuilder(nil, s)
	defer rb.Release()
	dec := rb.Decoder(0, 3)
	var buf []byte
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		rb.Reserve(4096)
		for i := 0; i < 4096; i++ {
			buf = enc.AppendRow(buf[:0], cols, i)
			if err := dec.Append(buf); err != nil {
				b.Fatal(err)
			}
			rb.EndRow()
		}
		release(rb.NewArrays())
	}
	b.ReportMetric(float64(b.N)*4096/b.Elapsed().Seconds(), "rows/s")
}
