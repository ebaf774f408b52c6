package render

import (
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/braidflow/braid/client"
	"github.com/braidflow/braid/types"
)

func benchBatch(b *testing.B) ([]client.ResultColumn, types.Batch) {
	cols := []client.ResultColumn{
		{Name: "id", Type: types.BigInt}, {Name: "name", Type: types.String},
		{Name: "price", Type: types.Double}, {Name: "ts", Type: types.Timestamp(3)},
	}
	rows := make([]row, 4096)
	for i := range rows {
		rows[i] = row{types.Insert, []any{i, "name-" + strconv.Itoa(i%100), float64(i) / 7, time.Unix(int64(i), 0).UTC()}}
	}
	return cols, makeBatch(b, cols, rows)
}

func BenchmarkTableau(b *testing.B) {
	cols, batch := benchBatch(b)
	defer batch.Release()
	t := NewTableau(io.Discard, cols, nil, 0)
	b.ResetTimer()
	for b.Loop() {
		t.Batch(batch)
	}
	b.ReportMetric(float64(b.N*batch.NumRows())/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkTSV(b *testing.B) {
	cols, batch := benchBatch(b)
	defer batch.Release()
	b.ResetTimer()
	for b.Loop() {
		t := NewTSV(io.Discard, cols, nil)
		t.Batch(batch)
		t.End()
	}
	b.ReportMetric(float64(b.N*batch.NumRows())/b.Elapsed().Seconds(), "rows/s")
}
