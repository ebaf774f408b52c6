-- Set operations over an updating input: the per-shelf counts of an
-- upsert table change as rows move, and UNION, INTERSECT ALL and EXCEPT
-- follow their retractions.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE stock (item STRING, shelf STRING, PRIMARY KEY (item) NOT ENFORCED);
INSERT INTO stock VALUES ('pen', 'A'), ('ink', 'A'), ('cap', 'B'), ('pad', 'B'), ('cup', 'C');
INSERT INTO stock VALUES ('pen', 'B'), ('cup', 'B');
CREATE TABLE wanted (shelf STRING, n BIGINT);
INSERT INTO wanted VALUES ('A', 1), ('B', 4), ('B', 4), ('C', 1), ('D', 2);
SELECT shelf, COUNT(*) AS n FROM stock GROUP BY shelf
UNION
SELECT shelf, n FROM wanted WHERE shelf <> 'D'
EXCEPT
SELECT shelf, n FROM wanted WHERE shelf = 'C'
UNION ALL
(SELECT shelf, n FROM wanted INTERSECT ALL SELECT 'B', CAST(4 AS BIGINT) FROM stock);
