-- A bounded ROWS frame over a named window: each trade with the sum,
-- count, minimum and maximum of its symbol's last three trades. The trade
-- at 10:00:03 arrives after the one at 10:00:04 but within the watermark
-- delay, so it takes its place in rowtime order.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE trades (
    sym STRING,
    px INT,
    ts TIMESTAMP(3),
    WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
);
INSERT INTO trades VALUES
    ('A', 10, TIMESTAMP '2025-05-01 10:00:01'),
    ('B', 100, TIMESTAMP '2025-05-01 10:00:02'),
    ('A', 30, TIMESTAMP '2025-05-01 10:00:04'),
    ('A', 20, TIMESTAMP '2025-05-01 10:00:03'),
    ('B', 50, TIMESTAMP '2025-05-01 10:00:05'),
    ('A', 5, TIMESTAMP '2025-05-01 10:00:06'),
    ('A', 40, TIMESTAMP '2025-05-01 10:00:07'),
    ('B', 70, TIMESTAMP '2025-05-01 10:00:08');
SELECT sym, ts, px,
    SUM(px) OVER w AS s, COUNT(*) OVER w AS c, MIN(px) OVER w AS mn, MAX(px) OVER w AS mx
FROM trades
WINDOW w AS (PARTITION BY sym ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW);
