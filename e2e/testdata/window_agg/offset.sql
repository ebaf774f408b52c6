-- TUMBLE with an OFFSET: hourly windows from :15 to :15.
-- compare: final
SET 'parallelism.default' = '1';
CREATE TABLE orders (
    amount INT,
    ts TIMESTAMP(3),
    WATERMARK FOR ts AS ts - INTERVAL '1' HOUR
);
INSERT INTO orders VALUES
    (1, TIMESTAMP '2025-05-01 10:10:00'),
    (2, TIMESTAMP '2025-05-01 10:20:00'),
    (4, TIMESTAMP '2025-05-01 11:14:59'),
    (8, TIMESTAMP '2025-05-01 11:15:00');
SELECT window_start, window_end, SUM(amount) AS total
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' HOUR, INTERVAL '15' MINUTES))
GROUP BY window_start, window_end;
