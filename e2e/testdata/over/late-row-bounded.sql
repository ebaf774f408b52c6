-- Lateness with a bounded frame, as Flink's RowTimeRowsBoundedPreceding
-- decides it: a row is late only when its partition has processed its time
-- or a later one. With one-row batches the watermark rises after every row
-- (as in Flink when a watermark follows each record). 10:00:06 arrives
-- behind the watermark (10:00:07) but after the partition processed
-- 10:00:05, so it is kept and processed at the next watermark.
-- compare: final
SET 'parallelism.default' = '1';
SET 'braid.exec.source.batch-size' = '1';
CREATE TABLE ev (
    k STRING,
    v INT,
    ts TIMESTAMP(3),
    WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
);
INSERT INTO ev VALUES
    ('a', 1, TIMESTAMP '2025-05-01 10:00:01'),
    ('a', 2, TIMESTAMP '2025-05-01 10:00:05'),
    ('a', 3, TIMESTAMP '2025-05-01 10:00:04'),
    ('a', 4, TIMESTAMP '2025-05-01 10:00:09'),
    ('a', 5, TIMESTAMP '2025-05-01 10:00:06'),
    ('a', 6, TIMESTAMP '2025-05-01 10:00:10'),
    ('a', 7, TIMESTAMP '2025-05-01 10:00:05');
SELECT k, ts, v, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s
FROM ev;
