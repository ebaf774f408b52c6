-- A RIGHT window join of CUMULATE windows (every minute up to 2): a key
-- that is NULL matches nothing, and q's left row falls only into the
-- 2-minute window, so its 1-minute window pads the right row.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE a (k STRING, x INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts);
CREATE TABLE b (k STRING, y INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts);
INSERT INTO a VALUES
    ('p', 1, TIMESTAMP '2025-05-01 10:00:10'),
    (CAST(NULL AS STRING), 2, TIMESTAMP '2025-05-01 10:00:20'),
    ('q', 3, TIMESTAMP '2025-05-01 10:01:10');
INSERT INTO b VALUES
    ('p', 10, TIMESTAMP '2025-05-01 10:00:40'),
    (CAST(NULL AS STRING), 20, TIMESTAMP '2025-05-01 10:00:50'),
    ('q', 30, TIMESTAMP '2025-05-01 10:00:30'),
    ('r', 40, TIMESTAMP '2025-05-01 10:01:20');
SELECT a.k, a.x, b.k AS bk, b.y, b.window_start, b.window_end
FROM TABLE(CUMULATE(TABLE a, DESCRIPTOR(ts), INTERVAL '1' MINUTES, INTERVAL '2' MINUTES)) a
RIGHT JOIN TABLE(CUMULATE(TABLE b, DESCRIPTOR(ts), INTERVAL '1' MINUTES, INTERVAL '2' MINUTES)) b
ON a.window_start = b.window_start AND a.window_end = b.window_end AND a.k = b.k;
