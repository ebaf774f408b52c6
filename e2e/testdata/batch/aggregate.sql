-- A GROUP BY in batch mode: the result is the final row of each group,
-- insert-only; the totals that streaming mode would update along the way
-- never show.
SET 'execution.runtime-mode' = 'batch';
SET 'parallelism.default' = '2';
CREATE TABLE sale (sale_id STRING, product STRING, units INT);
INSERT INTO sale VALUES
  ('s1', 'A', 3), ('s2', 'A', 4), ('s3', 'B', 10), ('s4', 'C', 1),
  ('s5', 'D', 9), ('s6', 'D', 5), ('s7', 'E', 2), ('s8', 'C', 20),
  ('s9', CAST(NULL AS STRING), 7), ('s10', 'E', CAST(NULL AS INT));
SELECT product, SUM(units) AS total, COUNT(*) AS n, COUNT(units) AS counted
FROM sale
GROUP BY product;
