-- ROLLUP over an upsert table: the update of row 2 moves it from
-- (east, pear) to (west, pear), retracting it from every grouping set it
-- was in; the emptied (east, pear) group disappears. Rolled-up keys are
-- NULL and GROUPING_ID says which.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE sales (id INT, region STRING, product STRING, amount INT, PRIMARY KEY (id) NOT ENFORCED);
INSERT INTO sales VALUES
    (1, 'east', 'apple', 10),
    (2, 'east', 'pear', 5),
    (3, 'west', 'apple', 7),
    (4, 'west', 'apple', 3),
    (5, 'east', 'apple', 1);
INSERT INTO sales VALUES (2, 'west', 'pear', 6);
SELECT region, product, SUM(amount) AS total, COUNT(*) AS n, GROUPING_ID(region, product) AS gid
FROM sales
GROUP BY ROLLUP (region, product);
