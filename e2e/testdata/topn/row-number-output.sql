-- The row number column read: Flink's Top-N with outputRankNumber. A
-- newcomer updates every rank below it with -U/+U; the materialized result
-- holds each surviving row with its final rank. Over an aggregate (an
-- updating input) ranks move up when a count changes.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE sale (sale_id STRING, product STRING, units INT);
INSERT INTO sale VALUES
  ('s1', 'A', 3), ('s2', 'A', 4), ('s3', 'A', 1), ('s4', 'B', 10),
  ('s5', 'B', NULL), ('s6', 'B', 5), ('s7', 'B', 7), ('s8', 'C', 2),
  ('s9', 'B', 5), ('s10', 'A', 1);
SELECT * FROM (
  SELECT product, n, ROW_NUMBER() OVER (ORDER BY n DESC, product) AS rn
  FROM (SELECT product, COUNT(*) AS n FROM sale GROUP BY product)
) WHERE rn <= 2
UNION ALL
SELECT product, CAST(units AS BIGINT), rn FROM (
  SELECT product, units, ROW_NUMBER() OVER (PARTITION BY product ORDER BY units DESC) AS rn
  FROM sale
) WHERE rn <= 2;
