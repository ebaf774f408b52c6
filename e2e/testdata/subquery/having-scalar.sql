-- Scalar subqueries in HAVING, uncorrelated and correlated on a grouped
-- column: the aggregate computes MAX(amount) and cust for the comparison,
-- then the subquery is joined in. For b and d the correlated MIN is NULL,
-- so the condition is not true.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE o (id INT, cust STRING, amount INT);
CREATE TABLE s (oid INT, note STRING);
INSERT INTO o VALUES (1, 'a', 5), (2, 'a', 7), (3, 'b', 1), (4, 'c', 20), (5, 'c', 2), (6, 'd', 3);
INSERT INTO s VALUES (1, 'a'), (2, 'c'), (3, 'x');
SELECT cust, MAX(amount) AS m
FROM o
GROUP BY cust
HAVING MAX(amount) > (SELECT MIN(oid) FROM s WHERE s.note = o.cust) * 6
    OR COUNT(*) > (SELECT COUNT(*) FROM s);
