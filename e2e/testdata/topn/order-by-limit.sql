-- ORDER BY ... LIMIT over a retracting input: the three products with the
-- most units sold, from an aggregate whose totals keep changing. The TSV
-- output prints the surviving rows in the order they arrived, not in ORDER
-- BY order, so the runner compares them as a set.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE sale (sale_id STRING, product STRING, units INT);
INSERT INTO sale VALUES
  ('s1', 'A', 3), ('s2', 'A', 4), ('s3', 'B', 10), ('s4', 'C', 1),
  ('s5', 'D', 9), ('s6', 'D', 5), ('s7', 'E', 2), ('s8', 'C', 20);
SELECT product, total
FROM (SELECT product, SUM(units) AS total FROM sale GROUP BY product)
ORDER BY total DESC
LIMIT 3;
