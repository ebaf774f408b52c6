-- A bounded RANGE frame: each reading with the sum, count and (INT,
-- truncated) average of its device's readings of the minute up to it,
-- the row a minute before included. The two readings at 10:01:30 get the
-- same values, each counting the other.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE readings (
    dev STRING,
    v INT,
    ts TIMESTAMP(3),
    WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE
);
INSERT INTO readings VALUES
    ('d1', 1, TIMESTAMP '2025-05-01 10:00:00'),
    ('d1', 2, TIMESTAMP '2025-05-01 10:00:30'),
    ('d1', 4, TIMESTAMP '2025-05-01 10:01:30'),
    ('d2', 5, TIMESTAMP '2025-05-01 10:01:00'),
    ('d1', 8, TIMESTAMP '2025-05-01 10:01:30'),
    ('d1', 16, TIMESTAMP '2025-05-01 10:02:30'),
    ('d2', 7, TIMESTAMP '2025-05-01 10:03:00');
SELECT dev, ts, v,
    SUM(v) OVER (PARTITION BY dev ORDER BY ts RANGE BETWEEN INTERVAL '1' MINUTE PRECEDING AND CURRENT ROW) AS s,
    COUNT(*) OVER (PARTITION BY dev ORDER BY ts RANGE BETWEEN INTERVAL '1' MINUTE PRECEDING AND CURRENT ROW) AS c,
    AVG(v) OVER (PARTITION BY dev ORDER BY ts RANGE BETWEEN INTERVAL '1' MINUTE PRECEDING AND CURRENT ROW) AS a
FROM readings;
