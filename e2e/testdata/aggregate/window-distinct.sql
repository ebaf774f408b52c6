-- A window aggregate with DISTINCT, FILTER and the new functions: users per
-- ten minutes, long views, the pages in arrival order, the first page and
-- the last non-NULL duration, and an INT standard deviation (truncated).
-- compare: final
SET 'parallelism.default' = '1';
CREATE TABLE clicks (
    usr STRING,
    page STRING,
    ms INT,
    ts TIMESTAMP(3),
    WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
);
INSERT INTO clicks VALUES
    ('ann', 'home', 120, TIMESTAMP '2025-05-01 10:01:00'),
    ('bob', 'cart', 30, TIMESTAMP '2025-05-01 10:02:00'),
    ('ann', 'cart', NULL, TIMESTAMP '2025-05-01 10:03:00'),
    ('ann', 'home', 45, TIMESTAMP '2025-05-01 10:09:00'),
    ('cid', 'home', 80, TIMESTAMP '2025-05-01 10:12:00'),
    ('cid', 'help', 10, TIMESTAMP '2025-05-01 10:15:00');
SELECT
    window_start,
    window_end,
    COUNT(DISTINCT usr) AS users,
    COUNT(*) FILTER (WHERE ms > 40) AS long_views,
    LISTAGG(page) AS pages,
    FIRST_VALUE(page) AS first_page,
    LAST_VALUE(ms) AS last_ms,
    STDDEV_POP(ms) AS sd
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' MINUTES))
GROUP BY window_start, window_end;
