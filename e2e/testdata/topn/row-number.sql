-- Flink's Top-N form: the two largest sales per product, ties kept in
-- arrival order, hash-partitioned on the PARTITION BY key.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE sale (sale_id STRING, product STRING, units INT);
INSERT INTO sale VALUES
  ('s1', 'A', 3), ('s2', 'A', 4), ('s3', 'A', 1), ('s4', 'B', 10),
  ('s5', 'B', NULL), ('s6', 'B', 5), ('s7', 'B', 7), ('s8', 'C', 2);
SELECT product, sale_id, units
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY product ORDER BY units DESC) AS rn
  FROM sale
)
WHERE rn <= 2;
