-- CUBE with HAVING on GROUPING: only the sets that roll the region up,
-- so per product and the grand total; a key computed from a column.
-- compare: final
CREATE TABLE sales (region STRING, product STRING, amount INT);
INSERT INTO sales VALUES
    ('east', 'apple', 10),
    ('west', 'pear', 6),
    ('west', 'apple', 7),
    ('west', 'apple', 3),
    ('east', 'apple', 1);
SELECT UPPER(product) AS product, SUM(amount) AS total, COUNT(DISTINCT region) AS regions, GROUPING(region) AS r
FROM sales
GROUP BY CUBE (region, UPPER(product))
HAVING GROUPING(region) = 1;
