-- LIMIT without ORDER BY keeps some n rows (which ones is not defined, so
-- the case counts them), and OFFSET ... FETCH pages through a sorted
-- result.
-- compare: ordered
SET 'execution.runtime-mode' = 'batch';
SET 'parallelism.default' = '2';
CREATE TABLE t (x INT);
INSERT INTO t VALUES (5), (3), (9), (1), (7), (3), (8);
CREATE TEMPORARY VIEW some3 AS SELECT x FROM t LIMIT 3;
CREATE TEMPORARY VIEW page AS SELECT x FROM t ORDER BY x OFFSET 2 ROWS FETCH NEXT 3 ROWS ONLY;
SELECT 'limit' AS what, COUNT(*) AS n, CAST(NULL AS INT) AS x FROM some3
UNION ALL
SELECT 'page', CAST(NULL AS BIGINT), x FROM page
ORDER BY what, x;
