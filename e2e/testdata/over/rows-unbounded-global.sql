-- ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW without PARTITION BY
-- (one subtask): orders of the same time count one after the other, in
-- arrival order.
-- compare: final
SET 'parallelism.default' = '1';
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
    COUNT(*) OVER (ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS n,
    MAX(amount) OVER (ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS mx
FROM orders;
