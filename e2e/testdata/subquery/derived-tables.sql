-- Subqueries in FROM with aliases and column lists, joined.
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE orders (id INT, customer STRING, amount INT);
CREATE TABLE items (oid INT, qty INT);
INSERT INTO orders VALUES (1, 'alice', 10), (2, 'bob', 5), (3, 'alice', 1), (4, 'dave', CAST(NULL AS INT)), (5, 'erin', CAST(NULL AS INT)), (CAST(NULL AS INT), 'zed', 2);
INSERT INTO items VALUES (1, 2), (1, 5), (3, 1), (4, 7), (9, 4);
SELECT d.i, d.total, c.n FROM (SELECT id, amount * 2 FROM orders WHERE amount IS NOT NULL) AS d (i, total) JOIN (SELECT oid, COUNT(*) FROM items GROUP BY oid) AS c (oid, n) ON d.i = c.oid;
