-- A FULL window join of two window aggregates: clicks and orders per user and
-- 5-minute window, joined window by window. bob ordered without a click
-- in his second window (a right row padded); ann's first window has
-- clicks but no order. Window joins follow window aggregates as in
-- Flink: the aggregates' rows reach the join before the watermark that
-- fires their window.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE clicks (usr STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE);
CREATE TABLE orders (usr STRING, amount INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE);
INSERT INTO clicks VALUES
    ('ann', TIMESTAMP '2025-05-01 10:01:00'),
    ('ann', TIMESTAMP '2025-05-01 10:02:00'),
    ('bob', TIMESTAMP '2025-05-01 10:03:00'),
    ('ann', TIMESTAMP '2025-05-01 10:06:00');
INSERT INTO orders VALUES
    ('bob', 10, TIMESTAMP '2025-05-01 10:04:00'),
    ('ann', 20, TIMESTAMP '2025-05-01 10:07:00'),
    ('ann', 5, TIMESTAMP '2025-05-01 10:08:00'),
    ('bob', 7, TIMESTAMP '2025-05-01 10:09:00');
SELECT COALESCE(c.usr, o.usr) AS usr, COALESCE(c.window_start, o.window_start) AS window_start,
       c.clicks, o.total
FROM (
    SELECT usr, window_start, window_end, COUNT(*) AS clicks
    FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' MINUTES))
    GROUP BY usr, window_start, window_end
) c
FULL JOIN (
    SELECT usr, window_start, window_end, SUM(amount) AS total
    FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '5' MINUTES))
    GROUP BY usr, window_start, window_end
) o
ON c.usr = o.usr AND c.window_start = o.window_start AND c.window_end = o.window_end;
