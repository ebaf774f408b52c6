-- The default frame of ORDER BY alone, RANGE BETWEEN UNBOUNDED PRECEDING
-- AND CURRENT ROW: a running total per user in which orders of the same
-- time count together, with expressions over several OVER aggregates.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE orders (
    usr STRING,
    amount INT,
    ts TIMESTAMP(3),
    WATERMARK FOR ts AS ts
);
INSERT INTO orders VALUES
    ('ann', 10, TIMESTAMP '2025-05-01 10:00:00'),
    ('bob', 5, TIMESTAMP '2025-05-01 10:00:00'),
    ('ann', 20, TIMESTAMP '2025-05-01 10:01:00'),
    ('ann', 30, TIMESTAMP '2025-05-01 10:01:00'),
    ('bob', 1, TIMESTAMP '2025-05-01 10:02:00'),
    ('ann', 40, TIMESTAMP '2025-05-01 10:03:00');
SELECT usr, ts, amount,
    SUM(amount) OVER w AS total,
    SUM(amount) OVER w / COUNT(*) OVER w AS mean,
    amount * 100 / SUM(amount) OVER w AS pct
FROM orders
WINDOW w AS (PARTITION BY usr ORDER BY ts);
