package jobmanager_test

import (
	"context"
	"strings"
	"testing"
)

// TestIntervalJoinEndToEnd: event-time interval joins over bounded managed
// tables with watermarks at parallelism 4. The LEFT one pads an order that
// no shipment matches within its bounds when the order expires (at the end
// of input at the latest); its output is insert-only, so it goes into an
// append-only table.
func TestIntervalJoinEndToEnd(t *testing.T) {
	cl, c := startSQLCluster(t, "")
	defer cl.Close()
	defer c.Close()
	s := openSession(t, c)
	run(t, s, `SET 'parallelism.default' = '4';
CREATE TABLE orders (id INT, order_time TIMESTAMP(3), WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND);
CREATE TABLE shipments (order_id INT, shipment_time TIMESTAMP(3), WATERMARK FOR shipment_time AS shipment_time - INTERVAL '5' SECOND);
INSERT INTO orders VALUES
	(1, TIMESTAMP '2025-05-01 10:00:00'),
	(2, TIMESTAMP '2025-05-01 10:00:00'),
	(3, TIMESTAMP '2025-05-01 09:00:00'),
	(4, TIMESTAMP '2025-05-01 11:30:00'),
	(6, TIMESTAMP '2025-05-01 12:00:00');
INSERT INTO shipments VALUES
	(1, TIMESTAMP '2025-05-01 12:00:00'),
	(2, TIMESTAMP '2025-05-01 13:00:00'),
	(2, TIMESTAMP '2025-05-01 13:00:00.001'),
	(3, TIMESTAMP '2025-05-01 12:00:00'),
	(4, TIMESTAMP '2025-05-01 11:00:00'),
	(5, TIMESTAMP '2025-05-01 12:00:00');`)

	const left = `SELECT o.id, o.order_time, s.shipment_time
		FROM orders o LEFT JOIN shipments s
		ON o.id = s.order_id AND s.shipment_time BETWEEN o.order_time AND o.order_time + INTERVAL '3' HOUR`
	want := []string{
		"+I[1, 2025-05-01 10:00:00.000, 2025-05-01 12:00:00.000]",
		"+I[2, 2025-05-01 10:00:00.000, 2025-05-01 13:00:00.000]",
		"+I[3, 2025-05-01 09:00:00.000, 2025-05-01 12:00:00.000]",
		"+I[4, 2025-05-01 11:30:00.000, NULL]",
		"+I[6, 2025-05-01 12:00:00.000, NULL]",
	}
	// Every row is +I: padded rows are never retracted.
	equal(t, "left interval join", run(t, s, left+";").sorted(), want)

	run(t, s, `CREATE TABLE shipped (id INT, order_time TIMESTAMP(3), shipment_time TIMESTAMP(3));
		INSERT INTO shipped `+left+`;`)
	equal(t, "into an append-only table", run(t, s, "SELECT * FROM shipped;").sorted(), want)

	// A strict bound: the shipment at exactly 3 hours no longer matches.
	equal(t, "strict", run(t, s, `SELECT o.id, s.shipment_time FROM orders o, shipments s
		WHERE o.id = s.order_id AND s.shipment_time >= o.order_time AND s.shipment_time < o.order_time + INTERVAL '3' HOUR;`).sorted(),
		[]string{"+I[1, 2025-05-01 12:00:00.000]"})

	err := s.Execute(context.Background(), `CREATE TABLE latest (id INT, t TIMESTAMP(3), PRIMARY KEY (id) NOT ENFORCED, WATERMARK FOR t AS t);
		SELECT l.id FROM latest l JOIN orders o ON l.id = o.id AND l.t BETWEEN o.order_time AND o.order_time + INTERVAL '1' HOUR;`, false, newRows())
	if err == nil || !strings.Contains(err.Error(), "StreamPhysicalIntervalJoin doesn't support consuming update and delete changes") {
		t.Fatalf("updating input: %v", err)
	}
}
