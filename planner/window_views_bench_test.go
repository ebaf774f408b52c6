package planner

import (
	"context"
	"testing"

	"github.com/braidflow/braid/catalog"
	"github.com/braidflow/braid/sql/ast"
	"github.com/braidflow/braid/sql/parser"
)

// BenchmarkPlanWindowOverView plans Nexmark q5 (two HOP window aggregates
// over the bid view, a group aggregate and a join): each read of the view
// binds its query again and finds the time attribute through it.
func BenchmarkPlanWindowOverView(b *testing.B) {
	ctx := context.Background()
	store := catalog.NewMemStore()
	p := &Planner{Catalog: testCatalog{store}, Connectors: testConnectors{}, Options: Options{Parallelism: 4, Config: map[string]string{}}}
	for _, ddl := range []string{
		`CREATE TABLE nexmark (event_type INT,
		  bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, dateTime TIMESTAMP(3), extra STRING>,
		  dateTime AS bid.dateTime,
		  WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND)`,
		`CREATE VIEW bid AS SELECT bid.auction AS auction, bid.bidder AS bidder, bid.price AS price, bid.channel AS channel,
		  bid.url AS url, dateTime, bid.extra AS extra FROM nexmark WHERE event_type = 2`,
	} {
		st, err := parser.ParseStatement(ddl)
		if err != nil {
			b.Fatal(err)
		}
		var tbl *catalog.Table
		switch st := st.(type) {
		case *ast.CreateTableStmt:
			tbl, err = BuildTable(st, catalog.DefaultDatabase, 1)
		case *ast.CreateViewStmt:
			tbl, err = p.BuildView(ctx, st, catalog.DefaultDatabase, 1)
		}
		if err != nil {
			b.Fatal(err)
		}
		if err := store.CreateTable(ctx, tbl); err != nil {
			b.Fatal(err)
		}
	}
	q5 := `SELECT AuctionBids.auction, AuctionBids.num
FROM (
  SELECT auction, COUNT(*) AS num, window_start AS starttime, window_end AS endtime
  FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
  GROUP BY auction, window_start, window_end
) AS AuctionBids
JOIN (
  SELECT MAX(CountBids.num) AS maxn, CountBids.starttime, CountBids.endtime
  FROM (
    SELECT COUNT(*) AS num, window_start AS starttime, window_end AS endtime
    FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
    GROUP BY auction, window_start, window_end
  ) AS CountBids
  GROUP BY CountBids.starttime, CountBids.endtime
) AS MaxBids
ON AuctionBids.starttime = MaxBids.starttime AND AuctionBids.endtime = MaxBids.endtime AND AuctionBids.num >= MaxBids.maxn`
	st, err := parser.ParseStatement(q5)
	if err != nil {
		b.Fatal(err)
	}
	q := st.(*ast.QueryStmt).Query
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.PlanQuery(ctx, q, q5); err != nil {
			b.Fatal(err)
		}
	}
}
