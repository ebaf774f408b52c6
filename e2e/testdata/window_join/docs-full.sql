-- Flink's docs example (Window JOIN): a FULL OUTER window join of two
-- TUMBLE relations on num. L2 and R2 fall into different windows and
-- are padded; L1 and R4 have no partner. A padded right row's
-- L.window_start is NULL (Flink's docs print the window there, but the
-- column comes from the padded side).
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE LeftTable (
    row_time TIMESTAMP(3),
    num INT,
    id STRING,
    WATERMARK FOR row_time AS row_time - INTERVAL '1' SECOND
);
CREATE TABLE RightTable (
    row_time TIMESTAMP(3),
    num INT,
    id STRING,
    WATERMARK FOR row_time AS row_time - INTERVAL '1' SECOND
);
INSERT INTO LeftTable VALUES
    (TIMESTAMP '2020-04-15 12:02:00', 1, 'L1'),
    (TIMESTAMP '2020-04-15 12:06:00', 2, 'L2'),
    (TIMESTAMP '2020-04-15 12:03:00', 3, 'L3');
INSERT INTO RightTable VALUES
    (TIMESTAMP '2020-04-15 12:01:00', 2, 'R2'),
    (TIMESTAMP '2020-04-15 12:04:00', 3, 'R3'),
    (TIMESTAMP '2020-04-15 12:05:00', 4, 'R4');
SELECT L.num AS L_Num, L.id AS L_Id, R.num AS R_Num, R.id AS R_Id,
       COALESCE(L.window_start, R.window_start) AS window_start,
       COALESCE(L.window_end, R.window_end) AS window_end, L.window_start AS l_start
FROM (
    SELECT * FROM TABLE(TUMBLE(TABLE LeftTable, DESCRIPTOR(row_time), INTERVAL '5' MINUTES))
) L
FULL JOIN (
    SELECT * FROM TABLE(TUMBLE(TABLE RightTable, DESCRIPTOR(row_time), INTERVAL '5' MINUTES))
) R
ON L.num = R.num AND L.window_start = R.window_start AND L.window_end = R.window_end;
