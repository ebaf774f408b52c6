-- A grouping set written twice aggregates twice; GROUP_ID() tells the
-- copies apart (0 for the first, 1 for the second, 0 in a set written
-- once).
-- compare: final
CREATE TABLE sales (region STRING, amount INT);
INSERT INTO sales VALUES ('east', 10), ('east', 5), ('west', 7);
SELECT region, GROUP_ID() AS g, SUM(amount) AS total
FROM sales
GROUP BY GROUPING SETS ((region), (region), ());
