-- An uncorrelated scalar subquery in WHERE: AVG(qty) is 19 / 5 = 3 (AVG of
-- INT is INT).
-- compare: final
SET 'parallelism.default' = '2';
CREATE TABLE orders (id INT, customer STRING, amount INT);
CREATE TABLE items (oid INT, qty INT);
INSERT INTO orders VALUES (1, 'alice', 10), (2, 'bob', 5), (3, 'alice', 1), (4, 'dave', CAST(NULL AS INT)), (5, 'erin', CAST(NULL AS INT)), (CAST(NULL AS INT), 'zed', 2);
INSERT INTO items VALUES (1, 2), (1, 5), (3, 1), (4, 7), (9, 4);
SELECT id, amount FROM orders WHERE amount > (SELECT AVG(qty) FROM items);
