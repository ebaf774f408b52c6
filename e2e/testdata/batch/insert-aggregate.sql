-- An INSERT of a GROUP BY into an append-only table, which streaming mode
-- refuses: in batch mode only the final rows reach it, as inserts, so a
-- SELECT of the table finds one row per group.
-- compare: ordered
SET 'execution.runtime-mode' = 'batch';
SET 'parallelism.default' = '2';
CREATE TABLE sale (product STRING, units INT);
CREATE TABLE totals (product STRING, total INT);
INSERT INTO sale VALUES ('A', 3), ('B', 10), ('A', 4), ('C', 1), ('B', 5), ('A', 1);
INSERT INTO totals SELECT product, SUM(units) FROM sale GROUP BY product;
SELECT product, total FROM totals ORDER BY product;
