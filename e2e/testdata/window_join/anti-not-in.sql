-- Flink's docs example of an anti window join (NOT IN): L2's num is on the right, but in another window.
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
SELECT * FROM (
    SELECT * FROM TABLE(TUMBLE(TABLE LeftTable, DESCRIPTOR(row_time), INTERVAL '5' MINUTES))
) L WHERE L.num NOT IN (
    SELECT num FROM (SELECT * FROM TABLE(TUMBLE(TABLE RightTable, DESCRIPTOR(row_time), INTERVAL '5' MINUTES))) R
    WHERE L.window_start = R.window_start AND L.window_end = R.window_end);
