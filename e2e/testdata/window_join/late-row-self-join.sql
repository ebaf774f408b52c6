-- A late row is dropped. With one-row batches each input's watermark
-- rises after every row. x's row (10:00:05) comes after the watermark has
-- reached 10:00:11, so its window [10:00:00, 10:00:10) has fired on its
-- input. In this self-join each side reads the table on its own: the copy
-- of x's row that reaches the join second finds both inputs past the
-- window and is always dropped (the first copy may be kept, but has no
-- partner), so x never joins itself. A join that kept late rows would
-- store both copies (usually both after the window fired, which fires it
-- again) and emit x | x.
-- compare: final
SET 'parallelism.default' = '2';
SET 'braid.exec.source.batch-size' = '1';
CREATE TABLE ev (k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND);
INSERT INTO ev VALUES
    ('a', 1, TIMESTAMP '2025-05-01 10:00:01'),
    ('b', 2, TIMESTAMP '2025-05-01 10:00:12'),
    ('x', 3, TIMESTAMP '2025-05-01 10:00:05'),
    ('a', 4, TIMESTAMP '2025-05-01 10:00:15'),
    ('c', 5, TIMESTAMP '2025-05-01 10:00:30');
SELECT L.k, L.v, R.k AS rk, R.v AS rv, L.window_start
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECONDS)) L
JOIN TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECONDS)) R
ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k;
