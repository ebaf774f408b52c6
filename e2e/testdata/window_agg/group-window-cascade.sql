-- Legacy group windows: per-minute counts per user with TUMBLE_START,
-- TUMBLE_END and TUMBLE_ROWTIME, then those rows summed per ten minutes
-- by a second TUMBLE over the first one's TUMBLE_ROWTIME (a rowtime
-- attribute), and a HOP over the same clicks.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE clicks (
    usr STRING,
    ts TIMESTAMP(3),
    WATERMARK FOR ts AS ts - INTERVAL '1' HOUR
);
INSERT INTO clicks VALUES
    ('ann', TIMESTAMP '2025-05-01 10:00:10'),
    ('ann', TIMESTAMP '2025-05-01 10:00:50'),
    ('bob', TIMESTAMP '2025-05-01 10:00:30'),
    ('ann', TIMESTAMP '2025-05-01 10:07:00'),
    ('bob', TIMESTAMP '2025-05-01 10:12:00'),
    ('cid', TIMESTAMP '2025-05-01 10:19:59');
CREATE VIEW per_minute AS
SELECT
    usr,
    TUMBLE_START(ts, INTERVAL '1' MINUTE) AS ws,
    TUMBLE_END(ts, INTERVAL '1' MINUTE) AS we,
    TUMBLE_ROWTIME(ts, INTERVAL '1' MINUTE) AS rt,
    COUNT(*) AS n
FROM clicks
GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE), usr;
SELECT
    TUMBLE_START(rt, INTERVAL '10' MINUTE) AS ws,
    TUMBLE_END(rt, INTERVAL '10' MINUTE) AS we,
    COUNT(*) AS user_minutes,
    SUM(n) AS clicks,
    MAX(we) AS last_minute_end
FROM per_minute
GROUP BY TUMBLE(rt, INTERVAL '10' MINUTE);
