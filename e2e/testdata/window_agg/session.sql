-- SESSION windows per user after 5 minutes without a click. ann's 10:04
-- click arrives after her 10:08 one and bridges her two sessions into
-- one; bob's two sessions stay apart. The watermark lags an hour, so no
-- row is late whatever the watermark's timing.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE clicks (
    usr STRING,
    page STRING,
    ms INT,
    ts TIMESTAMP(3),
    WATERMARK FOR ts AS ts - INTERVAL '1' HOUR
);
INSERT INTO clicks VALUES
    ('ann', 'home', 120, TIMESTAMP '2025-05-01 10:00:00'),
    ('bob', 'cart', 30, TIMESTAMP '2025-05-01 10:01:00'),
    ('ann', 'cart', 40, TIMESTAMP '2025-05-01 10:08:00'),
    ('cid', 'home', 80, TIMESTAMP '2025-05-01 10:02:00'),
    ('ann', 'home', 45, TIMESTAMP '2025-05-01 10:04:00'),
    ('bob', 'help', 10, TIMESTAMP '2025-05-01 10:20:00'),
    ('bob', 'home', 5, TIMESTAMP '2025-05-01 10:24:59');
SELECT
    usr,
    window_start,
    window_end,
    window_time,
    COUNT(*) AS clicks,
    COUNT(DISTINCT page) AS pages,
    SUM(ms) AS total_ms,
    MAX(ms) FILTER (WHERE page <> 'home') AS longest_off_home
FROM TABLE(SESSION(TABLE clicks PARTITION BY usr, DESCRIPTOR(ts), INTERVAL '5' MINUTES))
GROUP BY usr, window_start, window_end, window_time;
