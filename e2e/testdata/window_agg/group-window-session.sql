-- Legacy SESSION and HOP group windows: sessions per user after 5 idle
-- minutes with SESSION_START, SESSION_END and SESSION_ROWTIME; ann's
-- late-arriving 10:04 click merges her two sessions.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE clicks (
    usr STRING,
    ms INT,
    ts TIMESTAMP(3),
    WATERMARK FOR ts AS ts - INTERVAL '1' HOUR
);
INSERT INTO clicks VALUES
    ('ann', 120, TIMESTAMP '2025-05-01 10:00:00'),
    ('bob', 30, TIMESTAMP '2025-05-01 10:01:00'),
    ('ann', 40, TIMESTAMP '2025-05-01 10:08:00'),
    ('ann', 45, TIMESTAMP '2025-05-01 10:04:00'),
    ('bob', 10, TIMESTAMP '2025-05-01 10:20:00');
SELECT
    usr,
    SESSION_START(ts, INTERVAL '5' MINUTE) AS ss,
    SESSION_END(ts, INTERVAL '5' MINUTE) AS se,
    SESSION_ROWTIME(ts, INTERVAL '5' MINUTE) AS srt,
    COUNT(*) AS clicks,
    AVG(ms) AS avg_ms
FROM clicks
GROUP BY usr, SESSION(ts, INTERVAL '5' MINUTE);
