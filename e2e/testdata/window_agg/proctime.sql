-- Processing-time windows: which window a click lands in depends on when
-- it arrives, so only totals are checked. The end of the bounded input
-- fires every open window, so each click is counted once: by a TUMBLE
-- window function, and by a legacy SESSION group window.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE clicks (
    usr STRING,
    pt AS PROCTIME()
);
INSERT INTO clicks VALUES ('ann'), ('bob'), ('ann'), ('cid'), ('ann');
CREATE VIEW tumbled AS
SELECT usr, window_start, COUNT(*) AS n
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(pt), INTERVAL '1' HOUR))
GROUP BY usr, window_start, window_end;
CREATE VIEW sessions AS
SELECT usr, SESSION_START(pt, INTERVAL '1' HOUR) AS ss, COUNT(*) AS n
FROM clicks
GROUP BY usr, SESSION(pt, INTERVAL '1' HOUR);
SELECT 'tumble' AS how, usr, SUM(n) AS clicks FROM tumbled GROUP BY usr
UNION ALL
SELECT 'session' AS how, usr, SUM(n) AS clicks FROM sessions GROUP BY usr;
