-- IN and NOT EXISTS in HAVING are semi and anti joins over the aggregate's
-- rows; a plain HAVING conjunct beside them filters in the aggregate. c
-- passes IN and SUM but has a note with oid 2; d is not in s.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE o (id INT, cust STRING, amount INT);
CREATE TABLE s (oid INT, note STRING);
INSERT INTO o VALUES (1, 'a', 5), (2, 'a', 7), (3, 'b', 1), (4, 'c', 20), (5, 'c', 2), (6, 'd', 3), (7, 'd', 30);
INSERT INTO s VALUES (1, 'a'), (2, 'c'), (3, 'x');
SELECT cust, SUM(amount) AS total
FROM o
GROUP BY cust
HAVING cust IN (SELECT note FROM s WHERE oid < 3) AND SUM(amount) > 10
    AND NOT EXISTS (SELECT 1 FROM s WHERE s.note = o.cust AND s.oid > 1);
