package connectors

import (
	"fmt"
	"testing"

	"github.com/braidflow/braid/types"
)

// BenchmarkJSONDecode decodes Nexmark-like bid records (seven fields, one
// of them not in the table) into Arrow batches of 1024 rows; it reports
// input MB/s and rows/s.
func BenchmarkJSONDecode(b *testing.B) {
	schema := types.Schema{
		{Name: "auction", Type: types.BigInt}, {Name: "bidder", Type: types.BigInt},
		{Name: "price", Type: types.BigInt}, {Name: "channel", Type: types.String},
		{Name: "url", Type: types.String}, {Name: "dateTime", Type: types.Timestamp(3)},
	}
	recs := make([][]byte, 1024)
	size := 0
	for i := range recs {
		recs[i] = fmt.Appendf(nil, `{"auction": %d, "bidder": %d, "price": %d, "channel": "channel-%d", `+
			`"url": "https://www.nexmark.com/item.htm?query=1&channel_id=%d", "dateTime": "2026-12-01 10:%02d:%02d.%03d", `+
			`"extra": "padding padding padding"}`, 1000+i%97, 2000+i%1013, 100+i*7, i%4, i*31, i%60, i%59, i%1000)
		size += len(recs[i])
	}
	d := newJSONDecoder(schema, false, false)
	defer d.Release()
	b.SetBytes(int64(size))
	b.ResetTimer()
	for range b.N {
		for _, r := range recs {
			if ok, err := d.Decode(r); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
		bt, _ := d.Flush()
		bt.Release()
	}
	b.ReportMetric(float64(b.N)*float64(len(recs))/b.Elapsed().Seconds(), "rows/s")
}
