-- A LEFT window join of HOP windows (10 minutes every 5) with a residual
-- condition: an order matches a payment of its id in the same window
-- that pays at least its amount. Order 2's payment is too small and
-- order 3's falls into only one of its windows: those rows are padded.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE orders (id INT, amount INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE);
CREATE TABLE payments (id INT, paid INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE);
INSERT INTO orders VALUES
    (1, 10, TIMESTAMP '2025-05-01 10:01:00'),
    (2, 20, TIMESTAMP '2025-05-01 10:03:00'),
    (3, 30, TIMESTAMP '2025-05-01 10:06:00');
INSERT INTO payments VALUES
    (1, 10, TIMESTAMP '2025-05-01 10:02:00'),
    (2, 5, TIMESTAMP '2025-05-01 10:04:00'),
    (3, 30, TIMESTAMP '2025-05-01 10:12:00');
SELECT o.id, o.window_start, o.window_end, p.paid
FROM TABLE(HOP(TABLE orders, DESCRIPTOR(ts), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES)) o
LEFT JOIN TABLE(HOP(TABLE payments, DESCRIPTOR(ts), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES)) p
ON o.window_start = p.window_start AND o.window_end = p.window_end AND o.id = p.id AND p.paid >= o.amount;
