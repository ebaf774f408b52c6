-- The row number read, per partition, over an insert-only input and over
-- an aggregate (the savepoint test restores this case mid-input at other
-- parallelisms: every -U of a moved rank must find its row).
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE sale (sale_id STRING, region STRING, product STRING, units INT);
INSERT INTO sale VALUES
  ('s1', 'n', 'A', 3), ('s2', 'n', 'A', 4), ('s3', 's', 'B', 1), ('s4', 's', 'C', 10),
  ('s5', 'n', 'B', 6), ('s6', 's', 'B', 5), ('s7', 'n', 'A', 7), ('s8', 's', 'C', 2),
  ('s9', 'n', 'C', 5), ('s10', 'n', 'B', 1), ('s11', 's', 'C', 8), ('s12', 'n', 'C', 9);
SELECT 'units' AS what, region, sale_id AS item, CAST(units AS BIGINT) AS v, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY region ORDER BY units DESC) AS rn FROM sale
) WHERE rn <= 2
UNION ALL
SELECT 'count', region, product, n, rn FROM (
  SELECT region, product, n, ROW_NUMBER() OVER (PARTITION BY region ORDER BY n DESC, product) AS rn
  FROM (SELECT region, product, COUNT(*) AS n FROM sale GROUP BY region, product)
) WHERE rn <= 2;
