package types

import (
	"math"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestFormatJavaDouble(t *testing.T) {
	cases := []struct {
		f    float64
		want string
	}{
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1, "1.0"},
		{-1, "-1.0"},
		{100, "100.0"},
		{404.89, "404.89"},
		{0.001, "0.001"},
		{0.0009, "9.0E-4"},
		{1e-5, "1.0E-5"},
		{1e10, "1.0E10"},
		{1e7, "1.0E7"},
		{9999999, "9999999.0"},
		{12345678, "1.2345678E7"},
		{0.1, "0.1"},
		{0.30000000000000004, "0.30000000000000004"},
		{1.0 / 3, "0.3333333333333333"},
		{123456.789, "123456.789"},
		{-2.5e-7, "-2.5E-7"},
		{math.MaxFloat64, "1.7976931348623157E308"},
		{math.SmallestNonzeroFloat64, "4.9E-324"},
		{2e-3, "0.002"},
		{1e23, "1.0E23"},
		{1e21, "1.0E21"},
		{3.14, "3.14"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
		{1234567.0, "1234567.0"},
		{1e-3 * 1.5, "0.0015"},
	}
	for _, c := range cases {
		if got := FormatJavaDouble(c.f); got != c.want {
			t.Errorf("FormatJavaDouble(%v) = %q, want %q", c.f, got, c.want)
		}
	}
}

func TestFormatJavaFloat(t *testing.T) {
	cases := []struct {
		f    float32
		want string
	}{
		{0.1, "0.1"},
		{1.5, "1.5"},
		{1e10, "1.0E10"},
		{3.4028235e38, "3.4028235E38"},
		{1.0e-5, "1.0E-5"},
		{100, "100.0"},
		{float32(math.Inf(-1)), "-Infinity"},
		{16777216, "1.6777216E7"},
		{math.SmallestNonzeroFloat32, "1.4E-45"},
	}
	for _, c := range cases {
		if got := FormatJavaFloat(c.f); got != c.want {
			t.Errorf("FormatJavaFloat(%v) = %q, want %q", c.f, got, c.want)
		}
	}
}

func TestFormatValue(t *testing.T) {
	mem := memory.DefaultAllocator
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skip("no tzdata")
	}
	ts := time.Date(2025, 5, 1, 10, 0, 0, 123456789, time.UTC).UnixNano()

	build := func(dt arrow.DataType, add func(b array.Builder)) arrow.Array {
		b := array.NewBuilder(mem, dt)
		defer b.Release()
		add(b)
		b.AppendNull()
		return b.NewArray()
	}
	cases := []struct {
		name string
		t    DataType
		arr  arrow.Array
		loc  *time.Location
		want string
	}{
		{"bool", Boolean, build(Boolean.ArrowType(), func(b array.Builder) { b.(*array.BooleanBuilder).Append(true) }), nil, "TRUE"},
		{"boolf", Boolean, build(Boolean.ArrowType(), func(b array.Builder) { b.(*array.BooleanBuilder).Append(false) }), nil, "FALSE"},
		{"tinyint", TinyInt, build(TinyInt.ArrowType(), func(b array.Builder) { b.(*array.Int8Builder).Append(-5) }), nil, "-5"},
		{"int", Int, build(Int.ArrowType(), func(b array.Builder) { b.(*array.Int32Builder).Append(42) }), nil, "42"},
		{"bigint", BigInt, build(BigInt.ArrowType(), func(b array.Builder) { b.(*array.Int64Builder).Append(math.MinInt64) }), nil, "-9223372036854775808"},
		{"double", Double, build(Double.ArrowType(), func(b array.Builder) { b.(*array.Float64Builder).Append(1e10) }), nil, "1.0E10"},
		{"float", Float, build(Float.ArrowType(), func(b array.Builder) { b.(*array.Float32Builder).Append(404.89) }), nil, "404.89"},
		{"decimal", Decimal(10, 2), build(Decimal(10, 2).ArrowType(), func(b array.Builder) { b.(*array.Decimal128Builder).Append(decimal128.FromI64(400)) }), nil, "4.00"},
		{"decimal-neg", Decimal(10, 2), build(Decimal(10, 2).ArrowType(), func(b array.Builder) { b.(*array.Decimal128Builder).Append(decimal128.FromI64(-50)) }), nil, "-0.50"},
		{"decimal6", Decimal(12, 6), build(Decimal(12, 6).ArrowType(), func(b array.Builder) { b.(*array.Decimal128Builder).Append(decimal128.FromI64(90000000)) }), nil, "90.000000"},
		{"string", String, build(String.ArrowType(), func(b array.Builder) { b.(*array.StringBuilder).Append("héllo") }), nil, "héllo"},
		{"bytes", Bytes, build(Bytes.ArrowType(), func(b array.Builder) { b.(*array.BinaryBuilder).Append([]byte{0x0a, 0x0b}) }), nil, "x'0a0b'"},
		{"date", Date, build(Date.ArrowType(), func(b array.Builder) { b.(*array.Date32Builder).Append(arrow.Date32(20209)) }), nil, "2025-05-01"},
		{"date-neg", Date, build(Date.ArrowType(), func(b array.Builder) { b.(*array.Date32Builder).Append(arrow.Date32(-1)) }), nil, "1969-12-31"},
		{"time0", Time(0), build(Time(0).ArrowType(), func(b array.Builder) { b.(*array.Time32Builder).Append(arrow.Time32(36000123)) }), nil, "10:00:00"},
		{"time3", Time(3), build(Time(3).ArrowType(), func(b array.Builder) { b.(*array.Time32Builder).Append(arrow.Time32(36000123)) }), nil, "10:00:00.123"},
		{"ts3", Timestamp(3), build(Timestamp(3).ArrowType(), func(b array.Builder) { b.(*array.TimestampBuilder).Append(arrow.Timestamp(ts)) }), nil, "2025-05-01 10:00:00.123"},
		{"ts0", Timestamp(0), build(Timestamp(0).ArrowType(), func(b array.Builder) { b.(*array.TimestampBuilder).Append(arrow.Timestamp(ts)) }), nil, "2025-05-01 10:00:00"},
		{"ts9", Timestamp(9), build(Timestamp(9).ArrowType(), func(b array.Builder) { b.(*array.TimestampBuilder).Append(arrow.Timestamp(ts)) }), nil, "2025-05-01 10:00:00.123456789"},
		{"ts-pre-epoch", Timestamp(3), build(Timestamp(3).ArrowType(), func(b array.Builder) { b.(*array.TimestampBuilder).Append(arrow.Timestamp(-1_000_000)) }), nil, "1969-12-31 23:59:59.999"},
		{"ltz-utc", TimestampLTZ(3), build(TimestampLTZ(3).ArrowType(), func(b array.Builder) { b.(*array.TimestampBuilder).Append(arrow.Timestamp(ts)) }), nil, "2025-05-01 10:00:00.123"},
		{"ltz-tokyo", TimestampLTZ(3), build(TimestampLTZ(3).ArrowType(), func(b array.Builder) { b.(*array.TimestampBuilder).Append(arrow.Timestamp(ts)) }), tokyo, "2025-05-01 19:00:00.123"},
		{"interval-day", IntervalDayTime(), build(IntervalDayTime().ArrowType(), func(b array.Builder) { b.(*array.DurationBuilder).Append(arrow.Duration(86400000)) }), nil, "+1 00:00:00.000"},
		{"interval-day-neg", IntervalDayTime(), build(IntervalDayTime().ArrowType(), func(b array.Builder) { b.(*array.DurationBuilder).Append(arrow.Duration(-5400500)) }), nil, "-0 01:30:00.500"},
		{"interval-year", IntervalYearMonth(), build(IntervalYearMonth().ArrowType(), func(b array.Builder) { b.(*array.Int32Builder).Append(12) }), nil, "+1-00"},
		{"interval-month-neg", IntervalYearMonth(), build(IntervalYearMonth().ArrowType(), func(b array.Builder) { b.(*array.Int32Builder).Append(-30) }), nil, "-2-06"},
	}
	for _, c := range cases {
		s, isNull := FormatValue(c.arr, 0, c.t, c.loc)
		if isNull || s != c.want {
			t.Errorf("%s: got %q (null %v), want %q", c.name, s, isNull, c.want)
		}
		if _, isNull := FormatValue(c.arr, 1, c.t, c.loc); !isNull {
			t.Errorf("%s: row 1 should be NULL", c.name)
		}
		c.arr.Release()
	}
}
